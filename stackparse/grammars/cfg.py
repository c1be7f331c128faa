"""A PDA's context-free grammar (the triple construction), its derivations counted by length, and sampling.

Sampling a string of exactly n symbols needs how many accepted strings of that length each choice
leads to: the PDA's configurations cannot tell (their stacks are unbounded), its grammar can.

Construction (Hopcroft & Ullman 1979, Theorem 5.4; Sipser, Lemma 2.27). First the PDA is made to accept by empty stack:
a bottom marker ⊥ goes under the initial stack, every accepting state may move by ε to a new drain state, and the drain
state pops every symbol, ⊥ included. Every move is made to pop exactly one symbol: a move that pops nothing pops each X
in turn and pushes it back. Then the nonterminal [p X q] derives exactly the strings w that take the PDA from state p
with X on top to state q with that X popped, the stack below it untouched, and a move (p, a, X) -> (r, Y1..Yk) gives the
rules

    [p X q] -> a [r Y1 s1] [s1 Y2 s2] ... [s(k-1) Yk q]      for all states s1 .. s(k-1), q
    [p X r] -> a                                             when k = 0.

The language is what (q0, Z ⊥, drain) derives (Z the PDA's initial stack symbol, if any). A derivation
is a run: leftmost, its pending nonterminals are the stack. Long right-hand sides are chained two
symbols at a time, (s, Y1 Y2 .. Yk, q) -> [s Y1 t] (t, Y2 .. Yk, q), so every rule has at most two
nonterminals; only the nonterminals reachable from the start that derive something are kept.

Counting (`Counts`): for every nonterminal and n up to a maximum, the number of derivations of length n (as a logarithm:
Dyck(2) has about 2^1426 strings of length 960), by increasing n. A rule without terminal can hand its whole length to
one of its nonterminals when the others derive the empty string; within one n, nonterminals are counted after those they
can hand their length to. Such hand-overs loop only if the PDA has an ε-loop (a string would have infinitely many
derivations): sampling refuses those PDAs with a UserError, the runner does not need to.

Sampling (`derive`): expand the start symbol top down, leftmost first, each nonterminal at its length,
choosing a rule and a split of the length in proportion to the derivations they complete: a string is as
likely as its derivations, uniform when each has one accepting run (the shipped PDAs). Each step takes
the length down, or hands it to a nonterminal earlier in the counting order, so the derivation ends.
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass

import numpy as np

from stackparse.errors import UserError
from stackparse.grammars.pda import PDA

BOTTOM = "<bottom>"
"""The bottom marker under the PDA's stack; longer than one character, so never a PDA symbol."""
DRAIN = "<drain>"
"""The state that empties the stack after an accepting state; its name cannot be a PDA state's."""

Nonterminal = tuple
"""("pop", p, X, q) for [p X q]; ("chain", s, (Y1, .., Yk), q) for a chained right-hand side, k >= 2."""
Rule = tuple[str, tuple[Nonterminal, ...]]
"""One alternative of a nonterminal: a terminal ("" or one input symbol), then at most two nonterminals."""


@dataclass(frozen=True)
class Grammar:
    """The triple-construction grammar of a PDA (module docstring): every useful nonterminal's
    alternatives, and `start`, the whole language's nonterminal (not in `rules`: an empty language)."""
    rules: dict[Nonterminal, tuple[Rule, ...]]
    start: Nonterminal


def _sequence(state: str, symbols: tuple[str, ...], target: str) -> Nonterminal:
    """The nonterminal that pops `symbols` (top first) from `state`, ending in `target`."""
    if len(symbols) == 1:
        return ("pop", state, symbols[0], target)
    return ("chain", state, symbols, target)


def _popping_moves(pda: PDA) -> dict[tuple[str, str], list[tuple[str, str, tuple[str, ...]]]]:
    """The moves of the empty-stack PDA by (state, popped symbol): (input, target, pushed top first)."""
    symbols = (*pda.stack_symbols, BOTTOM)
    moves: dict[tuple[str, str], list[tuple[str, str, tuple[str, ...]]]] = {}
    for t in pda.transitions:
        for x in ([t.top] if t.top else symbols):
            put_back = () if t.top else (x,)
            moves.setdefault((t.state, x), []).append((t.symbol, t.target, tuple(t.push) + put_back))
    for x in symbols:
        for state in sorted(pda.accept):
            moves.setdefault((state, x), []).append(("", DRAIN, (x,)))
        moves.setdefault((DRAIN, x), []).append(("", DRAIN, ()))
    return moves


