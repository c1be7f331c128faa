"""Sequences on the ground floor: the example every task makes, and running a model over a batch of them.

A task makes `Example`s; training, evaluation and the models' own utilities run a model over a
minibatch of them as one DyNet batch. The padding, the cut of truncated BPTT (`detach` / `reattach`),
the masked loss and the loop over time steps (`unroll`) exist here once, and every consumer is a few
lines around them: the training losses sum `masked_nll` over the states `unroll` yields, evaluation
takes their argmax, inspection reads their memory.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterator

import dynet as dy
import numpy as np


@dataclass(frozen=True)
class Example:
    """One sequence for step-by-step prediction.

    inputs[t] is fed at step t; targets[t] is the output the model must give after reading
    inputs[:t+1]; scored[t] says whether that output counts for the loss and for correctness.
    An example is correct when every scored target is predicted (argmax) correctly.
    """
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
    """Run a model over step-major inputs, one DyNet batch for the whole minibatch.

    Args:
      model: anything with `initial_state(batch_size)` and `step(state, ids)` (a sequence model).
      inputs: (T, B) symbol ids, as `pad` makes them (or a slice of them).
      state: the state to start from; default the model's initial state for B sequences.
      step: (state, ids) -> state, default `model.step` (e.g. a step with weights given).
    Yields:
      (t, the state after reading inputs[t]) for t = 0 .. T-1.
    """
    state = model.initial_state(inputs.shape[1]) if state is None else state
    step = step or model.step
    for t, ids in enumerate(inputs):
        state = step(state, ids)
        yield t, state


def masked_nll(scores: dy.Expression, targets: np.ndarray, mask: np.ndarray) -> dy.Expression:
    """-log softmax(scores)[target] of each stream at one step, 0 where the step is not scored.

    Args:
        scores: (n_outputs,) x B. targets: B ids. mask: B weights, 1 = scored, 0 = not.
    Returns:
        (1,) x B.
    """
    nll = dy.pickneglogsoftmax_batch(scores, targets)
    return nll if mask.all() else dy.cmult(nll, reattach([mask[None]])[0])


def detach(tensors: list[dy.Expression]) -> list[np.ndarray]:
    """Values of state tensors as arrays whose last axis is the batch (truncated BPTT's cut)."""
    out = []
    for e in tensors:
        shape, batch = e.dim()
        out.append(e.npvalue().reshape(shape + (batch,)))
    return out


def reattach(values: list[np.ndarray]) -> list[dy.Expression]:
    """Constant expressions, in the current graph, holding values saved by `detach`."""
    # DyNet's inputTensor rejects a batch axis of size 1, so batch-1 values go in unbatched.
    return [dy.inputTensor(v, batched=True) if v.shape[-1] > 1 else dy.inputTensor(v[..., 0])
            for v in values]
