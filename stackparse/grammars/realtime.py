"""A PDA as a real-time table: one move per input symbol, what rule insertion programs into an NSPDA.

The NSPDA (`stackparse.models.nspda`) reads one symbol per step and then does one stack action: PUSH
the symbol read, POP, or NO-OP. `realtime(pda)` rewrites a PDA in those terms:

    move(q, x, top) = (q', action) or None (no move: the string is rejected)
    accepting(q, top): whether q, after ε-moves that keep the stack, is accepting

where top is the stack's top as the NSPDA stores it: an input symbol (the one whose reading pushed
it), the bottom marker, or EMPTY. The ε-moves are folded in: before reading x, the PDA may take any
ε-moves from q that keep the stack (a^n b^n's "bs - Z -> done Z", Dyck's "check" state), so a move
and the acceptance are computed over that ε-closure of (q, top).

Not every PDA fits (the five shipped ones do); `realtime` says which rule fails, in one line:
- it must be deterministic on the configurations it can be in (one move per (q, x, top));
- every move must push one symbol, pop one or keep the stack (popping X and pushing YX pushes Y;
  popping X and pushing X keeps it), and ε-moves must keep it;
- each stack symbol but the bottom must be pushed on one input symbol only, and each input symbol
  push at most one stack symbol, since the NSPDA pushes the symbol it reads.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass

from stackparse.errors import UserError
from stackparse.grammars.pda import PDA, Transition

EMPTY = "EMPTY"        # the top of an empty stack
BOTTOM = "BOTTOM"      # the top when only the bottom marker is left


class Op(enum.Enum):
    """What a move does to the stack, in the NSPDA's terms (values: its action neuron's)."""
    POP = -1
    NO_OP = 0
    PUSH = 1


@dataclass(frozen=True)
class Move:
    target: str
    op: Op


@dataclass(frozen=True)
class RealTimePDA:
    """A PDA's real-time table (module docstring): the possible `tops` (the input symbols that push,
    BOTTOM when the PDA has one, EMPTY), the `moves` that exist and the `accepting` (state, top) pairs."""
    pda: PDA
    tops: tuple[str, ...]
    moves: dict[tuple[str, str, str], Move]
    accepting: frozenset[tuple[str, str]]

    def run(self, string: str) -> bool:
        """Whether the table accepts `string` (equal to `accepts(pda, string)`, by construction)."""
        return self._walk(string)[1]

    def trace(self, string: str) -> list[tuple[str, str, str] | None]:
        """The move (state, symbol, top) the table makes at each step of `string`; None from the first step that
        has none (the string is rejected there)."""
        return self._walk(string)[0]

    def _walk(self, string: str) -> tuple[list[tuple[str, str, str] | None], bool]:
        keys, state, stack = [], self.pda.start, [BOTTOM] if self.pda.bottom else []
        for x in string:
            key = (state, x, stack[-1] if stack else EMPTY)
            move = self.moves.get(key)
            if move is None:
                return keys + [None] * (len(string) - len(keys)), False
            keys.append(key)
            state = move.target
            if move.op is Op.PUSH:
                stack.append(x)
            elif move.op is Op.POP:
                stack.pop()
        return keys, (state, stack[-1] if stack else EMPTY) in self.accepting


def _unfit(pda: PDA, why: str) -> UserError:
    return UserError(f"{pda.name}: cannot be programmed into an NSPDA: {why}")


def _pushed_by(pda: PDA) -> dict[str, str]:
    """Stack symbol -> the input symbol whose reading pushes it (module docstring's last rule)."""
    found: dict[str, str] = {}
    for t in pda.transitions:
        for symbol in t.push[:len(t.push) - (1 if t.top and t.push.endswith(t.top) else 0)]:
            if not t.symbol:
                raise _unfit(pda, f"the ε-move '{t}' pushes")
            if found.setdefault(symbol, t.symbol) != t.symbol:
                raise _unfit(pda, f"{symbol!r} is pushed on both {found[symbol]!r} and {t.symbol!r}")
    inputs = list(found.values())
    repeated = next((x for x in inputs if inputs.count(x) > 1), None)
    if repeated is not None:
        raise _unfit(pda, f"input {repeated!r} pushes more than one stack symbol")
    return found


def _op(pda: PDA, t: Transition) -> Op:
    """The stack change of a move whose TOP matched (module docstring's second rule)."""
    if t.push == t.top:                              # nothing popped nor pushed, or the top put back
        return Op.NO_OP
    if t.top and not t.push:
        return Op.POP
    if len(t.push) == len(t.top) + 1 and t.push.endswith(t.top):     # one symbol pushed over what was popped
        return Op.PUSH
    raise _unfit(pda, f"the move '{t}' changes the stack by more than one symbol")


def realtime(pda: PDA) -> RealTimePDA:
    """The real-time table of `pda`; a one-line UserError when it does not fit (module docstring)."""
    pushed_by = _pushed_by(pda)
    symbol_of_top = {x: s for s, x in pushed_by.items()}
    tops = tuple(x for x in pda.input_symbols if x in symbol_of_top) + ((BOTTOM,) if pda.bottom else ()) + (EMPTY,)
    symbol_of_top |= {BOTTOM: pda.bottom, EMPTY: ""}

    def applicable(t: Transition, top: str) -> bool:
        return not t.top or t.top == symbol_of_top[top]

    def closure(state: str, top: str) -> set[str]:
        seen, todo = {state}, [state]
        while todo:
            q = todo.pop()
            for t in pda.transitions:
                if t.state == q and not t.symbol and applicable(t, top):
                    if _op(pda, t) is not Op.NO_OP:
                        raise _unfit(pda, f"the ε-move '{t}' changes the stack")
                    if t.target not in seen:
                        seen.add(t.target)
                        todo.append(t.target)
        return seen

    moves, accepting = {}, set()
    for q in pda.states:
        for top in tops:
            reachable = closure(q, top)
            if reachable & pda.accept:
                accepting.add((q, top))
            for x in pda.input_symbols:
                found = {Move(t.target, _op(pda, t)) for t in pda.transitions
                         if t.state in reachable and t.symbol == x and applicable(t, top)}
                if len(found) > 1:
                    raise _unfit(pda, f"it is not deterministic in state {q} reading {x!r} with top {top}")
                if found:
                    moves[q, x, top] = found.pop()
    return RealTimePDA(pda, tops, moves, frozenset(accepting))
