"""The training step of the higher-order models in numpy, with its derivatives written by hand: what UORO runs
fast (`stackparse.training.gradients`).

DyNet has reverse mode only, so the generic `Cell` gets UORO's Jacobian-vector product (∂f/∂s) s̃ by running d
copies of the batch, and each sequence's νᵀ ∂f/∂θ by B·p numbers read back from DyNet one at a time. The models
here are small and their step is a few tensor operations, so an `ArrayCell` writes that step, its two products and
the loss's gradient directly, over the whole minibatch at once: one matrix product per step for the forward pass,
one for the Jacobian-vector product, and the per-sequence gradients of a linear layer as outer products, batched
(`affine_vjp`). It mirrors `TensorRNN.gradient_cell` (`stackparse.models.second_order`) exactly, in float64
where DyNet computes in float32:

    rnn2 (Giles et al. 1992, eq. 1)        s^t = sigmoid(W (s^{t-1} (x) x^t) + b)
    nspda2, nspda3 (NSPDA eq. 1-2, 6)     s^t = g(W^s P^t + b^s),  A^t = W^a P^t + b^a,  a^t = f(A^t),
                                          r^t = eq. 6's mix of the candidate tops' codes by alpha(a^t),
    the loss                              -log softmax(V h^t + c)[y^t],  h^t = s^t, or s^t (x) r^t (state-read)

with the state [s; r] (d = N + R) and P^t the flattened outer product `stackparse.encoders.tensors.outer` makes
(first factor fastest). The quantizers g (round(sigmoid), `quantize_states`) and f (eq. 14's cuts, or round(tanh))
pass their continuous version's derivative straight through, as `levels` does; eq. 6's alpha polynomials are
differentiated at the quantized a. The discrete stack is an `ArrayStack`. The paper's read values (eq. 6, read_values
alpha) are drawn from the numpy generator the step is given, once per step for the whole minibatch (off, on, gone:
`ALPHAS`' no-op, push and pop intervals, in that order), and once per minibatch for the initial read: the same
distribution as the DyNet model's draws, from another generator.

For nspda2 and nspda3, `nspda_uoro.c` is this step with its products and UORO's update (`stackparse.training.
gradients`) in C, every pass of a minibatch in one call (`nspda_kernel`): online SGD, one string a minibatch as the
paper trains, leaves numpy's fixed cost per operation nothing to share out.

With `discretize_training` the step runs on the rounded weights (`ArrayCell.used`: the model's `weights` in numpy,
one function a recurrent parameter, `rounding`). Their gradient passes straight through to the continuous ones, so
the products are the same functions of the values used, and the gradients the same numbers.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Callable, NamedTuple

import numpy as np

from stackparse._native import kernels
from stackparse.encoders.nspda import DOWN, UP
from stackparse.memories.discrete_stack import EMPTY, ArrayStack


def outer(factors: list[np.ndarray]) -> np.ndarray:
    """The flattened outer product of each row's factors, the first factor's index fastest (as
    `stackparse.encoders.tensors.outer`): (n, K_1), (n, K_2), ... -> (n, K_1 K_2 ...)."""
    product = factors[0]
    for factor in factors[1:]:
        product = (factor[:, :, None] * product[:, None, :]).reshape(len(product), -1)
    return product


def outer_tangent(factors: list[np.ndarray], tangents: list[np.ndarray | None]) -> np.ndarray:
    """The derivative of `outer(factors)` along `tangents` (None: a constant factor), by the product rule."""
    terms = [outer([*factors[:i], tangent, *factors[i + 1:]]) for i, tangent in enumerate(tangents)
             if tangent is not None]
    return sum(terms[1:], terms[0])


def sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-z))


def levels(x: np.ndarray, above: tuple[float, ...] = (), below: tuple[float, ...] = (), scale: float = 1.0
           ) -> np.ndarray:
    """`stackparse.encoders.tensors.levels` forward: scale (sum_a [x > a scale] - sum_b [x < b scale]) (binary and
    ternary weights of size `scale`)."""
    steps = sum((x > a * scale).astype(float) for a in above) - sum((x < b * scale).astype(float) for b in below)
    return scale * steps


def discretized(x: np.ndarray, step: float) -> np.ndarray:
    """`stackparse.encoders.tensors.discretized` forward: x to the nearest multiple of `step`, a tie away from 0 as
    DyNet's round does."""
    scaled = x * (1.0 / step)
    return np.sign(scaled) * np.floor(np.abs(scaled) + 0.5) * step


