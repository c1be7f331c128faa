"""The algorithmic tasks of Joulin & Mikolov (2015): the patterns of Table 1 and binary addition.

A. Joulin and T. Mikolov, "Inferring Algorithmic Patterns with Stack-Augmented Recurrent Nets", NeurIPS 2015. Sizes n, m
>= 1; each example below is one sequence in this module's format, then the start of the next one in the stream:

  counting      a^n b^n                  aaabbb|a...
                a^n b^n c^n              aabbcc|a...
                a^n b^n c^n d^n          abcd|a...
                a^n b^2n                 aabbbb|a...
                a^n b^m c^(n+m)          aabccc|a...
  memory        memorization             abb=bba.|...
  arithmetic    binary addition          101+1=011.|...

All seven are next-symbol prediction on an unbroken stream of sequences, as in the paper: the target
at step t is the symbol at step t+1, the last target of a sequence the next one's first symbol.

What is scored: only the symbols determined by everything before them in the stream, since nothing can be learnt about
the others (the paper's accuracy counts those alone; so does its code, facebookarchive/Stack-RNN `train_toy.cpp`).
- Counting: a block whose length is free (a new n or m) could end after any of its symbols, so its 2nd..last symbols and
  the first symbol after it are undetermined; every other symbol is, including the next sequence's leading 'a' (every
  sequence ends on a determined block). For a^n b^n: aaabbb -> targets aabbb|a, scored only b_2, b_3 and the next a.
- Memorization and addition: the answer after "=" and its end marker "."; the question before it is
  random, and so is the next sequence's first symbol (not scored).

Choices the paper leaves open, and why:
- a^n b^m c^(n+m): n is the length of the a block, m is drawn uniformly in 1..n so that a sequence of size n is at most
  4n long, as a^n b^n c^n d^n. (The reference code draws n+m and splits it.) What is scored follows the language, n and
  m >= 1 unrelated: m <= n is the sampler's, not the pattern's, so the c that follows b^n is not counted as predictable.
- Binary addition: operands most significant bit first without leading zeros (so never 0); n is the
  first operand's bit length, the second's is drawn uniformly in 1..n, so that n bounds both and the
  test curve is indexed by the longest. The sum is written least significant bit first, as in the
  paper, so that it can be produced in the order the carry propagates.
- Memorization: the word is drawn uniformly over k letters (default 2, as the reference code's
  `-nchar 3`: two letters and a separator) and answered reversed then ended by "." (the reference code
  has none), so that knowing where the answer stops is part of the task, as in addition. The target
  after "." (the next word's first letter) is random: a placeholder letter, unscored.
- Protocol: train on n in 1..19, test on 1..60; the curriculum starts at n <= 3 and grows by one every
  epoch, as the reference code's `nmax = max(min(e+3, nmaxmax), 3)` (all seven tasks). One test
  sequence per size for the fixed patterns (there is only one), 5 for a^n b^m c^(n+m) (several m per
  n) and 20 for memorization and addition, whose accuracy is reported as a fraction per size.
"""
from __future__ import annotations

import string
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import ClassVar

import numpy as np

from stackparse.tasks.base import Example, Protocol, Task, register

PAPER = "Joulin & Mikolov 2015"
CURRICULUM = Protocol(train_n=(1, 19), test_n=(1, 60), test_samples=1,
                      curriculum_start=3, curriculum_every=1, stream=True)
"""The reference code's protocol, shared by all seven tasks up to the number of test samples."""


def _stream_example(task: Task, text: str, next_first: str, scored, n: int) -> Example:
    """The sequence `text` (of size n) as a piece of the stream: each target is the next symbol, the
    last one `next_first` (the next sequence's first); `scored` has a flag per target."""
    return Example(inputs=task.encode(text), targets=task.encode(text[1:] + next_first),
                   scored=tuple(scored), n=n)


def _answer_example(task: Task, question: str, answer: str, next_first: str, n: int) -> Example:
    """`question` then `answer` as a piece of the stream, where only the answer is scored."""
    text = question + answer
    # targets[t] is text[t + 1]: the answer is targets len(question) - 1 .. len(text) - 2.
    scored = [len(question) - 1 <= t < len(text) - 1 for t in range(len(text))]
    return _stream_example(task, text, next_first, scored, n)


@dataclass(frozen=True)
class Block:
    """A run of one symbol, sum(coefficient * size) long over the sizes n and m: Block("c", {"n": 1, "m": 1})
    is c^(n+m). A block is free when it is the first to use a size, its length exactly that size."""
    symbol: str
    length: Mapping[str, int]

    def count(self, sizes: Mapping[str, int]) -> int:
        """The number of symbols for the given values of the sizes."""
        return sum(coefficient * sizes[var] for var, coefficient in self.length.items())

    def __str__(self) -> str:
        terms = [f"{'' if c == 1 else c}{var}" for var, c in self.length.items()]
        exponent = "+".join(terms)
        return f"{self.symbol}^{exponent if len(terms) == 1 else f'({exponent})'}"


