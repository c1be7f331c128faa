"""Transition systems for dependency parsing: arc-standard, arc-hybrid and arc-standard with SWAP.

A configuration is a stack, a buffer and the arcs built so far. Word 0 is ROOT and lives at the
bottom of the stack: every parse starts from stack (0,) and buffer (1, ..., n) and ends with the
buffer empty and the stack back to (0,). With ROOT there, attaching a word to ROOT is a RIGHT arc
from s1 = 0, and we allow it only as the last arc, when the stack is (0, w) and the buffer empty;
this gives exactly one root, as UD requires, in all three systems, and removes the premature
root attachments that make the position of ROOT matter (Ballesteros & Nivre 2013, "Going to the
Roots of Dependency Parsing", Computational Linguistics 39(1)). The label of that arc is "root",
and "root" is used for no other arc.

Every move is a list of primitive `Op`s on the stack and the buffer (pop, push, attach), and
`TransitionSystem.apply` is the one place where ops change a configuration. A neural model that
mirrors the stack and the buffer (a stack-LSTM: Dyer et al. 2015, "Transition-Based Dependency
Parsing with Stack Long Short-Term Memory", ACL) replays the same ops without knowing the system.
An arc move pops the head too and pushes it back, so that the model can push the head's new
representation, composed with its dependent.

Systems (moves named as in their papers; s0 is the stack top, s1 below it, b0 the buffer front):
- arc-standard (Nivre 2004, "Incrementality in Deterministic Dependency Parsing"): SHIFT,
  LEFT-l (s1 <- s0), RIGHT-l (s1 -> s0). Projective trees only.
- arc-hybrid (Kuhlmann, Gómez-Rodríguez & Satta 2011, "Dynamic Programming Algorithms for
  Transition-Based Dependency Parsers", ACL): SHIFT, LEFT-l (s0 <- b0), RIGHT-l (s1 -> s0).
  Projective trees only.
- arc-swap: arc-standard plus SWAP, which moves s1 back to the buffer (Nivre 2009, "Non-Projective
  Dependency Parsing in Expected Linear Time", ACL-IJCNLP); it derives every tree. Its oracle is
  the lazy one of Nivre, Kuhlmann & Hall (2009), "An Improved Oracle for Dependency Parsing with
  Online Reordering", IWPT, which swaps as late as it can and so needs fewer swaps.
- arc-hybrid-swap: arc-hybrid plus SWAP, which moves s0 back to the buffer behind b0 (de Lhoneux,
  Stymne & Nivre 2017, "Arc-Hybrid Non-Projective Dependency Parsing with a Static-Dynamic
  Oracle", IWPT); it derives every tree, with the eager swap oracle.

The static oracle of each system is its moves' `is_gold` tests tried in the system's order.

The arc-hybrid systems also have a dynamic oracle (`TransitionSystem.optimal`): from any
configuration, the actions after which the best tree still reachable misses the fewest gold arcs,
so that a parser can be trained on the configurations its own mistakes lead to (Goldberg & Nivre
2013, "Training Deterministic Parsers with Non-Deterministic Oracles", TACL). Arc-hybrid is
arc-decomposable for projective trees, so an action's cost is the number of gold arcs it makes
unreachable (their §5). It is defined for projective gold trees only: with SWAP, which arcs stay
reachable depends on the order the words can still be put in, and de Lhoneux et al. keep the
static oracle for those sentences' swaps; we train non-projective sentences (2.3 % of EWT's) with
the static oracle alone, and never teach a SWAP on a projective tree (its static oracle has none).
"""
from __future__ import annotations

import abc
import enum
import functools
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import ClassVar, NamedTuple

from parsers import trees
from stackparse.errors import unknown_name

ROOT = 0
ROOT_LABEL = "root"
UNATTACHED = -1


class OpKind(enum.Enum):
    """The primitive changes a move makes to a configuration."""
    POP_STACK = "pop-stack"
    PUSH_STACK = "push-stack"
    POP_BUFFER = "pop-buffer"
    PUSH_BUFFER = "push-buffer"
    ATTACH = "attach"


