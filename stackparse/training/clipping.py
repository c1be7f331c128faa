"""Element-wise ("hard") gradient clipping: every element of every parameter's gradient clipped to [-c, c] before
the update, where DyNet's own clipping (`TrainConfig.clip_kind` "norm") rescales the whole gradient to a norm of at
most c; and `NormRescue`, which finishes DyNet's norm clipping where its float arithmetic cannot.

Why both. "Hard clipping" is what the recurrent language-model line of work calls the element-wise rule: Joulin &
Mikolov (2015) write "a hard clipping of 15" citing Mikolov's thesis, and their released Stack RNN clips every
back-propagated error vector element-wise to [-15, 15] at each step of BPTT (facebookarchive/Stack-RNN,
`StackRNN.h`). The NSPDA paper (Mali, Ororbia & Giles, §5) writes "gradients were hard clipped to 13" and names no
norm; its higher-order networks learn by UORO, which has no back-propagated error to clip, so what can be clipped
there is the gradient's elements. Which rule the paper ran, its text does not settle: both are settings, and
BENCHMARKS.md measures them side by side.

DyNet sums the squares of the gradient's elements in single precision, so its norm clipping finds a norm of inf
(and refuses to update: "Magnitude of gradient is bad") once an element passes about 1.8e19, though every element is
finite and the rule, a rescaling to norm c, is defined. UORO's estimates pass that size under the NSPDA paper's
recipe (BENCHMARKS.md, "Runs that diverged: DyNet's single-precision norm"), and those runs stopped as diverged where
the paper's clipping bounds the step. `NormRescue` computes the norm in double precision and rescales the gradient to c
itself; DyNet's clipping then finds it at its bound. An element past single precision's range (3.4e38) is inf in
DyNet's memory, its direction lost there; where the gradient was computed outside DyNet (UORO, RTRL, a numpy mirror:
`stackparse.training.gradients.PrecomputedLoss`, in double precision) the rescue takes it from there instead, so
that only a gradient not finite in double precision, or backpropagated by DyNet, still ends the run.

DyNet's Python API cannot write a gradient; the views of `stackparse._dynet_views` can, and the update that follows
(DyNet's optimizer, its own clipping off) applies what they leave. Lookup parameters (embedding tables) have no
such view: their gradients stay as they are, and a run is warned once if one of them has a gradient at all (the
models of the NSPDA paper's tables look theirs up as constants).
"""
from __future__ import annotations

import warnings

import dynet as dy
import numpy as np

from stackparse._dynet_views import views
from stackparse.errors import UserError

CLIP_KINDS = ("norm", "value")


class ElementClip:
    """Called between the backward pass and the update: clips each element of the collection's parameters'
    gradients to [-threshold, threshold]; returns False where a gradient is not finite (the run has diverged)."""

    def __init__(self, pc: dy.ParameterCollection, threshold: float):
        self.params, self.threshold = pc.parameters_list(), threshold
        self.lookups = pc.lookup_parameters_list()

    def __call__(self) -> bool:
        for p in self.params:
            view = views(p)
            if view is None:
                raise UserError("element-wise gradient clipping (clip_kind value) needs DyNet's parameter memory "
                                "mapped, which only the CPU build of dyNET38 2.2 allows (stackparse._dynet_views); "
                                "use clip_kind norm")
            if not np.isfinite(view.grad).all():
                return False
            np.clip(view.grad, -self.threshold, self.threshold, out=view.grad)
        if self.lookups:
            trained = [lookup.name() for lookup in self.lookups if np.any(lookup.grad_as_array())]
            if trained:
                warnings.warn(f"element-wise gradient clipping leaves the gradients of lookup parameters "
                              f"{', '.join(trained)} unclipped (DyNet gives no view of them)")
            self.lookups = []           # looked at once: a copy of each table per update would cost more
        return True


class NormRescue:
    """Called when DyNet's norm clipping found the gradient's norm not finite: rescales every gradient of the
    collection to norm `threshold`, the norm computed in double precision (the module docstring), from the loss's own
    double-precision gradient where it has one (`grads`: DyNet's memory then holds that gradient alone, the trainer
    updating after each loss); returns False where that cannot be done (an element not finite, a parameter without a
    view, a lookup table with a gradient), and the run has diverged. Called on that rare path only, it costs nothing
    otherwise."""

    def __init__(self, pc: dy.ParameterCollection, threshold: float):
        self.pc, self.threshold = pc, threshold

    def __call__(self, loss=None) -> bool:
        params = self.pc.parameters_list()
        memory = [views(p) for p in params]
        if any(view is None for view in memory) or getattr(loss, "lookups", ()) or any(
                np.any(lookup.grad_as_array()) for lookup in self.pc.lookup_parameters_list()):
            return False
        exact = {p.name(): g for p, g in zip(loss.params, loss.grads)} if hasattr(loss, "grads") else {}
        grads = [np.asarray(exact.get(p.name(), view.grad), dtype=np.float64) for p, view in zip(params, memory)]
        if not all(np.isfinite(g).all() for g in grads):
            return False
        largest = max(float(np.abs(g).max(initial=0.0)) for g in grads)
        if not largest:
            return False
        norm = largest * np.sqrt(sum(np.sum(np.square(g / largest)) for g in grads))    # no overflow in the squares
        for view, g in zip(memory, grads):
            np.multiply(g, self.threshold / norm, out=view.grad, casting="same_kind")
        return True
