"""The PDA format, the runner and the samplers (stackparse.grammars), against recognizers written here.

Each shipped language is recognised below straight from its definition (regular expressions on its
blocks, string reversal, cancelling bracket pairs), never from a stack, and the runner must agree
with it on every short string, on random strings, on sampled positives and on hard negatives.
"""
import itertools
import re
from collections import Counter

import numpy as np
import pytest

from stackparse.errors import UserError
from stackparse.grammars import (PAPER_SPLITS, Edit, Negatives, Sampler, Split, accepts, dataset, datasets, load_pda,
                                 near_miss, parse_pda, shipped_names, shipped_pda)


def palindrome(s: str) -> bool:
    """w c w^R, w in {a,b}*."""
    half = len(s) // 2
    return len(s) % 2 == 1 and s[half] == "c" and set(s[:half]) <= {"a", "b"} and s[half + 1:] == s[:half][::-1]


def anbn(s: str) -> bool:
    m = re.fullmatch(r"(a+)(b+)", s)
    return bool(m) and len(m[1]) == len(m[2])


def anbncbmam(s: str) -> bool:
    m = re.fullmatch(r"(a+)(b+)c(b+)(a+)", s)
    return bool(m) and len(m[1]) == len(m[2]) and len(m[3]) == len(m[4])


def anmbncm(s: str) -> bool:
    m = re.fullmatch(r"(a+)(b+)(c+)", s)
    return bool(m) and len(m[1]) == len(m[2]) + len(m[3])


def dyck2(s: str) -> bool:
    """Balanced: cancelling adjacent () and [] pairs leaves nothing."""
    while "()" in s or "[]" in s:
        s = s.replace("()", "").replace("[]", "")
    return s == ""


# name: (recognizer, alphabet, longest length checked exhaustively, lengths in 1..21 with strings)
LANGUAGES = {
    "palindrome": (palindrome, "abc", 7, list(range(1, 22, 2))),
    "anbn": (anbn, "ab", 10, list(range(2, 21, 2))),
    "anbncbmam": (anbncbmam, "abc", 7, list(range(5, 22, 2))),
    "anmbncm": (anmbncm, "abc", 7, list(range(4, 21, 2))),
    "dyck2": (dyck2, "()[]", 6, list(range(2, 21, 2))),
}
NAMES = list(LANGUAGES)


@pytest.fixture(scope="module")
def samplers():
    return {name: Sampler(shipped_pda(name), 40) for name in NAMES}


def strings(alphabet: str, n: int):
    return ("".join(t) for t in itertools.product(alphabet, repeat=n))


def single_edits(s: str, alphabet: str) -> set[str]:
    """Every string one change, insertion or deletion away from s."""
    changes = {s[:i] + x + s[i + 1:] for i in range(len(s)) for x in alphabet if x != s[i]}
    insertions = {s[:i] + x + s[i:] for i in range(len(s) + 1) for x in alphabet}
    deletions = {s[:i] + s[i + 1:] for i in range(len(s))}
    return changes | insertions | deletions


# ---- the shipped PDAs against their definitions ------------------------------------------------

def test_the_five_languages_of_the_paper_are_shipped():
    assert shipped_names() == tuple(sorted(NAMES))
    for name, (_, alphabet, _, _) in LANGUAGES.items():
        assert "".join(shipped_pda(name).input_symbols) == alphabet


@pytest.mark.parametrize("name", NAMES)
def test_runner_agrees_with_the_definition_on_every_short_string(name):
    recognizer, alphabet, longest, _ = LANGUAGES[name]
    pda = shipped_pda(name)
    for n in range(longest + 1):
        for s in strings(alphabet, n):
            assert accepts(pda, s) == recognizer(s), s


@pytest.mark.parametrize("name", NAMES)
def test_every_prefix_is_answered_in_one_pass_as_the_runner_answers_it(name, samplers):
    """`prefixes_accepted`: the step targets of `--step-targets own` (whether the prefix read so far is in the
    language), the empty prefix first."""
    from stackparse.grammars import prefixes_accepted
    recognizer, _, _, _ = LANGUAGES[name]
    pda, rng = shipped_pda(name), np.random.default_rng(5)
    for s in [samplers[name].positive(rng, n) for n in samplers[name].lengths(1, 12)]:
        assert prefixes_accepted(pda, s) == tuple(recognizer(s[:t]) for t in range(len(s) + 1)), s
    assert prefixes_accepted(shipped_pda("anbn"), "aabbb") == (False, False, False, False, True, False)