_POP_STACK, _PUSH_STACK, _POP_BUFFER, _PUSH_BUFFER = (OpKind.POP_STACK, OpKind.PUSH_STACK, OpKind.POP_BUFFER,
                                                    OpKind.PUSH_BUFFER)


class Op(NamedTuple):
    """One primitive change: `word` is the word pushed or, for ATTACH, the head of `dep`."""
    kind: OpKind
    word: int | None = None
    dep: int | None = None
    label: str | None = None


_POP_STACK_OP, _POP_BUFFER_OP = Op(OpKind.POP_STACK), Op(OpKind.POP_BUFFER)   # the ops without arguments, made once


class Configuration(NamedTuple):
    """A parser state; a value, never changed in place (a named tuple: made at every move, so made cheaply).

    stack: word ids, the top s0 last; ROOT (0) is at the bottom until the end.
    buffer: word ids still to read, the front b0 first.
    heads: length n + 1, the head of each word or -1 while it has none; heads[0] == -1.
    deprels: length n + 1, the label of each word's arc or None while it has none.
    """
    stack: tuple[int, ...]
    buffer: tuple[int, ...]
    heads: tuple[int, ...]
    deprels: tuple[str | None, ...]


def perform(config: Configuration, ops: Sequence[Op]) -> Configuration:
    """The configuration after `ops`, applied in order (the only code that changes a configuration).

    Args:
        config: the configuration before.
        ops: primitive changes, as produced by `TransitionSystem.ops`.

    Returns:
        A new configuration.
    """
    stack, buffer, heads, deprels = config
    for kind, word, dep, label in ops:            # identity tests: this runs at every move of every sentence
        if kind is _POP_STACK:
            stack = stack[:-1]
        elif kind is _PUSH_STACK:
            stack = stack + (word,)
        elif kind is _POP_BUFFER:
            buffer = buffer[1:]
        elif kind is _PUSH_BUFFER:
            buffer = (word,) + buffer
        else:
            heads = heads[:dep] + (word,) + heads[dep + 1:]
            deprels = deprels[:dep] + (label,) + deprels[dep + 1:]
    return Configuration(stack, buffer, heads, deprels)


def initial_configuration(n: int) -> Configuration:
    """ROOT alone on the stack, words 1..n in the buffer, no arcs."""
    return Configuration((ROOT,), tuple(range(1, n + 1)), (UNATTACHED,) * (n + 1), (None,) * (n + 1))


@dataclass(frozen=True)
class GoldTree:
    """A gold tree with what the oracles derive from it, each computed once per tree."""
    heads: tuple[int, ...]
    deprels: tuple[str, ...]

    def __post_init__(self):
        for word in range(1, len(self.heads)):
            if (self.heads[word] == ROOT) != (self.deprels[word] == ROOT_LABEL):
                raise ValueError(f"word {word}: head {self.heads[word]} with label "
                                 f"{self.deprels[word]!r}; {ROOT_LABEL!r} goes with head 0 and only there")

    @cached_property
    def n_children(self) -> tuple[int, ...]:
        """How many dependents each node has."""
        return tuple(len(kids) for kids in trees.children(self.heads))

    @cached_property
    def projective(self) -> bool:
        return trees.is_projective(self.heads)

    @cached_property
    def projective_position(self) -> tuple[int, ...]:
        """Each word's position in the projective order (ROOT first, at 0)."""
        position = [0] * len(self.heads)
        for rank, word in enumerate(trees.projective_order(self.heads), start=1):
            position[word] = rank
        return tuple(position)

    @cached_property
    def component(self) -> tuple[int, ...]:
        """Each word's maximal projective component, named by the component's head.

        Nivre, Kuhlmann & Hall (2009, §3): run arc-standard without SWAP under its static oracle
        until no move is left; the words then on the stack head the maximal projective components
        (the largest subtrees a projective parser can build), each made of its head's descendants
        in the arcs built.
        """
        config = initial_configuration(len(self.heads) - 1)
        while (move := _gold_move(ArcStandard.transitions, config, self)) is not None:
            transition, label = move
            config = perform(config, transition.ops(config, label))
        component = list(range(len(self.heads)))
        for word in range(1, len(self.heads)):
            while config.heads[component[word]] != UNATTACHED:
                component[word] = config.heads[component[word]]
        return tuple(component)

    def is_complete(self, config: Configuration, word: int) -> bool:
        """Whether `word` has all its gold dependents in `config` (only gold arcs are ever built)."""
        return config.heads.count(word) == self.n_children[word]


