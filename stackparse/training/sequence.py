"""The objective for sequence tasks: a `Task` feeding a sequence model, trained by the shared trainer.

Training follows Joulin & Mikolov (2015, §5): next-symbol prediction on a stream of concatenated sequences, loss
on the scored symbols only, truncated BPTT (50 steps by default) carrying the state across the cut. A minibatch
is `batch_size` streams in lockstep (one DyNet batch), each from the initial state; a task whose protocol is not a
stream gets one example per stream. A task with fixed splits (grammar tasks) trains on "train", `epoch_size`
examples per epoch drawn without repetition among the sizes the curriculum allows, and validates on "validation".

The training schemes are pieces an experiment composes (none is switched on here):

    method = gradient_method(settings, model, train.bptt)             # stackparse.training.methods
    objective = SequenceObjective(task, model, pc, train, settings, method, validation_seed=seed)
    insert_rules(model, pda, settings, seed)                           # stackparse.training.rules
    Trainer(train, build, hooks=lambda o: hooks_for(settings, o.model))  # stackparse.training.noise

`settings` is a `SequenceTraining`: the data (`SequenceDataConfig`) and each scheme's settings, the NSPDA paper's
options: incremental learning (Algorithm 1's two stages: the first half of each curriculum period sees only the
newly added sizes, or all so far when no example has them; the second half all so far), the gradient algorithm and
iterative refinement, the noises, rule insertion.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from pathlib import Path

import dynet as dy
import numpy as np

from stackparse.config import check, setting
from stackparse.errors import UserError
from stackparse.evaluation.sequence import score_examples
from stackparse.models.capabilities import Scheduled
from stackparse.sequences import Example, concatenate
from stackparse.tasks.base import Protocol, Task
from stackparse.training.methods import GradientMethod, GradientSettings, TruncatedBPTT
from stackparse.training.noise import NoiseSettings
from stackparse.training.rules import RuleInsertion
from stackparse.training.trainer import TrainConfig

CURRICULUM = ("curriculum_start", "curriculum_step", "curriculum_every")


@dataclass(frozen=True)
class SequenceDataConfig:
    epoch_size: int = setting(2000, "examples per epoch", min=1)
    stream_examples: int = setting(20, "examples concatenated into one training stream (stream tasks)", min=1)
    validation_size: int = setting(200, "validation examples (drawn from the training sizes), for the "
                                   "validation entropy that drives the schedule and model selection", min=1)
    curriculum_start: int = setting(0, "curriculum: the largest training size at first (0 = the task's own "
                                    "curriculum)", min=0)
    curriculum_step: int = setting(0, "curriculum: sizes added each time it grows (0 = the task's)", min=0)
    curriculum_every: int = setting(0, "curriculum: epochs between growths (0 = the task's)", min=0)
    curriculum_two_stage: bool = setting(False, "incremental learning in two stages (NSPDA Algorithm 1): each "
                                         "curriculum period trains first on the new sizes alone, then on all")

    def validate(self) -> None:
        check(self)

    def protocol(self, task: Task) -> Protocol:
        """The task's protocol with this configuration's curriculum overrides."""
        overrides = {name: getattr(self, name) for name in CURRICULUM if getattr(self, name) > 0}
        return dataclasses.replace(task.protocol, **overrides)


@dataclass(frozen=True)
class SequenceTraining(GradientSettings, NoiseSettings, RuleInsertion, SequenceDataConfig):
    """The data and each training scheme's settings; saved flat as one "data" object (fields in the
    order of the classes, last to first)."""

    def validate(self) -> None:
        GradientSettings.validate(self)          # check(self) over every field, and refinement's cross-check


def curriculum_max_n(p: Protocol, epoch: int) -> int:
    """The largest size trained on at `epoch`: the paper grows n every few epochs up to the maximum
    (Joulin & Mikolov §5.1); a long transduction task can grow it by several at a time."""
    if p.curriculum_every <= 0:
        return p.train_n[1]
    return min(p.train_n[1], max(p.curriculum_start, p.train_n[0]) + p.curriculum_step * (epoch // p.curriculum_every))


def curriculum_range(p: Protocol, epoch: int, two_stage: bool) -> tuple[int, int]:
    """The sizes trained on at `epoch`: train_n[0]..curriculum_max_n, or, in the first stage of a
    two-stage curriculum period (Algorithm 1), only the sizes that period added."""
    hi = curriculum_max_n(p, epoch)
    if two_stage and p.curriculum_every > 0 and epoch >= p.curriculum_every \
            and epoch % p.curriculum_every < math.ceil(p.curriculum_every / 2):
        previous = curriculum_max_n(p, epoch - p.curriculum_every)
        if previous < hi:
            return previous + 1, hi
    return p.train_n[0], hi


def sample_sizes(task: Task, rng: np.random.Generator, lo: int, hi: int, count: int) -> list[Example]:
    """`count` examples with sizes uniform in lo..hi."""
    return [task.sample(rng, int(n)) for n in rng.integers(max(lo, task.min_n()), hi + 1, size=count)]


class SequenceObjective:
    """Connects a task and a model (its parameters `pc`) to the trainer (`trainer.Objective`).

    Args:
        train: the trainer's settings (the minibatch size). data: the data and curriculum.
        method: the gradient method; default truncated BPTT every `train.bptt` steps ("tbptt").
        validation_seed: draws the validation examples of a task without fixed splits.
    """
    criterion = "val_entropy"
    maximize = False
    unit = "chars"

    def __init__(self, task: Task, model, pc: dy.ParameterCollection, train: TrainConfig,
                 data: SequenceDataConfig, method: GradientMethod | None = None, *, validation_seed: int):
        self.task, self.model, self.pc, self.train, self.data = task, model, pc, train, data
        self.method = method or TruncatedBPTT(train.bptt)
        if task.fixed_splits:
            self.validation = task.split("validation")
        else:
            rng = np.random.default_rng([validation_seed, 1])
            self.validation = sample_sizes(task, rng, *task.protocol.train_n, data.validation_size)
        self.rng = np.random.default_rng([validation_seed, 4])

    def param_collection(self) -> dy.ParameterCollection:
        return self.pc

    def batches(self, epoch: int, rng: np.random.Generator) -> list[list[Example]]:
        if isinstance(self.model, Scheduled):
            self.model.start_epoch(epoch)
        self.rng = rng
        per_stream = self.data.stream_examples if self.task.protocol.stream else 1
        examples = self.training_examples(epoch, rng)
        streams = [concatenate(examples[i:i + per_stream]) for i in range(0, len(examples), per_stream)]
        b = self.train.batch_size
        return [streams[i:i + b] for i in range(0, len(streams), b)]

    def training_examples(self, epoch: int, rng: np.random.Generator) -> list[Example]:
        """This epoch's examples, of the sizes the curriculum allows (module docstring)."""
        lo, hi = curriculum_range(self.data.protocol(self.task), epoch, self.data.curriculum_two_stage)
        if not self.task.fixed_splits:
            return sample_sizes(self.task, rng, lo, hi, self.data.epoch_size)
        train = self.task.split("train")
        pool = [e for e in train if lo <= e.n <= hi] or [e for e in train if e.n <= hi]
        if not pool:
            raise UserError(f"{self.task.name}: no training example of size up to {hi}; raise curriculum_start")
        return [pool[i] for i in rng.permutation(len(pool))[:self.data.epoch_size]]

    def losses(self, batch: list[Example]):
        """(loss, scored steps) per graph, by the gradient method, each built when the trainer asks
        (after its hooks' perturbation)."""
        self.model.training = True
        return self.method.losses(self.model, batch, self.rng)

    def validate(self) -> dict[str, float]:
        self.model.training = False
        simplified = self.model.simplify(self.validation) if isinstance(self.model, Scheduled) else {}
        results = score_examples(self.model, self.validation)
        scored = sum(r.scored for r in results)
        return {"val_entropy": sum(r.nll for r in results) / max(scored, 1) / np.log(2),
                "val_accuracy": float(np.mean([r.correct for r in results])),
                "val_fine_accuracy": float(np.mean([r.fine for r in results])), **simplified}

    def save(self, directory: Path) -> None:
        self.pc.save(str(Path(directory) / "params"))

    def restore(self, directory: Path) -> None:
        self.pc.populate(str(Path(directory) / "params"))