def _free_sizes(pattern: tuple[Block, ...]) -> tuple[str | None, ...]:
    """For each block, the size it introduces (its length is free), or None (determined); a ValueError for
    the patterns the scoring rule does not cover (see the messages)."""
    seen: set[str] = set()
    free = []
    for previous, block in zip((None, *pattern), pattern):
        new = set(block.length) - seen
        if new and list(block.length.values()) != [1]:
            raise ValueError(f"block {block} introduces a size, so its length must be that size alone")
        if previous is not None and previous.symbol == block.symbol:
            raise ValueError(f"adjacent blocks {previous} {block} have the same symbol")
        free.append(new.pop() if new else None)
        seen |= set(block.length)
    if "n" not in seen:
        raise ValueError("a pattern must use the size n")
    return tuple(free)


class CountingTask(Task):
    """Next-symbol prediction on a stream of sequences made of blocks: subclasses set `name` and `pattern`
    (the alphabet and description follow). Size n sets n and draws every other size uniformly in 1..n."""
    kind = "counting"
    protocol = CURRICULUM
    pattern: ClassVar[tuple[Block, ...]]
    _free_size: ClassVar[tuple[str | None, ...]]

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._free_size = _free_sizes(cls.pattern)
        cls.symbols = tuple(block.symbol for block in cls.pattern)
        cls.description = f"{' '.join(map(str, cls.pattern))}, next-symbol prediction ({PAPER}, Table 1)"

    def sample(self, rng: np.random.Generator, n: int) -> Example:
        self._check_size(n)
        sizes = {var: n if var == "n" else int(rng.integers(1, n + 1))
                 for var in self._free_size if var is not None}
        counts = [block.count(sizes) for block in self.pattern]
        text = "".join(block.symbol * count for block, count in zip(self.pattern, counts))
        return _stream_example(self, text, self.symbols[0], self._determined(counts), n)

    def _determined(self, counts: list[int]) -> list[bool]:
        """For each target, whether the stream before it determines it: not when it continues a free
        block or is the first after one (module docstring)."""
        flags: list[bool] = []
        after_free = False
        for var, count in zip(self._free_size, counts):
            flags += [not after_free] + [var is None] * (count - 1)
            after_free = var is not None
        return flags[1:] + [not after_free]  # the first symbol is the previous sequence's target


_N, _M = {"n": 1}, {"m": 1}
for _class, _name, _pattern, _protocol in (
        ("AnBn", "anbn", (Block("a", _N), Block("b", _N)), CURRICULUM),
        ("AnBnCn", "anbncn", (Block("a", _N), Block("b", _N), Block("c", _N)), CURRICULUM),
        ("AnBnCnDn", "anbncndn", (Block("a", _N), Block("b", _N), Block("c", _N), Block("d", _N)), CURRICULUM),
        ("AnB2n", "anb2n", (Block("a", _N), Block("b", {"n": 2})), CURRICULUM),
        ("AnBmCnm", "anbmcnm", (Block("a", _N), Block("b", _M), Block("c", {"n": 1, "m": 1})),
         replace(CURRICULUM, test_samples=5))):
    register(type(_class, (CountingTask,), {"name": _name, "pattern": _pattern, "protocol": _protocol}))


@register
class Memorization(Task):
    """A random word of n letters (of `k`, 1 to 26), "=", the word reversed, "."; the reversed word and "."
    are scored."""
    name = "memorization"
    kind = "memory"
    description = f"memorize a word and write it reversed: abb=bba. ({PAPER})"
    protocol = replace(CURRICULUM, test_samples=20)

    def __init__(self, k: int = 2):
        if not 1 <= k <= len(string.ascii_lowercase):
            raise ValueError(f"memorization needs 1 to 26 letters, got k={k}")
        self.letters = tuple(string.ascii_lowercase[:k])
        self.symbols = (*self.letters, "=", ".")

    def sample(self, rng: np.random.Generator, n: int) -> Example:
        self._check_size(n)
        word = "".join(rng.choice(self.letters, size=n))
        # The next word's first letter is random, so that target is unscored: any letter will do.
        return _answer_example(self, word + "=", word[::-1] + ".", self.letters[0], n)


@register
class Addition(Task):
    """Binary a+b= then the sum least significant bit first, then "."; the sum and "." are scored."""
    name = "addition"
    kind = "arithmetic"
    description = f"binary addition, the sum written least significant bit first: 101+1=011. ({PAPER})"
    symbols = ("0", "1", "+", "=", ".")
    protocol = replace(CURRICULUM, test_samples=20)

    def sample(self, rng: np.random.Generator, n: int) -> Example:
        self._check_size(n)
        first = _binary(rng, n)
        second = _binary(rng, int(rng.integers(1, n + 1)))
        total = format(int(first, 2) + int(second, 2), "b")
        # Operands have no leading zeros, so the next sequence starts with "1".
        return _answer_example(self, f"{first}+{second}=", total[::-1] + ".", "1", n)


def _binary(rng: np.random.Generator, bits: int) -> str:
    """A uniformly random number of exactly `bits` bits, most significant first."""
    return "1" + "".join(rng.choice(("0", "1"), size=bits - 1))
