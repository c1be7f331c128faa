"""Gradient algorithms against BPTT on minibatches of sequences of unequal lengths: RTRL exact, UORO unbiased,
truncated BPTT, a minibatch the sum of its sequences, the models' own cells, and the trainer hook.

The test subject is a second-order RNN (Giles et al. 1992; the NSPDA's state machine):
    s_t,i = sigmoid(Σ_jk W_ijk s_{t-1,j} x_{t,k} + b_i),    loss_t = -log softmax(V s_t + c)[y_t].
"""
import inspect
import itertools
import re
from pathlib import Path

import stackparse  # noqa: F401  (configures DyNet before its first import)
import dynet as dy
import numpy as np
import pytest

from stackparse._dynet import product as matmul
from stackparse.cells import Cell
from stackparse.errors import UserError
from stackparse.memories.discrete_stack import Action, DiscreteStack, Signals
from stackparse.models import get_model_class
from stackparse.sequences import Example, reattach
from stackparse.training import TrainConfig, Trainer, gradients
from stackparse.training.gradients import (GradientConfig, PrecomputedLoss, batch_gradient, bptt, precomputed_loss,
                                           rtrl, uoro)

ROOT = Path(__file__).resolve().parent.parent


def second_order_cell(n: int, m: int) -> Cell:
    """n state units, m input symbols (ids); params [W (n, n*m), b (n,), V (k, n), c (k,)]."""
    def step(theta, s, ids):
        W, b = theta[0], theta[1]
        x = reattach([np.eye(m)[:, list(ids)]])[0]                                 # one-hot: (m,) x N
        products = dy.reshape(matmul(s, dy.transpose(x)), (n * m,))              # s_j x_k, (n*m,) x N
        return dy.logistic(dy.affine_transform([b, W, products]))

    def loss(theta, s, ys):
        return dy.pickneglogsoftmax_batch(dy.affine_transform([theta[3], theta[2], s]), list(ys))

    return Cell(step, loss, np.full(n, 0.5))


def second_order_params(pc: dy.ParameterCollection, n: int, m: int, k: int) -> list:
    return [pc.add_parameters((n, n * m), name="W"), pc.add_parameters((n,), name="b"),
            pc.add_parameters((k, n), name="V"), pc.add_parameters((k,), name="c")]


def example(rng, length: int, m: int, k: int, scored_every: int = 1) -> Example:
    """Random symbols and targets; scored every `scored_every` steps and at the last."""
    scored = tuple(t % scored_every == scored_every - 1 or t == length - 1 for t in range(length))
    return Example(tuple(int(i) for i in rng.integers(0, m, length)), tuple(int(y) for y in rng.integers(0, k, length)),
                   scored, length)


def flat(grads) -> np.ndarray:
    return np.concatenate([g.reshape(-1) for g in grads])


def assert_same(a, b):
    """Equal loss and gradient up to float32 rounding (DyNet's): 1e-6, relative or absolute."""
    assert a.loss == pytest.approx(b.loss, rel=1e-6)
    np.testing.assert_allclose(flat(a.grads), flat(b.grads), rtol=1e-6, atol=1e-6)


@pytest.fixture
def rnn():
    """A 3-unit second-order RNN over 2 input symbols predicting 3 symbols (its collection kept alive: DyNet frees
    the parameters' memory with it)."""
    pc = dy.ParameterCollection()
    yield second_order_cell(3, 2), second_order_params(pc, 3, 2, 3)


@pytest.mark.parametrize("n, m, lengths, scored_every", [(3, 2, [1], 1), (3, 2, [6, 2, 4], 2),
                                                         (5, 3, [12, 1, 7, 12], 1), (4, 4, [25, 3, 14], 3)])
