"""Gradient methods (compared in the NSPDA paper, Mali, Ororbia & Giles, §3): a strategy with one method,
`losses(model, batch, rng)`, yielding (loss, scored steps) per graph, after each of which the trainer backpropagates
and updates. `gradient_method` picks the one the settings name, for a model that supports it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterator, Protocol

import dynet as dy
import numpy as np

from stackparse.config import SettingError, check, setting
from stackparse.models.capabilities import ArrayMirror, ArrayGradients, OnlineGradients, Refinable, require
from stackparse.sequences import Example, detach, masked_nll, pad, reattach, unroll
from stackparse.training.gradients import METHODS, GradientConfig, batch_gradient, precomputed_loss
from stackparse.training.refinement import predictions, refined_losses


@dataclass(frozen=True)
class GradientSettings:
    grad: str = setting("tbptt", "gradient algorithm: tbptt (cut every bptt steps, 0 = never), bptt (never "
                        "cut), rtrl or uoro (forward in time; rnn2, nspda2, nspda3)", choices=METHODS)
    refine: int = setting(1, "iterative refinement (NSPDA eq. 17): K predictions at each step, the state carried "
                          "from one to the next, one at steps an inserted rule hints; 1 = off; with grad bptt, "
                          "rtrl or uoro", min=1)
    mirror: bool = setting(True, "compute the gradient with the model's numpy mirror where it has one (neural-stack, "
                           "-queue, -deque and deep-lstm without cuts; rnn2, nspda2 and nspda3 under uoro): DyNet's "
                           "gradient, faster; false = DyNet's graph")

    def validate(self) -> None:
        check(self)
        if self.refine > 1 and self.grad == "tbptt":
            raise SettingError("refine", "(iterative refinement) runs with grad bptt, rtrl or uoro: give refine 1 "
                                         "for grad tbptt")


class GradientMethod(Protocol):
    def losses(self, model, batch: list[Example], rng: np.random.Generator) -> Iterator[tuple[object, int]]:
        """(loss, scored steps) per graph of `batch`, each built when the trainer asks for it."""


@dataclass(frozen=True)
class TruncatedBPTT:
    """Joulin & Mikolov (2015, §5): the streams in lockstep, cut every `k` steps (0: never) with the
    state's value (not its gradient) carried across the cut. "tbptt" cuts every `TrainConfig.bptt`
    steps, "bptt" never, so the truncation is one setting. Without cuts, a model's numpy mirror of its BPTT
    (`ArrayMirror`) computes the loss and gradient where it has one and `mirror` is on."""
    k: int = 0
    mirror: bool = True

    def losses(self, model, batch: list[Example], rng: np.random.Generator):
        mirror = not self.k and self.mirror and isinstance(model, ArrayMirror) and model.array_mirror()
        if not mirror:
            yield from segment_losses(model, batch, self.k)
            return
        dy.renew_cg()                # the surrogate's graph (`PrecomputedLoss.backward`)
        result = mirror.gradient(batch)
        yield precomputed_loss(result, 1 / len(batch)), sum(int(sum(e.scored)) for e in batch)   # as segment_losses


@dataclass(frozen=True)
class Online:
    """RTRL or UORO (`training.gradients`) through the model's `gradient_cell`, the minibatch's sequences in
    lockstep (UORO through the model's numpy mirror of it, `array_cell`, where it has one: the same estimate,
    faster; the eq. 6 read values are then drawn from `rng`, not DyNet's generator), with iterative refinement when
    `passes` > 1 (eq. 17: `hints` as for `Refined`): one `PrecomputedLoss` per minibatch, scaled like the BPTT loss
    (1 / the number of streams). The per-pass seeds and UORO's signs come from `rng`, the epoch's generator (a
    resumed run is exact)."""
    algorithm: str
    passes: int = 1
    hints: Callable[[Example], tuple] | None = None
    mirror: bool = True

    def losses(self, model, batch: list[Example], rng: np.random.Generator):
        if self.mirror and self.algorithm == "uoro" and isinstance(model, ArrayGradients):
            # A fresh graph for the surrogate loss: each minibatch's would pile up in one graph otherwise.
            dy.renew_cg()
            cell, params = model.array_cell(), model.trained_parameters()
        else:
            cell, params = model.gradient_cell()                  # (a fresh graph)
        result = batch_gradient(GradientConfig(self.algorithm), cell, params, batch, rng, self.passes, self.hints)
        yield precomputed_loss(result, 1 / len(batch), params), predictions(batch, self.passes, self.hints)


@dataclass(frozen=True)
class Refined:
    """Iterative refinement per step (`training.refinement`): `passes` predictions per step, one where `hints`
    (an example's hint vector, from rule insertion) says so."""
    passes: int
    hints: Callable[[Example], tuple] | None = None

    def losses(self, model, batch: list[Example], rng: np.random.Generator):
        return refined_losses(model, batch, self.passes, self.hints)


def gradient_method(settings: GradientSettings, model, bptt: int,
                    hints: Callable[[Example], tuple] | None = None) -> GradientMethod:
    """The method `settings` choose, for `model` (a UserError if it lacks what the method needs);
    `bptt` is the truncation of "tbptt" (`TrainConfig.bptt`); `hints` the hint vector of an example
    (`training.rules.insert_rules`), for refinement."""
    if settings.refine > 1:
        require(model, Refinable, "refine")
    if settings.grad in ("rtrl", "uoro"):
        require(model, OnlineGradients, f"grad {settings.grad}")
        model.gradient_cell()             # a one-line error for a model whose state cannot be packed
        return Online(settings.grad, settings.refine, hints, settings.mirror)
    if settings.refine > 1:
        return Refined(settings.refine, hints)
    return TruncatedBPTT(bptt if settings.grad == "tbptt" else 0, settings.mirror)


def segment_losses(model, batch: list[Example], bptt: int):
    """(loss, scored steps) per truncated-BPTT segment of `batch` (streams in lockstep, one DyNet batch):
    in a fresh graph each, Σ -log p(target) over the segment's scored steps / the number of streams;
    the state carried (detached) into the next. An evaluation just sums their values."""
    inputs, targets, mask = pad(batch)           # each (T, B)
    cut, carried = bptt or len(inputs), None
    for t0 in range(0, len(inputs), cut):
        dy.renew_cg()
        start = None if carried is None else model.initial_state(len(batch), reattach(carried))
        terms = []
        for t, state in unroll(model, inputs[t0:t0 + cut], start):
            if mask[t0 + t].any():
                terms.append(masked_nll(model.scores(state), targets[t0 + t], mask[t0 + t]))
        if terms:
            yield dy.sum_batches(dy.esum(terms)) / len(batch), int(mask[t0:t0 + cut].sum())
        if t0 + cut < len(inputs):
            carried = detach(model.state_tensors(state))
