"""The discrete ("digital") stack of the Neural State Pushdown Automaton, as a value.

A. Mali, A. Ororbia and C. L. Giles, "The Neural State Pushdown Automata" (2019/2020), §3: unlike the NNPDA's
analog stack (Sun et al. 1993/1998), which moves continuous amounts of symbols, it holds whole symbols, and the
action neuron, quantized to three levels, pushes one, pops one or leaves the stack.

A `DiscreteStack` holds one stack per sequence of a DyNet batch, a tuple of tuples of symbol ids, top last. It
never changes; `next` returns the stack after one action per sequence (`update`, the pure function). Nothing here
is differentiable: the model makes the read differentiable in the action (eq. 6, `stackparse.models.nspda`) from
the three candidate tops `candidates` gives. `ArrayStack` is the same batch of stacks in numpy arrays, for the
model's numpy mirror (`stackparse.models.arrays`), where a step must cost a few array operations whatever the batch.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import NamedTuple, Sequence

import numpy as np

EMPTY = -1
"""What `top` gives for an empty stack (symbol ids are 0, 1, ...)."""


class Action(enum.IntEnum):
    """A stack action; its value is the quantized action neuron's, f(A) in {-1, 0, 1} (eq. 2)."""
    POP = -1
    NO_OP = 0
    PUSH = 1


def update(stack: tuple[int, ...], action: Action, symbol: int) -> tuple[int, ...]:
    """One stack (the top last) after one action: PUSH `symbol`, POP the top (nothing happens to an empty stack, which
    is what a PDA without a move for it would reject: the model must learn not to), NO-OP."""
    if action is Action.PUSH:
        return stack + (symbol,)
    if action is Action.POP:
        return stack[:-1]
    return stack


def top(stack: tuple[int, ...], depth: int = 0) -> int:
    """The symbol `depth` places below the top, or EMPTY when there is none."""
    return stack[-1 - depth] if len(stack) > depth else EMPTY


class Signals(NamedTuple):
    """One action per stack of the batch, and what PUSH pushes on each."""
    actions: Sequence[Action]
    symbols: Sequence[int]


@dataclass(frozen=True)
class DiscreteStack:
    """A batch of discrete stacks (see the module docstring).

    stacks: one tuple of symbol ids per sequence, the top last."""
    stacks: tuple[tuple[int, ...], ...]

    @classmethod
    def empty(cls, batch_size: int, bottom: Sequence[int] = ()) -> DiscreteStack:
        """`batch_size` stacks, each holding `bottom` (the bottom first), e.g. a PDA's Z."""
        return cls(tuple(tuple(bottom) for _ in range(batch_size)))

    @property
    def batch_size(self) -> int:
        return len(self.stacks)

    def next(self, signals: Signals) -> DiscreteStack:
        """The stacks after `actions[b]` on stack b, pushing `symbols[b]` on PUSH."""
        return DiscreteStack(tuple(update(s, Action(a), int(x)) for s, a, x in zip(self.stacks, *signals)))

    def read(self) -> list[int]:
        """The top symbol of each stack (EMPTY when empty)."""
        return [top(s) for s in self.stacks]

    def candidates(self, symbols: Sequence[int]) -> dict[Action, list[int]]:
        """The top each action would leave, per stack: PUSH the pushed symbol, POP the one below the
        top, NO-OP the top. The model mixes them by its action (eq. 6)."""
        return {Action.PUSH: [int(x) for x in symbols],
                Action.POP: [top(s, 1) for s in self.stacks],
                Action.NO_OP: self.read()}

    def depths(self) -> list[int]:
        return [len(s) for s in self.stacks]

    def select(self, indices: Sequence[int]) -> DiscreteStack:
        """The stacks of the sequences at `indices`, in that order (e.g. those of a batch still running)."""
        return DiscreteStack(tuple(self.stacks[i] for i in indices))

    def tile(self, copies: int) -> TiledStack:
        """`copies` copies of the batch, copy c of stack b at c * batch_size + b, which act as one (`TiledStack`)."""
        return TiledStack(self, copies)


@dataclass(frozen=True)
class TiledStack:
    """Copies of a batch of stacks that take the same actions: what the gradient methods run beside a batch, copies
    of its states (`stackparse.cells`). Copy c of stack b is at c * base.batch_size + b. It reads as `DiscreteStack`
    does, each result the base's repeated, and `next` moves the base by the first copy's actions (the others', the
    same, are not looked at): the work is the base batch's, whatever the number of copies."""
    base: DiscreteStack
    copies: int

    @property
    def batch_size(self) -> int:
        return self.base.batch_size * self.copies

    def next(self, signals: Signals) -> TiledStack:
        n = self.base.batch_size
        return TiledStack(self.base.next(Signals(signals.actions[:n], signals.symbols[:n])), self.copies)

    def read(self) -> list[int]:
        return self.base.read() * self.copies

    def candidates(self, symbols: Sequence[int]) -> dict[Action, list[int]]:
        return {action: tops * self.copies
                for action, tops in self.base.candidates(symbols[:self.base.batch_size]).items()}

    def depths(self) -> list[int]:
        return self.base.depths() * self.copies


@dataclass(frozen=True)
class ArrayStack:
    """The same batch of stacks as `DiscreteStack`, held in arrays for the numpy mirror of the NSPDA
    (`stackparse.models.arrays`): `symbols` (B, capacity) int, stack b's symbols bottom first in its first
    `depth[b]` columns, `depth` (B,) int. A value like `DiscreteStack`: `next` returns a new one. The
    capacity is fixed when it is made (the bottom plus one push per step), so a step is a few array operations
    whatever the batch size."""
    symbols: np.ndarray
    depth: np.ndarray

    @classmethod
    def empty(cls, batch_size: int, capacity: int, bottom: Sequence[int] = ()) -> ArrayStack:
        """`batch_size` stacks of room for `capacity` symbols, each holding `bottom` (the bottom first)."""
        symbols = np.full((batch_size, capacity), EMPTY, dtype=np.int64)
        symbols[:, :len(bottom)] = bottom
        return cls(symbols, np.full(batch_size, len(bottom), dtype=np.int64))

    @property
    def batch_size(self) -> int:
        return len(self.depth)

    def top(self, depth: int = 0) -> np.ndarray:
        """The symbol `depth` places below each top, EMPTY where there is none: (B,) int (`top`)."""
        where = self.depth - 1 - depth
        rows = np.arange(len(where))
        return np.where(where >= 0, self.symbols[rows, np.maximum(where, 0)], EMPTY)

    def next(self, actions: np.ndarray, symbols: np.ndarray) -> ArrayStack:
        """The stacks after `actions[b]` in {-1, 0, 1} on stack b, pushing `symbols[b]` on PUSH (`update`: a
        popped empty stack stays empty)."""
        pushed = np.flatnonzero(actions == Action.PUSH)
        table = self.symbols.copy()
        table[pushed, self.depth[pushed]] = symbols[pushed]
        return ArrayStack(table, np.maximum(self.depth + actions, 0))

    def head(self, n: int) -> ArrayStack:
        """The first n stacks (views: the batch's sequences still running when they are sorted longest first)."""
        return ArrayStack(self.symbols[:n], self.depth[:n])