def test_rtrl_equals_bptt_on_a_batch_of_unequal_lengths(n, m, lengths, scored_every):
    pc = dy.ParameterCollection()
    cell, params = second_order_cell(n, m), second_order_params(pc, n, m, 3)
    rng = np.random.default_rng(sum(lengths))
    for _ in range(2):
        batch = [example(rng, length, m, 3, scored_every) for length in lengths]
        assert_same(rtrl(cell, params, batch, rng), bptt(cell, params, batch, rng))


def test_rtrl_handles_matrix_and_single_unit_states(rng):
    # A (2, 3) state checks the order of the Jacobians' rows and columns; a (1,) state, the unbatched case.
    pc = dy.ParameterCollection()
    inputs, targets = rng.normal(size=(2, 3, 5)), rng.normal(size=(6, 5))
    matrix = Cell(lambda th, S, ids: dy.tanh(matmul(matmul(th[0], S), th[1]) + reattach([inputs[:, :, list(ids)]])[0]),
                  lambda th, S, ys: dy.squared_norm(dy.reshape(S, (6,)) - reattach([targets[:, list(ys)]])[0]),
                  np.arange(6.0).reshape(2, 3) / 6)
    values = rng.normal(size=5)
    scalar = Cell(lambda th, s, ids: dy.tanh(matmul(th[0], s) + dy.cmult(th[1], reattach([values[None, ids]])[0])),
                  lambda th, s, ys: dy.square(s - reattach([values[None, ys]])[0]),
                  np.array([0.3]))
    cases = [(matrix, [pc.add_parameters((2, 2)), pc.add_parameters((3, 3))]),
             (scalar, [pc.add_parameters((1, 1)), pc.add_parameters((1,))])]
    batch = [example(rng, 5, 5, 5), example(rng, 3, 5, 5, scored_every=2)]
    for cell, params in cases:
        assert_same(rtrl(cell, params, batch, rng), bptt(cell, params, batch, rng))


def test_truncated_bptt_equals_bptt_when_the_truncation_covers_the_sequences(rnn, rng):
    cell, params = rnn
    batch = [example(rng, 9, 2, 3), example(rng, 4, 2, 3)]
    full = bptt(cell, params, batch, rng)
    for truncation in (9, 20):
        cut = bptt(cell, params, batch, rng, truncation)
        assert cut.loss == full.loss
        np.testing.assert_allclose(flat(cut.grads), flat(full.grads), rtol=0, atol=1e-7)
    short = bptt(cell, params, batch, rng, 2)
    assert short.loss == pytest.approx(full.loss, rel=1e-6)         # cutting changes gradients, not the loss
    assert not np.allclose(flat(short.grads), flat(full.grads), atol=1e-3)


class Signs:
    """Stands in for UORO's generator: `integers` gives DyNet's seed (the cells here draw nothing), `choice`
    each step's signs ν, (running sequences, d), from a given sequence of arrays."""

    def __init__(self, signs):
        self.signs = iter(signs)

    def integers(self, low, high, size=None):
        """DyNet's seed; with `size` (k, n, d), the next k steps' signs as rng.integers(0, 2) draws them (the
        compiled UORO draws a step's passes at once)."""
        if size is None:
            return 1
        signs = np.stack([self.choice(None, size[1:]) for _ in range(size[0])])
        return ((signs + 1) / 2).astype(np.int64)

    def choice(self, values, size):
        signs = next(self.signs)
        assert signs.shape == size
        return signs


def lockstep_signs(per_sequence: list[np.ndarray]) -> list[np.ndarray]:
    """The signs a batch draws, step by step, given each sequence's own (length, d): the rows of the sequences
    still running, in batch order."""
    return [np.stack([nus[t] for nus in per_sequence if len(nus) > t]) for t in range(max(map(len, per_sequence)))]


