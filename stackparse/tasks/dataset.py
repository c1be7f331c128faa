"""Tasks whose data are fixed splits (a training set, test sets), not drawn afresh by size.

The sequence objective trains on such a task's "train" split (the examples of sizes the curriculum
allows) and validates on its "validation" split; evaluation reports each of its `test_splits`
(`stackparse.evaluation.sequence.evaluate_splits`). `sample` still draws fresh examples of a size,
for inspection and speed measurements.
"""
from __future__ import annotations

import abc
from typing import ClassVar

from stackparse.tasks.base import Example, Task


class DatasetTask(Task):
    """A task with named splits: "train", "validation" and the `test_splits`."""
    test_splits: ClassVar[tuple[str, ...]]
    fixed_splits = True

    @abc.abstractmethod
    def split(self, name: str) -> list[Example]:
        """The examples of split `name` (the same ones at every call)."""
