"""Gradient algorithms against BPTT: RTRL exact, UORO unbiased, truncated BPTT, and the trainer hook.

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

from stackparse.errors import UserError
from stackparse.training import TrainConfig, Trainer, gradients
from stackparse.cells import Cell
from stackparse.training.gradients import (GradientConfig, PrecomputedLoss, bptt, flatten, precomputed_loss, rtrl,
                                           sequence_gradient, uoro)

ROOT = Path(__file__).resolve().parent.parent


def second_order_cell(n: int, m: int) -> Cell:
    """n state units, m one-hot inputs; params [W (n, n*m), b (n,), V (k, n), c (k,)]."""
    def step(theta, s, x):
        W, b = theta[0], theta[1]
        products = dy.reshape(s * dy.transpose(dy.inputTensor(x)), (n * m,))    # s_j x_k, (n*m,)
        return dy.logistic(dy.affine_transform([b, W, products]))

    def loss(theta, s, y):
        return dy.pickneglogsoftmax(dy.affine_transform([theta[3], theta[2], s]), y)

    return Cell(step, loss, np.full(n, 0.5))


def second_order_params(pc: dy.ParameterCollection, n: int, m: int, k: int) -> list:
    return [pc.add_parameters((n, n * m), name="W"), pc.add_parameters((n,), name="b"),
            pc.add_parameters((k, n), name="V"), pc.add_parameters((k,), name="c")]


def sequence(rng, length: int, m: int, k: int, scored_every: int = 1):
    """One-hot inputs and symbol targets; targets only every `scored_every` steps (None elsewhere)."""
    xs = [np.eye(m)[i] for i in rng.integers(0, m, length)]
    ys = [int(y) if t % scored_every == scored_every - 1 else None for t, y in enumerate(rng.integers(0, k, length))]
    return xs, ys


@pytest.fixture
def rnn():
    """A 3-unit second-order RNN over 2 input symbols predicting 3 symbols."""
    pc = dy.ParameterCollection()
    return second_order_cell(3, 2), second_order_params(pc, 3, 2, 3)


@pytest.mark.parametrize("n, m, length, scored_every", [(3, 2, 1, 1), (3, 2, 6, 2), (5, 3, 12, 1), (4, 4, 25, 3)])
def test_rtrl_equals_bptt(n, m, length, scored_every):
    pc = dy.ParameterCollection()
    cell, params = second_order_cell(n, m), second_order_params(pc, n, m, 3)
    rng = np.random.default_rng(length)
    for _ in range(3):
        xs, ys = sequence(rng, length, m, 3, scored_every)
        reference, forward = bptt(cell, params, xs, ys), rtrl(cell, params, xs, ys)
        assert forward.loss == pytest.approx(reference.loss, rel=1e-6)
        for a, b in zip(forward.grads, reference.grads):
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-6)


def test_rtrl_handles_matrix_and_single_unit_states(rng):
    # A (2, 3) state checks the row/column order of the Jacobians; a (1,) state, the unbatched case.
    pc = dy.ParameterCollection()
    params = [pc.add_parameters((2, 2)), pc.add_parameters((3, 3))]
    matrix = Cell(lambda th, S, x: dy.tanh(th[0] * S * th[1] + dy.inputTensor(x)),
                  lambda th, S, y: dy.squared_norm(dy.reshape(S, (6,)) - dy.inputTensor(y)),
                  np.arange(6.0).reshape(2, 3) / 6)
    scalar = Cell(lambda th, s, x: dy.tanh(th[0] * s + th[1] * float(x)),
                  lambda th, s, y: dy.square(dy.pick(s, 0) - float(y)),
                  np.array([0.3]))
    scalar_params = [pc.add_parameters((1, 1)), pc.add_parameters((1,))]
    cases = [(matrix, params, [rng.normal(size=(2, 3)) for _ in range(5)], [rng.normal(size=6) for _ in range(5)]),
             (scalar, scalar_params, list(rng.normal(size=7)), list(rng.normal(size=7)))]
    for cell, ps, xs, ys in cases:
        for a, b in zip(rtrl(cell, ps, xs, ys).grads, bptt(cell, ps, xs, ys).grads):
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-6)


def test_truncated_bptt_equals_bptt_when_the_truncation_covers_the_sequence(rnn, rng):
    cell, params = rnn
    xs, ys = sequence(rng, 9, 2, 3)
    full = bptt(cell, params, xs, ys)
    for truncation in (9, 20):
        cut = bptt(cell, params, xs, ys, truncation)
        assert cut.loss == full.loss
        np.testing.assert_allclose(flatten(cut.grads), flatten(full.grads), rtol=0, atol=1e-7)
    short = bptt(cell, params, xs, ys, 2)
    assert short.loss == pytest.approx(full.loss, rel=1e-6)         # cutting changes gradients, not the loss
    assert not np.allclose(flatten(short.grads), flatten(full.grads), atol=1e-3)


class Signs:
    """Stands in for UORO's generator, which draws each step's ν as `rng.choice([-1.0, 1.0], size=d)`:
    hands out a given sequence of sign vectors instead."""

    def __init__(self, signs):
        self.signs = iter(signs)

    def choice(self, values, size):
        return next(self.signs)


@pytest.mark.parametrize("n, length", [(3, 3), (2, 5)])
def test_uoro_averaged_over_every_sign_sequence_is_bptt(n, length):
    # ν_1..ν_T take 2^(nT) values, equally likely: their average is UORO's exact expectation.
    pc = dy.ParameterCollection()
    cell, params = second_order_cell(n, 2), second_order_params(pc, n, 2, 3)
    xs, ys = sequence(np.random.default_rng(n), length, 2, 3)
    signs = np.array(list(itertools.product([-1.0, 1.0], repeat=n * length))).reshape(-1, length, n)
    mean = np.mean([flatten(uoro(cell, params, xs, ys, Signs(nus)).grads) for nus in signs], axis=0)
    np.testing.assert_allclose(mean, flatten(bptt(cell, params, xs, ys).grads), rtol=0, atol=1e-6)


def test_uoro_sample_mean_approaches_bptt(rnn):
    """The mean of N = 500 UORO estimates with random signs lies within 3 standard errors of BPTT's
    gradient.

    The standard error of the mean is sqrt(tr Σ / N), Σ being the covariance of one estimate
    (measured from the samples): an unbiased estimator's error falls like 1/sqrt(N). Here one
    estimate is typically off by more than the gradient's norm, while the standard error of the mean is under
    15 % of it. Three standard errors leave room for chance: E|error|² = tr Σ / N, so by Markov's
    inequality the bound fails with probability under 1/9 (the seed is fixed; the error is 1.3
    standard errors). The exact test above is the one that rules out a bias; this one shows the
    estimator working with a real generator. The parameters the step does not use (V, c) get their
    exact, explicit gradient in every sample, and the loss is exact too.
    """
    cell, params = rnn
    rng = np.random.default_rng(3)
    xs, ys = sequence(rng, 5, 2, 3)
    reference = bptt(cell, params, xs, ys)
    recurrent = params[0].as_array().size + params[1].as_array().size      # W and b come first
    exact = flatten(reference.grads)
    samples = []
    for _ in range(500):
        estimate = uoro(cell, params, xs, ys, rng)
        assert estimate.loss == pytest.approx(reference.loss, rel=1e-6)
        np.testing.assert_allclose(flatten(estimate.grads)[recurrent:], exact[recurrent:], rtol=0, atol=1e-6)
        samples.append(flatten(estimate.grads)[:recurrent])
    samples, norm = np.array(samples), np.linalg.norm(exact[:recurrent])
    spread = np.sqrt(samples.var(axis=0, ddof=1).sum())         # sqrt(tr Σ): one estimate's typical error
    standard_error = spread / np.sqrt(len(samples))
    assert spread > norm
    assert standard_error < 0.15 * norm
    assert np.linalg.norm(samples.mean(axis=0) - exact[:recurrent]) < 3 * standard_error


def test_sequence_gradient_dispatches_and_validates(rnn, rng):
    cell, params = rnn
    xs, ys = sequence(rng, 6, 2, 3)
    tbptt = sequence_gradient(GradientConfig("tbptt", truncation=2), cell, params, xs, ys, rng)
    np.testing.assert_array_equal(flatten(tbptt.grads), flatten(bptt(cell, params, xs, ys, 2).grads))
    np.testing.assert_allclose(flatten(sequence_gradient(GradientConfig("rtrl"), cell, params, xs, ys, rng).grads),
                               flatten(bptt(cell, params, xs, ys).grads), rtol=0, atol=1e-6)
    for bad in (GradientConfig("adjoint"), GradientConfig("tbptt", truncation=0), GradientConfig(epsilon=0.0)):
        with pytest.raises(UserError):
            sequence_gradient(bad, cell, params, xs, ys, rng)


def test_precomputed_loss_updates_like_backpropagation(rng):
    # Two identical models; one backpropagates the unrolled loss through its parameters, the other
    # hands RTRL's gradient to the same optimizer step. The updated parameters must agree.
    cell = second_order_cell(3, 2)
    xs, ys = sequence(rng, 6, 2, 3)
    models = []
    for _ in range(2):
        pc = dy.ParameterCollection()
        params = second_order_params(pc, 3, 2, 3)
        models.append((pc, params, dy.SimpleSGDTrainer(pc, learning_rate=0.5)))
    for p, q in zip(models[0][1], models[1][1]):
        q.set_value(p.as_array())
    (_, direct, opt_direct), (_, hooked, opt_hooked) = models
    dy.renew_cg()
    s, losses = dy.inputTensor(cell.initial), []
    for x, y in zip(xs, ys):
        s = cell.step(direct, s, x)
        losses.append(cell.loss(direct, s, y))
    dy.esum(losses).backward()
    opt_direct.update()
    loss = precomputed_loss(hooked, [rtrl(cell, hooked, xs, ys)])
    loss.backward()
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
        units = sum(len(xs) for xs, _ in batch)
        if self.grad is not None:
            rng = np.random.default_rng(0)
            results = [sequence_gradient(self.grad, self.cell, self.params, xs, ys, rng) for xs, ys in batch]
            yield precomputed_loss(self.params, results, 1 / len(batch)), units
            return
        dy.renew_cg()
        terms = []
        for xs, ys in batch:
            s = dy.inputTensor(self.cell.initial)
            for x, y in zip(xs, ys):
                s = self.cell.step(self.params, s, x)
                terms.append(self.cell.loss(self.params, s, y))
        yield dy.esum(terms) / len(batch), units

    def validate(self):
        return {"val_loss": sum(bptt(self.cell, self.params, xs, ys).loss for xs, ys in self.data)}

    def save(self, directory):
        self.pc.save(str(directory / "params"))

    def restore(self, directory):
        self.pc.populate(str(directory / "params"))


def test_trainer_trains_with_rtrl_as_with_backpropagation(tmp_path, rng):
    # The same initialisation (the trainer seeds DyNet before building), two epochs of SGD on the same
    # minibatches: RTRL's gradients through `PrecomputedLoss` must move the parameters as
    # DyNet's backward does.
    data = [sequence(rng, 5, 2, 3) for _ in range(6)]
    train = TrainConfig(epochs=2, lr=0.5, lr_schedule="constant", seed=4)
    initial, trained = {}, {}
    for name, grad in (("backward", None), ("rtrl", GradientConfig("rtrl"))):
        objectives = []

        def build(seed):
            objectives.append(CellObjective(grad, data))
            initial[name] = flatten([p.as_array() for p in objectives[-1].params])
            return objectives[-1]

        Trainer(train, build, progress=False).fit(tmp_path / name)
        trained[name] = flatten([p.as_array() for p in objectives[-1].params])
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
