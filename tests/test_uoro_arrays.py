"""The numpy mirror of the higher-order models' training step (`stackparse.models.arrays`) against DyNet: the same
states, reads, stacks and losses; the same Jacobian-vector and per-sequence vector-Jacobian products as the DyNet
cell's (reverse mode, exact); UORO through it unbiased (its average over every sign sequence is BPTT) and its loss
BPTT's; the trainer's UORO takes it."""
import itertools
from dataclasses import replace

import stackparse  # noqa: F401  (configures DyNet before its first import)
import dynet as dy
import numpy as np
import pytest

from stackparse.models import get_model_class
from stackparse.models.arrays import nspda_kernel
from stackparse.models.nspda import ALPHAS
from stackparse.memories.discrete_stack import Action
from stackparse.sequences import pad
from stackparse.training.gradients import _ArraySteps, _DyNetSteps, bptt, uoro
from stackparse.training.methods import Online
from tests.test_gradients import Signs, example, flat, lockstep_signs

SETTINGS = [("rnn2", {}),
            ("nspda2", {"read_values": "onehot"}),
            ("nspda3", {"read_values": "onehot"}),
            ("nspda2", {"read_values": "onehot", "pairing": "state-read", "readout": "state-read",
                        "action_quantizer": "round"}),
            ("nspda3", {"read_values": "onehot", "readout": "state-read", "bottom": False}),
            ("nspda2", {"read_values": "onehot", "quantize_states": False, "action_quantizer": "round"}),
            # the weights rounded in training: the paper's binary W^s and ternary W^a, or multiples of weight_step
            ("rnn2", {"discretize_training": True}),
            ("nspda2", {"read_values": "onehot", "discretize_training": True}),
            ("nspda3", {"read_values": "onehot", "discretize_training": True, "weight_values": "step"}),
            ("nspda3", {"read_values": "onehot", "discretize_training": True, "binary_scale": 2.0})]
LENGTHS = (6, 2, 9, 5)


def model_of(name, options, hidden=3, inputs=2, outputs=2, init_scale=1.5):
    pc = dy.ParameterCollection()
    cls = get_model_class(name)
    model = cls(pc, cls.Config(hidden=hidden, init_scale=init_scale, **options), inputs, outputs)
    model.training = True
    model.pc_alive = pc                         # DyNet frees the parameters with their collection
    for p in model.trained_parameters()[-2:]:   # V, c start at 0 or small: give the loss some slope
        p.set_value(np.random.default_rng(1).uniform(-1, 1, p.shape()))
    return model


def batch_of(seed=5, lengths=LENGTHS, inputs=2):
    rng = np.random.default_rng(seed)
    return [example(rng, length, inputs, 2, 3) for length in lengths]


class DyNetDraws:
    """Stands in for the numpy generator the mirror draws eq. 6's read values from: it gives DyNet's, those its
    generator draws from seed `seed + t` at step t (t = -1: the initial read), so the two read alike."""

    def __init__(self, reads, seed):
        self.values = []
        for t in range(-1, max(LENGTHS)):
            dy.renew_cg()
            dy.reset_random_seed(seed + t)
            draws = [dy.random_uniform((reads,), lo, hi) for lo, hi in
                     (ALPHAS[Action.NO_OP], ALPHAS[Action.PUSH], ALPHAS[Action.POP])]
            self.values += [d.npvalue() for d in draws]
        self.values = iter(self.values)

    def uniform(self, lo, hi, size):
        value = next(self.values)
        assert value.shape == (size,) and (lo <= value).all() and (value <= hi).all()
        return value


@pytest.mark.parametrize("name, options", SETTINGS + [("nspda2", {}), ("nspda3", {"readout": "state-read"})])
def test_the_mirror_steps_as_the_model_does(name, options):
    """States, reads, stacks and the loss at every step, on a batch of unequal lengths (padded: every row is
    stepped); the paper's read values drawn alike (`DyNetDraws`)."""
    model, batch = model_of(name, options), batch_of()
    cell = model.array_cell()
    theta = cell.used([p.as_array() for p in model.trained_parameters()])
    inputs, targets, mask = pad(batch)
    draws = DyNetDraws(getattr(cell, "reads", 1), 100)
    states, memory = cell.start(len(batch), len(inputs), draws)
    dy.renew_cg()
    dy.reset_random_seed(99)
    state = model.initial_state(len(batch))
    model.scores(state).forward()                       # DyNet draws when it computes: now, from seed 99
    for t in range(len(inputs)):
        dy.reset_random_seed(100 + t)
        state = model.step(state, inputs[t].tolist())
        states, memory, _ = cell.step(theta, states, memory, inputs[t], draws)
        nll = dy.pickneglogsoftmax_batch(model.scores(state), targets[t].tolist())
        if name == "rnn2":
            expected = state.npvalue().reshape(-1, len(batch)).T
        else:
            expected = np.concatenate([state.state.npvalue(), state.read.npvalue()]).reshape(-1, len(batch)).T
            np.testing.assert_array_equal(memory.depth, state.stack.depths())
            np.testing.assert_array_equal(memory.top(), state.stack.read())
        np.testing.assert_allclose(states, expected, rtol=0, atol=1e-6)
        loss = cell.loss(theta, states, targets[t], mask[t])
        assert loss.total == pytest.approx(float(mask[t] @ nll.npvalue().reshape(-1)), rel=1e-6, abs=1e-6)


