"""Pushdown automata (PDAs): a text format, its parser, and a membership test (the runner).

The Neural State Pushdown Automaton (A. Mali, A. Ororbia and C. L. Giles, "The Neural State Pushdown
Automata", 2019/2020) is trained to recognise context-free languages, each given here as a PDA file
(`stackparse/grammars/pda/*.pda`). Nothing here is neural: the PDA is the reference a network's
answers are checked against. A PDA is M = (Q, Σ, Γ, δ, q0, Z, F): states, input and stack alphabets,
transitions, start state, initial stack symbol Z (optional) and accepting states.

The format is in docs/grammars.md: six declarations (`states:`, `input:`, `stack:`, `start:`, `accept:`,
optional `bottom:`) and transitions `STATE INPUT TOP -> STATE PUSH`, `-` the empty string, PUSH's first
symbol ending on top (Hopcroft & Ullman). Acceptance is by final state only, whatever is left on the
stack (the shipped PDAs move to an accepting state on seeing their bottom symbol). Every mistake in a
file is a UserError `FILE:LINE: what is wrong` (a missing declaration: at the file's last line).

The runner (`accepts`) searches the configurations (state, stack) breadth first, one input position at
a time, ε-moves closed over a visited set, so nondeterminism and ε-loops are harmless; configurations
higher than `stack_bound` are dropped, which loses no accepted string, so the search is exact and ends.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cached_property
from importlib import resources
from pathlib import Path

from stackparse.errors import UserError, unknown_name

EMPTY = "-"             # how the format writes the empty string (no input, no stack top, nothing pushed)
KEYWORDS = ("states", "input", "stack", "start", "bottom", "accept")
REQUIRED = ("states", "input", "stack", "start", "accept")
_STATE = re.compile(r"\w+")
_SHIPPED = resources.files("stackparse.grammars") / "pda"


@dataclass(frozen=True)
class Transition:
    """One move of a PDA: in `state`, reading `symbol` (nothing if "") with `top` on the stack (any stack
    if ""), go to `target`, pop `top` and push `push` (first symbol on top; "" for nothing)."""
    state: str
    symbol: str
    top: str
    target: str
    push: str

    def __str__(self) -> str:
        fields = (self.state, self.symbol, self.top, "->", self.target, self.push)
        return " ".join(field or EMPTY for field in fields)


@dataclass(frozen=True)
class PDA:
    """A pushdown automaton that accepts by final state (module docstring). Stacks are strings of stack
    symbols, the top last; `bottom` is the initial stack ("" or one symbol)."""
    name: str
    states: tuple[str, ...]
    input_symbols: tuple[str, ...]
    stack_symbols: tuple[str, ...]
    start: str
    bottom: str
    accept: frozenset[str]
    transitions: tuple[Transition, ...]

    @cached_property
    def moves(self) -> dict[tuple[str, str, str], tuple[tuple[str, str], ...]]:
        """(state, symbol, top) -> the (target, pushed string in stack order) it allows."""
        found: dict[tuple[str, str, str], list[tuple[str, str]]] = {}
        for t in self.transitions:
            found.setdefault((t.state, t.symbol, t.top), []).append((t.target, t.push[::-1]))
        return {key: tuple(value) for key, value in found.items()}

    @cached_property
    def epsilon_states(self) -> frozenset[str]:
        """The states with a move that reads nothing (a configuration in no other state has no ε-successor)."""
        return frozenset(t.state for t in self.transitions if t.symbol == "")


END_MARKER = "$"


def end_marked(pda: PDA, marker: str = END_MARKER) -> PDA:
    """The PDA of L$ for the language L of `pda`: `marker` is a new input symbol that only ends a string, read in
    an accepting state (any top, the stack kept) to move to a new state, the only accepting one. The recurrent
    PDAs (Das, Giles & Sun 1992; the NNPDA of Sun et al. 1993) read their strings so ended: a network whose
    answer is read off its state alone learns there what the last symbol's stack action left, which it cannot
    know at the last symbol itself (an empty stack after the last pop of a^n b^n)."""
    if marker in pda.input_symbols:
        raise UserError(f"{pda.name}: the end marker {marker!r} is one of its input symbols")
    end = "end"
    while end in pda.states:
        end += "_"
    moves = tuple(Transition(q, marker, "", end, "") for q in sorted(pda.accept))
    return replace(pda, name=f"{pda.name}-end", states=pda.states + (end,), input_symbols=pda.input_symbols + (marker,),
                   accept=frozenset({end}), transitions=pda.transitions + moves)


# ---- the runner ----------------------------------------------------------------------------------

def stack_bound(pda: PDA, n: int) -> int:
    """A stack height, (k - 1) N (n + 1), that suffices to accept any accepted string of length n: each has
    an accepting run whose stack never grows higher, so a search may drop the configurations above it.

    Why: the triple construction (`stackparse.grammars.cfg`) turns the PDA into a grammar with at most N = (|Q| + 2)²
    (|Γ| + 1) nonterminals (it adds a drain state and a bottom marker) whose leftmost derivations are the accepting
    runs, the stack being the nonterminals not yet expanded. In a derivation tree of w with the fewest nodes, no
    nonterminal repeats on a path among the nodes that derive strings of one length (cutting out the part between two of
    them would give a smaller tree), so a path has at most N (n + 1) nonterminals, and each leaves at most k - 1
    siblings pending, k being the most nonterminals on a right-hand side: the longest push, counting the symbol that a
    move popping nothing puts back, and at least 2 (the start rule)."""
    k = max([2] + [len(t.push) + (t.top == "") for t in pda.transitions])
    nonterminals = (len(pda.states) + 2) ** 2 * (len(pda.stack_symbols) + 1)
    return (k - 1) * nonterminals * (n + 1)


def _successors(pda: PDA, configuration: tuple[str, str], symbol: str, bound: int):
    """The configurations one move reading `symbol` ("" for an ε-move) leads to, stacks up to `bound`."""
    state, stack = configuration
    tops = ("", stack[-1]) if stack else ("",)   # a move may ignore the top, or pop it if there is one
    for top in tops:
        below = stack[:len(stack) - len(top)]
        for target, pushed in pda.moves.get((state, symbol, top), ()):
            if len(below) + len(pushed) <= bound:
                yield target, below + pushed


def _closure(pda: PDA, configurations: set[tuple[str, str]], bound: int) -> set[tuple[str, str]]:
    """`configurations` and everything ε-moves lead to from them (each visited once)."""
    if pda.epsilon_states.isdisjoint(state for state, _ in configurations):
        return set(configurations)                  # no ε-move from any of them
    seen = set(configurations)
    todo = list(configurations)
    while todo:
        for successor in _successors(pda, todo.pop(), "", bound):
            if successor not in seen:
                seen.add(successor)
                todo.append(successor)
    return seen


def accepts(pda: PDA, string: str) -> bool:
    """Whether some run of `pda` reads all of `string` (one character per symbol; one outside Σ is
    rejected) and ends in an accepting state. The PDA may be nondeterministic and have ε-loops."""
    return prefixes_accepted(pda, string)[-1]


def prefixes_accepted(pda: PDA, string: str) -> tuple[bool, ...]:
    """Whether `pda` accepts each prefix of `string`, the empty one first (len(string) + 1 answers), in one pass:
    the configurations reachable after each symbol. The bound of the whole string's length holds for every prefix
    (`stack_bound` grows with the length: a higher bound drops fewer configurations, never an accepting run)."""
    bound = stack_bound(pda, len(string))
    layer = _closure(pda, {(pda.start, pda.bottom)}, bound)
    answers = [any(state in pda.accept for state, _ in layer)]
    for symbol in string:
        read = {c for configuration in layer for c in _successors(pda, configuration, symbol, bound)}
        if not read:                                # no run goes on: no longer prefix is accepted
            return tuple(answers) + (False,) * (len(string) + 1 - len(answers))
        layer = _closure(pda, read, bound)
        answers.append(any(state in pda.accept for state, _ in layer))
    return tuple(answers)


# ---- the parser ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Line:
    """One meaningful line of a PDA file: its number and its text, comment and outer spaces removed."""
    number: int
    text: str


_Errors = Callable[[int, str], UserError]       # (line number, message) -> UserError `SOURCE:LINE: message`


def _lines(text: str) -> list[_Line]:
    """The non-blank lines of `text` with comments removed, numbered from 1."""
    stripped = ((number, raw.split("#", 1)[0].strip()) for number, raw in enumerate(text.splitlines(), start=1))
    return [_Line(number, content) for number, content in stripped if content]


def _declarations(lines: list[_Line], error: _Errors) -> tuple[dict[str, tuple[int, list[str]]], list[_Line]]:
    """The declarations by keyword, as (line number, values), and the transition lines."""
    declared: dict[str, tuple[int, list[str]]] = {}
    transitions = []
    for line in lines:
        if "->" in line.text:
            transitions.append(line)
            continue
        keyword, colon, values = line.text.partition(":")
        keyword = keyword.strip()
        if not colon:
            raise error(line.number, f"expected a declaration 'KEYWORD: VALUES' or a transition "
                                     f"'STATE INPUT TOP -> STATE PUSH', got {line.text!r}")
        if keyword not in KEYWORDS:
            raise error(line.number, f"unknown declaration {keyword!r}; expected one of {', '.join(KEYWORDS)}")
        if keyword in declared:
            raise error(line.number, f"'{keyword}:' declared twice (first on line {declared[keyword][0]})")
        declared[keyword] = (line.number, values.split())
    return declared, transitions


def _names(keyword: str, line: int, values: list[str], error: _Errors) -> tuple[str, ...]:
    """The values of a `states:`, `input:` or `stack:` declaration, checked."""
    if not values:
        raise error(line, f"'{keyword}:' lists nothing")
    for value in values:
        if keyword == "states" and not _STATE.fullmatch(value):
            raise error(line, f"bad state name {value!r}: use letters, digits and _")
        if keyword != "states" and len(value) != 1:
            raise error(line, f"{keyword} symbol {value!r} is not a single character")
        if value == EMPTY:
            raise error(line, f"'{EMPTY}' cannot be a {keyword} symbol: it stands for the empty string")
    repeated = next((v for i, v in enumerate(values) if v in values[:i]), None)
    if repeated is not None:
        raise error(line, f"{repeated!r} listed twice in '{keyword}:'")
    return tuple(values)


def _check_state(name: str, states: tuple[str, ...], line: int, error: _Errors) -> str:
    """`name`, checked to be one of `states`."""
    if name not in states:
        raise error(line, f"unknown state {name!r}; states: {' '.join(states)}")
    return name


def _check_symbols(text: str, alphabet: tuple[str, ...], which: str, line: int, error: _Errors) -> str:
    """`text` with `-` read as the empty string, every character checked against `alphabet`."""
    if text == EMPTY:
        return ""
    for symbol in text:
        if symbol not in alphabet:
            raise error(line, f"{symbol!r} is not in the {which} alphabet ({' '.join(alphabet)})")
    return text


def _transition(line: _Line, pda: PDA, error: _Errors) -> Transition:
    """The transition written on `line`, checked against the declarations of `pda`."""
    tokens = line.text.split()
    if len(tokens) != 6 or tokens[3] != "->":
        raise error(line.number, f"malformed transition {line.text!r}; expected 'STATE INPUT TOP -> STATE PUSH' "
                                 f"with '{EMPTY}' for nothing")
    state, symbol, top, _, target, push = tokens
    if len(symbol) != 1 or len(top) != 1:
        raise error(line.number, f"INPUT and TOP are one symbol or '{EMPTY}' each, got {symbol!r} and {top!r}")
    return Transition(
        state=_check_state(state, pda.states, line.number, error),
        symbol=_check_symbols(symbol, pda.input_symbols, "input", line.number, error),
        top=_check_symbols(top, pda.stack_symbols, "stack", line.number, error),
        target=_check_state(target, pda.states, line.number, error),
        push=_check_symbols(push, pda.stack_symbols, "stack", line.number, error),
    )


def _automaton(name: str, declared: dict[str, tuple[int, list[str]]], error: _Errors) -> PDA:
    """The PDA of the declarations, without transitions."""
    states, input_symbols, stack_symbols = (_names(k, *declared[k], error) for k in ("states", "input", "stack"))
    start_line, start = declared["start"]
    if len(start) != 1:
        raise error(start_line, f"'start:' takes one state, got {len(start)}")
    bottom_line, bottom = declared.get("bottom", (0, [""]))    # no 'bottom:': the stack starts empty
    if len(bottom) != 1:
        raise error(bottom_line, f"'bottom:' takes one stack symbol, got {len(bottom)}")
    if bottom[0] and bottom[0] not in stack_symbols:
        raise error(bottom_line, f"{bottom[0]!r} is not in the stack alphabet ({' '.join(stack_symbols)})")
    accept_line, accept = declared["accept"]
    if not accept:
        raise error(accept_line, "'accept:' lists no state")
    return PDA(
        name=name, states=states, input_symbols=input_symbols, stack_symbols=stack_symbols,
        start=_check_state(start[0], states, start_line, error),
        bottom=bottom[0],
        accept=frozenset(_check_state(a, states, accept_line, error) for a in accept),
        transitions=(),
    )


def parse_pda(text: str, source: str = "<string>") -> PDA:
    """The PDA written in `text` (format: docs/grammars.md), named by the stem of the file name
    `source`; a UserError `SOURCE:LINE: what is wrong` for the first mistake found."""
    def error(line: int, message: str) -> UserError:
        return UserError(f"{source}:{line}: {message}")

    lines = _lines(text)
    if not lines:
        raise error(1, "empty PDA file: no declarations and no transitions")
    declared, transition_lines = _declarations(lines, error)
    missing = [k for k in REQUIRED if k not in declared]
    if missing:
        last = len(text.splitlines())
        raise error(last, f"no '{missing[0]}:' declaration (required: {', '.join(f'{k}:' for k in REQUIRED)})")
    pda = _automaton(Path(source).stem, declared, error)
    transitions: dict[Transition, int] = {}
    for line in transition_lines:
        transition = _transition(line, pda, error)
        if transition in transitions:
            raise error(line.number, f"duplicate transition '{transition}' (first on line {transitions[transition]})")
        transitions[transition] = line.number
    return replace(pda, transitions=tuple(transitions))


def load_pda(path: str | Path) -> PDA:
    """The PDA in the file at `path`; a UserError if it cannot be read or has a mistake."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise UserError(f"{path}: cannot read the PDA file: {e.strerror or e}") from None
    return parse_pda(text, str(path))


def shipped_names() -> tuple[str, ...]:
    """The names of the PDAs shipped in stackparse/grammars/pda/, sorted."""
    return tuple(sorted(f.name.removesuffix(".pda") for f in _SHIPPED.iterdir() if f.name.endswith(".pda")))


def shipped_pda(name: str) -> PDA:
    """The shipped PDA called `name`; a UserError listing the valid names otherwise."""
    if name not in shipped_names():
        raise unknown_name("grammar", name, shipped_names())
    return parse_pda((_SHIPPED / f"{name}.pda").read_text(encoding="utf-8"), f"{name}.pda")
