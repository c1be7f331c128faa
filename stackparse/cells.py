"""A small recurrent cell as pure functions of DyNet expressions: what the gradient methods drive.

A model trainable forward in time (RTRL, UORO: `stackparse.training.gradients`) describes one step of itself as a
`Cell` (the NSPDA, whose discrete stack carries no gradient, as a `MemoryCell`), on the ground floor so that models
describe themselves without knowing the algorithms that use the description.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import dynet as dy
import numpy as np

Step = Callable[[list[dy.Expression], dy.Expression, Any], dy.Expression]
Loss = Callable[[list[dy.Expression], dy.Expression, Any], dy.Expression]


@dataclass(frozen=True)
class Cell:
    """A recurrent cell as pure functions of DyNet expressions.

    step(params, state, x): the next state, an expression of the same shape as `state`.
    loss(params, state, y): a scalar expression, the loss at a step whose target y is not None.
    initial: the state before the first input, a constant (P_0 = 0).

    `params` stand for the cell's parameters, in the order the algorithms are given them; the functions must reach
    the parameters only through them (a `dy.Parameters` used directly is invisible to RTRL and UORO). A structured
    state is packed into one expression (`dy.concatenate`). `x` and `y` are whatever the sequence holds (one-hot
    arrays, ids). The step may run on a batch of copies of the state: batch-agnostic operations only (no
    `sum_batches`, `pick_batch_elem`)."""
    step: Step
    loss: Loss
    initial: np.ndarray


@dataclass(frozen=True)
class MemoryCell(Cell):
    """A cell whose state also has a part that carries no gradient (module docstring).

    step(params, state, x, memory): (the next state, the next memory); `memory` is its initial value,
    any Python value (a discrete stack). The step may get a batch of copies of the state with one
    memory: it must give the copies the same memory (they take the same discrete decisions)."""
    memory: Any = None


def advance(cell: Cell, params: list[dy.Expression], state: dy.Expression, x, memory):
    """One step of any cell: (s_t, m_t) from s_{t-1}, x and m_{t-1}; m_t None for a plain `Cell`."""
    if isinstance(cell, MemoryCell):
        return cell.step(params, state, x, memory)
    return cell.step(params, state, x), None


def initial_memory(cell: Cell):
    """A cell's memory before the first input, m_0: None for a plain `Cell`."""
    return cell.memory if isinstance(cell, MemoryCell) else None
