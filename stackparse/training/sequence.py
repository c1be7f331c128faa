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
options: incremental learning, the gradient algorithm and iterative refinement, the noises, rule insertion.

Minibatches are the streams in the order drawn (`batching` "mixed"), each padded to its longest stream; "by-length"
sorts an epoch's streams by length before cutting them into minibatches, which it takes in a random order: every
stream is still drawn as the task says (Grefenstette et al.'s lengths stay uniform), only which streams share a
minibatch changes, and the padding, a third of the steps at lengths 8..64 mixed, nearly goes.

Incremental learning is the task's curriculum (`curriculum_*`: the largest size grows every few epochs), or, with
`incremental="two-stage"`, the NSPDA paper's Algorithm 1 (`algorithm1`), which reads:

    stage 1: for N_l = 1..N_Tr: one pass over D_l = the training strings of length <= N_l  (sequential phase)
             while not converged on V [and] e_n < bound_1: a pass over D_l, e_n += 1         (random phase)
    stage 2: the same with N_l = 1..N_max (the longest training length) and bound_2          (e_n not reset)

with N_Tr `incremental_midpoint` and the bounds `incremental_stage1` and `incremental_stage2` (the paper's values
are their defaults).

Choices the text leaves open, and why:
- The loop condition is printed "not converged or e_n < bound": taken literally the bound would be a minimum and a
  run that never converges would never reach stage 2. We read it as the loop's intent, "until converged on V, at
  most up to the bound", which keeps the whole schedule within the paper's epoch cap.
- e_n counts the random phases' epochs only, as the pseudo-code increments it; the sequential passes are extra.
- "Converged on V": every validation string classified correctly, the paper's mark of
  convergence applied to V; checked before each random-phase epoch, as a while loop does.
- A pass is one trainer epoch over D_l in a random order, capped at `epoch_size` strings (the paper recipe sets it
  to the whole training set); when Algorithm 1 returns, `validate` reports `done` and the trainer stops.
- The schedule's state is the record of which epochs ended converged, saved beside the parameters, so a resumed
  run continues exactly.
"""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

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
from stackparse.training.trainer import DONE, TrainConfig

CURRICULUM = ("curriculum_start", "curriculum_step", "curriculum_every")
INCREMENTAL = ("curriculum", "two-stage")
BATCHING = ("mixed", "by-length")
STEP_TARGETS = ("label", "own")
SCHEDULE = "schedule.json"
"""Algorithm 1's record (which epochs ended converged on V), saved beside the parameters."""


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
    score_every_step: bool = setting(False, "training: every step's target counts in the loss (NSPDA eq. 15: a "
                                     "grammar task's label at each step), not only the scored ones; evaluation "
                                     "unchanged")
    step_targets: str = setting("label", "with score_every_step, the target of each step: label (the example's "
                                "last target at every step: a grammar string's label, NSPDA eq. 15 as printed) or "
                                "own (the task's own target of the step: for a grammar task whether the prefix read "
                                "so far is in the language, eq. 17's y_t read as a target per step)",
                                choices=STEP_TARGETS)
    batching: str = setting("mixed", "how an epoch's streams make minibatches: mixed (in the order drawn, each "
                            "padded to its longest stream) or by-length (sorted by length, cut into minibatches, "
                            "taken in a random order: the same streams, little padding, so more characters per "
                            "second)", choices=BATCHING)
    incremental: str = setting("curriculum", "incremental learning: curriculum (the curriculum_* growth) or "
                               "two-stage (NSPDA Algorithm 1)", choices=INCREMENTAL)
    incremental_midpoint: int = setting(14, "two-stage: N_Tr, the length up to which the first stage grows", min=1)
    incremental_stage1: int = setting(200, "two-stage: stage 1's random phase ends when validation is all "
                                      "correct or after this many random-phase epochs", min=0)
    incremental_stage2: int = setting(350, "two-stage: the same bound for stage 2, counting stage 1's "
                                      "random-phase epochs too", min=0)

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
        NoiseSettings.validate(self)             # the noise shares' order


def every_step(example: Example, targets: str) -> Example:
    """`example` with every step scored (NSPDA eq. 15), each step's target the example's last (`targets` "label":
    a string's label at every step) or its own ("own")."""
    chosen = (example.targets[-1],) * len(example) if targets == "label" else example.targets
    return dataclasses.replace(example, targets=chosen, scored=(True,) * len(example))


def curriculum_max_n(p: Protocol, epoch: int) -> int:
    """The largest size trained on at `epoch`: the paper grows n every few epochs up to the maximum
    (Joulin & Mikolov §5.1); a long transduction task can grow it by several at a time."""
    if p.curriculum_every <= 0:
        return p.train_n[1]
    return min(p.train_n[1], max(p.curriculum_start, p.train_n[0]) + p.curriculum_step * (epoch // p.curriculum_every))


def curriculum_range(p: Protocol, epoch: int) -> tuple[int, int]:
    """The sizes trained on at `epoch` by the task's curriculum: train_n[0]..curriculum_max_n."""
    return p.train_n[0], curriculum_max_n(p, epoch)


@dataclass(frozen=True)
class Step:
    """One epoch of Algorithm 1: its stage (1 or 2), phase ("sequential" or "random") and N_l, the largest
    length it trains on."""
    stage: int
    phase: str
    n_l: int


def algorithm1(epoch: int, converged: Sequence[bool], midpoint: int, n_max: int, bounds: tuple[int, int],
               n_min: int = 1) -> Step | None:
    """Epoch `epoch`'s step of two-stage incremental learning (module docstring), or None once the algorithm
    has returned. `converged[e]`: whether the model was converged on V after epoch e (needed for e < epoch);
    `midpoint` N_Tr, `n_max` the longest training length, `bounds` the random phases' e_n bounds,
    `n_min` the shortest training length (the first N_l)."""
    e = e_n = 0
    for stage, (top, bound) in enumerate(((min(midpoint, n_max), bounds[0]), (n_max, bounds[1])), 1):
        for n_l in range(n_min, top + 1):
            if e == epoch:
                return Step(stage, "sequential", n_l)
            e += 1
        while not (e > 0 and converged[e - 1]) and e_n < bound:
            if e == epoch:
                return Step(stage, "random", top)
            e, e_n = e + 1, e_n + 1
    return None


def sample_sizes(task: Task, rng: np.random.Generator, lo: int, hi: int, count: int) -> list[Example]:
    """`count` examples with sizes uniform in lo..hi."""
    return [task.sample(rng, int(n)) for n in rng.integers(max(lo, task.min_n()), hi + 1, size=count)]


class SequenceObjective:
    """Connects a task and a model (its parameters `pc`) to the trainer (`trainer.Objective`).

    Args:
        train: the trainer's settings (the minibatch size). data: the data and curriculum.
        method: the gradient method; default truncated BPTT every `train.bptt` steps ("tbptt").
        validation_seed: draws the validation examples of a task without fixed splits.
        mirror: score through the model's numpy mirror where it has one (`GradientSettings.mirror`).
    """
    criterion = "val_entropy"
    maximize = False
    unit = "chars"

    def __init__(self, task: Task, model, pc: dy.ParameterCollection, train: TrainConfig,
                 data: SequenceDataConfig, method: GradientMethod | None = None, *, validation_seed: int,
                 mirror: bool = True):
        self.task, self.model, self.pc, self.train, self.data, self.mirror = task, model, pc, train, data, mirror
        self.method = method or TruncatedBPTT(train.bptt)
        if task.fixed_splits:
            self.validation = task.split("validation")
        else:
            rng = np.random.default_rng([validation_seed, 1])
            self.validation = sample_sizes(task, rng, *task.protocol.train_n, data.validation_size)
        self.rng = np.random.default_rng([validation_seed, 4])
        self.epoch, self.epoch_examples = 0, []
        self.converged: list[bool] = []     # Algorithm 1's record: converged on V after each epoch
        self._lengths: tuple[int, int] | None = None

    def param_collection(self) -> dy.ParameterCollection:
        return self.pc

    def batches(self, epoch: int, rng: np.random.Generator) -> list[list[Example]]:
        if isinstance(self.model, Scheduled):
            self.model.start_epoch(epoch)
        self.rng, self.epoch = rng, epoch
        per_stream = self.data.stream_examples if self.task.protocol.stream else 1
        examples = self.epoch_examples = self.training_examples(epoch, rng)
        streams = [concatenate(examples[i:i + per_stream]) for i in range(0, len(examples), per_stream)]
        by_length = self.data.batching == "by-length"
        if by_length:
            streams.sort(key=len)
        b = self.train.batch_size
        batches = [streams[i:i + b] for i in range(0, len(streams), b)]
        return [batches[i] for i in rng.permutation(len(batches))] if by_length else batches

    def step(self, epoch: int) -> Step | None:
        """Algorithm 1's step at `epoch` (None: not two-stage learning, or the algorithm has returned)."""
        if self.data.incremental != "two-stage":
            return None
        lo, hi = self.lengths()
        return algorithm1(epoch, self.converged, self.data.incremental_midpoint, hi,
                          (self.data.incremental_stage1, self.data.incremental_stage2), lo)

    def lengths(self) -> tuple[int, int]:
        """The shortest and longest training lengths (Algorithm 1's N_max = maxLen(D)): of the training split of a
        task with fixed splits, else the task's training range. Read once: the noise hooks ask for the stage
        before every update, and a pass over the split each time was a large share of an online epoch
        (BENCHMARKS.md, "UORO compiled")."""
        if self._lengths is None:
            if self.task.fixed_splits:
                sizes = [e.n for e in self.task.split("train")]
                self._lengths = min(sizes), max(sizes)
            else:
                self._lengths = tuple(self.task.protocol.train_n)
        return self._lengths

    def stage(self) -> int:
        """The two-stage schedule's stage at the current epoch: 1 or 2, or 0 without it (for the hooks)."""
        step = self.step(self.epoch)
        return step.stage if step is not None else 0

    def training_examples(self, epoch: int, rng: np.random.Generator) -> list[Example]:
        """This epoch's examples, of the sizes the curriculum allows (module docstring)."""
        step = self.step(epoch)
        if step is not None:
            lo, hi = self.lengths()[0], step.n_l
        elif self.data.incremental == "two-stage":
            return []       # Algorithm 1 has returned (a resumed run past its end)
        else:
            lo, hi = curriculum_range(self.data.protocol(self.task), epoch)
        if not self.task.fixed_splits:
            return sample_sizes(self.task, rng, lo, hi, self.data.epoch_size)
        train = self.task.split("train")
        pool = [e for e in train if lo <= e.n <= hi]
        if step is None:
            pool = pool or [e for e in train if e.n <= hi]
            if not pool:
                raise UserError(f"{self.task.name}: no training example of size up to {hi}; raise curriculum_start")
        return [pool[i] for i in rng.permutation(len(pool))[:self.data.epoch_size]]

    def losses(self, batch: list[Example]):
        """(loss, scored steps) per graph, by the gradient method, each built when the trainer asks
        (after its hooks' perturbation)."""
        self.model.training = True
        if self.data.score_every_step:
            batch = [every_step(e, self.data.step_targets) for e in batch]
        return self.method.losses(self.model, batch, self.rng)

    def validate(self) -> dict[str, float]:
        """Validation metrics; with the stopping rule on training accuracy (`TrainConfig.stop_metric`), also
        `train_accuracy` over the training split; with Algorithm 1, the epoch's `stage` and `longest` training
        length N_l, and `done` once it has returned."""
        self.model.training = False
        simplified = self.model.simplify(self.validation) if isinstance(self.model, Scheduled) else {}
        results = score_examples(self.model, self.validation, mirror=self.mirror)
        scored = sum(r.scored for r in results)
        metrics = {"val_entropy": sum(r.nll for r in results) / max(scored, 1) / np.log(2),
                   "val_accuracy": float(np.mean([r.correct for r in results])),
                   "val_fine_accuracy": float(np.mean([r.fine for r in results])), **simplified}
        if self.train.stop_metric == "train_accuracy":
            metrics["train_accuracy"] = self.train_accuracy()
        if self.data.incremental == "two-stage":
            step = self.step(self.epoch)        # where the epoch just trained stands in Algorithm 1 (a budget that
            if step is not None:                # ends early says how far it got)
                metrics.update(stage=float(step.stage), longest=float(step.n_l))
            del self.converged[self.epoch:]
            self.converged.append(metrics["val_accuracy"] == 1.0)
            metrics[DONE] = float(self.step(self.epoch + 1) is None)
        return metrics

    def train_accuracy(self) -> float:
        """The share of training examples classified correctly: the whole training split of a task with
        fixed splits, else this epoch's examples."""
        examples = self.task.split("train") if self.task.fixed_splits else self.epoch_examples
        return (float(np.mean([r.correct for r in score_examples(self.model, examples, mirror=self.mirror)]))
                if examples else 0.0)

    def save(self, directory: Path) -> None:
        self.pc.save(str(Path(directory) / "params"))
        if self.data.incremental == "two-stage":
            (Path(directory) / SCHEDULE).write_text(json.dumps({"converged": self.converged}))

    def restore(self, directory: Path) -> None:
        self.pc.populate(str(Path(directory) / "params"))
        schedule = Path(directory) / SCHEDULE
        if schedule.is_file():
            self.converged = json.loads(schedule.read_text())["converged"]