@pytest.mark.parametrize("name", NAMES)
def test_runner_agrees_on_random_strings_positives_and_near_misses(name, samplers):
    recognizer, alphabet, _, _ = LANGUAGES[name]
    sampler, rng = samplers[name], np.random.default_rng(3)
    lengths = sampler.lengths(1, 40)
    randoms = ["".join(rng.choice(list(alphabet), size=rng.integers(0, 41))) for _ in range(100)]
    positives = [sampler.positive(rng, int(rng.choice(lengths))) for _ in range(100)]
    negatives = [sampler.negative(rng, int(rng.choice(lengths))) for _ in range(100)]
    assert all(recognizer(s) for s in positives)
    assert not any(recognizer(s) for s in negatives)
    for s in randoms + positives + negatives:
        assert accepts(sampler.pda, s) == recognizer(s), s


@pytest.mark.parametrize("name", NAMES)
def test_lengths_with_strings_follow_the_language(name, samplers):
    assert samplers[name].lengths(1, 21) == LANGUAGES[name][3]


@pytest.mark.parametrize("name, n", [("palindrome", 7), ("anbn", 6), ("anbncbmam", 9), ("anmbncm", 10), ("dyck2", 6)])
def test_positives_of_a_length_are_every_string_of_it_uniformly(name, n, samplers):
    recognizer, alphabet, _, _ = LANGUAGES[name]
    members = {s for s in strings(alphabet, n) if recognizer(s)}
    rng = np.random.default_rng(0)
    drawn = Counter(samplers[name].positive(rng, n) for _ in range(100 * len(members)))
    assert set(drawn) == members
    assert max(drawn.values()) < 1.5 * 100 and min(drawn.values()) > 0.5 * 100


def test_anmbncm_splits_its_length_uniformly(samplers):
    rng = np.random.default_rng(1)
    drawn = Counter(len(re.match("a+(b+)", samplers["anmbncm"].positive(rng, 20))[1]) for _ in range(900))
    assert sorted(drawn) == list(range(1, 10)) and min(drawn.values()) > 60   # n = 1..9, 100 each expected


# ---- hard negatives and datasets ---------------------------------------------------------------

@pytest.mark.parametrize("edit", list(Edit))
@pytest.mark.parametrize("name", NAMES)
def test_a_near_miss_is_one_edit_of_the_positive_and_rejected(name, edit, samplers):
    recognizer, alphabet, _, _ = LANGUAGES[name]
    rng = np.random.default_rng(2)
    for n in samplers[name].lengths(1, 12):
        positive = samplers[name].positive(rng, n)
        miss = near_miss(samplers[name].pda, rng, positive, edit)
        assert miss is not None and not recognizer(miss) and not accepts(samplers[name].pda, miss)
        assert len(miss) == n + edit.value and positive in single_edits(miss, alphabet)


def test_no_near_miss_in_a_language_of_every_string():
    everything = parse_pda("states: q\ninput: a\nstack: Z\nstart: q\naccept: q\nq a - -> q -\n", "all.pda")
    rng = np.random.default_rng(0)
    assert near_miss(everything, rng, "aa", Edit.INSERT) is None
    assert near_miss(everything, rng, "aa", Edit.CHANGE) is None   # no other symbol to change to
    with pytest.raises(UserError, match="all: no string of length 3 is one edit away from 100 sampled"):
        Sampler(everything, 5).negative(rng, 3)
    with pytest.raises(UserError, match="dyck2: no string of length 0 is one edit away from any string"):
        Sampler(shipped_pda("dyck2"), 5).negative(rng, 0)


@pytest.mark.parametrize("name", NAMES)
def test_dataset_labels_lengths_and_near_misses(name):
    recognizer, alphabet, _, lengths = LANGUAGES[name]
    examples = dataset(shipped_pda(name), Split(60, 40, (1, 21)), np.random.default_rng(5))
    assert Counter(label for _, label in examples) == {True: 60, False: 40}
    assert {len(s) for s, _ in examples} <= set(lengths)      # negatives too: length never tells
    for s, label in examples:
        assert recognizer(s) == label, s
        if not label:
            assert any(recognizer(t) for t in single_edits(s, alphabet)), s