def _alternatives(nonterminal: Nonterminal, moves, states: tuple[str, ...]) -> tuple[Rule, ...]:
    """The rules of one nonterminal (module docstring)."""
    kind, state, symbols, target = nonterminal
    if kind == "chain":
        return tuple(("", (("pop", state, symbols[0], t), _sequence(t, symbols[1:], target))) for t in states)
    return tuple((a, (_sequence(r, pushed, target),) if pushed else ())
                 for a, r, pushed in moves.get((state, symbols), ()) if pushed or r == target)


def _useful(rules: dict[Nonterminal, tuple[Rule, ...]], start: Nonterminal) -> dict[Nonterminal, tuple[Rule, ...]]:
    """`rules` without the nonterminals that derive nothing or cannot be reached from `start`."""
    productive = _least(rules, lambda rule: True)
    kept = {nt: tuple(rule for rule in alternatives if all(c in productive for c in rule[1]))
            for nt, alternatives in rules.items() if nt in productive}
    reachable: set[Nonterminal] = set()
    todo = [start] if start in kept else []
    while todo:
        nt = todo.pop()
        if nt not in reachable:
            reachable.add(nt)
            todo += [c for _, children in kept[nt] for c in children]
    return {nt: kept[nt] for nt in kept if nt in reachable}


def grammar(pda: PDA) -> Grammar:
    """The triple-construction grammar of `pda`, useful nonterminals only (module docstring)."""
    moves = _popping_moves(pda)
    states = (*pda.states, DRAIN)
    start = _sequence(pda.start, (*pda.bottom, BOTTOM), DRAIN)
    rules: dict[Nonterminal, tuple[Rule, ...]] = {}
    todo = [start]
    while todo:
        nt = todo.pop()
        if nt not in rules:
            rules[nt] = _alternatives(nt, moves, states)
            todo += [c for _, children in rules[nt] for c in children]
    return Grammar(_useful(rules, start), start)


def _least(rules: dict[Nonterminal, tuple[Rule, ...]], usable) -> set[Nonterminal]:
    """The least set of nonterminals with a rule, accepted by `usable`, whose nonterminals are all in it."""
    found: set[Nonterminal] = set()
    grew = True
    while grew:
        new = {nt for nt, alternatives in rules.items() if nt not in found
               and any(usable(rule) and all(c in found for c in rule[1]) for rule in alternatives)}
        found |= new
        grew = bool(new)
    return found


def _same_length_order(grammar: Grammar, name: str) -> list[Nonterminal]:
    """The nonterminals, each after all those it can hand its whole length to (module docstring): a rule
    without terminal hands it to one of its nonterminals when the others derive the empty string. A
    loop of hand-overs is an ε-loop of the PDA `name` (infinitely many derivations): a UserError."""
    nullable = _least(grammar.rules, lambda rule: not rule[0])
    handed = {nt: [child for terminal, children in alternatives if not terminal
                   for i, child in enumerate(children)
                   if all(other in nullable for other in children[:i] + children[i + 1:])]
              for nt, alternatives in grammar.rules.items()}
    order: list[Nonterminal] = []
    done: set[Nonterminal] = set()
    for root in grammar.rules:
        path = [(root, iter(handed[root]))] if root not in done else []
        while path:
            nt, children = path[-1]
            child = next(children, None)
            if child is None:
                path.pop()
                done.add(nt)
                order.append(nt)
            elif child in (on_path := [node for node, _ in path]):
                raise _loop_error(name, on_path[on_path.index(child):])
            elif child not in done:
                path.append((child, iter(handed[child])))
    return order