@pytest.mark.parametrize("n, lengths", [(3, [3]), (2, [5]), (2, [3, 1]), (3, [1, 2])])
def test_uoro_averaged_over_every_sign_sequence_is_bptt(n, lengths):
    # The signs of all steps take 2^(n Σ lengths) values, equally likely: their average is UORO's expectation.
    pc = dy.ParameterCollection()
    cell, params = second_order_cell(n, 2), second_order_params(pc, n, 2, 3)
    rng = np.random.default_rng(n)
    batch = [example(rng, length, 2, 3) for length in lengths]
    ends = np.cumsum(lengths)[:-1]
    estimates = []
    for bits in itertools.product([-1.0, 1.0], repeat=n * sum(lengths)):
        per_sequence = np.split(np.array(bits).reshape(-1, n), ends)
        estimates.append(flat(uoro(cell, params, batch, Signs(lockstep_signs(per_sequence))).grads))
    np.testing.assert_allclose(np.mean(estimates, axis=0), flat(bptt(cell, params, batch, rng).grads), rtol=0,
                               atol=1e-6)


def test_a_batch_is_the_sum_of_its_sequences(rnn, rng):
    """RTRL, BPTT and UORO (given the same signs) of a minibatch are the sums over its sequences."""
    cell, params = rnn
    batch = [example(rng, length, 2, 3, 2) for length in (4, 7, 1, 7, 3)]
    for method in (rtrl, bptt):
        whole, parts = method(cell, params, batch, rng), [method(cell, params, [e], rng) for e in batch]
        assert whole.loss == pytest.approx(sum(p.loss for p in parts), rel=1e-6)
        np.testing.assert_allclose(flat(whole.grads), np.sum([flat(p.grads) for p in parts], axis=0), atol=1e-6)
    signs = [rng.choice([-1.0, 1.0], size=(len(e), 3)) for e in batch]
    whole = uoro(cell, params, batch, Signs(lockstep_signs(signs)))
    parts = [uoro(cell, params, [e], Signs([nu[None] for nu in nus])) for e, nus in zip(batch, signs)]
    assert whole.loss == pytest.approx(sum(p.loss for p in parts), rel=1e-6)
    np.testing.assert_allclose(flat(whole.grads), np.sum([flat(p.grads) for p in parts], axis=0), atol=1e-5)


def test_uoro_sample_mean_approaches_bptt(rnn):
    """The mean of N = 500 UORO estimates with random signs lies within 3 standard errors of BPTT's
    gradient.

    The standard error of the mean is sqrt(tr Σ / N), Σ being the covariance of one estimate
    (measured from the samples): an unbiased estimator's error falls like 1/sqrt(N). Here one
    estimate is typically off by more than the gradient's norm, while the standard error of the mean is under
    15 % of it. Three standard errors leave room for chance: E|error|² = tr Σ / N, so by Markov's
    inequality the bound fails with probability under 1/9 (the seed is fixed). The exact test above is the one
    that rules out a bias; this one shows the estimator working with a real generator. The parameters the step
    does not use (V, c) get their exact, explicit gradient in every sample, and the loss is exact too.
    """
    cell, params = rnn
    rng = np.random.default_rng(3)
    batch = [example(rng, 5, 2, 3)]
    reference = bptt(cell, params, batch, rng)
    recurrent = params[0].as_array().size + params[1].as_array().size      # W and b come first
    exact = flat(reference.grads)
    samples = []
    for _ in range(500):
        estimate = uoro(cell, params, batch, rng)
        assert estimate.loss == pytest.approx(reference.loss, rel=1e-6)
        np.testing.assert_allclose(flat(estimate.grads)[recurrent:], exact[recurrent:], rtol=0, atol=1e-6)
        samples.append(flat(estimate.grads)[:recurrent])
    samples, norm = np.array(samples), np.linalg.norm(exact[:recurrent])
    spread = np.sqrt(samples.var(axis=0, ddof=1).sum())         # sqrt(tr Σ): one estimate's typical error
    standard_error = spread / np.sqrt(len(samples))
    assert spread > norm
    assert standard_error < 0.15 * norm
    assert np.linalg.norm(samples.mean(axis=0) - exact[:recurrent]) < 3 * standard_error