@functools.lru_cache(maxsize=4096)
def _gold_tree(heads: tuple[int, ...], deprels: tuple[str, ...]) -> GoldTree:
    # The oracle is asked once per configuration with the same gold lists; caching the analysis
    # keeps the oracle's signature stateless and a derivation linear in its length. Roll-outs ask in
    # lockstep, a step of every sentence of a batch in turn (`inference.draw_explorations`: hundreds): a
    # cache smaller than the batch would miss at every step and analyse each tree again each time.
    return GoldTree(heads, deprels)


class Transition(abc.ABC):
    """One kind of move; stateless. Labeled moves (arcs) subclass `ArcTransition`."""
    name: ClassVar[str]
    labeled: ClassVar[bool] = False

    @abc.abstractmethod
    def is_valid(self, config: Configuration) -> bool:
        """Whether the move may be made in `config` (for an arc, with some label)."""

    @abc.abstractmethod
    def ops(self, config: Configuration, label: str | None) -> list[Op]:
        """The primitive changes the move makes, in order."""

    @abc.abstractmethod
    def is_gold(self, config: Configuration, gold: GoldTree) -> bool:
        """Whether the static oracle makes this move, if no move before it in the system's order
        is valid and gold. Only called when `is_valid(config)`."""


class Shift(Transition):
    """SHIFT: b0 moves onto the stack. The oracle's last resort."""
    name = "SHIFT"

    def is_valid(self, config):
        return bool(config.buffer)

    def ops(self, config, label):
        return [_POP_BUFFER_OP, Op(OpKind.PUSH_STACK, config.buffer[0])]

    def is_gold(self, config, gold):
        return True


class Swap(Transition):
    """SWAP (Nivre 2009): s1 goes back to the front of the buffer, s0 stays on the stack.

    Valid only for two words still in their original order (0 < s1 < s0): a pair is then swapped
    at most once, so parsing ends after O(n^2) moves.
    """
    name = "SWAP"

    def is_valid(self, config):
        return len(config.stack) >= 2 and ROOT < config.stack[-2] < config.stack[-1]

    def ops(self, config, label):
        s1, s0 = config.stack[-2:]
        return [_POP_STACK_OP, _POP_STACK_OP,
                Op(OpKind.PUSH_STACK, s0), Op(OpKind.PUSH_BUFFER, s1)]

    def is_gold(self, config, gold):
        """The lazy oracle (Nivre, Kuhlmann & Hall 2009): swap when s0 precedes s1 in the projective
        order and b0 (if any) is not in s0's maximal projective component, i.e. when no more of
        that component can be built first. (Nivre 2009's eager oracle drops the second test.)"""
        s1, s0 = config.stack[-2:]
        out_of_order = gold.projective_position[s0] < gold.projective_position[s1]
        return out_of_order and (not config.buffer
                                 or gold.component[s0] != gold.component[config.buffer[0]])


