"""The objective for sequence tasks: a `Task` feeding a `SequenceModel`, trained by the shared trainer.

Training follows Joulin & Mikolov (2015, §5): unsupervised next-symbol prediction on a stream of
concatenated sequences, loss only on the scored symbols, truncated BPTT (50 steps by default) with
the hidden state carried across the cut. A minibatch is `batch_size` streams advancing in lockstep
(one DyNet batch); each stream starts from the initial state. Tasks whose protocol is not a stream
get one example per stream.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

import dynet as dy
import numpy as np

from stackparse.errors import UserError
from stackparse.evaluation.sequence import pad, score_examples
from stackparse.models.base import SequenceModel, detach, reattach
from stackparse.tasks.base import Example, Protocol, Task, concatenate
from stackparse.training.trainer import TrainConfig


@dataclass(frozen=True)
class SequenceDataConfig:
    """How much data an epoch holds and how it is cut.

    epoch_size: examples per epoch. stream_examples: examples concatenated into one stream (stream
    tasks only). validation_size: held-out examples drawn from the training sizes, for the
    validation entropy that drives the learning-rate schedule and model selection.
    curriculum_start / _step / _every: override the task's curriculum (0 = the task's own): the
    largest training size starts at `start` and grows by `step` every `every` epochs.
    """
    epoch_size: int = 2000
    stream_examples: int = 20
    validation_size: int = 200
    curriculum_start: int = 0
    curriculum_step: int = 0
    curriculum_every: int = 0

    def validate(self) -> None:
        for name in ("epoch_size", "stream_examples", "validation_size"):
            if getattr(self, name) < 1:
                raise UserError(f"--{name.replace('_', '-')} must be at least 1 (got {getattr(self, name)})")
        for name in ("curriculum_start", "curriculum_step", "curriculum_every"):
            if getattr(self, name) < 0:
                raise UserError(f"--{name.replace('_', '-')} must be 0 (the task's) or positive")

    def protocol(self, task: Task) -> Protocol:
        """The task's protocol with this configuration's curriculum overrides."""
        overrides = {name: getattr(self, name) for name in ("curriculum_start", "curriculum_step", "curriculum_every")
                     if getattr(self, name) > 0}
        return dataclasses.replace(task.protocol, **overrides)


def curriculum_max_n(p: Protocol, epoch: int) -> int:
    """The largest size trained on at `epoch`: the paper grows n every few epochs up to the maximum
    (Joulin & Mikolov §5.1); a long transduction task can grow it by several at a time."""
    if p.curriculum_every <= 0:
        return p.train_n[1]
    return min(p.train_n[1], max(p.curriculum_start, p.train_n[0]) + p.curriculum_step * (epoch // p.curriculum_every))


def sample_sizes(task: Task, rng: np.random.Generator, lo: int, hi: int, count: int) -> list[Example]:
    """`count` examples with sizes uniform in lo..hi."""
    return [task.sample(rng, int(n)) for n in rng.integers(max(lo, task.min_n()), hi + 1, size=count)]


def segment_losses(model: SequenceModel, batch: list[Example], bptt: int):
    """(loss, scored steps) per truncated-BPTT segment of `batch` (streams in lockstep, one DyNet batch).

    Each loss, built in a fresh graph, is the sum of -log p(target) over the segment's scored steps,
    divided by the number of streams; the state is carried (detached) into the next segment. The
    trainer backpropagates each one; an evaluation just sums their values.
    """
    inputs, targets, mask = pad(batch)           # each (T, B)
    steps, size = inputs.shape
    cut = bptt or steps
    carried = None
    for t0 in range(0, steps, cut):
        dy.renew_cg()
        state = model.initial_state(size, None if carried is None else reattach(carried))
        terms = []
        for t in range(t0, min(t0 + cut, steps)):
            state = model.step(state, inputs[t])
            if mask[t].any():
                nll = dy.pickneglogsoftmax_batch(model.scores(state), targets[t])
                terms.append(nll if mask[t].all() else dy.cmult(nll, reattach([mask[t][None]])[0]))
        count = int(mask[t0:t0 + cut].sum())
        if terms:
            yield dy.sum_batches(dy.esum(terms)) / size, count
        if t0 + cut < steps:
            carried = detach(model.state_tensors(state))


class SequenceObjective:
    """Connects a task and a model to the trainer (see `stackparse.training.trainer.Objective`)."""
    criterion = "val_entropy"
    maximize = False
    unit = "chars"

    def __init__(self, task: Task, model: SequenceModel, pc: dy.ParameterCollection,
                 train: TrainConfig, data: SequenceDataConfig, validation_seed: int):
        self.task, self.model, self.pc, self.train, self.data = task, model, pc, train, data
        rng = np.random.default_rng([validation_seed, 1])
        self.validation = sample_sizes(task, rng, *task.protocol.train_n, data.validation_size)

    def param_collection(self) -> dy.ParameterCollection:
        return self.pc

    def batches(self, epoch: int, rng: np.random.Generator) -> list[list[Example]]:
        self.model.start_epoch(epoch)
        per_stream = self.data.stream_examples if self.task.protocol.stream else 1
        hi = curriculum_max_n(self.data.protocol(self.task), epoch)
        examples = sample_sizes(self.task, rng, self.task.protocol.train_n[0], hi, self.data.epoch_size)
        streams = [concatenate(examples[i:i + per_stream]) for i in range(0, len(examples), per_stream)]
        b = self.train.batch_size
        return [streams[i:i + b] for i in range(0, len(streams), b)]

    def losses(self, batch: list[Example]):
        """One loss per BPTT segment (see `segment_losses`)."""
        self.model.training = True
        yield from segment_losses(self.model, batch, self.train.bptt)

    def validate(self) -> dict[str, float]:
        self.model.training = False
        simplified = self.model.simplify(self.validation)
        results = score_examples(self.model, self.validation)
        scored = sum(r.scored for r in results)
        return {"val_entropy": sum(r.nll for r in results) / max(scored, 1) / np.log(2),
                "val_accuracy": float(np.mean([r.correct for r in results])),
                "val_fine_accuracy": float(np.mean([r.fine for r in results])), **simplified}

    def save(self, directory: Path) -> None:
        self.pc.save(str(Path(directory) / "params"))

    def restore(self, directory: Path) -> None:
        self.pc.populate(str(Path(directory) / "params"))
