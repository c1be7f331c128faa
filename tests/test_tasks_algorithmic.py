"""Tests of the Joulin & Mikolov tasks against recognizers and a brute-force oracle written here.

Nothing below reuses the generators' code: each language is recognised from the string alone
(runs of symbols, string reversal, integer arithmetic), and "predictable" is decided by
enumerating the language.
"""
import itertools
import re
from collections import defaultdict
from functools import cache
from typing import NamedTuple

import numpy as np
import pytest

from stackparse.errors import UserError
from stackparse.tasks import TASKS, Example, Task, get_task
from stackparse.tasks.algorithmic import Block, CountingTask, Memorization

T, F = True, False  # for the scored tuples worked by hand

# Each counting language: its symbols in order and the relation between their run lengths.
COUNTING = {
    "anbn": ("ab", lambda a, b: a == b),
    "anbncn": ("abc", lambda a, b, c: a == b == c),
    "anbncndn": ("abcd", lambda a, b, c, d: a == b == c == d),
    "anb2n": ("ab", lambda a, b: b == 2 * a),
    "anbmcnm": ("abc", lambda a, b, c: c == a + b),
}
RANDOM_TASKS = ["anbmcnm", "memorization", "addition"]
ALL_TASKS = [*COUNTING, "memorization", "addition"]
SEEDS = range(5)
ADDITION = re.compile(r"(1[01]*)\+(1[01]*)=([01]*1)\.")  # no leading zeros, in either direction


def runs(text: str) -> list[tuple[str, int]]:
    """The maximal runs of one symbol: "aabccc" -> [("a", 2), ("b", 1), ("c", 3)]."""
    return [(symbol, len(list(group))) for symbol, group in itertools.groupby(text)]


def in_counting_language(name: str, text: str) -> bool:
    """Whether `text` is one sequence of the counting language `name`."""
    symbols, relation = COUNTING[name]
    found = runs(text)
    return "".join(s for s, _ in found) == symbols and relation(*(k for _, k in found))


class Sample(NamedTuple):
    """An example of size n drawn from `task`, with its input as a string."""
    task: Task
    n: int
    example: Example
    text: str


def samples(name: str, sizes, seeds=SEEDS) -> list[Sample]:
    """One sample per seed and size, each seed's sizes drawn in order from one generator."""
    task = get_task(name)
    found = []
    for seed in seeds:
        rng = np.random.default_rng(seed)
        for n in sizes:
            example = task.sample(rng, n)
            found.append(Sample(task, n, example, task.decode(example.inputs)))
    return found


def answer(task, example) -> str:
    """The scored targets, as text."""
    return "".join(task.outputs[t] for t, flag in zip(example.targets, example.scored) if flag)


def find(name: str, n: int, text: str) -> Example:
    """The first example of size n, over seeds 0..199, whose input is `text`."""
    return next(s.example for s in samples(name, [n], range(200)) if s.text == text)


# --- every generator against an independent recognizer --------------------------------------

@pytest.mark.parametrize("name", COUNTING)
def test_counting_samples_are_in_the_language(name):
    for s in samples(name, range(1, 30)):
        assert in_counting_language(name, s.text), s.text
        assert runs(s.text)[0] == ("a", s.n)


def test_anbmcnm_draws_m_from_1_to_n():
    ms = {runs(s.text)[1][1] for s in samples("anbmcnm", [4], range(50))}
    assert ms == {1, 2, 3, 4}


def test_memorization_is_a_word_then_its_reverse():
    for s in samples("memorization", range(1, 30)):
        word, rest = s.text.split("=")
        assert len(word) == s.n and set(word) <= {"a", "b"}
        assert rest == word[::-1] + "."
        assert answer(s.task, s.example) == rest


def test_memorization_over_k_letters():
    task, rng = Memorization(k=3), np.random.default_rng(0)
    assert task.symbols == ("a", "b", "c", "=", ".")
    words = {task.decode(task.sample(rng, 30).inputs).split("=")[0] for _ in range(5)}
    assert set("".join(words)) == {"a", "b", "c"}


@pytest.mark.parametrize("k", [0, 27])
def test_memorization_rejects_bad_alphabet_sizes(k):
    with pytest.raises(ValueError):
        Memorization(k=k)


def test_addition_is_a_correct_reversed_binary_sum():
    for s in samples("addition", range(1, 30)):
        first, second, reversed_sum = ADDITION.fullmatch(s.text).groups()
        assert int(first, 2) + int(second, 2) == int(reversed_sum[::-1], 2)
        assert len(first) == s.n and 1 <= len(second) <= s.n
        assert answer(s.task, s.example) == reversed_sum + "."


@pytest.mark.parametrize("name", ALL_TASKS)
def test_targets_are_the_next_symbols(name):
    for s in samples(name, range(1, 12)):
        assert s.example.n == s.n
        assert s.example.targets[:-1] == s.example.inputs[1:]


@pytest.mark.parametrize("name", [*COUNTING, "addition"])
def test_last_target_is_how_every_sequence_starts(name):
    examples = [s.example for s in samples(name, range(1, 12))]
    first = {example.inputs[0] for example in examples}
    last = {example.targets[-1] for example in examples}
    assert first == last == set(get_task(name).encode("a" if name in COUNTING else "1"))


@pytest.mark.parametrize("name", ALL_TASKS)
def test_sizes_below_min_n_are_rejected(name):
    task = get_task(name)
    with pytest.raises(ValueError, match="n >= 1"):
        task.sample(np.random.default_rng(0), task.min_n() - 1)


# --- scored positions on examples worked by hand ----------------------------------------------

