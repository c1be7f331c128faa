"""The neural stack, queue and deque of Grefenstette et al. (2015, §3), as values.

E. Grefenstette, K. M. Hermann, M. Suleyman and P. Blunsom, "Learning to Transduce with Unbounded
Memory", NeurIPS 2015. A memory is a value matrix V_t, one row per value ever pushed, and a strength
vector s_t saying how much of each row is still logically in the structure. Values are never changed
or mixed (unlike Joulin & Mikolov's stack); push and pop only move strength.

Stack (positions 1..t, t the top; u_t the pop signal, d_t the push signal, v_t the value):
    V_t[i] = V_{t-1}[i] (i < t),  V_t[t] = v_t                                              (1)
    s_t[i] = max(0, s_{t-1}[i] - max(0, u_t - sum_{j=i+1}^{t-1} s_{t-1}[j]))   (i < t)
    s_t[t] = d_t                                                                              (2)
    r_t    = sum_i min(s_t[i], max(0, 1 - sum_{j=i+1}^{t} s_t[j])) V_t[i]                     (3)
Queue: the same, but pop (eq. 4) and read (eq. 5) start from the front (position 1): their sums run over j = 1..i-1.
DeQue (eq. 6-11): values enter at both ends, V_t = [v_bot; V_{t-1}; v_top]; a pop from the top (eq. 7, sums above i) is
followed by a pop from the bottom (eq. 8, sums below i), then s_t = [d_bot; s_both; d_top] (eq. 9); the top read (eq.
10) sums above i, the bottom read (eq. 11) below i.

Layout, for a DyNet batch of B sequences and values of m dimensions:
    values: (m, n) x B, column i the paper's row V[i], the bottom (oldest, queue front) first (built on demand);
    strengths: (n,) x B, in the same order; n = t for the stack and queue, 2t for the deque.
The value matrix is kept as a few blocks of columns (`Values`): growing one matrix by concatenation would copy all of
it at every step, and a graph would hold every step's copy. A read is one product over the blocks, all ends' reads at
once (`read_all`). The "u_t (or 1) minus the strength above (below) me" of eq. 2-5 is one cumulative sum of
[u_t; -s] walking in from that end, from the top on the rows reversed (dy.select_rows, exact): no Python loop over
positions, no difference of large totals.
min(a, b) is a - relu(a - b), max(0, x) is relu(x): at a tie the gradient goes to the left argument, the paper's
convention (footnote 1); DyNet's relu has gradient 0 at 0.

Choices the paper leaves open, and why:
- The empty memory (t = 0) has no rows (DyNet has no empty tensors: `values` is None) and reads r_0 = 0 (§3.4);
  the first update creates the first row(s).
- Eq. 7 writes its sum's upper bound as 2(t-1)-1 and its range as i < 2(t-1), leaving the last old position out
  of the top pop; we read both as covering all 2(t-1) old positions, the only reading under which a DeQue popped
  only from the top behaves as a neural stack (tested).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, NamedTuple, Sequence

import dynet as dy


class Signals(NamedTuple):
    """What a controller sends to one end of a memory at one step.

    push: d_t, (1,) x B in (0, 1). pop: u_t, (1,) x B in (0, 1). value: v_t, (m,) x B."""
    push: dy.Expression
    pop: dy.Expression
    value: dy.Expression


def _rows(x: dy.Expression) -> int:
    return x.dim()[0][0]


# ---- strengths: eq. 2, 4, 7-8 (pops) and the read weights of eq. 3, 5, 10-11 --------------------------------------
def _less_beyond(start, s: dy.Expression, from_top: bool) -> dy.Expression:
    """start - sum_{j beyond i} s[j] for every position i, "beyond" being above i (from_top) or below it: (n,) x B.
    start: u_t, (1,) x B, or the constant 1, (1,).

    One cumulative sum of [start; -s] in the order that walks in from that end: its k-th entry is start less the
    strength of the k positions nearest the end, those beyond the (k+1)-th. A gather (exact) puts the walk from
    the top back in the bottom-first order."""
    n = _rows(s)
    if not from_top:
        return dy.pick_range(dy.cumsum(dy.concatenate([start, -s]), 0), 0, n)
    top_first = list(range(n - 1, -1, -1))
    walk = dy.cumsum(dy.concatenate([start, -dy.select_rows(s, top_first)]), 0)        # (n + 1,); walk[n] unused
    return dy.select_rows(walk, top_first)                                              # position i: walk[n - 1 - i]


def pop(s: dy.Expression, amount: dy.Expression, from_top: bool) -> dy.Expression:
    """Remove `amount` u_t, (1,) x B, of strength from the top (last position) or the bottom (first) of
    s, (n,) x B, the bottom first: eq. 2 (top) or 4 (front/bottom), the first case. (n,) x B.

    s_new[i] = max(0, s[i] - max(0, u - (strength beyond i towards that end)))."""
    return dy.rectify(s - dy.rectify(_less_beyond(amount, s, from_top)))


def read_weights(s: dy.Expression, from_top: bool) -> dy.Expression:
    """The weight of each row in a read, eq. 3 (top) or 5 (front/bottom):
    min(s[i], max(0, 1 - strength beyond i towards that end)). (n,) x B."""
    room = dy.rectify(_less_beyond(dy.ones((1,)), s, from_top))
    return s - dy.rectify(s - room)


# ---- values: eq. 1, 6 --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Values:
    """The value matrix V_t, (m, n) x B, kept as blocks of whole columns, the bottom first.

    Blocks merge as the digits of a binary counter: a push adds a block of one column at its end, and that block
    and the run of blocks next to it, each as wide as all those beyond it, become one. A column is copied about
    log2(n) times in all (one matrix grown by concatenation copies all n at every push), a graph keeps each column
    about that many times, and a read is one product over at most about 2 log2(n) blocks (`weighted_sums`).

    blocks: (m, k) x B matrices (k = 1: (m,) x B vectors); widths: their k."""
    blocks: tuple[dy.Expression, ...]
    widths: tuple[int, ...]

    @staticmethod
    def of(matrix: dy.Expression) -> Values:
        """One block holding `matrix`, (m, n) x B (a state carried across a truncated-BPTT cut)."""
        (_, *columns), _ = matrix.dim()
        return Values((matrix,), (columns[0] if columns else 1,))

    def push(self, value: dy.Expression, at_top: bool) -> Values:
        """V with the column `value`, (m,) x B, added at the top (last) or bottom (first) end."""
        if at_top:
            return Values(*_carry(self.blocks + (value,), self.widths + (1,), lambda run: run))
        blocks, widths = _carry(self.blocks[::-1] + (value,), self.widths[::-1] + (1,), lambda run: run[::-1])
        return Values(blocks[::-1], widths[::-1])

    def matrix(self) -> dy.Expression:
        """V as one (m, n) x B matrix (built on demand: for inspection and the truncated-BPTT cut)."""
        if len(self.blocks) == 1:
            return dy.reshape(self.blocks[0], (_rows(self.blocks[0]), self.widths[0]))
        return dy.concatenate(list(self.blocks), d=1)

    def weighted_sums(self, weights: dy.Expression) -> dy.Expression:
        """V W, W (n, e) x B (e weight vectors as columns): one product per block, summed in one affine
        transform, so that V is read once for all e sums. (m, e) x B."""
        (_, *e), _ = weights.dim()
        zero = dy.zeros((_rows(self.blocks[0]), *e))
        if len(self.blocks) == 1:
            return dy.affine_transform([zero, self.blocks[0], weights])
        terms, start = [zero], 0
        for block, width in zip(self.blocks, self.widths):
            terms += [block, dy.pick_range(weights, start, start + width)]
            start += width
        return dy.affine_transform(terms)


def _carry(blocks: tuple, widths: tuple, in_order):
    """The binary counter's carry at the last block: it and the run of blocks before it, each as wide as all
    the blocks after it, become one block, their columns concatenated as `in_order` puts them (the run in
    list order). Returns the new (blocks, widths)."""
    k, width = 1, widths[-1]
    while k < len(widths) and widths[-k - 1] == width:
        width, k = width + widths[-k - 1], k + 1
    if k == 1:
        return blocks, widths
    return blocks[:-k] + (dy.concatenate(in_order(list(blocks[-k:])), d=1),), widths[:-k] + (width,)


def reads(values: Values, s: dy.Expression, from_top: Sequence[bool]) -> dy.Expression:
    """r_t = sum_i weight[i] V_t[i] (eq. 3, 5, 10, 11) for each end in `from_top`, as the columns of one
    (m, ends) x B matrix."""
    weights = [read_weights(s, end) for end in from_top]
    return values.weighted_sums(weights[0] if len(weights) == 1 else dy.concatenate_cols(weights))


def read(values: Values, s: dy.Expression, from_top: bool) -> dy.Expression:
    """r_t = sum_i weight[i] V_t[i] (eq. 3, 5, 10, 11): (m,) x B."""
    return reads(values, s, (from_top,))


# ---- the updates -------------------------------------------------------------------------------------------------
def stack_update(values: Values | None, strengths, signals: Signals):
    """One step of a neural stack, eq. 1-2: pop from the top, then push on the top. values (m, t-1) x B
    and strengths (t-1,) x B (None: empty) become (m, t) x B and (t,) x B."""
    if values is None:
        return Values((signals.value,), (1,)), signals.push
    strengths = pop(strengths, signals.pop, from_top=True)
    return values.push(signals.value, at_top=True), dy.concatenate([strengths, signals.push])


def queue_update(values: Values | None, strengths, signals: Signals):
    """One step of a neural queue, eq. 1 and 4: pop from the front (position 1), push at the back.
    Shapes as `stack_update`."""
    if values is None:
        return Values((signals.value,), (1,)), signals.push
    strengths = pop(strengths, signals.pop, from_top=False)
    return values.push(signals.value, at_top=True), dy.concatenate([strengths, signals.push])


def deque_update(values: Values | None, strengths, top: Signals, bottom: Signals):
    """One step of a neural deque, eq. 6-9: pop the top, then the bottom, then push at both ends. values (m, 2(t-1)) x B
    and strengths (2(t-1),) x B (None: empty) become (m, 2t) x B and (2t,) x B, the bottom end first."""
    if values is None:
        return Values((bottom.value, top.value), (1, 1)), dy.concatenate([bottom.push, top.push])
    strengths = pop(pop(strengths, top.pop, from_top=True), bottom.pop, from_top=False)           # eq. 7, 8
    values = values.push(bottom.value, at_top=False).push(top.value, at_top=True)                # eq. 6
    return values, dy.concatenate([bottom.push, strengths, top.push])                              # eq. 9


# ---- the memories ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Memory:
    """A memory as an immutable value: `next(signals)`, one Signals per end, returns a new one,
    `read()` its read vectors.

    columns: V_t as `Values`, None while empty; strengths: (n,) x B, None while empty; size: m."""
    columns: Values | None
    strengths: dy.Expression | None
    size: int

    ends: ClassVar[int] = 1
    """How many ends the controller drives (signals per step, read vectors)."""
    read_from_top: ClassVar[tuple[bool, ...]] = (True,)
    """Per end: whether it pops and reads at the top (eq. 2-3, 7, 10) or the bottom (eq. 4-5, 8, 11)."""
    push_at_top: ClassVar[tuple[bool, ...]] = (True,)
    """Per end: whether it pushes at the top (eq. 1, 9) or the bottom (eq. 9)."""

    @classmethod
    def empty(cls, size: int):
        return cls(None, None, size)

    @property
    def values(self) -> dy.Expression | None:
        """V_t, (m, n) x B, the bottom first; None while empty."""
        return None if self.columns is None else self.columns.matrix()

    @property
    def batch_size(self) -> int:
        """B (1 for the empty memory, which broadcasts over any batch)."""
        return 1 if self.strengths is None else self.strengths.dim()[1]

    def read(self) -> list[dy.Expression]:
        """One (m,) x B read per end (eq. 3, 5 or 10-11); zero vectors while empty."""
        if self.columns is None:
            return [dy.zeros((self.size,)) for _ in self.read_from_top]
        return [read(self.columns, self.strengths, end) for end in self.read_from_top]

    def read_all(self) -> dy.Expression:
        """The reads of `read()` concatenated, (ends m,) x B, computed together (V is read once)."""
        if self.columns is None:
            return dy.zeros((self.ends * self.size,))
        both = reads(self.columns, self.strengths, self.read_from_top)                    # (m, ends) x B
        return both if self.ends == 1 else dy.reshape(both, (self.ends * self.size,))     # columns stacked

    def tensors(self) -> list[dy.Expression]:
        """The state, for truncated BPTT (empty memories have none): V_t and s_t."""
        return [] if self.columns is None else [self.values, self.strengths]

    @classmethod
    def restore(cls, tensors: list[dy.Expression], size: int):
        """The memory whose `tensors` these are."""
        if not tensors:
            return cls.empty(size)
        values, strengths = tensors
        return cls(Values.of(values), strengths, size)


@dataclass(frozen=True)
class NeuralStack(_Memory):
    """Grefenstette et al.'s neural stack (§3.1): pops, pushes and reads at the top."""

    def next(self, signals: Sequence[Signals]) -> NeuralStack:
        return NeuralStack(*stack_update(self.columns, self.strengths, *signals), self.size)


@dataclass(frozen=True)
class NeuralQueue(_Memory):
    """The neural queue (§3.2): pushes at the back, pops and reads at the front."""
    read_from_top: ClassVar[tuple[bool, ...]] = (False,)

    def next(self, signals: Sequence[Signals]) -> NeuralQueue:
        return NeuralQueue(*queue_update(self.columns, self.strengths, *signals), self.size)


@dataclass(frozen=True)
class NeuralDeque(_Memory):
    """The neural double-ended queue (§3.3): two ends, each pushed, popped and read.

    `next([top, bottom])`; `read()` is [r_top, r_bot]."""
    ends: ClassVar[int] = 2
    read_from_top: ClassVar[tuple[bool, ...]] = (True, False)
    push_at_top: ClassVar[tuple[bool, ...]] = (True, False)

    def next(self, signals: Sequence[Signals]) -> NeuralDeque:
        return NeuralDeque(*deque_update(self.columns, self.strengths, *signals), self.size)
