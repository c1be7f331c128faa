"""Gradients of a small recurrent cell's loss over one sequence: BPTT, truncated BPTT, RTRL and UORO.

The NSPDA paper (Mali, Ororbia & Giles 2019) trains its small higher-order networks with RTRL and UORO (appendix,
eq. 18-23); here for any cell written with DyNet expressions, with BPTT as the reference they are tested against.

A cell (`Cell`) is two pure functions of DyNet expressions and a constant initial state:

    s_t = f(θ, s_{t-1}, x_t)     `step`: the recurrence, from s_0 = `initial`
    L_t = ℓ(θ, s_t, y_t)         `loss`: a scalar, at the steps whose target y_t is not None

where θ is the list of the cell's parameters. A `MemoryCell` also carries a part of the state no gradient flows through
(the NSPDA's discrete stack): s_t, m_t = f(θ, s_{t-1}, x_t, m_{t-1}), m follows the step's values (the quantized
actions) but ∂s_t/∂m = 0, so the algorithms just thread m along. Every algorithm returns dL/dθ for L = Σ_t L_t:

BPTT   reverse mode through the unrolled graph; truncated BPTT cuts it every k steps, carrying the
       state's value (not its gradient) across the cut.
RTRL   (Williams & Zipser 1989) forward accumulation of the influence matrix P_t = ds_t/dθ (d x p
       for d state units and p parameters):
           P_t = (∂f/∂s) P_{t-1} + ∂f/∂θ,    P_0 = 0 (s_0 does not depend on θ),
           dL/dθ = Σ_t ∂ℓ_t/∂θ + (∂ℓ_t/∂s_t) P_t.
       Exact. The update costs O(d² p) a step: O(n⁴ m) for an n-unit second-order RNN with m inputs.
UORO   (Tallec & Ollivier 2017, "Unbiased Online Recurrent Optimization", Algorithm 1) keeps a rank-one
       estimate P_t ≈ s̃_t θ̃_tᵀ. With fresh random signs ν ∈ {±1}^d at each step,
           ρ0 = sqrt((‖θ̃‖ + ε) / (‖(∂f/∂s) s̃‖ + ε)),   ρ1 = sqrt((‖νᵀ ∂f/∂θ‖ + ε) / (‖ν‖ + ε)),
           s̃ ← ρ0 (∂f/∂s) s̃ + ρ1 ν,                  θ̃ ← θ̃ / ρ0 + (νᵀ ∂f/∂θ) / ρ1,
           dL/dθ ≈ Σ_t ∂ℓ_t/∂θ + (∂ℓ_t/∂s_t · s̃_t) θ̃_t.
       Unbiased: s̃ θ̃ᵀ expands into (∂f/∂s) s̃ θ̃ᵀ + ν νᵀ ∂f/∂θ plus two cross terms that are odd in ν
       (ρ1 is even in ν), so E[s̃_t θ̃_tᵀ] = (∂f/∂s) E[s̃_{t-1} θ̃_{t-1}ᵀ] + ∂f/∂θ = P_t by induction.
       The normalisers ρ0, ρ1 cancel in the product; they only balance the two factors' norms, which
       keeps the variance down.

Jacobians (`linearise`; how and why: docs/gradients.md): one batched backward pass per step over d copies of s_{t-1},
copy b's unit b picked, gives row b of ∂f/∂s (UORO: θ shared, copy b weighted by ν_b). Exact, for any cell. The
parameters enter as constants, so their own gradients are left alone; `PrecomputedLoss` hands the result to the trainer.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import dynet as dy
import numpy as np

from stackparse.cells import Cell, advance, initial_memory
from stackparse.config import check, setting
from stackparse.sequences import reattach, unroll

METHODS = ("bptt", "tbptt", "rtrl", "uoro")


@dataclass(frozen=True)
class SequenceGradient:
    """The summed loss of one sequence and its gradient, one array per parameter, in their shapes."""
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


def sequence_gradient(config: GradientConfig, cell: Cell, params: Sequence[dy.Parameters],
                      xs: Sequence, ys: Sequence, rng: np.random.Generator) -> SequenceGradient:
    """dL/dθ for one sequence by the configured method.

    Args:
        config: the method and its settings.
        cell: the recurrence and the loss.
        params: the cell's parameters, in the order its functions receive them.
        xs: the inputs, one per step. ys: the targets, one per step, None where unscored.
        rng: UORO's random signs (unused by the deterministic methods).
    Returns:
        The loss and its exact (UORO: unbiased estimate of the) gradient.
    """
    config.validate()
    if config.method == "rtrl":
        return rtrl(cell, params, xs, ys)
    if config.method == "uoro":
        return uoro(cell, params, xs, ys, rng, config.epsilon)
    return bptt(cell, params, xs, ys, config.truncation if config.method == "tbptt" else 0)


def bptt(cell: Cell, params: Sequence[dy.Parameters], xs: Sequence, ys: Sequence,
         truncation: int = 0) -> SequenceGradient:
    """Backpropagation through time, full or truncated: the reference for the other methods.

    Args:
        cell, params, xs, ys: as for `sequence_gradient`.
        truncation: cut the graph every this many steps (0: never), carrying the state's value.
    Returns:
        The loss and its gradient (exact when nothing is cut).
    """
    values = [p.as_array() for p in params]
    cut = truncation or max(len(xs), 1)
    grads, total, state, memory = [np.zeros_like(v) for v in values], 0.0, cell.initial, initial_memory(cell)
    for t0 in range(0, len(xs), cut):
        dy.renew_cg()
        theta = [dy.inputTensor(v) for v in values]
        steps = unroll(None, xs[t0:t0 + cut], (dy.inputTensor(state), memory),
                       lambda carried, x: advance(cell, theta, carried[0], x, carried[1]))
        losses = []
        for t, (s, memory) in steps:
            if ys[t0 + t] is not None:
                losses.append(cell.loss(theta, s, ys[t0 + t]))
        state = s.npvalue().reshape(cell.initial.shape)
        if losses:
            segment = dy.esum(losses)
            total += segment.value()
            segment.backward(full=True)     # full: gradients reach the constants standing for θ
            for g, e in zip(grads, theta):
                g += e.gradient().reshape(g.shape)
    return SequenceGradient(total, grads)


def rtrl(cell: Cell, params: Sequence[dy.Parameters], xs: Sequence, ys: Sequence) -> SequenceGradient:
    """Real-time recurrent learning: the exact gradient by forward accumulation of P_t = ds_t/dθ.

    Args:
        cell, params, xs, ys: as for `sequence_gradient`.
    Returns:
        The loss and its gradient, equal to BPTT's up to rounding.
    """
    values = [p.as_array() for p in params]
    d = cell.initial.size
    influence = np.zeros((d, sum(v.size for v in values)))      # P_t: (d, p)
    grad, total, state, memory = np.zeros(influence.shape[1]), 0.0, cell.initial, initial_memory(cell)
    for x, y in zip(xs, ys):
        lin = linearise(cell, values, state, x, y, memory=memory)
        influence = lin.ds_ds @ influence + lin.ds_dtheta         # P_t = (∂f/∂s) P_{t-1} + ∂f/∂θ
        grad += lin.dl_dtheta + lin.dl_ds @ influence
        total, state, memory = total + lin.loss, lin.state, lin.memory
    return SequenceGradient(total, _unflatten(grad, values))


def uoro(cell: Cell, params: Sequence[dy.Parameters], xs: Sequence, ys: Sequence,
         rng: np.random.Generator, epsilon: float = 1e-7) -> SequenceGradient:
    """Unbiased online recurrent optimization: a rank-one, unbiased estimate of RTRL's gradient.

    Args:
        cell, params, xs, ys: as for `sequence_gradient`.
        rng: draws the signs ν, one `rng.choice([-1.0, 1.0], size=d)` per step.
        epsilon: keeps the normalisers finite while s̃ or θ̃ are zero.
    Returns:
        The loss (exact) and an unbiased estimate of its gradient.
    """
    values = [p.as_array() for p in params]
    d = cell.initial.size
    s_tilde, theta_tilde = np.zeros(d), np.zeros(sum(v.size for v in values))
    grad, total, state, memory = np.zeros_like(theta_tilde), 0.0, cell.initial, initial_memory(cell)
    for x, y in zip(xs, ys):
        nu = rng.choice([-1.0, 1.0], size=d)
        lin = linearise(cell, values, state, x, y, nu, memory)
        forward = lin.ds_ds @ s_tilde                                       # (∂f/∂s) s̃
        rho0 = np.sqrt((np.linalg.norm(theta_tilde) + epsilon) / (np.linalg.norm(forward) + epsilon))
        rho1 = np.sqrt((np.linalg.norm(lin.ds_dtheta) + epsilon) / (np.linalg.norm(nu) + epsilon))
        s_tilde = rho0 * forward + rho1 * nu
        theta_tilde = theta_tilde / rho0 + lin.ds_dtheta / rho1
        grad += lin.dl_dtheta + (lin.dl_ds @ s_tilde) * theta_tilde
        total, state, memory = total + lin.loss, lin.state, lin.memory
    return SequenceGradient(total, _unflatten(grad, values))


@dataclass(frozen=True)
class Linearisation:
    """One step's values and derivatives, states and parameters flattened (C order, θ's in list order).

    state: s_t, in the cell's state shape. loss: ℓ_t (0 if unscored). ds_ds: ∂f/∂s at (s_{t-1}, x_t), (d, d). ds_dtheta:
    ∂f/∂θ, (d, p); or νᵀ ∂f/∂θ, (p,), given ν. dl_ds: ∂ℓ_t/∂s_t, (d,). dl_dtheta: the explicit ∂ℓ_t/∂θ, (p,). Both zero
    if unscored. memory: m_t (a `MemoryCell`'s; None otherwise)."""
    state: np.ndarray
    loss: float
    ds_ds: np.ndarray
    ds_dtheta: np.ndarray
    dl_ds: np.ndarray
    dl_dtheta: np.ndarray
    memory: Any = None


def linearise(cell: Cell, values: list[np.ndarray], state: np.ndarray, x, y,
              nu: np.ndarray | None = None, memory=None) -> Linearisation:
    """One step of the cell and its Jacobians, from one batched graph (see the module docstring).

    Args:
        cell: the recurrence and the loss.
        values: the parameters' values.
        state: s_{t-1}. x, y: the step's input and target (None: unscored).
        nu: UORO's signs; then the parameters are shared by the copies and ds_dtheta is νᵀ ∂f/∂θ.
        memory: m_{t-1}, for a `MemoryCell`.
    Returns:
        The step's `Linearisation`.
    """
    d = state.size
    dy.renew_cg()
    theta = [_copies(v, d) for v in values] if nu is None else [dy.inputTensor(v) for v in values]
    s_prev = _copies(state, d)
    out, memory = advance(cell, theta, s_prev, x, memory)
    out = dy.reshape(out, (d,))
    # dy.reshape flattens column-major: pick, for copy b, the unit that is b-th in numpy's C order.
    units = np.arange(d).reshape(state.shape, order="F").reshape(-1)
    picked = dy.pick_batch(out, [int(u) for u in units])                         # (1,) x d
    weighted = picked if nu is None else dy.cmult(picked, reattach([nu[None, :]])[0])  # copy b times ν_b
    objective = dy.sum_batches(weighted)
    new_state = _first_copy(out.npvalue(), d).reshape(state.shape, order="F")
    s_new, theta_loss = dy.inputTensor(new_state), [dy.inputTensor(v) for v in values]
    loss = cell.loss(theta_loss, s_new, y) if y is not None else None
    (objective if loss is None else objective + loss).backward(full=True)
    signs = np.ones(d) if nu is None else nu
    ds_ds = s_prev.gradient().reshape(d, d).T * signs[:, None]                # row b: copy b's gradient
    if nu is None:
        ds_dtheta = np.concatenate([e.gradient().reshape(-1, d) for e in theta]).T
    else:
        ds_dtheta = flatten([e.gradient() for e in theta])
    if loss is None:
        return Linearisation(new_state, 0.0, ds_ds, ds_dtheta, np.zeros(d), np.zeros(ds_dtheta.shape[-1]), memory)
    return Linearisation(new_state, loss.value(), ds_ds, ds_dtheta, s_new.gradient().reshape(-1),
                         flatten([e.gradient() for e in theta_loss]), memory)


def _copies(value: np.ndarray, d: int) -> dy.Expression:
    """A constant holding `d` copies of `value` as one DyNet batch. (`value` is written once and
    copied inside the graph: DyNet converts numpy arrays element by element, slowly.)"""
    return dy.concatenate_to_batch([dy.inputTensor(value)] * d)


def _first_copy(value: np.ndarray, d: int) -> np.ndarray:
    """Copy 0 of a value read from a batch of `d` identical copies (DyNet drops a batch axis of 1)."""
    return value[..., 0] if d > 1 else value


def flatten(arrays: Sequence[np.ndarray]) -> np.ndarray:
    """One vector from several arrays.

    Args:
        arrays: e.g. one gradient per parameter.
    Returns:
        Their elements, array after array, each in C order.
    """
    return np.concatenate([np.asarray(a).reshape(-1) for a in arrays])


def _unflatten(vector: np.ndarray, like: Sequence[np.ndarray]) -> list[np.ndarray]:
    """The inverse of `flatten`: `vector` cut into arrays of the shapes of `like`."""
    ends = np.cumsum([a.size for a in like])
    return [piece.reshape(a.shape) for piece, a in zip(np.split(vector, ends[:-1]), like)]


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


def precomputed_loss(params: Sequence[dy.Parameters], results: Sequence[SequenceGradient],
                     scale: float = 1.0) -> PrecomputedLoss:
    """The loss of a minibatch of sequences from their gradients, summed and multiplied by `scale`
    (e.g. 1 / the number of sequences, as `segment_losses` divides by the streams).

    Args:
        params: the parameters the gradients belong to, in the same order.
        results: one `SequenceGradient` per sequence.
        scale: multiplies the summed loss and gradients.
    Returns:
        What an objective's `losses` yields for the trainer.
    """
    grads = tuple(scale * sum(r.grads[i] for r in results) for i in range(len(params)))
    return PrecomputedLoss(scale * sum(r.loss for r in results), tuple(params), grads)
