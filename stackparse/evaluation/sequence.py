"""Evaluation of sequence models, and Joulin & Mikolov's protocol (2015, §5).

A sequence is correct when every scored (deterministically predictable) symbol is predicted correctly; a size n is
solved when all its test examples are. We report the percent of sizes in the test range solved and, separately,
among sizes never seen in training. Tasks with fixed test splits (grammar tasks) are tested on those, each example
from a fresh state: `evaluate_splits` reports each split's error, the percent of examples not entirely correct.
Grefenstette et al.'s measures (2015, §4.3) come with the sizes' report: coarse accuracy, the share of sequences
entirely correct, and fine accuracy, the mean share of scored symbols predicted right before the first error.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial

import dynet as dy
import numpy as np

from stackparse.models.capabilities import ArrayMirror
from stackparse.sequences import Example, pad, unroll
from stackparse.tasks.base import Task


MIRROR_BATCH = 64
"""Sequences scored at once through a model's numpy mirror."""


@dataclass(frozen=True)
class ExampleResult:
    correct: bool
    nll: float          # -log p of the scored targets, summed (nats)
    scored: int
    predictions: tuple[int, ...]
    prefix: int         # scored symbols predicted right before the first error

    @property
    def fine(self) -> float:
        """Grefenstette et al.'s fine accuracy: the share of scored symbols right before the first error."""
        return self.prefix / self.scored if self.scored else 1.0


def score_examples(model, examples: list[Example], batch_size: int | None = None,
                   mirror: bool = True) -> list[ExampleResult]:
    """Run each example from the initial state; predictions are the argmax at every step.
    `batch_size` sequences at a time (default: the model's `evaluation_batch`, or `MIRROR_BATCH` through the
    model's numpy mirror, which it runs where it has one (`ArrayMirror`) and `mirror` is on: no graph holds the
    steps, and its products are efficient only over many sequences)."""
    mirrored = mirror and isinstance(model, ArrayMirror) and model.array_mirror()
    scores = mirrored.scores if mirrored else partial(_graph_scores, model)
    batch_size = batch_size or (MIRROR_BATCH if mirrored else model.evaluation_batch)
    results = []
    for i in range(0, len(examples), batch_size):
        results.extend(_results(examples[i:i + batch_size], scores))
    return results


def _graph_scores(model, examples: list[Example]) -> np.ndarray:
    """Every step's output scores by DyNet's graph: (n_outputs, T, B), padded."""
    inputs, _, _ = pad(examples)
    dy.renew_cg()
    scores = [model.scores(state) for _, state in unroll(model, inputs)]
    return dy.concatenate_cols(scores).npvalue().reshape(model.n_outputs, len(inputs), len(examples))


def _results(examples: list[Example], scores) -> list[ExampleResult]:
    """Each example's result from `scores(examples)`, (n_outputs, T, B)."""
    inputs, targets, mask = pad(examples)
    values = scores(examples)
    logz = np.logaddexp.reduce(values, axis=0)                                    # (T, B)
    gold = np.take_along_axis(values, targets[None], axis=0)[0]                   # (T, B)
    nll, predicted = logz - gold, values.argmax(axis=0)
    results = []
    for b, e in enumerate(examples):
        scored = mask[:len(e), b].astype(bool)
        right = (predicted[:len(e), b] == targets[:len(e), b])[scored]
        results.append(ExampleResult(
            correct=bool(right.all()), nll=float(nll[:len(e), b][scored].sum()), scored=int(scored.sum()),
            predictions=tuple(int(p) for p in predicted[:len(e), b]),
            prefix=len(right) if right.all() else int(np.argmin(right))))
    return results


@dataclass(frozen=True)
class SizeReport:
    """Per-size results of the protocol. accuracy[n]: share of n's examples fully correct;
    fine[n]: their mean fine accuracy."""
    accuracy: dict[int, float]
    train_max_n: int
    fine: dict[int, float] = field(default_factory=dict)

    def to_dict(self) -> dict:
        solved = {n: a == 1.0 for n, a in self.accuracy.items()}
        unseen = [ok for n, ok in solved.items() if n > self.train_max_n]
        return {"percent_n_correct": 100.0 * float(np.mean(list(solved.values()))),
                "percent_unseen_n_correct": 100.0 * float(np.mean(unseen)) if unseen else float("nan"),
                "train_max_n": self.train_max_n,
                "coarse_accuracy": float(np.mean(list(self.accuracy.values()))),
                "fine_accuracy": float(np.mean(list(self.fine.values()))) if self.fine else float("nan"),
                "accuracy_by_n": {str(n): a for n, a in self.accuracy.items()},
                "fine_by_n": {str(n): a for n, a in self.fine.items()}}


@dataclass(frozen=True)
class SplitReport:
    """Per test split: the percent of examples not entirely correct, and how many there were; accuracy[n]: on the first
    split, the share of its examples of size n entirely correct (the benchmark reports plot it against the length)."""
    error: dict[str, float]
    examples: dict[str, int]
    accuracy: dict[int, float] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"error_by_split": dict(self.error), "examples_by_split": dict(self.examples),
                "accuracy_by_n": {str(n): a for n, a in self.accuracy.items()}}


def evaluate_splits(model, task: Task, splits: tuple[str, ...] | None = None, mirror: bool = True) -> SplitReport:
    """Every example of each test split (default: the task's `test_splits`), from a fresh state; `mirror` as
    `score_examples`'."""
    error, count, accuracy = {}, {}, {}
    for name in splits or task.test_splits:
        examples = task.split(name)
        results = score_examples(model, examples, mirror=mirror)
        error[name] = 100.0 * float(np.mean([not r.correct for r in results]))
        count[name] = len(results)
        if not accuracy:
            accuracy = _mean_by_n([e.n for e in examples], [r.correct for r in results])
    return SplitReport(error, count, accuracy)


def _mean_by_n(ns: list[int], values: list) -> dict[int, float]:
    """Per size n, in increasing order, the mean of its examples' values."""
    by_n: dict[int, list] = {}
    for n, v in zip(ns, values):
        by_n.setdefault(n, []).append(v)
    return {n: float(np.mean(by_n[n])) for n in sorted(by_n)}


def evaluate_sizes(model, task: Task, rng: np.random.Generator,
                   test_n: tuple[int, int] | None = None, samples: int | None = None,
                   mirror: bool = True) -> SizeReport | SplitReport:
    """The paper's test: every n of the test range, `samples` examples each, from a fresh state; for a
    task with fixed test splits, those splits (`evaluate_splits`), where `test_n` has no meaning; `mirror` as
    `score_examples`'."""
    if task.fixed_splits:                   # the experiment refuses a test range for these
        return evaluate_splits(model, task, mirror=mirror)
    lo, hi = test_n or task.protocol.test_n
    samples = samples or task.protocol.test_samples
    ns = [n for n in range(max(lo, task.min_n()), hi + 1) for _ in range(samples)]
    results = score_examples(model, [task.sample(rng, n) for n in ns], mirror=mirror)
    return SizeReport(_mean_by_n(ns, [r.correct for r in results]), task.protocol.train_n[1],
                      _mean_by_n(ns, [r.fine for r in results]))
