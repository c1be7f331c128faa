"""A small recurrent cell as pure functions of DyNet expressions: what the gradient methods drive.

A model trainable forward in time (RTRL, UORO: `stackparse.training.gradients`) describes one step of itself as a
`Cell` (the NSPDA, whose discrete stack carries no gradient, as a `MemoryCell`), on the ground floor so that models
describe themselves without knowing the algorithms that use the description.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import dynet as dy
import numpy as np

Step = Callable[..., Any]
Loss = Callable[[list[dy.Expression], dy.Expression, Sequence], dy.Expression]


@dataclass(frozen=True)
class Cell:
    """A recurrent cell as pure functions of DyNet expressions, over a batch of N sequences.

    step(params, state, xs): the next states, an expression like `state`, (*initial.shape) x N; `xs` holds the N
        sequences' inputs at this step, one item each, whatever the sequences hold (symbol ids, say).
    loss(params, state, ys): (1,) x N, each sequence's loss at this step given its target ys[b]. The algorithms
        weight it (0 where a sequence is not scored), so each ys[b] is a real target.
    initial: one sequence's state before its first input, a constant array (P_0 = 0).
    refine(params, state, xs, hold): iterative refinement's pass (NSPDA eq. 17, `stackparse.training.refinement`):
        the recurrence again on the step's inputs with any memory left as it is, the states of the sequences that
        `hold` marks ((N,) bool) kept as they are; None for a cell that cannot refine. A memory cell's refinement
        neither reads nor changes its memory, so it is not an argument.

    `params` stand for the cell's parameters, in the order the algorithms are given them; the functions must reach
    the parameters only through them (a `dy.Parameters` used directly is invisible to RTRL and UORO), and each may
    be a batch, one value per sequence. A structured state is packed into one expression (`dy.concatenate`).
    The algorithms also run the step on copies of the batch (the items of `xs` repeated alike), so it uses
    batch-agnostic operations only (no `sum_batches`, `pick_batch_elem`), and a step that draws random numbers
    draws them from DyNet's generator, the same for every sequence of the batch (not one per sequence): the
    algorithms start the batch and its copies from one seed, so that they draw alike."""
    step: Step
    loss: Loss
    initial: np.ndarray
    refine: Step | None = None


@dataclass(frozen=True)
class MemoryCell(Cell):
    """A cell whose state also has a part that carries no gradient (module docstring).

    step(params, state, xs, memory): (the next states, the next memory). `memory` is one sequence's memory before
    its first input: a value (the NSPDA's `DiscreteStack`) with `select(indices)`, the memory of the sequences at
    `indices` of its batch (an index may repeat), and `tile(k)`, k copies of its batch (copy c of sequence b at
    c·N + b) that act as one. The algorithms start a batch from `select([0] * N)`, drop sequences that have ended
    with `select`, and give k copies of a batch's states `tile(k)`: the copies take the same discrete decisions as
    their originals."""
    memory: Any = None


def advance(cell: Cell, params: list[dy.Expression], state: dy.Expression, xs: Sequence, memory):
    """One step of any cell: (s_t, m_t) from s_{t-1}, the inputs and m_{t-1}; m_t None for a plain `Cell`."""
    if isinstance(cell, MemoryCell):
        return cell.step(params, state, xs, memory)
    return cell.step(params, state, xs), None


def memory_of(cell: Cell, indices: Sequence[int], memory=None):
    """The memory of the sequences at `indices` of `memory`'s batch (by default of one sequence's initial
    memory: `[0] * N` starts N sequences); None for a plain `Cell`."""
    if not isinstance(cell, MemoryCell):
        return None
    return (cell.memory if memory is None else memory).select(indices)


def tiled(cell: Cell, memory, copies: int):
    """`copies` copies of the batch whose memory is `memory`, acting as one; None for a plain `Cell`."""
    return memory.tile(copies) if isinstance(cell, MemoryCell) else None
