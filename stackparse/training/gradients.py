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

How (docs/gradients.md says why). The sequences run in lockstep as one DyNet batch, a sequence leaving it after its
last step. A step is one graph holding two calls of the cell, the batch and d copies of it (copy c of sequence b at
batch index c·n + b, its inputs repeated and its memory tiled alike), and one backward pass:
- Copy c's output unit c is what is differentiated. RTRL gives each copy its own parameters, so the gradients at
  copy c are row c of ∂f/∂s and of ∂f/∂θ. UORO feeds copy c the state s + α_c s̃ with α_c = 0: the gradient in α_c
  is ((∂f/∂s) s̃)_c, the Jacobian-vector product, exact, one number per copy.
- UORO runs the batch itself with the parameters θ + z_b, z_b = 0 one per sequence, and differentiates νᵀ s_t: the
  gradient in z_b is sequence b's νᵀ ∂f/∂θ.
- The loss is taken on s_t + β (β = 0, no gradient into s_t past it): the gradient in β is ∂ℓ/∂s_t.
The parameters enter as constants, so their own gradients are left alone; `PrecomputedLoss` hands the result to the
trainer. UORO keeps its vectors of p numbers per sequence (θ̃, νᵀ ∂f/∂θ) and the summed gradient in DyNet (`_Probes`):
DyNet copies tensors to and from numpy one element at a time (40 to 110 ns each), which for B·p numbers per step
would cost more than all the rest; a step's UORO update (ρ0, ρ1, s̃, θ̃, the gradient) is written into the next
step's graph. DyNet's generator starts both calls of step t from one seed, drawn once from `rng`, plus t: cells that
draw random numbers (the NSPDA's eq. 6 reads) then draw alike in the batch and its copies, and BPTT and RTRL alike
given generators in the same state.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Callable, Iterator, NamedTuple, Sequence

import dynet as dy
import numpy as np

from stackparse._dynet import product as matmul
from stackparse.cells import Cell, advance, memory_of, tiled
from stackparse.config import check, setting
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


def batch_gradient(config: GradientConfig, cell: Cell, params: Sequence[dy.Parameters],
                   examples: Sequence[Example], rng: np.random.Generator, refine: int = 1,
                   hints: Callable[[Example], tuple] | None = None) -> Gradient:
    """dL/dθ for a minibatch by the configured method.

    Args:
        config: the method and its settings.
        cell: the recurrence and the loss.
        params: the cell's parameters, in the order its functions receive them.
        examples: the sequences: each step's input goes to the step, its target to the loss where scored.
        rng: each step's seed for DyNet's generator, and UORO's random signs.
        refine: K of iterative refinement (eq. 17): K passes per step (`_Lockstep`); 1 = none.
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
        loss = run.loss(loss_theta, dy.nobackprop(s_new) + beta, step)           # β: ∂ℓ/∂s_t
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


def uoro(cell: Cell, params: Sequence[dy.Parameters], examples: Sequence[Example], rng: np.random.Generator,
         epsilon: float = 1e-7, refine: int = 1, hints: Callable[[Example], tuple] | None = None) -> Gradient:
    """Unbiased online recurrent optimization: a rank-one, unbiased estimate of RTRL's gradient per sequence.

    Args:
        cell, params, examples, refine, hints: as for `batch_gradient`.
        rng: draws the seed of DyNet's generator (`rng.integers`), then at each pass the signs ν of the n running
            sequences, `rng.choice([-1.0, 1.0], size=(n, d))`, row b for the b-th of them.
        epsilon: keeps the normalisers finite while s̃ or θ̃ are zero.
    Returns:
        The loss (exact) and an unbiased estimate of its gradient.
    """
    run = _Lockstep(cell, params, examples, rng, refine, hints)
    probes = _Probes.of(run.size, run.d, run.batch_size)
    s_tilde, total, last = np.zeros((run.d, run.batch_size)), 0.0, None
    for step in run.steps():
        rows, n = run.running, len(run.running)
        nu = rng.choice([-1.0, 1.0], size=(n, run.d)).T                           # ν: (d, n)
        dy.renew_cg()
        terms = [] if last is None else [probes.finish(last, s_tilde, epsilon)]    # θ̃ of the step before
        s_prev, theta = run.state_input(), _constants(params)
        s_new, memory = run.run(run.shifted(theta, probes.vjp_shift(rows)), s_prev, step, run.memory)
        alpha = probes.alpha_shift(run.d * n)                                       # copy c: s + α_c s̃
        copies = dy.concatenate_to_batch([s_prev] * run.d) + matmul(
            dy.concatenate_to_batch([reattach([s_tilde[:, rows]])[0]] * run.d), alpha)
        picked = run.copies(theta, copies, step)
        loss = run.loss(run.shifted(theta, probes.gradient_sink()), dy.nobackprop(s_new) + probes.beta_shift(n), step)
        terms += [dy.sum_batches(dy.dot_product(s_new, reattach([nu])[0])), dy.sum_batches(picked)]
        dy.esum(terms + ([loss] if loss is not None else [])).backward()
        total += 0.0 if loss is None else loss.value()
        run.state[:, rows], run.memory = _values(s_new.npvalue(), run.d, n), memory
        last = probes.update(rows, nu, loss is not None)
    dy.renew_cg()
    probes.finish(last, s_tilde, epsilon).backward()
    probes.update(None)
    return Gradient(total, run.unflatten(probes.grad.as_array()))


class Pass(NamedTuple):
    """One application of the cell in the unrolled sequence: the step itself, or a refinement pass before it."""
    t: int          # the input step
    refine: bool    # a refinement pass (eq. 17): the recurrence again on x_t, the memory left alone
    index: int      # its place among all passes: DyNet's generator starts it from the seed plus this


class _Lockstep:
    """The sequences of a minibatch stepped together as one DyNet batch: the state values of each, flattened in
    DyNet's (column-major) order, (d, B); the indices of those still running and their memory. A sequence leaves
    the batch after its last step (its remaining steps would be unscored: they change no gradient). With
    refinement (`refine` K > 1, `stackparse.training.refinement`, eq. 17) each step is K passes, K - 1 refinement
    passes (`Cell.refine`) and the step, every one scored where the step is, except the refinement passes of a
    hinted step (its S(t) = 1: those sequences keep their state through them). DyNet's generator starts each pass
    from a seed drawn once from `rng`, plus the pass's index."""

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
        self.ends = np.cumsum([int(np.prod(s)) for s in self.shapes])
        self.size = int(self.ends[-1])                                               # p
        self.state = np.repeat(cell.initial.reshape(-1, 1, order="F"), self.batch_size, axis=1).astype(float)
        self.running = np.arange(self.batch_size)
        self.memory = memory_of(cell, [0] * self.batch_size)

    def steps(self) -> Iterator[Pass]:
        """The passes of steps t = 0, 1, ... in order; before a step's first, the sequences that have ended leave
        `running` and `memory`."""
        for t in range(self.length):
            still = self.lengths[self.running] > t
            if not still.all():
                self.memory = memory_of(self.cell, np.flatnonzero(still).tolist(), self.memory)
                self.running = self.running[still]
            for k in range(self.refine):
                yield Pass(t, k < self.refine - 1, t * self.refine + k)

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
        weights = self.mask[step.t, self.running] * ~(self.hinted[step.t, self.running] & step.refine)
        if not weights.any():
            return None
        losses = self.cell.loss(params, dy.reshape(state, self.shape), self.items(self.targets, step.t))
        return dy.sum_batches(losses if weights.all() else dy.cmult(losses, reattach([weights[None]])[0]))

    def shifted(self, theta: list[dy.Expression], shift: dy.Expression) -> list[dy.Expression]:
        """θ + shift, `shift` (p,) x N holding every parameter flattened (`unflatten`'s order), one per batch entry."""
        starts = [0, *self.ends[:-1]]
        return [e + dy.reshape(dy.pick_range(shift, int(a), int(b)), s)
                for e, a, b, s in zip(theta, starts, self.ends, self.shapes)]

    def unflatten(self, vector: np.ndarray) -> list[np.ndarray]:
        """One array per parameter, in its shape, from p numbers in DyNet's order (each column-major, in turn)."""
        return [piece.reshape(s, order="F") for piece, s in zip(np.split(np.asarray(vector, dtype=float),
                                                                         self.ends[:-1]), self.shapes)]


class _Probes:
    """What UORO keeps in DyNet (module docstring), p numbers a row, a row per sequence: θ̃ (two tables, one read
    while the other is written) and νᵀ ∂f/∂θ (two: the step before's, read, and this step's, written); the summed
    gradient; and the zeros whose gradients are (∂f/∂s) s̃ (one per copy) and ∂ℓ/∂s_t. DyNet turns a gradient into a
    value only by a parameter update, so an update here adds each probe's gradient to its value (SGD at learning
    rate -1, unclipped); the probes read are then set back to zero. Made once per size and reused (DyNet does not
    give parameter memory back).

    Written for DyNet's CPU kernels: a batch of vectors is scaled by a batched matrix product, (p, 1) (1, 1), and
    summed by a product with ones, not by `cmult` with a broadcast scalar or `sum_batches` (10 to 30 times slower on
    B·p numbers, measured); no backward pass broadcasts a scalar over B·p numbers."""
    _made: dict[tuple[int, int], _Probes] = {}

    def __init__(self, size: int, d: int, batch_size: int):
        self.pc = dy.ParameterCollection()
        self.tilde = [self.pc.add_lookup_parameters((batch_size, size), init=0.0) for _ in range(2)]
        self.vjp = [self.pc.add_lookup_parameters((batch_size, size), init=0.0) for _ in range(2)]
        self.grad = self.pc.add_parameters((size,), init=0.0)
        self.alpha = self.pc.add_parameters((d * batch_size,), init=0.0)
        self.beta = self.pc.add_parameters((d * batch_size,), init=0.0)
        self.trainer = dy.SimpleSGDTrainer(self.pc, learning_rate=-1.0)
        self.trainer.set_clip_threshold(0)
        self.size, self.d, self.batch_size, self.current = size, d, batch_size, 0

    @classmethod
    def of(cls, size: int, d: int, batch_size: int) -> _Probes:
        """Probes for p = `size` parameters, d state units and up to `batch_size` sequences, all zero."""
        probes = cls._made.get((size, d))
        if probes is None or probes.batch_size < batch_size:
            probes = cls._made[(size, d)] = cls(size, d, batch_size)
        for p in (*probes.tilde, *probes.vjp, probes.grad, probes.alpha, probes.beta):
            p.zero()
        probes.current = 0
        return probes

    def vjp_shift(self, rows: np.ndarray) -> dy.Expression:
        """z_b = 0 for the sequences `rows`, (p,) x n: the batch's θ is θ + z, so that z_b's gradient is sequence
        b's νᵀ ∂f/∂θ."""
        return dy.lookup_batch(self.vjp[1 - self.current], rows.tolist())

    def alpha_shift(self, copies: int) -> dy.Expression:
        """α = 0, (1,) x copies."""
        return dy.reshape(dy.pick_range(self.alpha.expr(True), 0, copies), (1,), batch_size=copies)

    def beta_shift(self, n: int) -> dy.Expression:
        """β = 0, (d,) x n."""
        return dy.reshape(dy.pick_range(self.beta.expr(True), 0, self.d * n), (self.d,), batch_size=n)

    def gradient_sink(self) -> dy.Expression:
        """g - g = 0, (p,): what the loss's θ is shifted by, so that the update adds ∂ℓ/∂θ to g."""
        g = self.grad.expr(True)
        return g - dy.nobackprop(g)

    def update(self, rows: np.ndarray | None, nu: np.ndarray | None = None, scored: bool = False):
        """Apply the step's gradients to the probes; then what `finish` needs of the step (None after the last):
        its rows, (∂f/∂s) s̃ and ν, (d, n) each, and ∂ℓ/∂s_t (None if unscored)."""
        self.trainer.update()
        self.tilde[self.current].zero()                   # θ̃ and νᵀ ∂f/∂θ of the step before, folded in
        self.vjp[self.current].zero()
        self.current = 1 - self.current
        if rows is None:
            return None
        n = len(rows)
        forward = _values(self.alpha.as_array()[:self.d * n], self.d, n)
        dl_ds = _values(self.beta.as_array()[:self.d * n], n, self.d).T if scored else None
        self.alpha.zero()
        self.beta.zero()
        return rows, forward, nu, dl_ds

    def finish(self, last, s_tilde: np.ndarray, epsilon: float) -> dy.Expression:
        """UORO's update of a step (module docstring), in the current graph: s̃ of its rows (written into
        `s_tilde`), and the objective whose update writes θ̃ and adds (∂ℓ/∂s_t · s̃_t) θ̃_t to the gradient."""
        rows, forward, nu, dl_ds = last
        ids, n = rows.tolist(), len(rows)
        tilde = dy.lookup_batch(self.tilde[self.current], ids, update=False)
        vjp = dy.lookup_batch(self.vjp[self.current], ids, update=False)
        norms = np.sqrt(_values(dy.concatenate([dy.squared_norm(tilde), dy.squared_norm(vjp)]).npvalue(), 2, n))
        rho0 = np.sqrt((norms[0] + epsilon) / (np.linalg.norm(forward, axis=0) + epsilon))
        rho1 = np.sqrt((norms[1] + epsilon) / (np.linalg.norm(nu, axis=0) + epsilon))
        s_tilde[:, rows] = rho0 * forward + rho1 * nu
        by_rho = reattach([np.stack([1 / rho0, 1 / rho1])])[0]                          # (2,) x n
        new = matmul(dy.concatenate_cols([tilde, vjp]), by_rho)                        # θ̃_t: (p,) x n
        written = dy.lookup_batch(self.tilde[1 - self.current], ids)
        terms = [_total(dy.cmult(written, new), self.size, n)]
        if dl_ds is not None:
            weights = dy.inputTensor((dl_ds * s_tilde[:, rows]).sum(axis=0))           # ∂ℓ_t/∂s_t · s̃_t: (n,)
            step = matmul(dy.reshape(new, (self.size, n)), weights)
            terms.append(dy.dot_product(self.grad.expr(True), step))
        return dy.esum(terms)


def _total(batch: dy.Expression, size: int, n: int) -> dy.Expression:
    """The sum of a batch of n vectors of `size` numbers, by products with ones (module docstring: `_Probes`)."""
    return dy.sum_elems(matmul(dy.reshape(batch, (size, n)), dy.inputTensor(np.ones(n))))


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
    outside DyNet's backward pass (RTRL, UORO), yielded in place of a loss expression. The trainer only calls
    `value()` and `backward()`, so clipping, learning rate and Adam moments treat it as a backpropagated one."""
    loss: float
    params: tuple[dy.Parameters, ...]
    grads: tuple[np.ndarray, ...]

    def value(self) -> float:
        return self.loss

    def backward(self) -> None:
        """Add the gradients to the parameters': backpropagate the surrogate Σ_p sum(p ⊙ g_p), whose
        gradient is g_p, in the current graph, left alone (the objective may still hold expressions
        in it; backward only visits the surrogate's ancestors)."""
        surrogate = dy.esum([dy.sum_elems(dy.cmult(p, dy.inputTensor(g))) for p, g in zip(self.params, self.grads)])
        surrogate.backward()


def precomputed_loss(params: Sequence[dy.Parameters], result: Gradient, scale: float = 1.0) -> PrecomputedLoss:
    """The loss of a minibatch from its gradient, multiplied by `scale` (e.g. 1 / the number of sequences, as
    `segment_losses` divides by the streams).

    Args:
        params: the parameters the gradient belongs to, in the same order.
        result: the minibatch's `Gradient`.
        scale: multiplies the loss and the gradient.
    Returns:
        What an objective's `losses` yields for the trainer.
    """
    return PrecomputedLoss(scale * result.loss, tuple(params), tuple(scale * g for g in result.grads))