@pytest.mark.parametrize("model_name", ["rnn2", "nspda2", "nspda3"])
def test_the_models_cells_give_bptt_s_gradient_by_rtrl(model_name):
    """A model's gradient cell on a minibatch of unequal lengths: RTRL equals BPTT given generators in the same
    state (the NSPDA's eq. 6 reads are drawn from it), UORO's loss is theirs, and the model's parameters keep their
    own gradients (zero) throughout."""
    pc = dy.ParameterCollection()
    cls = get_model_class(model_name)
    model = cls(pc, cls.Config(hidden=3), 2, 2)
    model.training = True
    cell, params = model.gradient_cell()
    rng = np.random.default_rng(5)
    batch = [example(rng, length, 2, 2, 3) for length in (6, 2, 9, 5)]
    exact = bptt(cell, params, batch, np.random.default_rng(0))
    assert_same(rtrl(cell, params, batch, np.random.default_rng(0)), exact)
    assert uoro(cell, params, batch, np.random.default_rng(0)).loss == pytest.approx(exact.loss, rel=1e-6)
    assert all(not p.grad_as_array().any() for p in params)


def test_tiled_stacks_act_as_copies_of_the_batch():
    """`DiscreteStack.tile`, the memory of a batch's copies, reads and moves as the stacks repeated would."""
    stacks = DiscreteStack(((2,), (2, 0, 1), ()))
    tiled, repeated = stacks.tile(3), stacks.select([0, 1, 2] * 3)
    pushed = [1, 0, 1] * 3
    for memory in (tiled, repeated):
        assert memory.batch_size == 9
    assert tiled.read() == repeated.read() and tiled.depths() == repeated.depths()
    assert tiled.candidates(pushed) == repeated.candidates(pushed)
    actions = [Action.PUSH, Action.POP, Action.POP] * 3
    moved, expected = tiled.next(Signals(actions, pushed)), repeated.next(Signals(actions, pushed))
    assert moved.read() == expected.read() and moved.depths() == expected.depths()
    assert stacks.select([2, 0]).stacks == ((), (2,))


def test_batch_gradient_dispatches_and_validates(rnn, rng):
    cell, params = rnn
    batch = [example(rng, 6, 2, 3), example(rng, 2, 2, 3)]
    tbptt = batch_gradient(GradientConfig("tbptt", truncation=2), cell, params, batch, rng)
    np.testing.assert_array_equal(flat(tbptt.grads), flat(bptt(cell, params, batch, rng, 2).grads))
    np.testing.assert_allclose(flat(batch_gradient(GradientConfig("rtrl"), cell, params, batch, rng).grads),
                               flat(bptt(cell, params, batch, rng).grads), rtol=0, atol=1e-6)
    for bad in (GradientConfig("adjoint"), GradientConfig("tbptt", truncation=0), GradientConfig(epsilon=0.0)):
        with pytest.raises(UserError):
            batch_gradient(bad, cell, params, batch, rng)


def test_precomputed_loss_updates_like_backpropagation(rng):
    # Two identical models; one backpropagates the unrolled loss through its parameters, the other
    # hands RTRL's gradient to the same optimizer step. The updated parameters must agree.
    cell = second_order_cell(3, 2)
    batch = [example(rng, 6, 2, 3), example(rng, 3, 2, 3)]
    models = []
    for _ in range(2):
        pc = dy.ParameterCollection()
        params = second_order_params(pc, 3, 2, 3)
        models.append((pc, params, dy.SimpleSGDTrainer(pc, learning_rate=0.5)))
    for p, q in zip(models[0][1], models[1][1]):
        q.set_value(p.as_array())
    (_, direct, opt_direct), (_, hooked, opt_hooked) = models
    dy.renew_cg()
    losses = []
    for e in batch:
        s = dy.inputTensor(cell.initial)
        for x, y in zip(e.inputs, e.targets):
            s = cell.step(direct, s, [x])
            losses.append(cell.loss(direct, s, [y]))
    dy.esum(losses).backward()
    opt_direct.update()
    precomputed_loss(rtrl(cell, hooked, batch, rng), params=hooked).backward()
    opt_hooked.update()
    for p, q in zip(direct, hooked):
        np.testing.assert_allclose(q.as_array(), p.as_array(), rtol=0, atol=1e-6)


