"""Training speed: characters per second of the shared trainer's inner loop, by batch size.

A character is one input symbol of a training stream (padding excluded), the unit in which the reference C++ code's
speed is quoted. The measure runs the task's and model's own training (`SequenceExperiment.defaults`: its optimizer,
truncation, gradient algorithm and data options), at the batch size measured, on the full training range of sizes
(the curriculum's last stage), for a fixed wall time per batch size.
"""
from __future__ import annotations

import dataclasses
import itertools
import time
from dataclasses import dataclass

import dynet as dy
import numpy as np

from stackparse.experiments.sequence import SequenceExperiment, SequenceSettings
from stackparse.training.trainer import OPTIMIZERS, Trainer


@dataclass(frozen=True)
class Speed:
    grad: str
    refine: int
    batch_size: int
    chars: int
    seconds: float

    @property
    def chars_per_s(self) -> float:
        return self.chars / self.seconds


def training_speed(task: str, model: str, model_config, batch_size: int, seconds: float = 20.0,
                   seed: int = 1, grad: str = "", refine: int | None = None, batching: str | None = None,
                   mirror: bool | None = None) -> Speed:
    """Train for about `seconds` (whole minibatches) with the trainer's inner loop and count the
    characters processed; `grad`: the gradient algorithm, "" = the task's training's; `refine`: K of
    iterative refinement, None = the task's training's (1 with tbptt, which does not refine); `batching`:
    how streams make minibatches (`SequenceDataConfig.batching`), None = the task's training's; `mirror`: whether a
    model's numpy mirror computes the gradient where it has one (`GradientSettings.mirror`), None = the task's
    training's."""
    defaults = SequenceExperiment.defaults(task, model)
    train = dataclasses.replace(defaults.train, batch_size=batch_size, seed=seed)
    grad = grad or defaults.data.grad
    passes = 1 if grad == "tbptt" else defaults.data.refine if refine is None else refine
    mirror = defaults.data.mirror if mirror is None else mirror
    algorithm = {"grad": grad, "refine": passes, "batching": batching or defaults.data.batching, "mirror": mirror}
    # all lengths at once (the curriculum's last stage): Algorithm 1's stages follow the epochs' results
    data = dataclasses.replace(defaults.data, validation_size=1, incremental="curriculum", **algorithm)
    experiment = SequenceExperiment(SequenceSettings(task, model, model_config, train, data))
    dy.reset_random_seed(seed)
    objective = experiment.build(seed)
    optimizer = OPTIMIZERS[train.optimizer](objective.param_collection(), train.lr)
    optimizer.set_clip_threshold(train.clip)
    rng, last_stage = np.random.default_rng(seed), experiment.task.protocol.train_n[1]
    endless = itertools.chain.from_iterable(objective.batches(last_stage, rng) for _ in itertools.count())
    chars, start = [], time.perf_counter()
    Trainer(train, experiment.build, progress=False).run_epoch(objective, optimizer, _until(endless, seconds, chars))
    return Speed(data.grad, data.refine, batch_size, sum(chars), time.perf_counter() - start)


def _until(batches, seconds: float, chars: list[int]):
    """`batches` until `seconds` have passed (whole minibatches); the characters of each go to `chars`."""
    start = time.perf_counter()
    for batch in batches:
        chars.append(sum(len(stream) for stream in batch))
        yield batch
        if time.perf_counter() - start >= seconds:
            return
