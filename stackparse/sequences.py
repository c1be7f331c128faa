"""Sequences on the ground floor: the example every task makes, and running a model over a batch of them.

A task makes `Example`s; training, evaluation and the models run a model over a minibatch of them as one DyNet
batch. Padding, truncated BPTT's cut (`detach` / `reattach`), the masked loss and the loop over steps (`unroll`)
exist here once: training sums `masked_nll` over `unroll`'s states, evaluation takes their argmax.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterator

import dynet as dy
import numpy as np


@dataclass(frozen=True)
class Example:
    """One sequence for step-by-step prediction: inputs[t] is fed at step t; targets[t] is the output
    due after reading inputs[:t+1]; scored[t]: whether it counts for the loss and for correctness (an
    example is correct when every scored target is predicted, argmax, correctly)."""
    inputs: tuple[int, ...]
    targets: tuple[int, ...]
    scored: tuple[bool, ...]
    n: int

    def __post_init__(self):
        if not (len(self.inputs) == len(self.targets) == len(self.scored)):
            raise ValueError("inputs, targets and scored must have one entry per step")

    def __len__(self) -> int:
        return len(self.inputs)


def concatenate(examples: list[Example]) -> Example:
    """Examples joined into one stream (Joulin & Mikolov train on an unbroken stream of sequences)."""
    return Example(
        inputs=tuple(s for e in examples for s in e.inputs),
        targets=tuple(s for e in examples for s in e.targets),
        scored=tuple(s for e in examples for s in e.scored),
        n=max(e.n for e in examples),
    )


def pad(examples: list[Example]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Step-major (T, B) arrays of inputs, targets and the scored mask (0 on padding)."""
    steps = max(len(e) for e in examples)
    inputs = np.zeros((steps, len(examples)), dtype=np.int64)
    targets = np.zeros_like(inputs)
    mask = np.zeros(inputs.shape, dtype=np.float64)
    for b, e in enumerate(examples):
        inputs[:len(e), b], targets[:len(e), b], mask[:len(e), b] = e.inputs, e.targets, e.scored
    return inputs, targets, mask


def unroll(model, inputs: np.ndarray, state=None, step: Callable | None = None) -> Iterator[tuple[int, object]]:
    """(t, the state after reading inputs[t]) for t = 0 .. T-1: `model` (with `initial_state(batch_size)`
    and `step(state, ids)`) over (T, B) step-major ids as `pad` makes them, one DyNet batch, from `state`
    (default the model's initial state) by `step` (default `model.step`; e.g. a step with weights given)."""
    state = model.initial_state(inputs.shape[1]) if state is None else state
    step = step or model.step
    for t, ids in enumerate(inputs):
        state = step(state, ids)
        yield t, state


def masked_nll(scores: dy.Expression, targets: np.ndarray, mask: np.ndarray) -> dy.Expression:
    """-log softmax(scores)[target], (1,) x B, of each stream at one step, 0 where it is not scored.
    scores: (n_outputs,) x B; targets: B ids; mask: B weights, 1 = scored, 0 = not."""
    nll = dy.pickneglogsoftmax_batch(scores, targets)
    return nll if mask.all() else dy.cmult(nll, reattach([mask[None]])[0])


def detach(tensors: list[dy.Expression]) -> list[np.ndarray]:
    """Values of state tensors as arrays whose last axis is the batch (truncated BPTT's cut)."""
    return [e.npvalue().reshape(e.dim()[0] + (e.dim()[1],)) for e in tensors]


def reattach(values: list[np.ndarray]) -> list[dy.Expression]:
    """Constant expressions, in the current graph, holding values saved by `detach`."""
    # DyNet's inputTensor rejects a batch axis of size 1, so batch-1 values go in unbatched.
    return [dy.inputTensor(v, batched=True) if v.shape[-1] > 1 else dy.inputTensor(v[..., 0])
            for v in values]