def _loop_error(name: str, loop: list[Nonterminal]) -> UserError:
    """The error for a PDA whose ε-moves can loop, naming a state and stack top on the loop."""
    _, state, top, _ = next(nt for nt in loop if nt[0] == "pop")   # a chain only hands to shorter ones
    where = "an empty stack" if top == BOTTOM else f"{top} on top"
    return UserError(f"{name}: cannot sample: its ε-moves can loop (from state {state} with {where} back to the "
                     f"same); the runner handles such PDAs, sampling does not")


def _logsumexp(weights: np.ndarray) -> float:
    """log(sum(exp(weights))), -inf for no weights or only -inf ones."""
    top = weights.max(initial=-np.inf)
    return top if top == -np.inf else top + float(np.log(np.exp(weights - top).sum()))


class Counts:
    """How many derivations of each length up to `max_length` each nonterminal has (as logarithms); a
    UserError naming the PDA `name` when it has an ε-loop (see `_same_length_order`)."""

    def __init__(self, grammar: Grammar, max_length: int, name: str = "PDA"):
        self.grammar, self.max_length = grammar, max_length
        self.log = {nt: np.full(max_length + 1, -np.inf) for nt in grammar.rules}
        self._choices: dict[tuple[Nonterminal, int], tuple] = {}
        order = _same_length_order(grammar, name)
        for n in range(max_length + 1):
            for nt in order:
                self.log[nt][n] = _logsumexp(np.concatenate([self.splits(rule, n)[1] for rule in grammar.rules[nt]]))

    def derives(self, nonterminal: Nonterminal, n: int) -> bool:
        """Whether `nonterminal` derives a string of length n (0 <= n <= max_length)."""
        return nonterminal in self.log and self.log[nonterminal][n] > -np.inf

    def splits(self, rule: Rule, n: int) -> tuple[int, np.ndarray]:
        """(i0, weights): the log-number of derivations of length n through `rule`, weights[j] of those whose
        first nonterminal derives i0 + j symbols, the second (if any) the rest; one entry, i0 = 0, for a
        rule without nonterminal."""
        terminal, children = rule
        m = n - len(terminal)
        if m < 0:
            return 0, np.empty(0)
        if not children:
            return 0, np.array([0.0 if m == 0 else -np.inf])
        if len(children) == 1:
            return m, self.log[children[0]][m:m + 1]
        return 0, self.log[children[0]][:m + 1] + self.log[children[1]][m::-1]

    def choices(self, nonterminal: Nonterminal, n: int) -> tuple[list[tuple[Rule, int]], list[int], list[float]]:
        """(rules, ends, cumulative): the ways `nonterminal` derives length n, for drawing one (remembered:
        derivations revisit them): each rule with its i0 (see `splits`), where its splits end in the flat
        list of all splits, and the running sums of that list's (unnormalised) weights."""
        key = (nonterminal, n)
        if key not in self._choices:
            found = [(rule, *self.splits(rule, n)) for rule in self.grammar.rules[nonterminal]]
            flat = np.concatenate([weights for _, _, weights in found])
            ends = np.cumsum([len(weights) for _, _, weights in found]).tolist()
            cumulative = np.cumsum(np.exp(flat - flat.max())).tolist()
            self._choices[key] = ([(rule, i0) for rule, i0, _ in found], ends, cumulative)
        return self._choices[key]


def derive(counts: Counts, rng: np.random.Generator, n: int) -> str:
    """A string of length n (`counts` up to at least n; the language must have one) drawn top down from
    the start symbol, each derivation of length n equally likely (module docstring)."""
    if not counts.derives(counts.grammar.start, n):
        raise ValueError(f"the language has no string of length {n}")
    out = []
    todo = [(counts.grammar.start, n)]
    while todo:
        nonterminal, m = todo.pop()
        rules, ends, cumulative = counts.choices(nonterminal, m)
        # The first split whose running sum reaches a point drawn in (0, total]: never a zero weight.
        k = bisect.bisect_left(cumulative, (1.0 - rng.random()) * cumulative[-1])
        r = bisect.bisect_right(ends, k)
        (terminal, children), i0 = rules[r]
        first = i0 + k - (ends[r - 1] if r else 0)
        out.append(terminal)
        if len(children) == 2:
            todo += [(children[1], m - len(terminal) - first), (children[0], first)]
        elif children:
            todo.append((children[0], first))
    return "".join(out)
