"""Training speed: characters per second of the shared trainer's inner loop, by batch size.

A character is one input symbol of a training stream (padding excluded), the unit in which the
reference C++ code's speed is quoted. The measure runs the objective's truncated-BPTT segments, their
backward passes and SGD updates, on the full training range of sizes (the curriculum's last stage),
for a fixed wall time per batch size.
"""
from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass

import dynet as dy
import numpy as np

from stackparse.models import get_model_class
from stackparse.tasks import get_task
from stackparse.training.sequence import SequenceDataConfig, SequenceObjective
from stackparse.training.trainer import OPTIMIZERS, TrainConfig


@dataclass(frozen=True)
class Speed:
    batch_size: int
    chars: int
    seconds: float

    @property
    def chars_per_s(self) -> float:
        return self.chars / self.seconds


def training_speed(task: str, model: str, model_config: dict, batch_size: int, seconds: float = 20.0,
                   seed: int = 1, data: SequenceDataConfig | None = None) -> Speed:
    """Train for about `seconds` (whole minibatches) and count the characters processed; `data` holds
    the objective's training options (e.g. `grad`, the gradient algorithm; default: the defaults)."""
    task_obj, train = get_task(task), TrainConfig(batch_size=batch_size, seed=seed)
    dy.reset_random_seed(seed)
    pc = dy.ParameterCollection()
    net = get_model_class(model)(pc, get_model_class(model).Config(**model_config), len(task_obj.symbols),
                                 len(task_obj.outputs))
    data = dataclasses.replace(data or SequenceDataConfig(), validation_size=1)
    objective = SequenceObjective(task_obj, net, pc, train, data, seed)
    optimizer = OPTIMIZERS[train.optimizer](pc, train.lr)
    optimizer.set_clip_threshold(train.clip)
    rng, last_stage = np.random.default_rng(seed), task_obj.protocol.train_n[1]
    chars, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        for batch in objective.batches(last_stage, rng):
            for loss, _ in objective.losses(batch):
                loss.value()
                loss.backward()
                optimizer.update()
            chars += sum(len(stream) for stream in batch)
            if time.perf_counter() - start >= seconds:
                break
    return Speed(batch_size, chars, time.perf_counter() - start)
