"""Strings of a PDA's language, negatives (hard or random), and the datasets of the NSPDA experiments.

A. Mali, A. Ororbia and C. L. Giles, "The Neural State Pushdown Automata" (2019/2020) train string
classifiers on about 2,000 positive and 2,000 negative strings of lengths 1..21 and test them on
strings up to length 60 and on long strings of lengths 480 and 960. docs/grammars.md has the details:
- Positives (`Sampler.positive`): exactly n symbols, uniform among the language's strings of that length
  (in general in proportion to their accepting runs), by counting the derivations of the PDA's grammar
  (`stackparse.grammars.cfg`): no rejection.
- Negatives (`Negatives`), of two kinds, since the paper never says how its negatives were made:
  - hard (`near-miss`, the default): one `Edit` of a positive, the first the runner rejects in a random order
    of the edits; a positive whose every edit is accepted is replaced, up to `ATTEMPTS` times;
  - random (`random`): a string of the same length drawn uniformly from all strings of the alphabet, redrawn
    while the runner accepts it (up to `ATTEMPTS` times). Most such strings are rejected by a finite-state
    check (a^n b^n: not of the form a+b+), so they measure far less of what a stack adds than near misses do;
    the paper's stackless baselines score on the palindromes as only such negatives allow (BENCHMARKS.md,
    "Which negatives", and `scripts/negative_kinds.py`).
- Datasets: lengths uniform among those of the split's range the language has strings of; a negative of
  length n comes from a positive of length n, n - 1 or n + 1 (a change, an insertion or a deletion), so a
  string's length never gives its label away. Strings are drawn with replacement.
- `PAPER_SPLITS`: the paper gives neither the test sets' sizes nor whether odd-length languages were
  tested at 480 or 481; here 1,000 + 1,000 test strings of lengths 1..60, and 100 + 100 long strings in
  each of 480..481 and 960..961 (so every language has one length in each).
"""
from __future__ import annotations

import enum
from dataclasses import dataclass

import numpy as np

from stackparse.errors import UserError
from stackparse.grammars.cfg import Counts, derive, grammar
from stackparse.grammars.pda import PDA, accepts

ATTEMPTS = 100                  # how many positives a hard negative may be tried from before giving up
Labelled = tuple[str, bool]     # a string and whether it is in the language (a grammar task encodes these)


class Edit(enum.Enum):
    """A one-symbol edit; its value is the change of length it makes."""
    CHANGE = 0
    INSERT = 1
    DELETE = -1

    def count(self, n: int, symbols: int) -> int:
        """How many edits of this kind a string of length n over `symbols` symbols has."""
        return {Edit.CHANGE: n * (symbols - 1), Edit.INSERT: (n + 1) * symbols, Edit.DELETE: n}[self]

    def apply(self, string: str, alphabet: tuple[str, ...], index: int) -> str:
        """The edit number `index` (0 <= index < count) of `string`."""
        if self is Edit.DELETE:
            return string[:index] + string[index + 1:]
        if self is Edit.INSERT:
            i, j = divmod(index, len(alphabet))
            return string[:i] + alphabet[j] + string[i:]
        i, j = divmod(index, len(alphabet) - 1)
        return string[:i] + [s for s in alphabet if s != string[i]][j] + string[i + 1:]


def near_miss(pda: PDA, rng: np.random.Generator, positive: str, edit: Edit) -> str | None:
    """An `edit` of `positive` (in the language, for a near miss) that `pda` rejects, uniform among those
    edits; None when it accepts them all."""
    for index in rng.permutation(edit.count(len(positive), len(pda.input_symbols))):
        candidate = edit.apply(positive, pda.input_symbols, int(index))
        if not accepts(pda, candidate):
            return candidate
    return None


class Negatives(enum.Enum):
    """How a negative string is drawn (module docstring)."""
    NEAR_MISS = "near-miss"
    RANDOM = "random"