@pytest.mark.parametrize("name, n, text, scored, scored_answer", [
    ("anbn", 3, "aaabbb", (F, F, F, T, T, T), "bba"),
    ("anbncn", 2, "aabbcc", (F, F, T, T, T, T), "bcca"),
    ("anbncndn", 1, "abcd", (F, T, T, T), "cda"),
    ("anb2n", 2, "aabbbb", (F, F, T, T, T, T), "bbba"),
    ("anbmcnm", 2, "aabccc", (F, F, F, T, T, T), "cca"),
    ("anbmcnm", 2, "aabbcccc", (F, F, F, F, T, T, T, T), "ccca"),
    ("memorization", 3, "abb=bba.", (F, F, F, T, T, T, T, F), "bba."),
    ("addition", 3, "101+1=011.", (F, F, F, F, F, T, T, T, T, F), "011."),
])
def test_scored_positions_by_hand(name, n, text, scored, scored_answer):
    example = find(name, n, text)
    assert example.scored == scored
    assert answer(get_task(name), example) == scored_answer


# --- scored == deterministically predictable, by brute force ----------------------------------

BOUND = 16
"""Longest run enumerated; examples are checked for n <= 6, whose continuations all stay below it.
The languages have n, m >= 1 unrelated: the sampler's m <= n is not part of what is predictable."""


@cache
def next_symbols(name: str) -> dict[str, frozenset[str]]:
    """Every prefix of a language string followed by the next sequence's 'a' -> the symbols after it."""
    symbols, relation = COUNTING[name]
    table = defaultdict(set)
    for counts in itertools.product(range(1, BOUND + 1), repeat=len(symbols)):
        if relation(*counts):
            stream = "".join(symbol * count for symbol, count in zip(symbols, counts)) + "a"
            for t in range(1, len(stream)):
                table[stream[:t]].add(stream[t])
    return {prefix: frozenset(following) for prefix, following in table.items()}


@pytest.mark.parametrize("name", COUNTING)
def test_scored_iff_all_continuations_agree(name):
    table = next_symbols(name)
    for s in samples(name, range(1, 7)):
        following = [table[s.text[:t + 1]] for t in range(len(s.text))]
        assert s.example.scored == tuple(len(f) == 1 for f in following), s.text
        assert all(s.task.outputs[target] in f for target, f in zip(s.example.targets, following))


class AnBm(CountingTask):
    """Not in the paper: two free blocks, so that a sequence ends on a free one."""
    name = "anbm"
    pattern = (Block("a", {"n": 1}), Block("b", {"m": 1}))


def test_nothing_is_scored_when_every_block_is_free():
    example = AnBm().sample(np.random.default_rng(0), 5)
    assert not any(example.scored)


@pytest.mark.parametrize("pattern, message", [
    ((Block("a", {"n": 2}), Block("b", {"n": 1})), "introduces a size"),
    ((Block("a", {"n": 1}), Block("b", {"n": 1, "m": 1})), "introduces a size"),
    ((Block("a", {"n": 1}), Block("a", {"n": 1})), "same symbol"),
    ((Block("a", {"m": 1}), Block("b", {"m": 1})), "the size n"),
])
def test_patterns_outside_the_scoring_rule_are_rejected(pattern, message):
    with pytest.raises(ValueError, match=message):
        type("Bad", (CountingTask,), {"name": "bad", "pattern": pattern})


# --- determinism ------------------------------------------------------------------------------

def sampled(name: str, seed: int) -> list[Example]:
    """The examples of sizes 1..19 drawn from one generator seeded with `seed`."""
    return [s.example for s in samples(name, range(1, 20), [seed])]


@pytest.mark.parametrize("name", ALL_TASKS)
def test_same_seed_same_examples(name):
    assert sampled(name, 7) == sampled(name, 7)


@pytest.mark.parametrize("name", RANDOM_TASKS)
def test_different_seeds_differ(name):
    assert sampled(name, 7) != sampled(name, 8)


@pytest.mark.parametrize("name", sorted(set(COUNTING) - set(RANDOM_TASKS)))
def test_fixed_patterns_have_one_example_per_size(name):
    assert sampled(name, 7) == sampled(name, 8)


# --- registry and metadata --------------------------------------------------------------------

def test_registry_kinds():
    kinds = {name: TASKS[name].kind for name in ALL_TASKS}
    assert kinds == {**dict.fromkeys(COUNTING, "counting"),
                     "memorization": "memory", "addition": "arithmetic"}


def test_unknown_task_lists_the_valid_names():
    with pytest.raises(UserError) as error:
        get_task("nope")
    assert "'nope'" in str(error.value)
    assert all(name in str(error.value) for name in ALL_TASKS)


@pytest.mark.parametrize("name", ALL_TASKS)
def test_metadata(name):
    task = get_task(name)
    assert "Joulin & Mikolov 2015" in task.description and "\n" not in task.description
    assert all(len(s) == 1 for s in task.symbols) and len(set(task.symbols)) == len(task.symbols)
    assert task.protocol.stream and task.protocol.curriculum_every == 1
    assert task.protocol.train_n == (1, 19) and task.protocol.test_n == (1, 60)


def test_test_samples_cover_the_random_sizes():
    samples_per_size = {name: TASKS[name].protocol.test_samples for name in ALL_TASKS}
    assert samples_per_size == {**dict.fromkeys(COUNTING, 1), "anbmcnm": 5,
                                "memorization": 20, "addition": 20}


def test_counting_description_follows_the_pattern():
    assert get_task("anbmcnm").description.startswith("a^n b^m c^(n+m),")
    assert get_task("anb2n").description.startswith("a^n b^2n,")