@pytest.mark.parametrize("refine", [1, 2])
@pytest.mark.parametrize("name, options", SETTINGS)
def test_the_mirrors_products_are_the_dynet_cells(name, options, refine):
    """Each pass's (∂f/∂s) s̃, νᵀ ∂f/∂θ per sequence, ∂ℓ/∂s and ∂ℓ/∂θ, for random s̃ and ν, equal those DyNet's
    reverse mode gives the model's gradient cell (`_DyNetSteps`), the running sequences a shrinking prefix; with
    refinement (K = 2, every other step of each sequence hinted) too."""
    model, batch = model_of(name, options), sorted(batch_of(), key=len, reverse=True)
    cell, params = model.gradient_cell()
    hints = {e: tuple(t % 2 == 1 for t in range(len(e))) for e in batch}.__getitem__
    fast = _ArraySteps(model.array_cell(), params, batch, None, refine, hints)
    slow = _DyNetSteps(cell, params, batch, Signs([]), refine, hints)
    rng = np.random.default_rng(2)
    for step, same in zip(fast.steps(), slow.steps()):
        n = int((fast.lengths > step.t).sum())
        s_tilde, nu = rng.normal(size=(n, fast.d)), rng.choice([-1.0, 1.0], size=(n, fast.d))
        a, b = fast.step(step, n, s_tilde, nu), slow.step(same, n, s_tilde, nu)
        np.testing.assert_allclose(a.forward, b.forward, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(a.vjp, b.vjp, rtol=1e-5, atol=1e-5)
        assert (a.loss is None) == (b.loss is None)
        if a.loss is not None:
            assert a.loss.total == pytest.approx(b.loss.total, rel=1e-6)
            np.testing.assert_allclose(a.loss.state, b.loss.state, rtol=1e-5, atol=1e-6)
            np.testing.assert_allclose(a.loss.params, b.loss.params, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(fast.state, slow.run.state[:, :n].T, rtol=0, atol=1e-6)


@pytest.mark.parametrize("name, options", SETTINGS)
def test_uoro_by_the_mirror_is_uoro_by_the_dynet_cell(name, options):
    """Given the same signs, the whole estimate and the loss; the loss is BPTT's."""
    model, batch = model_of(name, options), batch_of()
    cell, params = model.gradient_cell()
    signs = lockstep_signs([np.random.default_rng(len(e)).choice([-1.0, 1.0], size=(len(e), cell.initial.size))
                            for e in batch])
    fast, slow = uoro(model.array_cell(), params, batch, Signs(signs)), uoro(cell, params, batch, Signs(signs))
    assert fast.loss == pytest.approx(slow.loss, rel=1e-6)
    assert fast.loss == pytest.approx(bptt(cell, params, batch, np.random.default_rng(0)).loss, rel=1e-6)
    np.testing.assert_allclose(flat(fast.grads), flat(slow.grads), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name, options", SETTINGS)
def test_refined_uoro_by_the_mirror_is_the_dynet_cells(name, options):
    """With refinement (K = 3) and hints (every third step of each sequence hinted), given the same signs (one set
    a pass), the mirror's estimate and loss are the DyNet cell's, and the loss is the refined BPTT's."""
    model, batch = model_of(name, options), batch_of()
    cell, params = model.gradient_cell()
    hints = {e: tuple(t % 3 == 1 for t in range(len(e))) for e in batch}.__getitem__
    signs = lockstep_signs([np.random.default_rng(len(e)).choice([-1.0, 1.0], size=(3 * len(e), cell.initial.size))
                            for e in batch])
    signs = [pass_signs for t in range(max(LENGTHS)) for pass_signs in signs[3 * t:3 * t + 3]]
    fast = uoro(model.array_cell(), params, batch, Signs(signs), refine=3, hints=hints)
    slow = uoro(cell, params, batch, Signs(signs), refine=3, hints=hints)
    assert fast.loss == pytest.approx(slow.loss, rel=1e-6)
    assert fast.loss == pytest.approx(bptt(cell, params, batch, np.random.default_rng(0), 0, 3, hints).loss, rel=1e-6)
    np.testing.assert_allclose(flat(fast.grads), flat(slow.grads), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name, options, hidden, inputs, lengths",
                         [("rnn2", {}, 2, 2, [3, 1]), ("nspda2", {"read_values": "onehot"}, 1, 1, [2, 1]),
                          ("nspda3", {"read_values": "onehot", "quantize_states": False}, 1, 2, [2])])
def test_uoro_by_the_mirror_averaged_over_every_sign_sequence_is_bptt(name, options, hidden, inputs, lengths):
    # As tests/test_gradients.py's test of the DyNet cell: the 2^(d Σ lengths) sign sequences are equally likely.
    model = model_of(name, options, hidden=hidden, inputs=inputs)
    batch = batch_of(4, lengths, inputs)
    cell, params = model.gradient_cell()
    d, ends = cell.initial.size, np.cumsum(lengths)[:-1]
    estimates = []
    for bits in itertools.product([-1.0, 1.0], repeat=d * sum(lengths)):
        per_sequence = np.split(np.array(bits).reshape(-1, d), ends)
        estimates.append(flat(uoro(model.array_cell(), params, batch, Signs(lockstep_signs(per_sequence))).grads))
    exact = flat(bptt(cell, params, batch, np.random.default_rng(0)).grads)
    assert np.abs(exact).max() > 1e-2
    np.testing.assert_allclose(np.mean(estimates, axis=0), exact, rtol=0, atol=1e-6)


@pytest.mark.parametrize("options", [{"read_values": "onehot"}, {"read_values": "onehot", "discretize_training": True}])
def test_online_uoro_by_the_mirror_or_the_dynet_cell(options):
    """The trainer's UORO (`Online`) runs the numpy mirror, or the DyNet cell with `mirror` off; the loss is the
    same either way (one-hot reads: no draws), the weights rounded in training or not."""
    batch = batch_of()
    model = model_of("nspda2", options)
    losses = []
    for mirror in (True, False):
        [(loss, scored)] = list(Online("uoro", mirror=mirror).losses(model, batch, np.random.default_rng(0)))
        assert scored == sum(sum(e.scored) for e in batch)
        losses.append(loss.value())
    assert losses[0] == pytest.approx(losses[1], rel=1e-5)


def test_binary_weights_of_a_scale_are_its_multiples_in_both_engines():
    """`binary_scale` s: W^s in {0, s}, W^a in {-s, 0, s}, each weight to the nearest, in DyNet and in numpy."""
    model = model_of("nspda3", {"binary_scale": 2.0}, init_scale=3.0)
    model.training = False
    dy.renew_cg()
    Ws, _, Wa, _ = (w.npvalue() for w in model.weights())
    assert set(np.unique(Ws)) == {0.0, 2.0} and set(np.unique(Wa)) <= {-2.0, 0.0, 2.0} and len(np.unique(Wa)) > 1
    assert np.array_equal(Ws, (model.Ws.as_array() > 1.0) * 2.0)
    model.config = replace(model.config, discretize_training=True)           # the rounding in training too
    binary, _, ternary, _ = model.array_rounding()
    assert np.array_equal(binary(model.Ws.as_array()), Ws) and np.array_equal(ternary(model.Wa.as_array()), Wa)


@pytest.mark.parametrize("refine", [1, 4])
@pytest.mark.parametrize("name, options", [(name, options) for name, options in SETTINGS if name != "rnn2"] +
                         [("nspda2", {}), ("nspda3", {"readout": "state-read"}), ("nspda2", {"pairing": "state-read"})])
def test_compiled_uoro_is_the_numpy_loops(name, options, refine):
    """The NSPDA's UORO compiled (`nspda_uoro.c`, every pass in one call, the random numbers drawn first) gives the
    numpy loop's loss and estimate from the same generator, with the paper's read values, refinement and hints: the
    same draws in the same order, the same arithmetic up to the order of the sums."""
    if nspda_kernel() is None:
        pytest.skip("no C compiler")
    model, batch = model_of(name, options), batch_of()
    cell, params = model.array_cell(), model.trained_parameters()
    hints = {e: tuple(t % 3 == 1 for t in range(len(e))) for e in batch}.__getitem__
    numpy_loop = uoro(cell, params, batch, np.random.default_rng(3), refine=refine, hints=hints, compiled=False)
    compiled = uoro(cell, params, batch, np.random.default_rng(3), refine=refine, hints=hints)
    assert compiled.loss == pytest.approx(numpy_loop.loss, rel=1e-12)
    np.testing.assert_allclose(flat(compiled.grads), flat(numpy_loop.grads), rtol=1e-10, atol=1e-11)
