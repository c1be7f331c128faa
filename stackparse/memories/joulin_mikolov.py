"""The continuous stack and doubly-linked list of Joulin & Mikolov (2015, §4.2), as values.

A. Joulin and T. Mikolov, "Inferring Algorithmic Patterns with Stack-Augmented Recurrent Nets",
NeurIPS 2015. Each memory holds S independent structures (the paper's several stacks or lists) per sequence of a
DyNet batch, as one (rows, S) x batch matrix, updated by a few slices and broadcast products (no Python loop). The
update is a pure function of (content, action probabilities, written value); `StackMemory` and `ListMemory` wrap
it as immutable values (`next`, `read`).

Stack (eq. 4-5, position 0 the top; a_t is the (2 or 3, S) matrix of action probabilities):
    s_t[0] = a_t[PUSH] v_t + a_t[POP] s_{t-1}[1] (+ a_t[NO-OP] s_{t-1}[0])                 (4)
    s_t[i] = a_t[PUSH] s_{t-1}[i-1] + a_t[POP] s_{t-1}[i+1] (+ a_t[NO-OP] s_{t-1}[i])      (5)
where v_t = sigma(D h_t) is the pushed value. List (the update of §4.2, "Doubly-linked lists"),
around a head position H:
    L_t[H]   = a[RIGHT] L[H+1] + a[LEFT] L[H-1] + a[INSERT] v_t   (+ a[NO-OP] L[H])
    L_t[i<H] = a[RIGHT] L[i+1] + a[LEFT] L[i-1] + a[INSERT] L[i+1] (+ a[NO-OP] L[i])
    L_t[i>H] = a[RIGHT] L[i+1] + a[LEFT] L[i-1] + a[INSERT] L[i]   (+ a[NO-OP] L[i])

Choices the paper leaves open, and why:
- Capacity. Positions never written read EMPTY (-1, the paper's empty-stack value). An update moves content one
  position further from the top (head) at most, so each grows the matrix by one EMPTY row (the list: one at each
  end) and nothing falls off. `restore` (a state carried across a truncated-BPTT cut) drops the rows holding EMPTY
  again (within `TRIM_TOLERANCE`), so depth follows the content, not the time. An optional capacity also drops what
  lies deeper at those cuts (the reference code's stacks hold 200 values): for very long streams (a language
  model's), where a controller that keeps pushing would grow the stacks, and the cost of a step, without bound.
- The list's read. The paper says what the list does, not what the network reads. We read the k positions ending
  at the head, H-k+1..H: INSERT moves older values left of the head, so with INSERT and LEFT the list is a stack
  and this read is the stack's top-k read.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, NamedTuple

import dynet as dy
import numpy as np

from stackparse._dynet import product as matmul

EMPTY = -1.0
"""The value of a position that holds nothing (the paper's empty stack reads -1)."""

TRIM_TOLERANCE = 1e-6
"""Rows within this distance of EMPTY everywhere are dropped by `restore` (float sums of
probabilities are 1 only to about 1e-7, so exact equality would never hold)."""

STACK_ACTIONS = ("PUSH", "POP", "NO-OP")
LIST_ACTIONS = ("INSERT", "LEFT", "RIGHT", "NO-OP")


class Signals(NamedTuple):
    """What the controller sends every stack (list) at one step.

    actions: a_t, (n_actions, S) x B, each column a distribution over the memory's `actions`.
    values: (1, S) x B, what each stack pushes (list inserts): sigma(D h_t)."""
    actions: dy.Expression
    values: dy.Expression


def _rows(x: dy.Expression) -> int:
    return x.dim()[0][0]


def _empty_rows(n: int, count: int) -> dy.Expression:
    """n EMPTY rows: (n, count), unbatched (DyNet broadcasts it over any batch)."""
    return dy.constant((n, count), EMPTY)


def _slice(x: dy.Expression, start: int, end: int) -> dy.Expression:
    return dy.pick_range(x, start, end, d=0)


def _mix(actions: dy.Expression, candidates: list[dy.Expression]) -> dy.Expression:
    """sum_j a[j] * candidate_j: the expectation over the actions of the content they produce.

    actions: (n, S) x B; candidates: n of (rows, S) x B. Row j of the actions is spread over the rows
    by a product with a column of ones, then multiplied element-wise (DyNet's broadcasting cmult
    is ten times slower than the two together)."""
    ones = dy.constant((_rows(candidates[0]), 1), 1.0)
    return dy.esum([dy.cmult(matmul(ones, _slice(actions, j, j + 1)), c) for j, c in enumerate(candidates)])


def stack_update(content: dy.Expression, actions: dy.Expression, pushed: dy.Expression) -> dy.Expression:
    """One step of S continuous stacks, eq. 4-5 (and NO-OP when `actions` has a third row).

    content: (p, S) x B, row 0 the tops; rows below p are EMPTY. actions: (2 or 3, S) x B, per-stack
    probabilities of PUSH, POP (, NO-OP). pushed: (1, S) x B, sigma(D h_t). Returns the new content,
    (p + 1, S) x B: one row deeper so that a push loses nothing."""
    stacks = content.dim()[0][1]
    grown = dy.concatenate([content, _empty_rows(1, stacks)])                    # (p+1, S): s[i]
    push = dy.concatenate([pushed, content])                                      # s[i-1], v on top
    pop = dy.concatenate([_slice(grown, 1, _rows(grown)), _empty_rows(1, stacks)])  # s[i+1]
    return _mix(actions, [push, pop, grown][:_rows(actions)])


def list_update(content: dy.Expression, head: int, actions: dy.Expression,
                written: dy.Expression) -> tuple[dy.Expression, int]:
    """One step of S continuous doubly-linked lists (§4.2), NO-OP when `actions` has a 4th row.

    content: (n, S) x B, the head at row `head`; rows beyond both ends are EMPTY. actions: (3 or 4, S)
    x B, per-list probabilities of INSERT, LEFT, RIGHT (, NO-OP). written: (1, S) x B, sigma(D h_t).
    Returns ((n + 2, S) x B, head + 1): the content, one EMPTY row longer at each end, and its head."""
    lists = content.dim()[0][1]
    empty = _empty_rows(1, lists)
    grown = dy.concatenate([empty, content, empty])                               # (n+2, S)
    rows, head = _rows(grown), head + 1
    right = dy.concatenate([_slice(grown, 1, rows), empty])                       # L[i+1]
    left = dy.concatenate([empty, _slice(grown, 0, rows - 1)])                    # L[i-1]
    insert = dy.concatenate([_slice(grown, 1, head + 1), written, _slice(grown, head + 1, rows)])
    return _mix(actions, [insert, left, right, grown][:_rows(actions)]), head


def _empty_run(values: np.ndarray, from_end: bool) -> int:
    """How many whole rows of `values` (rows, ...) at one end are EMPTY within the tolerance."""
    empty = np.all(np.abs(values.reshape(values.shape[0], -1) - EMPTY) <= TRIM_TOLERANCE, axis=1)
    if from_end:
        empty = empty[::-1]
    return len(empty) if empty.all() else int(np.argmin(empty))


@dataclass(frozen=True)
class _ContentMemory:
    """S structures per sequence as one content matrix, (rows, S) x B: an immutable value."""
    content: dy.Expression
    k: int

    @property
    def batch_size(self) -> int:
        """B (1 for the empty memory, which broadcasts over any batch)."""
        return self.content.dim()[1]

    def tensors(self) -> list[dy.Expression]:
        return [self.content]


@dataclass(frozen=True)
class StackMemory(_ContentMemory):
    """S continuous stacks per sequence; `next` returns a new value.

    content: (p, S) x B, row 0 the tops, p >= k always so the top-k read needs no padding."""
    actions: ClassVar[tuple[str, ...]] = STACK_ACTIONS
    """The rows of the action matrix `next` takes (NO-OP, the last, is optional)."""

    @staticmethod
    def empty(stacks: int, k: int) -> "StackMemory":
        """S empty stacks (unbatched: broadcast over the batch on the first update)."""
        return StackMemory(_empty_rows(k, stacks), k)

    def next(self, signals: Signals) -> "StackMemory":
        """The stacks after one step (eq. 4-5); see `stack_update`."""
        return StackMemory(stack_update(self.content, *signals), self.k)

    def read(self) -> dy.Expression:
        """The top k values of every stack, s^k of eq. 6: (k, S) x B, the top first."""
        return _slice(self.content, 0, self.k)

    def top(self) -> dy.Expression:
        """(1, S) x B."""
        return _slice(self.content, 0, 1)

    @staticmethod
    def restore(tensors: list[dy.Expression], k: int, capacity: int = 0) -> "StackMemory":
        """The memory saved by `tensors`, its EMPTY bottom rows dropped (keeping k), and with a
        `capacity` > 0 everything below the top `capacity` positions too."""
        (content,) = tensors
        keep = max(k, _rows(content) - _empty_run(content.npvalue(), from_end=True))
        return StackMemory(_slice(content, 0, min(keep, capacity) if capacity else keep), k)


@dataclass(frozen=True)
class ListMemory(_ContentMemory):
    """S continuous doubly-linked lists per sequence, an immutable value.

    content: (2r + 1, S) x B with the head in the middle row r: every update grows both ends by one and `restore` trims
    both ends alike, so the head's row follows from the shape. r >= k - 1, so the read needs no padding."""
    actions: ClassVar[tuple[str, ...]] = LIST_ACTIONS
    """The rows of the action matrix `next` takes (NO-OP, the last, is optional)."""

    @property
    def head(self) -> int:
        return (_rows(self.content) - 1) // 2

    @staticmethod
    def empty(lists: int, k: int) -> "ListMemory":
        return ListMemory(_empty_rows(2 * k - 1, lists), k)

    def next(self, signals: Signals) -> "ListMemory":
        """The lists after one step; see `list_update`."""
        return ListMemory(list_update(self.content, self.head, *signals)[0], self.k)

    def read(self) -> dy.Expression:
        """The k values ending at the head (H-k+1..H): (k, S) x B, the head last."""
        return _slice(self.content, self.head - self.k + 1, self.head + 1)

    def top(self) -> dy.Expression:
        """The value under the head: (1, S) x B."""
        return _slice(self.content, self.head, self.head + 1)

    @staticmethod
    def restore(tensors: list[dy.Expression], k: int, capacity: int = 0) -> "ListMemory":
        """The memory saved by `tensors`, as many EMPTY rows dropped at each end (keeping k - 1), and
        with a `capacity` > 0 everything beyond `capacity` positions on either side of the head too."""
        (content,) = tensors
        values, rows = content.npvalue(), _rows(content)
        side = (rows - 1) // 2 - min(_empty_run(values, from_end=False), _empty_run(values, from_end=True))
        side = max(k - 1, min(side, capacity) if capacity else side)
        drop = (rows - 1) // 2 - side
        return ListMemory(_slice(content, drop, rows - drop), k)