class HybridSwap(Transition):
    """Arc-hybrid's SWAP (de Lhoneux, Stymne & Nivre 2017, "Arc-Hybrid Non-Projective Dependency
    Parsing with a Static-Dynamic Oracle", IWPT): s0 goes back to the buffer, behind b0.

    Valid only for two words still in their original order (0 < s0 < b0), as Nivre's SWAP: a pair is
    swapped at most once.
    """
    name = "SWAP"

    def is_valid(self, config):
        return bool(config.buffer) and ROOT < config.stack[-1] < config.buffer[0]

    def ops(self, config, label):
        s0, b0 = config.stack[-1], config.buffer[0]
        return [_POP_STACK_OP, _POP_BUFFER_OP, Op(OpKind.PUSH_BUFFER, s0), Op(OpKind.PUSH_BUFFER, b0)]

    def is_gold(self, config, gold):
        """The eager oracle: swap when b0 precedes s0 in the projective order, so that the words
        reach the stack in that order, as a projective tree's words do in theirs."""
        return gold.projective_position[config.stack[-1]] > gold.projective_position[config.buffer[0]]


class ArcTransition(Transition):
    """A move that attaches a dependent to a head with a label."""
    labeled = True
    can_attach_to_root: ClassVar[bool]   # whether the head can be ROOT (else no "-root" action)

    @abc.abstractmethod
    def arc(self, config: Configuration) -> tuple[int, int]:
        """The (head, dependent) pair the move would attach."""

    def ops(self, config, label):
        """An arc between s1 and s0: both leave the stack, the head goes back on it (so that a
        neural stack pushes the head's new, composed representation). Arc-hybrid's LEFT overrides."""
        head, dependent = self.arc(config)
        return [_POP_STACK_OP, _POP_STACK_OP,
                Op(OpKind.ATTACH, head, dependent, label), Op(OpKind.PUSH_STACK, head)]

    def is_gold(self, config, gold):
        """The arc is gold and the dependent has all its own dependents: it leaves the
        configuration for good, so it must be complete."""
        head, dependent = self.arc(config)
        return gold.heads[dependent] == head and gold.is_complete(config, dependent)


class LeftArc(ArcTransition):
    """Arc-standard LEFT-l: s1 <- s0 with label l; s1 leaves the stack, s0 is pushed back."""
    name = "LEFT"
    can_attach_to_root = False   # the head s0 sits above ROOT

    def is_valid(self, config):
        return len(config.stack) >= 2 and config.stack[-2] != ROOT

    def arc(self, config):
        return config.stack[-1], config.stack[-2]


class RightArc(ArcTransition):
    """RIGHT-l (arc-standard and arc-hybrid): s1 -> s0 with label l; s0 leaves the stack, s1 is
    pushed back. From ROOT only as the last arc (stack (0, w), empty buffer): a single root."""
    name = "RIGHT"
    can_attach_to_root = True

    def is_valid(self, config):
        stack = config.stack
        if len(stack) < 2:
            return False
        return stack[-2] != ROOT or (len(stack) == 2 and not config.buffer)

    def arc(self, config):
        return config.stack[-2], config.stack[-1]


class HybridLeftArc(ArcTransition):
    """Arc-hybrid LEFT-l: s0 <- b0 with label l; s0 leaves the stack, b0 is put back."""
    name = "LEFT"
    can_attach_to_root = False   # the head is a buffer word

    def is_valid(self, config):
        return bool(config.buffer) and config.stack[-1] != ROOT

    def arc(self, config):
        return config.buffer[0], config.stack[-1]

    def ops(self, config, label):
        head, dependent = self.arc(config)
        return [_POP_STACK_OP, _POP_BUFFER_OP,
                Op(OpKind.ATTACH, head, dependent, label), Op(OpKind.PUSH_BUFFER, head)]


def _gold_move(transitions: Sequence[Transition], config: Configuration, gold: GoldTree
               ) -> tuple[Transition, str | None] | None:
    """The static oracle's move: the first valid gold transition, with the dependent's gold label."""
    for transition in transitions:
        if transition.is_valid(config) and transition.is_gold(config, gold):
            label = gold.deprels[transition.arc(config)[1]] if transition.labeled else None
            return transition, label
    return None


