"""A small recurrent cell as pure functions of DyNet expressions: what the gradient methods drive.

A model that can be trained forward in time (RTRL, UORO: `stackparse.training.gradients`) describes
one step of itself as a `Cell`; the NSPDA, whose discrete stack carries no gradient, as a
`MemoryCell`. The cell lives on the ground floor so that models describe themselves without knowing
the algorithms that will use the description.
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

    `params` are expressions standing for the cell's parameters, in the order of the parameter list
    the algorithms are given; the functions must reach the parameters only through them (a
    `dy.Parameters` used directly would be invisible to RTRL and UORO). A structured state (a hidden
    vector and a stack, say) is packed into one expression, e.g. with `dy.concatenate`. `x` and `y`
    are whatever the sequence holds (e.g. one-hot arrays and symbol ids); the functions turn them into
    expressions. The step may be evaluated on a batch of copies of the state, so it must use batched
    operations only in the ordinary, batch-agnostic way (no `sum_batches`, `pick_batch_elem`).
    """
    step: Step
    loss: Loss
    initial: np.ndarray


@dataclass(frozen=True)
class MemoryCell(Cell):
    """A cell whose state also has a part that carries no gradient (module docstring).

    step(params, state, x, memory): (the next state, the next memory); `memory` is its initial value,
    any Python value (a discrete stack). The step may get a batch of copies of the state with one
    memory: it must give the copies the same memory (they take the same discrete decisions).
    """
    memory: Any = None


def advance(cell: Cell, params: list[dy.Expression], state: dy.Expression, x, memory):
    """One step of any cell.

    Args:
        cell: a `Cell` or a `MemoryCell`.
        params, state, x: as its step takes them.
        memory: m_{t-1} (ignored by a plain `Cell`).
    Returns:
        (s_t, m_t), m_t None for a plain `Cell`.
    """
    if isinstance(cell, MemoryCell):
        return cell.step(params, state, x, memory)
    return cell.step(params, state, x), None


def initial_memory(cell: Cell):
    """A cell's memory before the first input.

    Args:
        cell: a `Cell` or a `MemoryCell`.
    Returns:
        m_0, None for a plain `Cell`.
    """
    return cell.memory if isinstance(cell, MemoryCell) else None
