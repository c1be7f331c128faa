"""The one experiment driver: settings saved, the shared trainer, the best model restored, the test.

Every workload (a sequence task, the treebank language model, the parser, the example tagger) is an
`Experiment`; `run` writes into its output directory `config.json` (every setting), the trainer's
files (`best/` with the parameters, `run-*/checkpoint/`, `log.jsonl`) and `metrics.json`.
"""
from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Protocol

from stackparse.config import write_json, write_run_config
from stackparse.errors import UserError
from stackparse.training.trainer import Objective, TrainConfig, Trainer


class Experiment(Protocol):
    """What `run` needs from a workload: `settings` (a frozen settings dataclass, saved as config.json),
    `train_config` (the shared trainer's settings, part of them), optionally `hooks(objective) ->
    list` of trainer hooks (`stackparse.training.trainer.Hook`) for each restart, and optionally `starts() -> list`,
    (trainer settings, builder) per start of its model, which the restarts go through in turn (else `build` builds
    every restart)."""
    settings: object
    train_config: TrainConfig

    def build(self, seed: int) -> Objective:
        """A fresh objective (new parameters) for one restart; DyNet's seed is set just before."""

    def test(self, objective: Objective) -> dict:
        """The experiment's test protocol on a trained objective: its metrics."""


class Kind:
    """The base of the registered experiment kinds: `name`, `Settings` (the settings dataclass), built
    from settings that are validated first; the trainer's settings are `settings.train`."""
    name: str
    Settings: type

    def __init__(self, settings):
        settings.validate()
        self.settings = settings

    @property
    def train_config(self) -> TrainConfig:
        return self.settings.train


def run(experiment: Experiment, out: Path | str, resume: bool = False, progress: bool = True,
        force: bool = False) -> dict:
    """Train with the shared trainer, restore the best parameters into the objective that trained
    them, and test it.

    Args:
        out: the run directory (see the module docstring).
        resume: continue an interrupted run in `out`; its settings must be the run's own.
        progress: the trainer's progress bar and a line per epoch.
        force: replace a run already in `out` (without it, or `resume`, that is an error: nothing
          finished is ever erased by mistake).
    Returns:
        The test's metrics with the training's (best restart and epoch, its validation metrics,
        seconds, and `diverged`: where and why the best restart diverged, if it did), also written to
        `out/metrics.json`.
    """
    out = Path(out)
    if (out / "config.json").exists() and not resume:
        if not force:
            raise UserError(f"{out} holds a run already: --resume continues it, --force replaces it, "
                            f"or give another --out")
        _erase_run(out)
    out.mkdir(parents=True, exist_ok=True)
    write_run_config(out / "config.json", experiment.settings, resume)
    start = time.perf_counter()
    starts = experiment.starts() if hasattr(experiment, "starts") else experiment.build
    trainer = Trainer(experiment.train_config, starts, progress, hooks=getattr(experiment, "hooks", None))
    result = trainer.fit(out, resume)
    seconds = time.perf_counter() - start
    result.objective.restore(result.model_dir)
    metrics = {**experiment.test(result.objective), "best_restart": result.restart, "best_epoch": result.epoch,
               "validation": result.metrics, "train_seconds": seconds,
               **({"diverged": result.diverged} if result.diverged else {}),
               **convergence(out / "log.jsonl", experiment.train_config, result.restart, result.objective.unit)}
    write_json(out / "metrics.json", metrics)
    return metrics


def convergence(log: Path, train: TrainConfig, restart: int, unit: str) -> dict:
    """With a stopping rule (`TrainConfig.stop_metric`): `converged_epoch`, the first epoch of `restart` whose
    metric reached `stop_at` (None if none did), and `converged_{unit}`, the units trained on until then (the
    NSPDA paper's convergence, in epochs and in characters: its Tables 1 and 2); and `trained_epoch` and
    `trained_{unit}`, the epochs and units of the whole restart, which bound a convergence never reached from below
    (the paper's own ">200000")."""
    if not train.stop_metric:
        return {}
    trained, epoch, last, total = 0.0, None, 0, 0.0
    for row in (json.loads(line) for line in log.read_text().splitlines() if line.strip()):
        if row.get("restart", 1) != restart:
            continue
        total += row.get(f"train_{unit}_per_s", 0.0) * row.get("train_seconds", 0.0)
        last = row["epoch"]
        if epoch is None:
            trained = total
            if row.get(train.stop_metric, float("-inf")) >= train.stop_at:
                epoch = row["epoch"]
    return {"converged_epoch": epoch, f"converged_{unit}": round(trained) if epoch is not None else None,
            "trained_epoch": last, f"trained_{unit}": round(total)}


def _erase_run(out: Path) -> None:
    """Take away what `run` and the trainer write in `out`, and nothing else."""
    for path in [out / "best", out / "best.old", *out.glob("run-*")]:
        shutil.rmtree(path, ignore_errors=True)
    for name in ("config.json", "metrics.json", "log.jsonl"):
        (out / name).unlink(missing_ok=True)