class CellObjective:
    """A minimal trainer objective over fixed sequences: DyNet's backward, or a `GradientConfig`."""
    criterion, maximize, unit = "val_loss", False, "chars"

    def __init__(self, grad: GradientConfig | None, data):
        self.grad, self.data = grad, data
        self.pc = dy.ParameterCollection()
        self.cell, self.params = second_order_cell(3, 2), second_order_params(self.pc, 3, 2, 3)

    def param_collection(self):
        return self.pc

    def batches(self, epoch, rng):
        return [self.data[i:i + 2] for i in range(0, len(self.data), 2)]

    def losses(self, batch):
        units = sum(len(e) for e in batch)
        if self.grad is not None:
            result = batch_gradient(self.grad, self.cell, self.params, batch, np.random.default_rng(0))
            yield precomputed_loss(result, 1 / len(batch), self.params), units
            return
        dy.renew_cg()
        terms = []
        for e in batch:
            s = dy.inputTensor(self.cell.initial)
            for x, y in zip(e.inputs, e.targets):
                s = self.cell.step(self.params, s, [x])
                terms.append(self.cell.loss(self.params, s, [y]))
        yield dy.esum(terms) / len(batch), units

    def validate(self):
        return {"val_loss": bptt(self.cell, self.params, self.data, np.random.default_rng(0)).loss}

    def save(self, directory):
        self.pc.save(str(directory / "params"))

    def restore(self, directory):
        self.pc.populate(str(directory / "params"))


def test_trainer_trains_with_rtrl_as_with_backpropagation(tmp_path, rng):
    # The same initialisation (the trainer seeds DyNet before building), two epochs of SGD on the same
    # minibatches: RTRL's gradients through `PrecomputedLoss` must move the parameters as
    # DyNet's backward does.
    data = [example(rng, length, 2, 3) for length in (5, 3, 5, 1, 4, 5)]
    train = TrainConfig(epochs=2, lr=0.5, lr_schedule="constant", seed=4)
    initial, trained = {}, {}
    for name, grad in (("backward", None), ("rtrl", GradientConfig("rtrl"))):
        objectives = []

        def build(seed):
            objectives.append(CellObjective(grad, data))
            initial[name] = flat([p.as_array() for p in objectives[-1].params])
            return objectives[-1]

        Trainer(train, build, progress=False).fit(tmp_path / name)
        trained[name] = flat([p.as_array() for p in objectives[-1].params])
        assert isinstance(next(objectives[-1].losses(data[:2]))[0], PrecomputedLoss if grad else dy.Expression)
    np.testing.assert_array_equal(initial["rtrl"], initial["backward"])
    assert np.abs(trained["rtrl"] - initial["rtrl"]).max() > 0.01
    np.testing.assert_allclose(trained["rtrl"], trained["backward"], rtol=0, atol=1e-5)


def python_blocks():
    return re.findall(r"```python\n(.*?)```", (ROOT / "docs" / "gradients.md").read_text(), flags=re.DOTALL)


@pytest.mark.parametrize("index", range(len(python_blocks())))
def test_the_examples_of_docs_gradients_md_run(index):
    exec(compile(python_blocks()[index], f"docs/gradients.md, example {index + 1}", "exec"), {})


def test_public_functions_document_their_arguments_and_results():
    for name, function in inspect.getmembers(gradients, inspect.isfunction):
        if name.startswith("_") or function.__module__ != gradients.__name__:
            continue
        doc = inspect.getdoc(function)
        assert doc and "Args:" in doc and "Returns:" in doc, f"{name}: no Args/Returns"