def affine_vjp(inputs: np.ndarray, grads: np.ndarray, out: np.ndarray) -> None:
    """Each row's gradient of g·(W u + b) in W and b, flattened as DyNet orders parameters (W column-major, then b):
    the outer product u gᵀ and g, written into `out`, (n, M K + M) (a view into the step's (n, p)), one operation
    for the batch. inputs u: (n, K), grads g: (n, M)."""
    n, k, m = len(inputs), inputs.shape[1], grads.shape[1]
    weights = out[:, :k * m].reshape(n, k, m)
    assert np.shares_memory(weights, out)          # reshape of a column range is a view: written in place
    np.multiply(inputs[:, :, None], grads[:, None, :], out=weights)
    out[:, k * m:(k + 1) * m] = grads


class Loss(NamedTuple):
    """A step's loss over a batch, weighted (0 where a sequence is not scored): the sum, ∂/∂s per sequence (n, d),
    and ∂/∂θ summed over the batch (p,), DyNet's order."""
    total: float
    state: np.ndarray
    params: np.ndarray


def softmax_loss(V: np.ndarray, c: np.ndarray, hidden: np.ndarray, targets: np.ndarray,
                 weights: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """Σ_b weights_b · -log softmax(V h_b + c)[y_b]: (the sum, ∂/∂h (n, H), ∂/∂V and ∂/∂c summed, flattened
    column-major then c)."""
    scores = hidden @ V.T + c                                                      # (n, O)
    scores -= scores.max(axis=1, keepdims=True)
    log_norm = np.log(np.exp(scores).sum(axis=1))
    rows = np.arange(len(targets))
    total = float(weights @ (log_norm - scores[rows, targets]))
    g = np.exp(scores - log_norm[:, None])
    g[rows, targets] -= 1.0
    g *= weights[:, None]                                                          # ∂/∂scores: (n, O)
    return total, g @ V, np.concatenate([(g.T @ hidden).reshape(-1, order="F"), g.sum(axis=0)])


class ArrayCell:
    """A model's training step over a batch of n sequences in numpy (module docstring), given the parameters'
    values `theta` (as `as_array` gives them, the order of `gradient_cell`'s parameters):

    start(n, steps, rng) -> (states (n, d), memory): before the first input, room for `steps` steps.
    step(theta, states, memory, xs, rng) -> (states, memory, linearization): one step on input ids xs (n,).
    refine(theta, states, xs) -> (states, linearization): iterative refinement's pass (eq. 17, `Refinable.refine`):
        the recurrence again on xs, any memory and its read left as they are.
    jvp(theta, linearization, tangents) -> (∂f/∂s) tangents, (n, d).
    vjp(linearization, cotangents, out) -> each sequence's cotangentsᵀ ∂f/∂θ, written into out (n, p), DyNet's
        order: the recurrence's columns (the first ones); the readout's, which the step does not use, are left as
        they are (zero: the buffer is reused, so they are never written).
    loss(theta, states, targets, weights) -> `Loss`.

    A memory has `head(n)`, its first n sequences (the algorithm sorts the batch longest first).

    `rounding`: per recurrent parameter, in `theta`'s order, what training does to its values before the step uses
    them (`discretize_training`), None for nothing; `used` applies it."""
    size: int
    rounding: tuple[Callable[[np.ndarray], np.ndarray] | None, ...]

    def used(self, theta: list[np.ndarray]) -> list[np.ndarray]:
        """The parameters' values as the step uses them: `rounding`'s functions applied (the rest unchanged)."""
        rounded = [f(value) if f else value for f, value in zip(self.rounding, theta)]
        return rounded + list(theta[len(rounded):])

    def padded(self, grads: np.ndarray) -> np.ndarray:
        """Gradients of the last parameters (the readout's), zeros for the others: (p,)."""
        return np.concatenate([np.zeros(self.size - len(grads)), grads])


@dataclass(frozen=True)
class SecondOrderArrays(ArrayCell):
    """rnn2: s^t = sigmoid(W (s^{t-1} (x) x^t) + b), parameters W, b, V, c (`n`, `inputs`: N, I; `size`: p)."""
    n: int
    inputs: int
    size: int
    rounding: tuple = ()

    def start(self, n: int, steps: int, rng) -> tuple[np.ndarray, None]:
        states = np.zeros((n, self.n))
        states[:, 0] = 1.0                                                          # s^0 = (1, 0, ..., 0)
        return states, None

    def step(self, theta, states, memory, xs, rng):
        W, b = theta[0], theta[1]
        factors = [states, np.eye(self.inputs)[xs]]
        product = outer(factors)
        y = sigmoid(product @ W.T + b)
        return y, None, (factors, product, y * (1.0 - y))

    def refine(self, theta, states, xs):
        """Stepping again: the model has no memory."""
        states, _, linearization = self.step(theta, states, None, xs, None)
        return states, linearization

    def jvp(self, theta, linearization, tangents):
        factors, _, slope = linearization
        return slope * (outer_tangent(factors, [tangents, None]) @ theta[0].T)

    def vjp(self, linearization, cotangents, out):
        _, product, slope = linearization
        affine_vjp(product, cotangents * slope, out)

    def loss(self, theta, states, targets, weights) -> Loss:
        total, d_state, d_readout = softmax_loss(theta[2], theta[3], states, targets, weights)
        return Loss(total, d_state, self.padded(d_readout))


class _NSPDAStep(NamedTuple):
    factors: list[np.ndarray]           # P^t's factors
    tangent: object                     # the state's tangent [ts; tr] -> the factors' (`NSPDAArrays.tangents`)
    product: np.ndarray                 # P^t: (n, |P|)
    state_slope: np.ndarray             # ∂s^t/∂z^t: (n, N)
    action_slope: np.ndarray            # ∂a^t/∂A^t: (n,)
    read_slope: np.ndarray              # ∂r^t/∂a^t: (n, R)
    refine: bool = False                # a refinement pass: no action, r^t = r^{t-1}


@dataclass(frozen=True)
class NSPDAArrays(ArrayCell):
    """nspda2, nspda3: eq. 1-2 and 6 on an `ArrayStack`, parameters W^s, b^s, W^a, b^a, V, c (module docstring;
    each field the model's setting of that name; `n`, `inputs`: N, I, with R = I + 2 read neurons; `size`: p;
    `alphas`: eq. 6's intervals, no-op, push, pop)."""
    n: int
    inputs: int
    size: int
    order: int
    pairing: str
    action_quantizer: str
    read_values: str
    readout: str
    quantize_states: bool
    bottom: bool
    alphas: tuple[tuple[float, float], ...]
    rounding: tuple = ()

    @property
    def reads(self) -> int:
        return self.inputs + 2

    def start(self, n: int, steps: int, rng) -> tuple[np.ndarray, ArrayStack]:
        stack = ArrayStack.empty(n, steps + self.bottom, (self.inputs,) if self.bottom else ())
        states = np.zeros((n, self.n))
        states[:, 0] = 1.0
        return np.concatenate([states, self.codes(rng)(stack.top())], axis=1), stack

    def read_values_of(self, rng) -> np.ndarray:
        """Eq. 6's values of a step, (3, R): each read neuron's when off, on and gone, drawn from `rng` in that order
        (`alphas`); one-hot reads (no draws): 0, 1, 0."""
        if self.read_values == "onehot":
            return np.array([np.zeros(self.reads), np.ones(self.reads), np.zeros(self.reads)])
        return np.array([rng.uniform(lo, hi, size=self.reads) for lo, hi in self.alphas])

    def codes(self, rng):
        """e(.) of a step (`NSPDA.codes`): tops (n,) (and, for the POP candidate, the tops it pops) -> (n, R)."""
        eye = np.eye(self.reads)
        off, on, gone = self.read_values_of(rng)

        def e(tops, popped=None):
            code = off + (on - off) * eye[self.ids(tops)]
            if popped is not None:
                marked = (popped != EMPTY) & (popped != tops)
                code += (gone - off) * eye[self.ids(popped)] * marked[:, None]
            return code
        return e

    def ids(self, tops: np.ndarray) -> np.ndarray:
        """Read neuron of each top (`NSPDA.read_ids`): EMPTY's is the last."""
        return np.where(tops == EMPTY, self.reads - 1, tops)

    def factors(self, s, r, x) -> tuple[list[np.ndarray], object]:
        """P^t's factors (`NSPDAController.product`), and the map from the state's tangent [ts; tr] to theirs
        (x is constant: None)."""
        if self.order == 3:
            return [s, x, r], lambda ts, tr: [ts, None, tr]
        if self.pairing == "read-input":
            return [s, np.concatenate([r, x], axis=1)], lambda ts, tr: [ts, np.concatenate([tr, 0 * x], axis=1)]
        return [np.concatenate([s, r], axis=1), x], lambda ts, tr: [np.concatenate([ts, tr], axis=1), None]

    def transition(self, theta, states, xs):
        """Eq. 1: (s^t, P^t's factors and their tangent map, P^t, y = sigmoid(z^t)) from the state [s; r] and xs."""
        factors, tangent = self.factors(states[:, :self.n], states[:, self.n:], np.eye(self.inputs)[xs])
        product = outer(factors)
        y = sigmoid(product @ theta[0].T + theta[1])                               # eq. 1, before g
        s = (y > 0.5).astype(float) if self.quantize_states else y                 # g: a tie goes down (`levels`)
        return s, factors, tangent, product, y

    def refine(self, theta, states, xs):
        """Eq. 1 again on x^t with the read as it is (`NSPDA.refine_cell`); the stack is not touched."""
        s, factors, tangent, product, y = self.transition(theta, states, xs)
        none = np.zeros(len(states))
        return (np.concatenate([s, states[:, self.n:]], axis=1),
                _NSPDAStep(factors, tangent, product, y * (1.0 - y), none, none[:, None], refine=True))

    def step(self, theta, states, stack, xs, rng):
        Wa, ba = theta[2], theta[3]
        s, factors, tangent, product, y = self.transition(theta, states, xs)
        A = product @ Wa[0] + ba[0]                                                # eq. 2: (n,)
        if self.action_quantizer == "paper":
            f = 2.0 * sigmoid(A) - 1.0                                             # eq. 7, cut as eq. 14
            a, action_slope = (f > UP).astype(float) - (f < DOWN), (1.0 - f * f) / 2.0
        else:
            f = np.tanh(A)
            a, action_slope = (f > 0.5).astype(float) - (f < -0.5), 1.0 - f * f
        e, tops = self.codes(rng), stack.top()
        push, pop, keep = e(xs), e(stack.top(1), tops), e(tops)                    # the candidates' codes (eq. 6)
        col = a[:, None]
        read = push * (col * (col + 1) / 2) + pop * (col * (col - 1) / 2) + keep * (1 - col * col)
        read_slope = push * (col + 0.5) + pop * (col - 0.5) - keep * (2 * col)    # the alphas' derivatives at a
        return (np.concatenate([s, read], axis=1), stack.next(a.astype(np.int64), xs),
                _NSPDAStep(factors, tangent, product, y * (1.0 - y), action_slope, read_slope))

    def jvp(self, theta, step: _NSPDAStep, tangents):
        dP = outer_tangent(step.factors, step.tangent(tangents[:, :self.n], tangents[:, self.n:]))
        ds = step.state_slope * (dP @ theta[0].T)
        if step.refine:                                                            # r^t = r^{t-1}
            return np.concatenate([ds, tangents[:, self.n:]], axis=1)
        dA = dP @ theta[2][0]
        return np.concatenate([ds, step.read_slope * (step.action_slope * dA)[:, None]], axis=1)

    def vjp(self, step: _NSPDAStep, cotangents, out):
        g_state = cotangents[:, :self.n] * step.state_slope
        g_action = (cotangents[:, self.n:] * step.read_slope).sum(axis=1) * step.action_slope   # 0 when refining
        state_part = (step.product.shape[1] + 1) * self.n                          # W^s, b^s; then W^a, b^a
        affine_vjp(step.product, g_state, out[:, :state_part])
        affine_vjp(step.product, g_action[:, None], out[:, state_part:])

    def loss(self, theta, states, targets, weights) -> Loss:
        s, r = states[:, :self.n], states[:, self.n:]
        hidden = s if self.readout == "state" else outer([s, r])
        total, d_hidden, d_readout = softmax_loss(theta[4], theta[5], hidden, targets, weights)
        if self.readout == "state":
            d_state = np.concatenate([d_hidden, np.zeros_like(r)], axis=1)
        else:
            grid = d_hidden.reshape(len(s), self.reads, self.n)                     # [b, l, n]: h = n + N l
            d_state = np.concatenate([np.einsum("bln,bl->bn", grid, r), np.einsum("bln,bn->bl", grid, s)], axis=1)
        return Loss(total, d_state, self.padded(d_readout))


@cache
def nspda_kernel():
    """UORO over a minibatch of the NSPDA compiled (`nspda_uoro.c`: `NSPDAArrays`' step and its products, and UORO's
    update, every pass of every sequence in one call), or None where no C compiler works (`stackparse._native`)."""
    return kernels(Path(__file__).with_name("nspda_uoro.c"), {"nspda_uoro": "pp"})