@pytest.mark.parametrize("name", NAMES)
def test_random_negatives_are_rejected_strings_of_the_positives_lengths(name):
    recognizer, alphabet, _, lengths = LANGUAGES[name]
    examples = dataset(shipped_pda(name), Split(40, 60, (1, 21)), np.random.default_rng(5), Negatives.RANDOM)
    assert Counter(label for _, label in examples) == {True: 40, False: 60}
    assert {len(s) for s, _ in examples} <= set(lengths)
    assert all(recognizer(s) == label for s, label in examples)
    negatives = [s for s, label in examples if not label]
    assert set("".join(negatives)) <= set(alphabet) and len(set(negatives)) > 50   # drawn, not edits of a few
    # near misses are one edit from the language; most random strings of length 9 or more are not
    far = [s for s in negatives if len(s) >= 9 and not any(recognizer(t) for t in single_edits(s, alphabet))]
    assert far


def test_random_negatives_of_a_language_of_every_string():
    everything = parse_pda("states: q\ninput: a\nstack: Z\nstart: q\naccept: q\nq a - -> q -\n", "all.pda")
    with pytest.raises(UserError, match="all: 100 random strings of length 3 are all in the language"):
        Sampler(everything, 5, Negatives.RANDOM).negative(np.random.default_rng(0), 3)


@pytest.mark.parametrize("name", NAMES)
def test_long_strings_take_the_nearest_length_the_language_has(name):
    recognizer = LANGUAGES[name][0]
    examples = dataset(shipped_pda(name), Split(2, 2, PAPER_SPLITS["test-480"].lengths), np.random.default_rng(0))
    expected = 481 if name in ("palindrome", "anbncbmam") else 480
    assert [len(s) for s, _ in examples] == [expected] * 4
    assert [recognizer(s) for s, _ in examples] == [label for _, label in examples]


def test_datasets_are_deterministic_given_the_seed():
    pda, splits = shipped_pda("dyck2"), {"train": Split(30, 30, (1, 21)), "test": Split(10, 10, (1, 60))}
    first = datasets(pda, 11, splits)
    assert first == datasets(pda, 11, splits)
    assert first != datasets(pda, 12, splits)
    assert first["test"] == datasets(pda, 11, {"train": Split(5, 5, (1, 9)), "test": splits["test"]})["test"]


def test_paper_splits():
    assert PAPER_SPLITS["train"] == Split(2000, 2000, (1, 21))
    assert PAPER_SPLITS["test"].lengths == (1, 60)
    assert PAPER_SPLITS["test-480"].lengths[0] == 480 and PAPER_SPLITS["test-960"].lengths[0] == 960


def test_a_range_without_strings_is_a_user_error():
    with pytest.raises(UserError, match="palindrome has no strings of lengths 480..480"):
        dataset(shipped_pda("palindrome"), Split(1, 1, (480, 480)), np.random.default_rng(0))


# ---- nondeterminism and ε-moves ----------------------------------------------------------------

EVEN_PALINDROMES = """
# w w^R: guess the middle with an ε-move (nondeterministic)
states: push pop done
input: a b
stack: A B Z
start: push
bottom: Z
accept: done
push a - -> push A
push b - -> push B
push - - -> pop -
pop a A -> pop -
pop b B -> pop -
pop - Z -> done Z
"""
LOOPS = """
pop - - -> idle -      # an ε-cycle that leaves the stack alone
idle - - -> pop -
done - - -> done Z     # an ε-loop that grows the stack forever
"""
WITH_LOOPS = EVEN_PALINDROMES.replace("done", "idle done", 1) + LOOPS   # same language


def even_palindrome(s: str) -> bool:
    return len(s) % 2 == 0 and s == s[::-1]


@pytest.mark.parametrize("text, longest", [(EVEN_PALINDROMES, 8), (WITH_LOOPS, 4)], ids=["plain", "loops"])
def test_runner_is_exact_on_a_nondeterministic_pda_with_epsilon_loops(text, longest):
    """With the growing loop every search fills the stack bound (about 700 here), hence the short strings."""
    pda = parse_pda(text, "even.pda")
    for n in range(longest + 1):
        for s in strings("ab", n):
            assert accepts(pda, s) == even_palindrome(s), s


def test_sampling_a_nondeterministic_pda_and_refusing_epsilon_loops():
    sampler, rng = Sampler(parse_pda(EVEN_PALINDROMES, "even.pda"), 12), np.random.default_rng(0)
    assert sampler.lengths(0, 12) == list(range(0, 13, 2))
    drawn = Counter(sampler.positive(rng, 6) for _ in range(800))
    assert set(drawn) == {s for s in strings("ab", 6) if even_palindrome(s)} and min(drawn.values()) > 50
    looping = parse_pda(WITH_LOOPS, "loops.pda")
    with pytest.raises(UserError, match="loops: cannot sample: its ε-moves can loop"):
        Sampler(looping, 10)


# ---- the format --------------------------------------------------------------------------------

