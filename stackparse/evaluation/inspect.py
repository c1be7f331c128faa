"""The step-by-step table of Joulin & Mikolov (2015), Table 3: what a trained model does on one sequence.

One row per input symbol: the symbol read, the next one, the prediction, the probability of the true
next symbol, whether it is scored, then the model's `trace` of its memory (Stack and List RNNs: each
memory's most probable action and the value on its top or under its head; -1 is empty).
"""
from __future__ import annotations

from dataclasses import dataclass

import dynet as dy
import numpy as np

from stackparse.errors import UserError
from stackparse.sequences import Example, unroll
from stackparse.tasks.base import Task


@dataclass(frozen=True)
class Step:
    current: str
    next: str
    prediction: str
    probability: float          # p(next)
    scored: bool
    trace: tuple[tuple[str, str], ...]


def trace_example(model, task: Task, example: Example) -> list[Step]:
    """Run `example` from the model's initial state (evaluation mode) and record every step."""
    dy.renew_cg()
    model.training = False
    steps = []
    for t, state in unroll(model, np.array(example.inputs)[:, None]):          # (T, 1): one stream
        symbol, target = example.inputs[t], example.targets[t]
        probabilities = dy.softmax(model.scores(state)).npvalue()
        steps.append(Step(task.symbols[symbol], task.outputs[target], task.outputs[int(probabilities.argmax())],
                          float(probabilities[target]), bool(example.scored[t]), tuple(model.trace(state))))
    return steps


def format_steps(steps: list[Step]) -> str:
    """A markdown table in the layout of the paper's Table 3; scored targets are marked *."""
    extra = [name for name, _ in steps[0].trace] if steps else []
    header = ["current", "next", "prediction", "proba(next)", *extra]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for s in steps:
        cells = [s.current, s.next + ("*" if s.scored else ""), s.prediction, f"{s.probability:.2f}",
                 *(value for _, value in s.trace)]
        lines.append("| " + " | ".join(cells) + " |")
    correct = all(s.prediction == s.next for s in steps if s.scored)
    return "\n".join(lines) + f"\n\n* = scored (deterministic) target; sequence {'correct' if correct else 'wrong'}\n"


def sample_for_inspection(task: Task, n: int, seed: int) -> Example:
    """A sequence of size n of `task`, drawn from (seed, n); a one-line error where the task has none (a^n b^n
    has no string of odd length, a pattern task needs n at least its least)."""
    try:
        return task.sample(np.random.default_rng([seed, n]), n)
    except ValueError as e:
        raise UserError(f"{e}: choose another size n") from None