class Action(NamedTuple):
    """A transition with its label (None for SHIFT and SWAP); what a model predicts."""
    transition: str
    label: str | None = None

    @property
    def name(self) -> str:
        """E.g. "SHIFT", "LEFT-nsubj", "RIGHT-root"."""
        return self.transition if self.label is None else f"{self.transition}-{self.label}"


class TransitionSystem:
    """A set of moves over `Configuration`s, and the static oracle that follows a gold tree.

    Subclasses list their `transitions` in the static oracle's order of preference; action ids
    follow the same order, one per label for arc moves (no "-root" action for a move whose head
    cannot be ROOT).

    Args:
        labels: the dependency labels, "root" among them, each once; their order fixes the ids.
    """
    name: ClassVar[str]
    transitions: ClassVar[tuple[Transition, ...]]
    dynamic_oracle: ClassVar[bool] = False
    """Whether `optimal` is defined: derived for every subclass from whether it defines `_costs`."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls.dynamic_oracle = cls._costs is not TransitionSystem._costs

    def __init__(self, labels: Sequence[str]):
        if ROOT_LABEL not in labels:
            raise ValueError(f"the labels must include {ROOT_LABEL!r}")
        if len(set(labels)) != len(labels):
            raise ValueError("duplicate labels")
        self.labels = list(labels)
        self.actions: list[Action] = []
        # Per transition: (its action ids when the head is a word, those when the head is ROOT);
        # a move without a label has one action, in the first list.
        self._ids: dict[str, tuple[list[int], list[int]]] = {}
        for transition in self.transitions:
            if not transition.labeled:
                self._ids[transition.name] = ([len(self.actions)], [])
                self.actions.append(Action(transition.name))
                continue
            other = [label for label in self.labels if label != ROOT_LABEL]
            root = [ROOT_LABEL] if transition.can_attach_to_root else []
            first = len(self.actions)
            self.actions += [Action(transition.name, label) for label in other + root]
            self._ids[transition.name] = (list(range(first, first + len(other))),
                                          list(range(first + len(other), len(self.actions))))
        self._by_name = {transition.name: transition for transition in self.transitions}
        self._moves = [(self._by_name[action.transition], action.label) for action in self.actions]
        self._index = {action.name: index for index, action in enumerate(self.actions)}
        self._by_action = {action: index for index, action in enumerate(self.actions)}   # the oracles' lookup
        self._legal: dict[int, list[int]] = {}      # `legal`'s lists, by the valid moves and their arcs to ROOT

    def action_index(self, name: str) -> int:
        """The id of the action called `name` (e.g. "LEFT-nsubj").

        Raises:
            KeyError: no such action in this system.
        """
        return self._index[name]

    def initial(self, n: int) -> Configuration:
        """The start configuration for a sentence of n words: stack (0,), buffer (1..n)."""
        return initial_configuration(n)

    def is_terminal(self, config: Configuration) -> bool:
        """Whether parsing is over: buffer empty and only ROOT on the stack."""
        return not config.buffer and config.stack == (ROOT,)

    def legal(self, config: Configuration) -> list[int]:
        """The ids of the actions that may be taken in `config`, in id order.

        The list is shared by all configurations with the same valid moves and the same arcs to ROOT
        among them (it is asked for at every move of every sentence): read it, never change it."""
        key = 0
        for bit, transition in enumerate(self.transitions):
            if transition.is_valid(config):
                key |= 1 << (2 * bit + (transition.labeled and transition.arc(config)[0] == ROOT))
        legal = self._legal.get(key)
        if legal is None:
            legal = self._legal[key] = [a for transition in self.transitions if transition.is_valid(config)
                                        for a in self._label_ids(transition, config)]
        return legal

    def is_legal(self, config: Configuration, action_id: int) -> bool:
        """Whether action `action_id` may be taken in `config` (cheaper than `legal`)."""
        transition = self._by_name[self.actions[action_id].transition]
        return transition.is_valid(config) and action_id in self._label_ids(transition, config)

    def _label_ids(self, transition: Transition, config: Configuration) -> list[int]:
        """The action ids of a valid transition: an arc to ROOT takes "root", any other arc not."""
        other, root = self._ids[transition.name]
        if transition.labeled and transition.arc(config)[0] == ROOT:
            return root
        return other

    def ops(self, config: Configuration, action_id: int) -> list[Op]:
        """The primitive changes that action `action_id` makes to `config`, in order.

        A model mirrors these on its own stack and buffer representations.
        """
        transition, label = self._moves[action_id]
        return transition.ops(config, label)

    def apply(self, config: Configuration, action_id: int) -> Configuration:
        """The configuration after action `action_id`.

        Raises:
            ValueError: the action is not legal in `config`.
        """
        if not self.is_legal(config, action_id):
            raise ValueError(f"{self.actions[action_id].name} is not legal in {config}")
        return perform(config, self.ops(config, action_id))

    def oracle(self, config: Configuration, gold_heads: Sequence[int],
               gold_deprels: Sequence[str]) -> int:
        """The static oracle: the action that keeps `config` on the way to the gold tree.

        Args:
            config: a configuration reached from `initial` by oracle actions.
            gold_heads: the gold tree, length n + 1 with `gold_heads[0] == -1`.
            gold_deprels: the gold labels, same convention (index 0 ignored).

        Returns:
            An action id, legal in `config`.

        Raises:
            ValueError: no move leads to the gold tree (a non-projective tree for a projective-only
                system), or a gold label is unknown or misuses "root".
        """
        gold = _gold_tree(tuple(gold_heads), tuple(gold_deprels))
        move = _gold_move(self.transitions, config, gold)
        if move is None:
            raise ValueError(f"{self.name}: no move from {config} leads to the gold tree "
                             f"(is it non-projective?)")
        transition, label = move
        action_id = self._by_action.get(Action(transition.name, label))
        if action_id is None:
            raise ValueError(f"{self.name}: the gold label {label!r} is not one of the system's labels")
        return action_id

    def oracle_sequence(self, gold_heads: Sequence[int], gold_deprels: Sequence[str]) -> list[int]:
        """The oracle's actions from the initial configuration to the end.

        Args:
            gold_heads: the gold tree, length n + 1 with `gold_heads[0] == -1`.
            gold_deprels: the gold labels, same convention.

        Returns:
            Action ids whose application builds the gold tree.

        Raises:
            ValueError: as `oracle`.
        """
        config = self.initial(len(gold_heads) - 1)
        sequence = []
        while not self.is_terminal(config):
            action_id = self.oracle(config, gold_heads, gold_deprels)
            sequence.append(action_id)
            config = self.apply(config, action_id)
        return sequence

    def optimal(self, config: Configuration, gold_heads: Sequence[int], gold_deprels: Sequence[str]) -> list[int]:
        """The dynamic oracle: the legal actions of least cost, where an action's cost is the number
        of gold arcs it makes unreachable, plus one for a gold arc with a wrong label.

        Args:
            config: any configuration of a sentence whose gold tree is projective.
            gold_heads, gold_deprels: the gold tree, as for `oracle`.

        Returns:
            Action ids, legal in `config`, in id order; empty when `config` is terminal.

        Raises:
            ValueError: the system has no dynamic oracle, or the gold tree is not projective.
        """
        gold = _gold_tree(tuple(gold_heads), tuple(gold_deprels))
        if not gold.projective:
            raise ValueError(f"{self.name}: the dynamic oracle needs a projective gold tree")
        costs = self._costs(config, gold)
        scored = []                    # (cost, action ids), in id order: transitions in order, ids in order in each
        for transition in self.transitions:
            cost = costs.get(transition.name)
            if cost is None or not transition.is_valid(config):
                continue
            ids = self._label_ids(transition, config)
            if transition.labeled:
                head, dependent = transition.arc(config)
                if gold.heads[dependent] == head:
                    # only the gold label is right; the move's other labels cost one more, so they are never the
                    # least of all: the gold label's costs less
                    ids = [self._by_action[Action(transition.name, gold.deprels[dependent])]]
            scored.append((cost, ids))
        least = min((cost for cost, ids in scored if ids), default=0)
        return [a for cost, ids in scored if cost == least for a in ids]

    def _costs(self, config: Configuration, gold: GoldTree) -> dict[str, int]:
        """Per transition name, the gold arcs the move makes unreachable (valid moves only are
        asked for; a move left out is never optimal)."""
        raise ValueError(f"{self.name} has no dynamic oracle (arc-hybrid and arc-hybrid-swap have one)")


class ArcStandard(TransitionSystem):
    """Arc-standard (Nivre 2004): arcs between s1 and s0. Projective trees only."""
    name = "arc-standard"
    transitions = (LeftArc(), RightArc(), Shift())


class ArcHybrid(TransitionSystem):
    """Arc-hybrid (Kuhlmann et al. 2011): left arcs from b0 to s0, right arcs from s1 to s0.
    Projective trees only."""
    name = "arc-hybrid"
    transitions = (HybridLeftArc(), RightArc(), Shift())

    def _costs(self, config, gold):
        """Goldberg & Nivre (2013, §5.2): a word leaves the stack when it gets its head, and a stack
        word can still get a head from s1 (if it is s0) or from the buffer, dependents only from the
        buffer (and b0 from s0, by SHIFT then RIGHT). Hence
            LEFT  (b0 -> s0) loses s0's dependents in the buffer, and its head if that is s1 or behind b0;
            RIGHT (s1 -> s0) loses s0's dependents in the buffer, and its head if that is in the buffer;
            SHIFT (b0)       loses b0's dependents on the stack, and its head if that is below s0.
        ROOT, at the bottom of the stack, counts as a stack word."""
        heads, stack, buffer = gold.heads, config.stack, config.buffer
        s0 = stack[-1]
        s1 = stack[-2] if len(stack) > 1 else None
        waiting = set(buffer)
        orphans = sum(heads[d] == s0 for d in buffer)     # whichever arc pops s0 loses them
        costs = {"RIGHT": orphans + (heads[s0] in waiting)}
        if buffer:
            b0 = buffer[0]
            costs["LEFT"] = orphans + (heads[s0] != b0 and (heads[s0] == s1 or heads[s0] in waiting))
            costs["SHIFT"] = sum(heads[d] == b0 for d in stack) + (heads[b0] in set(stack[:-1]))
        return costs


class ArcSwap(TransitionSystem):
    """Arc-standard with SWAP (Nivre 2009) and the lazy oracle (Nivre, Kuhlmann & Hall 2009).
    Every tree, projective or not. SWAP is preferred to SHIFT: the lazy test holds it back."""
    name = "arc-swap"
    transitions = (LeftArc(), RightArc(), Swap(), Shift())


class ArcHybridSwap(ArcHybrid):
    """Arc-hybrid with SWAP (de Lhoneux et al. 2017) and the eager swap oracle. Every tree,
    projective or not."""
    name = "arc-hybrid-swap"
    transitions = (HybridLeftArc(), RightArc(), HybridSwap(), Shift())
    # Its dynamic oracle is arc-hybrid's: on a projective tree SWAP is never optimal (it has no cost).


SYSTEMS: dict[str, type[TransitionSystem]] = {
    system.name: system for system in (ArcStandard, ArcHybrid, ArcSwap, ArcHybridSwap)}
DEFAULT_SYSTEM = ArcHybridSwap.name


def get_system(name: str, labels: Sequence[str]) -> TransitionSystem:
    """The transition system registered as `name`, over `labels`.

    Args:
        name: a key of `SYSTEMS`.
        labels: the dependency labels, "root" among them.

    Returns:
        A new system.

    Raises:
        UserError: unknown name.
    """
    if name not in SYSTEMS:
        raise unknown_name("transition system", name, SYSTEMS)
    return SYSTEMS[name](labels)