class Sampler:
    """Positives and negatives of one PDA's language, of lengths up to `max_length` (near misses of
    that length need positives one longer); a UserError for a PDA with an ε-loop (`grammars.cfg`)."""

    def __init__(self, pda: PDA, max_length: int, negatives: Negatives = Negatives.NEAR_MISS):
        self.pda = pda
        self.negatives = negatives
        self.counts = Counts(grammar(pda), max_length + 1, pda.name)

    def has_strings(self, n: int) -> bool:
        """Whether the language has strings of length n (0 <= n <= max_length + 1)."""
        return 0 <= n <= self.counts.max_length and self.counts.derives(self.counts.grammar.start, n)

    def lengths(self, lo: int, hi: int) -> list[int]:
        """The lengths in lo..hi that the language has strings of."""
        return [n for n in range(lo, hi + 1) if self.has_strings(n)]

    def positive(self, rng: np.random.Generator, n: int) -> str:
        """A string of the language of length n, uniform among them (module docstring)."""
        return derive(self.counts, rng, n)

    def negative(self, rng: np.random.Generator, n: int) -> str:
        """A negative of length n of the sampler's kind (module docstring)."""
        return self.random_negative(rng, n) if self.negatives is Negatives.RANDOM else self.near_miss(rng, n)

    def random_negative(self, rng: np.random.Generator, n: int) -> str:
        """A string of length n uniform among those of the alphabet, redrawn while the PDA accepts it; a
        UserError when `ATTEMPTS` draws are all accepted (Σ*)."""
        alphabet = self.pda.input_symbols
        for _ in range(ATTEMPTS):
            string = "".join(alphabet[i] for i in rng.integers(len(alphabet), size=n))
            if not accepts(self.pda, string):
                return string
        raise UserError(f"{self.pda.name}: {ATTEMPTS} random strings of length {n} are all in the language")

    def near_miss(self, rng: np.random.Generator, n: int) -> str:
        """A near miss of length n: one edit of a positive, rejected by the PDA (module docstring). A
        UserError when no string of the language is one edit away in length (say n = 0 when it has the
        empty string and no string of length 1), or no near miss is found in `ATTEMPTS` positives (Σ*)."""
        symbols = len(self.pda.input_symbols)
        edits = [edit for edit in Edit if self.has_strings(n - edit.value) and edit.count(n - edit.value, symbols)]
        for _ in range(ATTEMPTS if edits else 0):
            edit = edits[int(rng.integers(len(edits)))]
            found = near_miss(self.pda, rng, self.positive(rng, n - edit.value), edit)
            if found is not None:
                return found
        sources = f"{ATTEMPTS} sampled strings" if edits else "any string"
        raise UserError(f"{self.pda.name}: no string of length {n} is one edit away from {sources} "
                        f"of the language without being in it")


@dataclass(frozen=True)
class Split:
    """One dataset: how many positive and negative strings, with lengths in `lengths` (inclusive)."""
    positives: int
    negatives: int
    lengths: tuple[int, int]


PAPER_SPLITS = {
    "train": Split(2000, 2000, (1, 21)),
    "test": Split(1000, 1000, (1, 60)),
    "test-480": Split(100, 100, (480, 481)),
    "test-960": Split(100, 100, (960, 961)),
}
"""The splits of the NSPDA experiments (sizes the paper leaves open: see the module docstring)."""


def dataset(pda: PDA, split: Split, rng: np.random.Generator,
            negatives: Negatives = Negatives.NEAR_MISS) -> list[Labelled]:
    """`split.positives` positive and `split.negatives` negative strings (of the kind `negatives`) of `pda`'s language,
    as shuffled (string, label) pairs (module docstring); a UserError when the language has no strings of lengths in
    the split's range."""
    lo, hi = split.lengths
    sampler = Sampler(pda, hi, negatives)
    lengths = sampler.lengths(lo, hi)
    if not lengths:
        raise UserError(f"{pda.name} has no strings of lengths {lo}..{hi}")

    def length() -> int:
        return lengths[int(rng.integers(len(lengths)))]

    examples = [(sampler.positive(rng, length()), True) for _ in range(split.positives)]
    examples += [(sampler.negative(rng, length()), False) for _ in range(split.negatives)]
    return [examples[i] for i in rng.permutation(len(examples))]


def datasets(pda: PDA, seed: int, splits: dict[str, Split] = PAPER_SPLITS,
             negatives: Negatives = Negatives.NEAR_MISS) -> dict[str, list[Labelled]]:
    """Every split of `splits` for `pda`, by name: split i is drawn with the i-th child of
    `np.random.SeedSequence(seed)`, so it does not change when other splits are resized."""
    return {name: split_of(pda, seed, name, splits, negatives) for name in splits}


def split_of(pda: PDA, seed: int, name: str, splits: dict[str, Split] = PAPER_SPLITS,
             negatives: Negatives = Negatives.NEAR_MISS) -> list[Labelled]:
    """The split `name` of `datasets(pda, seed, splits, negatives)` (the same examples), without building the others."""
    child = np.random.SeedSequence(seed).spawn(len(splits))[list(splits).index(name)]
    return dataset(pda, splits[name], np.random.default_rng(child), negatives)
