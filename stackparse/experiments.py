"""One sequence experiment: a task, a model and the shared trainer, then the task's test protocol.

`run_experiment` writes into its output directory `config.json` (every setting), the trainer's
files (`best/` with the parameters, `run-*/checkpoint/`, `log.jsonl`) and `metrics.json`.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path

import dynet as dy
import numpy as np

from stackparse.config import from_dict, to_dict, write_json, write_run_config
from stackparse.errors import UserError
from stackparse.evaluation.sequence import evaluate_sizes
from stackparse.models import get_model_class
from stackparse.tasks import get_task
from stackparse.tasks.dataset import DatasetTask
from stackparse.training import TrainConfig, Trainer
from stackparse.training.sequence import SequenceDataConfig, SequenceObjective


@dataclass(frozen=True)
class ExperimentConfig:
    """Everything that defines a run; saved as `config.json` beside the model and its metrics.

    model_config holds the chosen model's own settings dataclass, as a dict (models differ).
    test_n overrides the task's test range (None = the task's protocol).
    """
    task: str
    model: str
    model_config: dict = field(default_factory=dict)
    train: TrainConfig = TrainConfig()
    data: SequenceDataConfig = SequenceDataConfig()
    test_n: tuple[int, int] | None = None

    def validate(self) -> None:
        task = get_task(self.task)
        self.model_settings().validate()
        self.train.validate()
        self.data.validate()
        if isinstance(task, DatasetTask) and self.test_n is not None:
            raise UserError(f"{task.name} is tested on its fixed splits ({', '.join(task.test_splits)}): "
                            f"a test range does not apply")
        lo, hi = self.test_n or task.protocol.test_n
        if lo < 1 or hi < lo:
            raise UserError(f"test range {lo}..{hi} is empty or not positive")
        if hi < task.protocol.train_n[1]:
            raise UserError(f"test range {lo}..{hi} ends below the training range "
                            f"{task.protocol.train_n[0]}..{task.protocol.train_n[1]}")

    def model_settings(self):
        return from_dict(get_model_class(self.model).Config, self.model_config)


# The training each kind of task gets unless the command line says otherwise (the other kinds: the
# defaults of TrainConfig and SequenceDataConfig, Joulin & Mikolov's protocol).
# Transduction (Grefenstette et al. 2015, §4): the paper trains with RMSProp, batches of 10 and
# clipping at 1 for "an unbounded number of steps"; on this machine Adam at a constant 0.003 (in
# 25-second trials of the stack on reversal of lengths 8-16, 0.003 had learnt it after 12,000
# sequences and 0.01 had not after 18,000), full BPTT, epochs of 2,000 sequences. Two additions
# make long sequences learnable in minutes: a curriculum on the length (8-16 first, 8 more each
# epoch; without it the neural stack had not learnt reversal on 8-64 after 12 minutes: coarse 0.0
# on 65-128), and a moving average of the parameters (constant-rate Adam made validation swing
# between 0.25 and 0.88 of the sequences right from one epoch to the next; averaged, it climbed to
# 1.0 and stayed: BENCHMARKS.md, issue 5). Stop 5 epochs after the last improvement, or after 10 minutes of training.
TRAINING_BY_KIND: dict[str, tuple[TrainConfig, SequenceDataConfig]] = {
    "transduction": (TrainConfig(batch_size=10, bptt=0, optimizer="adam", lr=0.003, lr_schedule="constant",
                                 clip=1.0, epochs=100, patience=5, max_minutes=10.0, average=0.995),
                     SequenceDataConfig(epoch_size=2000, validation_size=200, curriculum_start=16,
                                        curriculum_step=8, curriculum_every=1)),
}


def default_settings(task: str) -> tuple[TrainConfig, SequenceDataConfig]:
    """The trainer's and the data's settings a task trains with by default (see TRAINING_BY_KIND)."""
    return TRAINING_BY_KIND.get(get_task(task).kind, (TrainConfig(), SequenceDataConfig()))


def load_experiment(run_dir: Path | str):
    """The config and the trained model (best parameters) of a finished run directory."""
    run_dir = Path(run_dir)
    if not (run_dir / "config.json").is_file() or not (run_dir / "best" / "params").is_file():
        raise UserError(f"{run_dir}: not a finished run (config.json or best/params missing)")
    config = from_dict(ExperimentConfig, json.loads((run_dir / "config.json").read_text()))
    objective = build_objective(config, seed=config.train.seed)
    objective.restore(run_dir / "best")
    return config, objective


def build_objective(config: ExperimentConfig, seed: int) -> SequenceObjective:
    task = get_task(config.task)
    pc = dy.ParameterCollection()
    model = get_model_class(config.model)(pc, config.model_settings(), len(task.symbols), len(task.outputs))
    return SequenceObjective(task, model, pc, config.train, config.data, validation_seed=config.train.seed)


def run_experiment(config: ExperimentConfig, out: Path | str, resume: bool = False,
                   progress: bool = True) -> dict:
    """Train with the shared trainer, reload the best model and run the task's test protocol.

    Returns the metrics also written to `out/metrics.json`.
    """
    config.validate()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    write_run_config(out / "config.json", to_dict(config), resume)
    start = time.perf_counter()
    result = Trainer(config.train, lambda seed: build_objective(config, seed), progress).fit(out, resume)
    train_seconds = time.perf_counter() - start
    _, objective = load_experiment(out)
    report = evaluate_sizes(objective.model, objective.task, np.random.default_rng([config.train.seed, 2]),
                            config.test_n)
    metrics = {"task": config.task, "model": config.model, "seed": config.train.seed,
               **report.to_dict(), "best_restart": result.restart, "best_epoch": result.epoch,
               "validation": result.metrics, "train_seconds": train_seconds}
    write_json(out / "metrics.json", metrics)
    return metrics