VALID = """\
# a^n b^n
states: q0 q1 f
input: a b
stack: A Z
start: q0
bottom: Z
accept: f
q0 a - -> q0 A   # push
q0 b A -> q1 -
q1 b A -> q1 -
q1 - Z -> f Z
"""


def edited(line: int, replacement: str | None) -> str:
    """VALID with its line `line` (from 1) replaced, or removed when `replacement` is None."""
    lines = VALID.splitlines()
    lines[line - 1:line] = [] if replacement is None else [replacement]
    return "\n".join(lines) + "\n"


def test_a_valid_file_parses():
    pda = parse_pda(VALID, "dir/anbn.pda")
    assert (pda.name, pda.states) == ("anbn", ("q0", "q1", "f"))
    assert (pda.input_symbols, pda.stack_symbols) == (("a", "b"), ("A", "Z"))
    assert (pda.start, pda.bottom, pda.accept) == ("q0", "Z", frozenset({"f"}))
    assert [str(t) for t in pda.transitions] == ["q0 a - -> q0 A", "q0 b A -> q1 -", "q1 b A -> q1 -", "q1 - Z -> f Z"]
    assert accepts(pda, "aabb") and not accepts(pda, "aab")


BAD = [
    ("", 1, "empty PDA file"),
    ("# nothing but a comment\n\n", 1, "empty PDA file"),
    (edited(5, None), 10, "no 'start:' declaration"),
    (edited(7, None), 10, "no 'accept:' declaration"),
    (edited(2, "stats: q0 q1 f"), 2, "unknown declaration 'stats'"),
    (edited(3, "input: a b\ninput: a"), 4, "'input:' declared twice (first on line 3)"),
    (edited(2, "states: q0 q1 q0 f"), 2, "'q0' listed twice"),
    (edited(2, "states: q0 q-1 f"), 2, "bad state name 'q-1'"),
    (edited(2, "states:"), 2, "'states:' lists nothing"),
    (edited(3, "input: ab"), 3, "input symbol 'ab' is not a single character"),
    (edited(4, "stack: A - Z"), 4, "'-' cannot be a stack symbol"),
    (edited(5, "start: q9"), 5, "unknown state 'q9'"),
    (edited(5, "start: q0 q1"), 5, "'start:' takes one state, got 2"),
    (edited(6, "bottom: X"), 6, "'X' is not in the stack alphabet"),
    (edited(7, "accept:"), 7, "'accept:' lists no state"),
    (edited(7, "accept: f g"), 7, "unknown state 'g'"),
    (edited(9, "q0 b A -> q7 -"), 9, "unknown state 'q7'"),
    (edited(9, "q0 x A -> q1 -"), 9, "'x' is not in the input alphabet (a b)"),
    (edited(9, "q0 b B -> q1 -"), 9, "'B' is not in the stack alphabet (A Z)"),
    (edited(9, "q0 b A -> q1 AX"), 9, "'X' is not in the stack alphabet"),
    (edited(9, "q0 b A -> q1"), 9, "malformed transition"),
    (edited(9, "q0 b A => q1 - -> q1"), 9, "malformed transition"),
    (edited(9, "q0 ab A -> q1 -"), 9, "INPUT and TOP are one symbol"),
    (edited(10, "q0 b A -> q1 -"), 10, "duplicate transition 'q0 b A -> q1 -' (first on line 9)"),
    (edited(10, "q1 b A q1 -"), 10, "expected a declaration 'KEYWORD: VALUES' or a transition"),
]


@pytest.mark.parametrize("text, line, message", BAD, ids=[m for _, _, m in BAD])
def test_mistakes_are_user_errors_with_the_file_and_line(text, line, message):
    with pytest.raises(UserError) as error:
        parse_pda(text, "bad.pda")
    assert str(error.value).startswith(f"bad.pda:{line}: ") and message in str(error.value)


def test_load_from_a_file_and_unknown_names(tmp_path):
    path = tmp_path / "mine.pda"
    path.write_text(VALID)
    assert load_pda(path).name == "mine" and len(load_pda(path).transitions) == 4
    with pytest.raises(UserError, match="missing.pda: cannot read the PDA file"):
        load_pda(tmp_path / "missing.pda")
    path.write_text(edited(9, "q0 b A -> q7 -"))
    with pytest.raises(UserError, match=f"^{re.escape(str(path))}:9: unknown state"):
        load_pda(path)
    with pytest.raises(UserError, match="unknown grammar 'anbncn'; valid grammars: anbn, anbncbmam"):
        shipped_pda("anbncn")
