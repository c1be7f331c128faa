"""The objective for sequence tasks: a `Task` feeding a `SequenceModel`, trained by the shared trainer.

Training follows Joulin & Mikolov (2015, §5): unsupervised next-symbol prediction on a stream of
concatenated sequences, loss only on the scored symbols, truncated BPTT (50 steps by default) with
the hidden state carried across the cut. A minibatch is `batch_size` streams advancing in lockstep
(one DyNet batch); each stream starts from the initial state. Tasks whose protocol is not a stream
get one example per stream.

Tasks with fixed splits (`stackparse.tasks.dataset.DatasetTask`, e.g. the grammar tasks) train on
their "train" split, `epoch_size` examples per epoch drawn without repetition from those of the sizes
the curriculum allows, and validate on their "validation" split.

Training options of the NSPDA paper (Mali, Ororbia & Giles), each a setting of `SequenceDataConfig`:
- incremental learning: the curriculum overrides grow the sizes (for grammar tasks, string lengths):
  single-stage incremental learning. `curriculum_two_stage` is Algorithm 1's two stages: in the first
  half of each curriculum period the model sees only the newly added sizes, in the second half all
  sizes so far (when no example has the new sizes, the first stage uses all sizes so far too);
- the adaptive noise regularizer (Algorithm 2, `stackparse.training.noise`): `noise` > 0;
- rule insertion before training (`stackparse.training.rules`): `insert_rules` > 0;
- the stochastic learning rate: `lr_noise` > 0 multiplies each update's loss, hence its step, by a
  factor drawn uniformly in [1 - lr_noise, 1 + lr_noise]. (With SGD this is exactly a random
  learning rate around the trainer's; the logged training loss includes the factor, which is 1 on
  average. Adam, invariant to the scale of the loss, ignores it.)
- the gradient algorithm (`grad`, the paper's comparison of learning algorithms): "tbptt" is the path
  above (cut every `TrainConfig.bptt` steps, 0 = never), "bptt" the same with no cut whatever `bptt`
  says, so the truncation is one setting, `TrainConfig.bptt`; "rtrl" and "uoro" compute each
  sequence's gradient forward in time (`stackparse.training.gradients`) through the model's
  `gradient_cell` (the higher-order models rnn2, nspda2, nspda3) and hand it to the trainer as a
  `PrecomputedLoss`, one per minibatch, scaled like the BPTT loss (1 / the number of streams);
  UORO's random signs come from the epoch's generator, so a resumed run is exact;
- iterative refinement (`refine` K > 1, `stackparse.training.refinement`): each minibatch is read K
  times, each pass starting from a state corrected by the previous pass's hint; the K losses are summed.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from pathlib import Path

import dynet as dy
import numpy as np

from stackparse.errors import UserError
from stackparse.evaluation.sequence import pad, score_examples
from stackparse.models.base import SequenceModel, detach, reattach
from stackparse.models.second_order import TensorRNN
from stackparse.tasks.base import Example, Protocol, Task, concatenate
from stackparse.tasks.dataset import DatasetTask
from stackparse.training.gradients import METHODS, GradientConfig, precomputed_loss, sequence_gradient
from stackparse.training.noise import perturb
from stackparse.training.refinement import HINTS, refined_losses
from stackparse.training.rules import insert_rules
from stackparse.training.trainer import TrainConfig


@dataclass(frozen=True)
class SequenceDataConfig:
    """How much data an epoch holds and how it is cut.

    epoch_size: examples per epoch. stream_examples: examples concatenated into one stream (stream
    tasks only). validation_size: held-out examples drawn from the training sizes, for the
    validation entropy that drives the learning-rate schedule and model selection.
    curriculum_start / _step / _every: override the task's curriculum (0 = the task's own): the
    largest training size starts at `start` and grows by `step` every `every` epochs.
    curriculum_two_stage: Algorithm 1 of Mali et al.: each curriculum period first trains on the new
      sizes alone, then on all (module docstring).
    insert_rules / rule_strength: write this share of the task's PDA rules into the model before
      training (grammar tasks, NSPDA models), with weights of this size H; 0 = none.
    noise / noise_share: Algorithm 2's noise, relative to each sub-matrix's size, on this share of
      the higher-order models' transition sub-matrices at every update; 0 = none.
    lr_noise: the stochastic learning rate: each update's step times a factor uniform in
      [1 - lr_noise, 1 + lr_noise]; 0 = none.
    grad: the gradient algorithm, one of `stackparse.training.gradients.METHODS`: "tbptt" cuts every
      `TrainConfig.bptt` steps (0 = never), "bptt" never cuts, "rtrl" and "uoro" run forward in time
      (higher-order models; module docstring).
    refine / refine_hint / refine_rate: iterative refinement, K passes over each minibatch (1 = off),
      the hint that corrects each pass's start ("error" or "state") and its step size
      (`stackparse.training.refinement`).
    """
    epoch_size: int = 2000
    stream_examples: int = 20
    validation_size: int = 200
    curriculum_start: int = 0
    curriculum_step: int = 0
    curriculum_every: int = 0
    curriculum_two_stage: bool = False
    insert_rules: float = 0.0
    rule_strength: float = 8.0
    noise: float = 0.0
    noise_share: float = 0.5
    lr_noise: float = 0.0
    grad: str = "tbptt"
    refine: int = 1
    refine_hint: str = "error"
    refine_rate: float = 1.0

    def validate(self) -> None:
        for name in ("epoch_size", "stream_examples", "validation_size"):
            if getattr(self, name) < 1:
                raise UserError(f"--{name.replace('_', '-')} must be at least 1 (got {getattr(self, name)})")
        for name in ("curriculum_start", "curriculum_step", "curriculum_every"):
            if getattr(self, name) < 0:
                raise UserError(f"--{name.replace('_', '-')} must be 0 (the task's) or positive")
        checks = [(0 <= self.insert_rules <= 1, "--insert-rules must be in [0, 1]"),
                  (self.rule_strength > 0, "--rule-strength must be positive"),
                  (self.noise >= 0, "--noise must be 0 (off) or positive"),
                  (0 < self.noise_share <= 1, "--noise-share must be in (0, 1]"),
                  (0 <= self.lr_noise < 1, "--lr-noise must be in [0, 1)"),
                  (self.grad in METHODS, f"--grad must be one of {', '.join(METHODS)} (got {self.grad!r})"),
                  (self.refine >= 1, f"--refine must be at least 1 (1 = off; got {self.refine})"),
                  (self.refine_hint in HINTS, f"--refine-hint must be one of {', '.join(HINTS)}"),
                  (self.refine_rate > 0, "--refine-rate must be positive"),
                  (self.refine == 1 or self.grad == "bptt", "--refine reads whole sequences: it needs --grad bptt")]
        for ok, message in checks:
            if not ok:
                raise UserError(message)

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
                terms.append(masked_nll(model.scores(state), targets[t], mask[t]))
        count = int(mask[t0:t0 + cut].sum())
        if terms:
            yield dy.sum_batches(dy.esum(terms)) / size, count
        if t0 + cut < steps:
            carried = detach(model.state_tensors(state))


def masked_nll(scores: dy.Expression, targets: np.ndarray, mask: np.ndarray) -> dy.Expression:
    """-log softmax(scores)[target] of each stream at one step, 0 where the step is not scored.

    Args:
        scores: (n_outputs,) x B. targets: B ids. mask: B weights, 1 = scored, 0 = not.
    Returns:
        (1,) x B.
    """
    nll = dy.pickneglogsoftmax_batch(scores, targets)
    return nll if mask.all() else dy.cmult(nll, reattach([mask[None]])[0])


def online_losses(model, batch: list[Example], config: GradientConfig, rng: np.random.Generator):
    """The minibatch's loss and gradient by RTRL or UORO (`stackparse.training.gradients`), each stream
    from the initial state through the model's `gradient_cell`, summed and divided by the number of
    streams as `segment_losses` divides them. A generator, so that the gradient is computed when the
    trainer asks for it (after the noise regularizer's perturbation).

    Yields:
        One (PrecomputedLoss, scored steps).
    """
    cell, params = model.gradient_cell()
    results = [sequence_gradient(config, cell, params, e.inputs, [y if s else None for y, s in zip(e.targets, e.scored)],
                                 rng) for e in batch]
    yield precomputed_loss(params, results, 1 / len(batch)), sum(sum(e.scored) for e in batch)


class SequenceObjective:
    """Connects a task and a model to the trainer (see `stackparse.training.trainer.Objective`)."""
    criterion = "val_entropy"
    maximize = False
    unit = "chars"

    def __init__(self, task: Task, model: SequenceModel, pc: dy.ParameterCollection,
                 train: TrainConfig, data: SequenceDataConfig, validation_seed: int):
        self.task, self.model, self.pc, self.train, self.data = task, model, pc, train, data
        rng = np.random.default_rng([validation_seed, 1])
        if isinstance(task, DatasetTask):
            self.validation = task.split("validation")
        else:
            self.validation = sample_sizes(task, rng, *task.protocol.train_n, data.validation_size)
        if data.insert_rules > 0:
            insert_rules(task, model, data.insert_rules, data.rule_strength, np.random.default_rng([validation_seed, 3]))
        if data.noise > 0 and not isinstance(model, TensorRNN):
            raise UserError(f"--noise perturbs weight tensors: it needs a higher-order model, not {model.name}")
        if data.grad in ("rtrl", "uoro") or data.refine > 1:
            what = f"--grad {data.grad}" if data.refine == 1 else "--refine"
            if not isinstance(model, TensorRNN):
                raise UserError(f"{what} needs a higher-order model (rnn2, nspda2, nspda3), not {model.name}")
            if data.refine == 1:
                model.gradient_cell()             # a one-line error for a model whose state cannot be packed
        self.rng = np.random.default_rng([validation_seed, 4])

    def param_collection(self) -> dy.ParameterCollection:
        return self.pc

    def batches(self, epoch: int, rng: np.random.Generator) -> list[list[Example]]:
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
        if not isinstance(self.task, DatasetTask):
            return sample_sizes(self.task, rng, lo, hi, self.data.epoch_size)
        train = self.task.split("train")
        pool = [e for e in train if lo <= e.n <= hi] or [e for e in train if e.n <= hi]
        if not pool:
            raise UserError(f"{self.task.name}: no training example of size up to {hi}; raise --curriculum-start")
        return [pool[i] for i in rng.permutation(len(pool))[:self.data.epoch_size]]

    def losses(self, batch: list[Example]):
        """One loss per BPTT segment (see `segment_losses`), computed at weights perturbed by the
        noise regularizer when it is on (the noise is taken off after the trainer's update), and
        scaled by the stochastic learning rate's factor when that is on."""
        self.model.training = True
        segments = self.segments(batch)
        while True:
            noise = perturb(self.model.weight_tensors(), self.data.noise, self.data.noise_share, self.rng) \
                if self.data.noise > 0 else None
            item = next(segments, None)
            if item is not None:
                loss, units = item
                if self.data.lr_noise > 0:
                    loss = loss * float(self.rng.uniform(1 - self.data.lr_noise, 1 + self.data.lr_noise))
                yield loss, units                          # the trainer backpropagates and updates here
            if noise is not None:
                noise.remove()
            if item is None:
                return

    def segments(self, batch: list[Example]):
        """(loss, scored steps) of each graph of `batch`, by the configured gradient algorithm."""
        d = self.data
        if d.grad in ("rtrl", "uoro"):
            return online_losses(self.model, batch, GradientConfig(d.grad), self.rng)
        if d.refine > 1:
            return refined_losses(self.model, batch, d.refine, d.refine_hint, d.refine_rate)
        return segment_losses(self.model, batch, self.train.bptt if d.grad == "tbptt" else 0)

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
