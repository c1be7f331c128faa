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
    values: (m, n) x B, column i the paper's row V[i], the bottom (oldest, queue front) first;
    strengths: (n,) x B, in the same order; n = t for the stack and queue, 2t for the deque.
The "strength above (below) me" sums are an exclusive cumulative sum (dy.cumsum minus the element), for sums above
on the rows reversed (dy.select_rows, exact): no Python loop over positions, no difference of large totals.
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

from stackparse._dynet import product as matmul


class Signals(NamedTuple):
    """What a controller sends to one end of a memory at one step.

    push: d_t, (1,) x B in (0, 1). pop: u_t, (1,) x B in (0, 1). value: v_t, (m,) x B."""
    push: dy.Expression
    pop: dy.Expression
    value: dy.Expression


def _rows(x: dy.Expression) -> int:
    return x.dim()[0][0]


def _reversed(x: dy.Expression) -> dy.Expression:
    """The rows of x in reverse order (a gather: exact)."""
    return dy.select_rows(x, list(range(_rows(x) - 1, -1, -1)))


def strength_below(s: dy.Expression) -> dy.Expression:
    """sum_{j < i} s[j] for every position i (an exclusive cumulative sum): (n,) x B."""
    return dy.cumsum(s, 0) - s


def strength_above(s: dy.Expression) -> dy.Expression:
    """sum_{j > i} s[j] for every position i: (n,) x B."""
    return _reversed(strength_below(_reversed(s)))


def _spread(x: dy.Expression, n: int) -> dy.Expression:
    """A (1,) x B scalar repeated over n positions: (n,) x B (a product by ones: DyNet's broadcasting
    element-wise operations are much slower)."""
    return matmul(dy.constant((n, 1), 1.0), x)


def pop(s: dy.Expression, amount: dy.Expression, from_top: bool) -> dy.Expression:
    """Remove `amount` u_t, (1,) x B, of strength from the top (last position) or the bottom (first) of
    s, (n,) x B, the bottom first: eq. 2 (top) or 4 (front/bottom), the first case. (n,) x B.

    s_new[i] = max(0, s[i] - max(0, u - (strength beyond i towards that end)))."""
    beyond = strength_above(s) if from_top else strength_below(s)
    return dy.rectify(s - dy.rectify(_spread(amount, _rows(s)) - beyond))


def read_weights(s: dy.Expression, from_top: bool) -> dy.Expression:
    """The weight of each row in a read, eq. 3 (top) or 5 (front/bottom):
    min(s[i], max(0, 1 - strength beyond i towards that end)). (n,) x B."""
    room = dy.rectify(-(strength_above(s) if from_top else strength_below(s)) + 1.0)   # (DyNet has no float - expr)
    return s - dy.rectify(s - room)


def read(values: dy.Expression, s: dy.Expression, from_top: bool) -> dy.Expression:
    """r_t = sum_i weight[i] V_t[i] (eq. 3, 5, 10, 11): (m,) x B."""
    return matmul(values, read_weights(s, from_top))


def _append(values, strengths, signals: Signals, at_top: bool):
    """Add one row holding `signals.value` with strength `signals.push` at one end (eq. 1-2, 6, 9)."""
    if values is None:
        return dy.reshape(signals.value, (_rows(signals.value), 1)), signals.push
    if at_top:
        return dy.concatenate([values, signals.value], d=1), dy.concatenate([strengths, signals.push])
    return dy.concatenate([signals.value, values], d=1), dy.concatenate([signals.push, strengths])


def stack_update(values, strengths, signals: Signals):
    """One step of a neural stack, eq. 1-2: pop from the top, then push on the top. values (m, t-1) x B
    and strengths (t-1,) x B (None: empty) become (m, t) x B and (t,) x B."""
    if strengths is not None:
        strengths = pop(strengths, signals.pop, from_top=True)
    return _append(values, strengths, signals, at_top=True)


def queue_update(values, strengths, signals: Signals):
    """One step of a neural queue, eq. 1 and 4: pop from the front (position 1), push at the back.
    Shapes as `stack_update`."""
    if strengths is not None:
        strengths = pop(strengths, signals.pop, from_top=False)
    return _append(values, strengths, signals, at_top=True)


def deque_update(values, strengths, top: Signals, bottom: Signals):
    """One step of a neural deque, eq. 6-9: pop the top, then the bottom, then push at both ends. values (m, 2(t-1)) x B
    and strengths (2(t-1),) x B (None: empty) become (m, 2t) x B and (2t,) x B, the bottom end first."""
    if strengths is not None:
        strengths = pop(pop(strengths, top.pop, from_top=True), bottom.pop, from_top=False)
    values, strengths = _append(values, strengths, bottom, at_top=False)
    return _append(values, strengths, top, at_top=True)


@dataclass(frozen=True)
class _Memory:
    """A memory as an immutable value: `next(signals)`, one Signals per end, returns a new one,
    `read()` its read vectors.

    values: (m, n) x B, None while empty; strengths: (n,) x B, None while empty; size: m."""
    values: dy.Expression | None
    strengths: dy.Expression | None
    size: int

    ends: ClassVar[int] = 1
    """How many ends the controller drives (signals per step, read vectors)."""
    read_from_top: ClassVar[tuple[bool, ...]] = (True,)
    """Per read vector: whether it reads from the top (eq. 3, 10) or the bottom (eq. 5, 11)."""

    @classmethod
    def empty(cls, size: int):
        return cls(None, None, size)

    @property
    def batch_size(self) -> int:
        """B (1 for the empty memory, which broadcasts over any batch)."""
        return 1 if self.strengths is None else self.strengths.dim()[1]

    def read(self) -> list[dy.Expression]:
        """One (m,) x B read per end (eq. 3, 5 or 10-11); zero vectors while empty."""
        if self.values is None:
            return [dy.zeros((self.size,)) for _ in self.read_from_top]
        return [read(self.values, self.strengths, end) for end in self.read_from_top]

    def tensors(self) -> list[dy.Expression]:
        """The state, for truncated BPTT (empty memories have none)."""
        return [] if self.values is None else [self.values, self.strengths]

    @classmethod
    def restore(cls, tensors: list[dy.Expression], size: int):
        """The memory whose `tensors` these are."""
        return cls(*tensors, size) if tensors else cls.empty(size)


@dataclass(frozen=True)
class NeuralStack(_Memory):
    """Grefenstette et al.'s neural stack (§3.1): pops, pushes and reads at the top."""

    def next(self, signals: Sequence[Signals]) -> NeuralStack:
        return NeuralStack(*stack_update(self.values, self.strengths, *signals), self.size)


@dataclass(frozen=True)
class NeuralQueue(_Memory):
    """The neural queue (§3.2): pushes at the back, pops and reads at the front."""
    read_from_top: ClassVar[tuple[bool, ...]] = (False,)

    def next(self, signals: Sequence[Signals]) -> NeuralQueue:
        return NeuralQueue(*queue_update(self.values, self.strengths, *signals), self.size)


@dataclass(frozen=True)
class NeuralDeque(_Memory):
    """The neural double-ended queue (§3.3): two ends, each pushed, popped and read.

    `next([top, bottom])`; `read()` is [r_top, r_bot]."""
    ends: ClassVar[int] = 2
    read_from_top: ClassVar[tuple[bool, ...]] = (True, False)

    def next(self, signals: Sequence[Signals]) -> NeuralDeque:
        return NeuralDeque(*deque_update(self.values, self.strengths, *signals), self.size)
