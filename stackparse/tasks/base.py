"""What a task is: a seeded generator of examples of a given size, and its evaluation protocol.

A task never sees a model. It samples `Example`s (symbol ids in, symbol ids out, which outputs are
scored) and says how it is to be trained and tested (`Protocol`). Models only learn alphabet sizes.
"""
from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from stackparse.registry import Registry
from stackparse.sequences import Example, concatenate  # noqa: F401  (tasks make Examples; re-exported)


@dataclass(frozen=True)
class Protocol:
    """How a task is trained and tested: on sizes `train_n` (lo, hi), the curriculum growing hi from `curriculum_start`
    by `curriculum_step` every `curriculum_every` epochs (0: all of lo..hi from the start); then on sizes `test_n`,
    `test_samples` examples each (a size is solved when all are right). `stream`: training examples are concatenated
    into streams (unsupervised next-symbol prediction), not fed one by one from a fresh state."""
    train_n: tuple[int, int] = (1, 19)
    test_n: tuple[int, int] = (1, 60)
    test_samples: int = 1
    curriculum_start: int = 3
    curriculum_every: int = 0
    curriculum_step: int = 1
    stream: bool = True


class Task(abc.ABC):
    """A family of sequences indexed by a size n, over a fixed alphabet.

    Subclasses set `name`, `kind`, `description`, `symbols` (input alphabet; ids are indices),
    optionally `output_symbols` (defaults to `symbols`) and `protocol`, and implement `sample`."""
    name: ClassVar[str]
    kind: ClassVar[str]
    description: ClassVar[str]
    symbols: tuple[str, ...]
    output_symbols: tuple[str, ...] | None = None
    protocol: ClassVar[Protocol] = Protocol()
    default_training: ClassVar[dict] = {}   # {"train": {field: value}, "data": ...} over the defaults
    pda = None                              # the PDA of a grammar task's language, for rule insertion
    fixed_splits: ClassVar[bool] = False    # data in fixed splits (`DatasetTask`)

    @property
    def outputs(self) -> tuple[str, ...]:
        return self.output_symbols if self.output_symbols is not None else self.symbols

    @abc.abstractmethod
    def sample(self, rng: np.random.Generator, n: int) -> Example:
        """One example of size n."""

    def min_n(self) -> int:
        """The smallest size this task can generate."""
        return 1

    def _check_size(self, n: int) -> None:
        if n < self.min_n():
            raise ValueError(f"{self.name} needs n >= {self.min_n()}, got {n}")

    def encode(self, text: str) -> tuple[int, ...]:
        """Symbol ids of a string whose characters are single-character symbols."""
        return tuple(self.symbols.index(c) for c in text)

    def decode(self, ids, outputs: bool = False) -> str:
        alphabet = self.outputs if outputs else self.symbols
        return "".join(alphabet[i] for i in ids)

    def render(self, example: Example) -> str:
        """The input string with the scored targets shown in [brackets] (for inspection and docs)."""
        return "".join(self.symbols[i] for i in example.inputs) + " -> " + "".join(
            f"[{self.outputs[t]}]" if s else self.outputs[t] for t, s in zip(example.targets, example.scored))


class DatasetTask(Task):
    """A task whose data are fixed splits, "train", "validation" and the `test_splits`, not drawn afresh
    by size: the sequence objective trains on "train" (the sizes the curriculum allows) and validates on
    "validation"; evaluation reports each test split (`stackparse.evaluation.sequence.evaluate_splits`).
    `sample` still draws fresh examples of a size, for inspection and speed measurements."""
    test_splits: ClassVar[tuple[str, ...]]
    fixed_splits = True

    @abc.abstractmethod
    def split(self, name: str) -> list[Example]:
        """The examples of split `name` (the same ones at every call)."""


TASKS = Registry("task")
register = TASKS.register


def get_task(name: str) -> Task:
    """An instance of the task registered as `name`; a UserError listing the valid names otherwise."""
    return TASKS.get_class(name)()
