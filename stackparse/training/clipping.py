"""Element-wise ("hard") gradient clipping: every element of every parameter's gradient clipped to [-c, c] before
the update, where DyNet's own clipping (`TrainConfig.clip_kind` "norm") rescales the whole gradient to a norm of at
most c.

Why both. "Hard clipping" is what the recurrent language-model line of work calls the element-wise rule: Joulin &
Mikolov (2015) write "a hard clipping of 15" citing Mikolov's thesis, and their released Stack RNN clips every
back-propagated error vector element-wise to [-15, 15] at each step of BPTT (facebookarchive/Stack-RNN,
`StackRNN.h`). The NSPDA paper (Mali, Ororbia & Giles, §5) writes "gradients were hard clipped to 13" and names no
norm; its higher-order networks learn by UORO, which has no back-propagated error to clip, so what can be clipped
there is the gradient's elements. Which rule the paper ran, its text does not settle: both are settings, and
BENCHMARKS.md measures them side by side.

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
