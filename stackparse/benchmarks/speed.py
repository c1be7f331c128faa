"""Training speed: characters per second of the shared trainer's inner loop, by batch size.

A character is one input symbol of a training stream (padding excluded), the unit in which the reference C++ code's
speed is quoted. The measure runs the objective's truncated-BPTT segments, their backward passes and SGD updates, on the
full training range of sizes (the curriculum's last stage), for a fixed wall time per batch size.
"""
from __future__ import annotations

import dataclasses
import itertools
import time
from dataclasses import dataclass

import dynet as dy
import numpy as np

from stackparse.experiments.sequence import SequenceExperiment, SequenceSettings
from stackparse.training.sequence import SequenceTraining
from stackparse.training.trainer import OPTIMIZERS, TrainConfig, Trainer


@dataclass(frozen=True)
class Speed:
    batch_size: int
    chars: int
    seconds: float

    @property
    def chars_per_s(self) -> float:
        return self.chars / self.seconds


def training_speed(task: str, model: str, model_config: dict, batch_size: int, seconds: float = 20.0,
                   seed: int = 1, data: SequenceTraining = SequenceTraining()) -> Speed:
    """Train for about `seconds` (whole minibatches) with the trainer's inner loop and count the
    characters processed; `data`: the objective's training options (e.g. `grad`)."""
    train = TrainConfig(batch_size=batch_size, seed=seed)
    data = dataclasses.replace(data, validation_size=1)
    experiment = SequenceExperiment(SequenceSettings(task, model, model_config, train, data))
    dy.reset_random_seed(seed)
    objective = experiment.build(seed)
    optimizer = OPTIMIZERS[train.optimizer](objective.param_collection(), train.lr)
    optimizer.set_clip_threshold(train.clip)
    rng, last_stage = np.random.default_rng(seed), experiment.task.protocol.train_n[1]
    endless = itertools.chain.from_iterable(objective.batches(last_stage, rng) for _ in itertools.count())
    chars, start = [], time.perf_counter()
    Trainer(train, experiment.build, progress=False).run_epoch(objective, optimizer, _until(endless, seconds, chars))
    return Speed(batch_size, sum(chars), time.perf_counter() - start)


def _until(batches, seconds: float, chars: list[int]):
    """`batches` until `seconds` have passed (whole minibatches); the characters of each go to `chars`."""
    start = time.perf_counter()
    for batch in batches:
        chars.append(sum(len(stream) for stream in batch))
        yield batch
        if time.perf_counter() - start >= seconds:
            return
