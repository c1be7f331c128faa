"""Gradients of a small recurrent cell's loss over a minibatch of sequences: BPTT, truncated BPTT, RTRL and UORO.

The NSPDA paper (Mali, Ororbia & Giles 2019) trains its small higher-order networks with RTRL and UORO (appendix,
eq. 18-23); here for any cell written with DyNet expressions, with BPTT as the reference they are tested against.

A cell (`Cell`) is two pure functions of DyNet expressions and a constant initial state:

    s_t = f(θ, s_{t-1}, x_t)     `step`: the recurrence, from s_0 = `initial`
    L_t = ℓ(θ, s_t, y_t)         `loss`: a scalar, at the steps a sequence is scored

where θ is the list of the cell's parameters. A `MemoryCell` also carries a part of the state no gradient flows through
(the NSPDA's discrete stack): s_t, m_t = f(θ, s_{t-1}, x_t, m_{t-1}), m follows the step's values (the quantized
actions) but ∂s_t/∂m = 0, so the algorithms just thread m along. Every algorithm returns dL/dθ for L = Σ_b Σ_t L_bt,
summed over the sequences b of a minibatch:

BPTT   reverse mode through the unrolled graph; truncated BPTT cuts it every k steps, carrying the
       state's value (not its gradient) across the cut.
RTRL   (Williams & Zipser 1989) forward accumulation of the influence matrix P_t = ds_t/dθ (d x p
       for d state units and p parameters), per sequence:
           P_t = (∂f/∂s) P_{t-1} + ∂f/∂θ,    P_0 = 0 (s_0 does not depend on θ),
           dL/dθ = Σ_t ∂ℓ_t/∂θ + (∂ℓ_t/∂s_t) P_t.
       Exact. The update costs O(d² p) a step: O(n⁴ m) for an n-unit second-order RNN with m inputs.
UORO   (Tallec & Ollivier 2017, "Unbiased Online Recurrent Optimization", Algorithm 1) keeps, per sequence, a rank-one
       estimate P_t ≈ s̃_t θ̃_tᵀ. With fresh random signs ν ∈ {±1}^d at each step,
           ρ0 = sqrt((‖θ̃‖ + ε) / (‖(∂f/∂s) s̃‖ + ε)),   ρ1 = sqrt((‖νᵀ ∂f/∂θ‖ + ε) / (‖ν‖ + ε)),
           s̃ ← ρ0 (∂f/∂s) s̃ + ρ1 ν,                  θ̃ ← θ̃ / ρ0 + (νᵀ ∂f/∂θ) / ρ1,
           dL/dθ ≈ Σ_t ∂ℓ_t/∂θ + (∂ℓ_t/∂s_t · s̃_t) θ̃_t.
       Unbiased: s̃ θ̃ᵀ expands into (∂f/∂s) s̃ θ̃ᵀ + ν νᵀ ∂f/∂θ plus two cross terms that are odd in ν
       (ρ1 is even in ν), so E[s̃_t θ̃_tᵀ] = (∂f/∂s) E[s̃_{t-1} θ̃_{t-1}ᵀ] + ∂f/∂θ = P_t by induction.
       The normalisers ρ0, ρ1 cancel in the product; they only balance the two factors' norms, which
       keeps the variance down.

How (docs/gradients.md says why). The sequences run in lockstep, a sequence leaving after its last step. With
iterative refinement (eq. 17, `refine` K > 1) every method runs the same unrolled sequence of passes: at each step
K - 1 refinement passes (the cell's `refine`: the recurrence again on x_t, the memory untouched; a hinted sequence
keeps its state) and then the step, each pass scored (`Pass`, `_Lockstep`). To the forward methods a pass is one
more step of the recurrence, so RTRL stays exact and UORO unbiased.

RTRL and BPTT run any DyNet `Cell`: a step is one graph holding two calls of the cell, the batch and d copies of it
(copy c of sequence b at batch index c·n + b, its inputs repeated and its memory tiled alike), and one backward
pass. RTRL gives each copy its own parameters, so the gradients at copy c are row c of ∂f/∂s and of ∂f/∂θ.

UORO is one algorithm (`uoro`, its update `uoro_update`), in numpy over (n, p) arrays: θ̃ and s̃ of every sequence,
updated in place. It sorts the minibatch longest first (stable), so that the running sequences are a prefix and
their rows views; ν is still drawn in batch order. What it needs of a step, (∂f/∂s) s̃, each sequence's νᵀ ∂f/∂θ,
∂ℓ/∂s_t and ∂ℓ/∂θ, comes from one of two sources:
- `_ArraySteps`, a model's `ArrayCell` (`stackparse.models.arrays`: rnn2, nspda2 and nspda3 in numpy, the
  derivatives written by hand, the per-sequence gradients of a linear layer batched as outer products): fast, what
  training uses (`methods.Online`). It draws eq. 6's read values from `rng`. For nspda2 and nspda3 the whole loop,
  this update included, runs compiled (`_compiled_uoro`, `stackparse/models/nspda_uoro.c`) where a C compiler
  works: the same numbers drawn in the same order, the same arithmetic; the numpy loop is its reference.
- `_DyNetSteps`, any DyNet `Cell` (the generic path, and the reference the mirror is tested against): copy c is
  fed s + α_c s̃ with α_c = 0, so the gradient in α_c is ((∂f/∂s) s̃)_c, exact; the batch runs with θ + z_b
  (z_b = 0, one per sequence) and νᵀ s_t is differentiated, so the gradient in z_b is νᵀ ∂f/∂θ; the loss is taken
  on s_t + β (β = 0, no gradient into s_t past it), the gradient in β being ∂ℓ/∂s_t. Its B·p numbers a step are
  read back from DyNet one at a time (40 to 110 ns each): slow, but no longer a second copy of the update.
The parameters enter as constants, so their own gradients are left alone; `PrecomputedLoss` hands the result to the
trainer. DyNet's generator starts both calls of step t from one seed, drawn once from `rng`, plus t: cells that
draw random numbers (the NSPDA's eq. 6 reads) then draw alike in the batch and its copies, and BPTT, RTRL and the
DyNet UORO alike given generators in the same state.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Callable, Iterator, NamedTuple, Sequence

import dynet as dy
import numpy as np

from stackparse._dynet import product as matmul
from stackparse._dynet_views import views
from stackparse.cells import Cell, advance, memory_of, tiled
from stackparse.config import check, setting
from stackparse.models.arrays import ArrayCell, Loss, NSPDAArrays, nspda_kernel
from stackparse.sequences import Example, pad, reattach
from stackparse.training.refinement import hint_matrix

METHODS = ("bptt", "tbptt", "rtrl", "uoro")


@dataclass(frozen=True)
class Gradient:
    """The summed loss of a minibatch of sequences and its gradient, one array per parameter, in their shapes."""
    loss: float
    grads: list[np.ndarray]


@dataclass(frozen=True)
class GradientConfig:
    method: str = setting("bptt", "bptt (full), tbptt (truncated every `truncation` steps), rtrl or uoro",
                          choices=METHODS)
    truncation: int = setting(50, "tbptt's segment length in steps", min=1)
    epsilon: float = setting(1e-7, "UORO's ε, which keeps ρ0 and ρ1 finite when s̃ or θ̃ vanish (e.g. at "
                             "the first step)", min=0, min_open=True)

    def validate(self) -> None:
        check(self)


def batch_gradient(config: GradientConfig, cell: Cell | ArrayCell, params: Sequence[dy.Parameters],
                   examples: Sequence[Example], rng: np.random.Generator, refine: int = 1,
                   hints: Callable[[Example], tuple] | None = None) -> Gradient:
    """dL/dθ for a minibatch by the configured method.

    Args:
        config: the method and its settings.
        cell: the recurrence and the loss.
        params: the cell's parameters, in the order its functions receive them.
        examples: the sequences: each step's input goes to the step, its target to the loss where scored.
        rng: each step's seed for DyNet's generator, and UORO's random signs.
        refine: K of iterative refinement (eq. 17): K passes per step (`_schedule`); 1 = none.
        hints: an example's hint vector H (`stackparse.training.rules`), None for H = 0.
    Returns:
        The summed loss and its exact (UORO: unbiased estimate of the) gradient.
    """
    config.validate()
    if config.method == "rtrl":
        return rtrl(cell, params, examples, rng, refine, hints)
    if config.method == "uoro":
        return uoro(cell, params, examples, rng, config.epsilon, refine, hints)
    return bptt(cell, params, examples, rng, config.truncation if config.method == "tbptt" else 0, refine, hints)


def bptt(cell: Cell, params: Sequence[dy.Parameters], examples: Sequence[Example], rng: np.random.Generator,
         truncation: int = 0, refine: int = 1, hints: Callable[[Example], tuple] | None = None) -> Gradient:
    """Backpropagation through time, full or truncated: the reference for the other methods.

    Args:
        cell, params, examples, rng, refine, hints: as for `batch_gradient`.
        truncation: cut the graph every this many passes (steps, without refinement; 0: never), carrying the
            state's value.
    Returns:
        The loss and its gradient (exact when nothing is cut).
    """
    run = _Lockstep(cell, params, examples, rng, refine, hints)
    steps, grad, total = run.steps(), np.zeros(run.size), 0.0
    for _ in range(0, run.passes, truncation or max(run.passes, 1)):
        dy.renew_cg()
        theta = _constants(params)
        state, running, losses = run.state_input(), run.running, []
        for step in itertools.islice(steps, truncation or run.passes):
            if len(run.running) < len(running):
                state = dy.pick_batch_elems(state, np.flatnonzero(np.isin(running, run.running)).tolist())
            state, run.memory = run.run(theta, state, step, run.memory)
            running, loss = run.running, run.loss(theta, state, step)
            losses += [loss] if loss is not None else []
        run.state[:, running] = _values(state.npvalue(), run.d, len(running))
        if losses:
            segment = dy.esum(losses)
            total += segment.value()
            segment.backward(full=True)     # full: gradients reach the constants standing for θ
            grad += _flatten([e.gradient() for e in theta])
    return Gradient(total, run.unflatten(grad))


def rtrl(cell: Cell, params: Sequence[dy.Parameters], examples: Sequence[Example],
         rng: np.random.Generator, refine: int = 1, hints: Callable[[Example], tuple] | None = None) -> Gradient:
    """Real-time recurrent learning: the exact gradient by forward accumulation of P_t = ds_t/dθ.

    Args:
        cell, params, examples, rng, refine, hints: as for `batch_gradient`.
    Returns:
        The loss and its gradient, equal to BPTT's up to rounding.
    """
    run = _Lockstep(cell, params, examples, rng, refine, hints)
    influence = np.zeros((run.batch_size, run.d, run.size))        # P_t of each sequence: (B, d, p)
    grad, total = np.zeros(run.size), 0.0
    for step in run.steps():
        rows, n = run.running, len(run.running)
        dy.renew_cg()
        s_prev, theta = run.state_input(), _constants(params)
        s_new, memory = run.run(theta, s_prev, step, run.memory)
        copies = dy.concatenate_to_batch([s_prev] * run.d)                        # (d,) x d·n
        shifts = [dy.zeros(s, batch_size=run.d * n) for s in run.shapes]          # each copy's own θ
        picked = run.copies([e + z for e, z in zip(_constants(params), shifts)], copies, step)
        beta, loss_theta = dy.zeros((run.d,), batch_size=n), _constants(params)
        loss = run.loss(loss_theta, dy.nobackprop(s_new) + beta, step)        # β: ∂ℓ/∂s_t
        (dy.sum_batches(picked) + (loss if loss is not None else 0)).backward(full=True)
        ds_ds = _values(copies.gradient(), run.d, run.d, n).transpose(2, 1, 0)   # row c from copy c: (n, d, d)
        ds_dtheta = np.concatenate([np.asarray(z.gradient(), dtype=float).reshape(-1, run.d * n, order="F")
                                    for z in shifts]).reshape(run.size, run.d, n).transpose(2, 1, 0)   # (n, d, p)
        influence[rows] = ds_ds @ influence[rows] + ds_dtheta       # P_t = (∂f/∂s) P_{t-1} + ∂f/∂θ
        if loss is not None:
            dl_ds = _values(beta.gradient(), run.d, n)
            grad += _flatten([e.gradient() for e in loss_theta]) + np.einsum("db,bdp->p", dl_ds, influence[rows])
            total += loss.value()
        run.state[:, rows], run.memory = _values(s_new.npvalue(), run.d, n), memory
    return Gradient(total, run.unflatten(grad))


def uoro(cell: Cell | ArrayCell, params: Sequence[dy.Parameters], examples: Sequence[Example],
         rng: np.random.Generator, epsilon: float = 1e-7, refine: int = 1,
         hints: Callable[[Example], tuple] | None = None, compiled: bool = True) -> Gradient:
    """Unbiased online recurrent optimization: a rank-one, unbiased estimate of RTRL's gradient per sequence.

    Args:
        cell: the recurrence and the loss: a DyNet `Cell`, or a model's `ArrayCell` (its numpy mirror, fast).
        params, examples, refine, hints: as for `batch_gradient`.
        rng: draws, for a DyNet cell, the seed of DyNet's generator (`rng.integers`) (for an `ArrayCell`, the eq. 6
            read values it draws, if any), then at each pass the signs ν of the n running sequences,
            `rng.choice([-1.0, 1.0], size=(n, d))`, row b for the b-th of them in batch order.
        epsilon: keeps the normalisers finite while s̃ or θ̃ are zero.
        compiled: an NSPDA's mirror runs the whole loop compiled (`_compiled_uoro`) where a C compiler works; false:
            the numpy loop here, step by step.
    Returns:
        The loss (exact) and an unbiased estimate of its gradient.
    """
    if compiled and isinstance(cell, NSPDAArrays) and (kernel := nspda_kernel()) is not None:
        return _compiled_uoro(kernel, cell, params, examples, rng, epsilon, refine, hints)
    order = np.argsort([-len(e) for e in examples], kind="stable")      # longest first: the running are a prefix
    source = (_ArraySteps if isinstance(cell, ArrayCell) else _DyNetSteps)(cell, params, [examples[i] for i in order],
                                                                          rng, refine, hints)
    batch, d, size = len(examples), source.d, source.size
    s_tilde, theta_tilde, grad, total = np.zeros((batch, d)), np.zeros((batch, size)), np.zeros(size), 0.0
    n = None
    for step in source.steps():
        if n != (running := int((source.lengths > step.t).sum())):         # the running change between steps only
            n, to_sorted = running, np.argsort(np.argsort(order[:running]))   # ν's rows: batch order -> sorted
        nu = rng.choice([-1.0, 1.0], size=(n, d))[to_sorted]
        out = source.step(step, n, s_tilde[:n], nu)
        uoro_update(s_tilde[:n], theta_tilde[:n], out.forward, out.vjp, nu, epsilon)
        if out.loss is not None:
            total += out.loss.total
            grad += out.loss.params + np.einsum("bd,bd->b", out.loss.state, s_tilde[:n]) @ theta_tilde[:n]
    return Gradient(total, source.unflatten(grad))


def _compiled_uoro(kernel, cell: NSPDAArrays, params: Sequence[dy.Parameters], examples: Sequence[Example],
                   rng: np.random.Generator, epsilon: float, refine: int,
                   hints: Callable[[Example], tuple] | None) -> Gradient:
    """`uoro` over an NSPDA's mirror with every pass in C (`stackparse/models/nspda_uoro.c`): the numpy loop costs
    about 25 small array operations a pass, a few microseconds each whatever their size, and online SGD (one string
    a minibatch, the paper's) cannot amortise them. The random numbers are drawn first, from `rng` in the order the
    numpy loop draws them (the initial read's values, then each pass's ν, then, at a step's last pass, the step's
    read values), so the two give the same estimate up to the order of their sums (and a quantizer's tie, which the
    order of the sums may break the other way)."""
    order = np.argsort([-len(e) for e in examples], kind="stable")
    examples = [examples[i] for i in order]
    inputs, targets, mask = pad(examples)
    lengths, length, batch = np.array([len(e) for e in examples], dtype=np.int64), len(inputs), len(examples)
    hinted = hint_matrix(examples, length, hints if refine > 1 else None).astype(np.uint8)
    theta = [np.ascontiguousarray(th, dtype=float) for th in cell.used([p.as_array() for p in params])]
    state, stack = cell.start(batch, length, rng)
    d, size = state.shape[1], cell.size
    nus, values = np.zeros((length * refine, batch, d)), np.zeros((length, 3, cell.reads))
    n = None
    for t in range(length):
        if n != (running := int((lengths > t).sum())):
            n, to_sorted = running, np.argsort(np.argsort(order[:running]))
        # the K passes' ν in one draw: numpy's generator gives rng.choice([-1.0, 1.0], size) one 32-bit draw a sign,
        # as it does rng.integers(0, 2, size), and draws in turn what one larger call draws at once (numpy's own
        # implementation; tests/test_uoro_arrays.py holds the two paths to the same estimate)
        nus[t * refine:(t + 1) * refine, :n] = (2.0 * rng.integers(0, 2, size=(refine, n, d)) - 1.0)[:, to_sorted]
        values[t] = cell.read_values_of(rng)
    total, grad = np.zeros(1), np.zeros(size)
    arrays = [*theta, *(a.astype(kind, order="C") for a, kind in ((inputs, np.int64), (targets, np.int64),
                                                                     (mask, float))), hinted, lengths,
              state, stack.symbols, stack.depth, nus, values, np.array([epsilon]), total, grad,
              np.zeros((batch, d)), np.zeros((batch, size)), np.zeros(size)]
    pointers = np.array([a.ctypes.data for a in arrays], dtype=np.uintp)
    pairing = int(cell.order == 2 and cell.pairing != "read-input")
    ints = np.array([batch, cell.n, cell.inputs, theta[4].shape[0], theta[0].shape[1], size, cell.order, pairing,
                     int(cell.quantize_states), int(cell.action_quantizer == "paper"), int(cell.readout != "state"),
                     refine, stack.symbols.shape[1]], dtype=np.int64)
    kernel.nspda_uoro(ints.ctypes.data, pointers.ctypes.data)
    return Gradient(float(total[0]), _unflatten(grad, [th.shape for th in theta]))


def uoro_update(s_tilde: np.ndarray, theta_tilde: np.ndarray, forward: np.ndarray, vjp: np.ndarray, nu: np.ndarray,
                epsilon: float) -> None:
    """One step of UORO's update (module docstring), for n sequences at once, in place: s̃ and θ̃ are B·p numbers
    that every step rewrites, and a fresh copy of them a step costs as much again as the update (measured).

    Args:
        s_tilde, theta_tilde: s̃_{t-1} (n, d) and θ̃_{t-1} (n, p), overwritten with s̃_t and θ̃_t.
        forward: (∂f/∂s) s̃_{t-1}, (n, d). vjp: νᵀ ∂f/∂θ, (n, p), overwritten (scaled). nu: ν, (n, d).
        epsilon: keeps ρ0 and ρ1 finite.
    Returns:
        Nothing: s_tilde and theta_tilde hold the result.
    """
    rho0 = np.sqrt((_norms(theta_tilde) + epsilon) / (_norms(forward) + epsilon))[:, None]
    rho1 = np.sqrt((_norms(vjp) + epsilon) / (_norms(nu) + epsilon))[:, None]
    s_tilde[:] = rho0 * forward + rho1 * nu
    theta_tilde *= 1.0 / rho0
    vjp *= 1.0 / rho1
    theta_tilde += vjp


def _norms(rows: np.ndarray) -> np.ndarray:
    """The Euclidean norm of each row (one pass: `einsum`)."""
    return np.sqrt(np.einsum("ij,ij->i", rows, rows))


class Pass(NamedTuple):
    """One application of the cell in the unrolled sequence: the step itself, or a refinement pass before it."""
    t: int          # the input step
    refine: bool    # a refinement pass (eq. 17): the recurrence again on x_t, the memory left alone
    index: int      # its place among all passes: DyNet's generator starts it from the seed plus this


def _schedule(length: int, refine: int) -> Iterator[Pass]:
    """The passes of `length` steps with K = `refine`: at each step K - 1 refinement passes, then the step."""
    for t in range(length):
        for k in range(refine):
            yield Pass(t, k < refine - 1, t * refine + k)


def _scored(mask: np.ndarray, hinted: np.ndarray, step: Pass) -> np.ndarray:
    """The weights of a pass's loss: the step's, but none for a hinted step's refinement passes (S(t) = 1)."""
    return mask * ~(hinted & step.refine)


class _Step(NamedTuple):
    """What UORO needs of a pass of the n running sequences: (∂f/∂s) s̃ (n, d), νᵀ ∂f/∂θ (n, p), and the loss
    (None where none of them is scored)."""
    forward: np.ndarray
    vjp: np.ndarray
    loss: Loss | None


class _ArraySteps:
    """An `ArrayCell` stepped over the sorted minibatch: the parameters' values read once, the states and memory
    of the running sequences (a prefix) kept in numpy. A refinement pass leaves the memory alone; a sequence it
    holds (hinted) keeps its state, so that its ∂f/∂s is the identity and its ∂f/∂θ zero."""

    def __init__(self, cell: ArrayCell, params: Sequence[dy.Parameters], examples: Sequence[Example],
                 rng: np.random.Generator, refine: int = 1, hints: Callable[[Example], tuple] | None = None):
        self.cell, self.rng, self.size, self.refine = cell, rng, cell.size, refine
        self.inputs, self.targets, self.mask = pad(list(examples))                  # (T, B) each
        self.lengths, self.length = np.array([len(e) for e in examples]), len(self.inputs)
        self.hinted = hint_matrix(list(examples), self.length, hints if refine > 1 else None)
        self.theta = cell.used([np.asarray(p.as_array(), dtype=float) for p in params])
        self.shapes = [th.shape for th in self.theta]
        self.state, self.memory = cell.start(len(examples), self.length, rng)
        self.d, self.vjp = self.state.shape[1], np.zeros((len(examples), self.size))   # reused: module docstring

    def steps(self) -> Iterator[Pass]:
        return _schedule(self.length, self.refine)

    def step(self, step: Pass, n: int, s_tilde: np.ndarray, nu: np.ndarray) -> _Step:
        t, vjp = step.t, self.vjp[:n]
        if step.refine:
            state, linear = self.cell.refine(self.theta, self.state[:n], self.inputs[t, :n])
        else:
            memory = None if self.memory is None else self.memory.head(n)
            state, self.memory, linear = self.cell.step(self.theta, self.state[:n], memory, self.inputs[t, :n],
                                                        self.rng)
        forward = self.cell.jvp(self.theta, linear, s_tilde)
        self.cell.vjp(linear, nu, vjp)
        held = self.hinted[t, :n] & step.refine
        if held.any():
            state[held], forward[held], vjp[held] = self.state[:n][held], s_tilde[held], 0.0
        self.state = state
        weights = _scored(self.mask[t, :n], self.hinted[t, :n], step)
        loss = self.cell.loss(self.theta, state, self.targets[t, :n], weights) if weights.any() else None
        return _Step(forward, vjp, loss)

    def unflatten(self, vector: np.ndarray) -> list[np.ndarray]:
        return _unflatten(vector, self.shapes)


class _DyNetSteps:
    """A DyNet `Cell` stepped over the sorted minibatch (`_Lockstep`), each step one graph (module docstring: How):
    the batch with θ + z_b (νᵀ s_t differentiated), its d copies fed s + α_c s̃, the loss on s_t + β."""

    def __init__(self, cell: Cell, params: Sequence[dy.Parameters], examples: Sequence[Example],
                 rng: np.random.Generator, refine: int = 1, hints: Callable[[Example], tuple] | None = None):
        self.run, self.params = _Lockstep(cell, params, examples, rng, refine, hints), params
        self.d, self.size, self.length, self.lengths = self.run.d, self.run.size, self.run.length, self.run.lengths
        self.unflatten = self.run.unflatten

    def steps(self) -> Iterator[Pass]:
        """`_Lockstep.steps`: the sequences that have ended (the last ones) leave before a step's first pass."""
        return self.run.steps()

    def step(self, step: Pass, n: int, s_tilde: np.ndarray, nu: np.ndarray) -> _Step:
        run, d = self.run, self.d
        dy.renew_cg()
        s_prev, theta = run.state_input(), _constants(self.params)
        shifts = [dy.zeros(s, batch_size=n) for s in run.shapes]                  # z_b: θ + z_b for sequence b
        s_new, memory = run.run([e + z for e, z in zip(theta, shifts)], s_prev, step, run.memory)
        alpha = dy.zeros((1,), batch_size=d * n)                                   # copy c: s + α_c s̃
        copies = dy.concatenate_to_batch([s_prev] * d) + matmul(
            dy.concatenate_to_batch([reattach([s_tilde.T])[0]] * d), alpha)
        picked = run.copies(_constants(self.params), copies, step)
        beta, loss_theta = dy.zeros((d,), batch_size=n), _constants(self.params)
        loss = run.loss(loss_theta, dy.nobackprop(s_new) + beta, step)            # β: ∂ℓ/∂s_t
        terms = [dy.sum_batches(dy.dot_product(s_new, reattach([nu.T])[0])), dy.sum_batches(picked)]
        dy.esum(terms + ([loss] if loss is not None else [])).backward(full=True)
        forward = _values(alpha.gradient(), d, n).T
        vjp = np.concatenate([np.asarray(z.gradient(), dtype=float).reshape(-1, n, order="F") for z in shifts]).T
        if loss is not None:
            loss = Loss(loss.value(), _values(beta.gradient(), d, n).T, _flatten([e.gradient() for e in loss_theta]))
        run.state[:, run.running], run.memory = _values(s_new.npvalue(), d, n), memory
        return _Step(forward, vjp, loss)


class _Lockstep:
    """The sequences of a minibatch stepped together as one DyNet batch: the state values of each, flattened in
    DyNet's (column-major) order, (d, B); the indices of those still running and their memory. A sequence leaves
    the batch after its last step (its remaining steps would be unscored: they change no gradient). With
    refinement (`refine` K > 1, `stackparse.training.refinement`, eq. 17) each step is K passes (`_schedule`), K - 1
    refinement passes (`Cell.refine`) and the step, every one scored where the step is, except the refinement passes
    of a hinted step (its S(t) = 1: those sequences keep their state through them). DyNet's generator starts each
    pass from a seed drawn once from `rng`, plus the pass's index."""

    def __init__(self, cell: Cell, params: Sequence[dy.Parameters], examples: Sequence[Example],
                 rng: np.random.Generator, refine: int = 1, hints: Callable[[Example], tuple] | None = None):
        self.cell, self.batch_size = cell, len(examples)
        self.inputs, self.targets, self.mask = pad(list(examples))                  # (T, B) each
        self.lengths, self.length = np.array([len(e) for e in examples]), len(self.inputs)
        if refine > 1 and cell.refine is None:
            raise ValueError("refinement needs a cell with a refinement pass (Cell.refine)")
        self.refine, self.passes = refine, self.length * refine
        self.hinted = hint_matrix(list(examples), self.length, hints if refine > 1 else None)   # H: (T, B)
        self.seed = int(rng.integers(1, 2 ** 31 - 1 - self.passes))
        self.shape, self.d = cell.initial.shape, cell.initial.size
        self.shapes = [tuple(p.shape()) for p in params]
        self.size = sum(int(np.prod(s)) for s in self.shapes)                       # p
        self.state = np.repeat(cell.initial.reshape(-1, 1, order="F"), self.batch_size, axis=1).astype(float)
        self.running = np.arange(self.batch_size)
        self.memory = memory_of(cell, [0] * self.batch_size)

    def steps(self) -> Iterator[Pass]:
        """The passes (`_schedule`); before a step's first, the sequences that have ended leave `running` and
        `memory`."""
        for step in _schedule(self.length, self.refine):
            still = self.lengths[self.running] > step.t
            if not still.all():
                self.memory = memory_of(self.cell, np.flatnonzero(still).tolist(), self.memory)
                self.running = self.running[still]
            yield step

    def state_input(self) -> dy.Expression:
        """s_{t-1} of the running sequences, a constant: (d,) x n."""
        return reattach([self.state[:, self.running]])[0]

    def items(self, rows: np.ndarray, t: int, copies: int = 1) -> list:
        """Step t's entries (inputs or targets: `rows`) of the running sequences, all of them `copies` times."""
        return [rows[t][b] for b in self.running] * copies

    def run(self, params: list[dy.Expression], state: dy.Expression, step: Pass, memory):
        """The cell's pass `step` on the running sequences (or their copies, as `state` and `memory` are), DyNet's
        generator started from the pass's seed: (s flattened, (d,) x N, computed; the memory after it)."""
        dy.reset_random_seed(self.seed + step.index)
        repeats = state.dim()[1] // len(self.running)
        xs, state = self.items(self.inputs, step.t, repeats), dy.reshape(state, self.shape)
        if step.refine:
            out = self.cell.refine(params, state, xs, np.array(self.items(self.hinted, step.t, repeats)))
        else:
            out, memory = advance(self.cell, params, state, xs, memory)
        out = dy.reshape(out, (self.d,))
        out.forward()
        return out, memory

    def copies(self, params: list[dy.Expression], states: dy.Expression, step: Pass) -> dy.Expression:
        """Pass `step` on d copies of the running sequences (`states`, (d,) x d·n, copy c of sequence b at c·n + b):
        each copy's unit c of its s, (1,) x d·n."""
        n = len(self.running)
        out, _ = self.run(params, states, step, tiled(self.cell, self.memory, self.d))
        return dy.pick_batch(out, np.repeat(np.arange(self.d), n).tolist())

    def loss(self, params: list[dy.Expression], state: dy.Expression, step: Pass) -> dy.Expression | None:
        """Σ_b ℓ(θ, s, y_t) over the running sequences that pass `step` scores (state: (d,) x n); None if none."""
        weights = _scored(self.mask[step.t, self.running], self.hinted[step.t, self.running], step)
        if not weights.any():
            return None
        losses = self.cell.loss(params, dy.reshape(state, self.shape), self.items(self.targets, step.t))
        return dy.sum_batches(losses if weights.all() else dy.cmult(losses, reattach([weights[None]])[0]))

    def unflatten(self, vector: np.ndarray) -> list[np.ndarray]:
        return _unflatten(vector, self.shapes)


def _unflatten(vector: np.ndarray, shapes: Sequence[tuple[int, ...]]) -> list[np.ndarray]:
    """One array per parameter, in its shape, from p numbers in DyNet's order (each column-major, in turn)."""
    ends = np.cumsum([int(np.prod(s)) for s in shapes])[:-1]
    return [piece.reshape(s, order="F") for piece, s in zip(np.split(np.asarray(vector, dtype=float), ends), shapes)]


def _constants(params: Sequence[dy.Parameters]) -> list[dy.Expression]:
    """The parameters' values as constants of the current graph (their gradients stay untouched)."""
    return [dy.const_parameter(p) for p in params]


def _values(array, *shape: int) -> np.ndarray:
    """A value or gradient read from DyNet, batch axis last, reshaped (DyNet drops a batch axis of 1)."""
    return np.asarray(array, dtype=float).reshape(shape)


def _flatten(arrays: Sequence[np.ndarray]) -> np.ndarray:
    """Several arrays as one vector in DyNet's order: each column-major, in turn."""
    return np.concatenate([np.asarray(a, dtype=float).reshape(-1, order="F") for a in arrays])


@dataclass(frozen=True)
class PrecomputedLoss:
    """A loss (its value `loss`) whose gradient `grads` (one array per parameter, in its shape) was computed
    outside DyNet's backward pass (RTRL, UORO, a numpy mirror), yielded in place of a loss expression; `lookups`,
    per lookup table, (LookupParameters, ids (k,), the gradients of those rows (k, dim)). The trainer only calls
    `value()` and `backward()`, so clipping, learning rate and Adam moments treat it as a backpropagated one."""
    loss: float
    params: tuple[dy.Parameters, ...]
    grads: tuple[np.ndarray, ...]
    lookups: tuple = ()

    def value(self) -> float:
        return self.loss

    def backward(self) -> None:
        """Add the gradients to the parameters': straight into DyNet's gradient memory where it can be mapped
        (`stackparse._dynet_views`: DyNet's optimizers clip and apply whatever that memory holds), else by
        backpropagating the surrogate Σ_p sum(p ⊙ g_p), whose gradient is g_p (a copy of g_p into DyNet, element
        by element), in the current graph, left alone (the objective may still hold expressions in it; backward
        only visits the surrogate's ancestors). A lookup table's rows enter by a lookup of those ids, so that the
        optimizer's sparse update touches the same rows as a backpropagated lookup's."""
        terms = []
        for p, g in zip(self.params, self.grads):
            view = views(p)
            if view is None:
                terms.append(dy.sum_elems(dy.cmult(p, dy.inputTensor(g))))
            else:
                np.add(view.grad, g, out=view.grad, casting="same_kind")
        for table, ids, rows in self.lookups:
            looked_up = dy.lookup_batch(table, [int(i) for i in ids])
            terms.append(dy.sum_batches(dy.dot_product(looked_up, reattach([rows.T])[0])))
        if terms:
            dy.esum(terms).backward()


def precomputed_loss(result, scale: float = 1.0, params: Sequence[dy.Parameters] | None = None) -> PrecomputedLoss:
    """The loss of a minibatch from its gradient, multiplied by `scale` (e.g. 1 / the number of sequences, as
    `segment_losses` divides by the streams).

    Args:
        result: the minibatch's `Gradient` (or anything with its `loss` and `grads`), or a model mirror's
            `ArrayGradient`, which also names its parameters and holds its lookup tables' row gradients.
        scale: multiplies the loss and the gradient.
        params: the parameters the gradient belongs to, in the same order; None: the result's own (`params`).
    Returns:
        What an objective's `losses` yields for the trainer.
    """
    params = result.params if params is None else params
    lookups = getattr(result, "lookups", ())
    return PrecomputedLoss(scale * result.loss, tuple(params), tuple(scale * g for g in result.grads),
                           tuple((table, ids, scale * rows) for table, ids, rows in lookups))
