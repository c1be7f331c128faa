"""The sequence experiment ("sequence"): a task, a model and the shared trainer, then the task's test protocol (Joulin &
Mikolov's sizes n, or a grammar task's fixed splits). A task's own training defaults (`Task.default_training`, e.g.
Grefenstette et al.'s) apply over the trainer's and the data's; the settings given apply over those.
"""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path

import dynet as dy
import numpy as np

from stackparse.config import from_dict, setting
from stackparse.errors import UserError
from stackparse.evaluation.sequence import evaluate_sizes
from stackparse.experiments import KINDS, Kind, with_changes
from stackparse.models import get_model_class
from stackparse.tasks import get_task
from stackparse.training.methods import gradient_method
from stackparse.training.noise import hooks_for
from stackparse.training.rules import insert_rules
from stackparse.training.sequence import SequenceObjective, SequenceTraining
from stackparse.training.trainer import TrainConfig


class ModelSettings:
    """A settings mixin: `model_config` becomes model `model`'s settings (its defaults if None; a dict, as
    read from JSON, is read into it as saved: `from_dict`), and `validate` validates each nested settings, in
    field order."""

    def __post_init__(self):
        cls, config = get_model_class(self.model).Config, self.model_config
        if not isinstance(config, cls):
            config = cls() if config is None else from_dict(cls, config)
        object.__setattr__(self, "model_config", config)

    def validate(self) -> None:
        for part in (getattr(self, f.name) for f in dataclasses.fields(self)):
            if dataclasses.is_dataclass(part):
                part.validate()


@dataclass(frozen=True)
class SequenceSettings(ModelSettings):
    """Everything that defines a sequence run; saved as `config.json` beside the model and its metrics."""
    task: str = setting(help="task name (see `tasks`)")
    model: str = setting(help="model name (see `models`)")
    model_config: object = None
    train: TrainConfig = TrainConfig()
    data: SequenceTraining = SequenceTraining()
    test_n: tuple[int, int] | None = setting(None, "the test sizes lo..hi (None = the task's protocol)")

    def validate(self) -> None:
        super().validate()
        task = get_task(self.task)
        if self.test_n is None:
            return
        if task.fixed_splits:
            raise UserError(f"{task.name} is tested on its fixed splits ({', '.join(task.test_splits)}): "
                            f"a test range does not apply")
        lo, hi = self.test_n
        if lo < 1 or hi < lo:
            raise UserError(f"test range {lo}..{hi} is empty or not positive")
        if hi < task.protocol.train_n[1]:
            raise UserError(f"test range {lo}..{hi} ends below the training range "
                            f"{task.protocol.train_n[0]}..{task.protocol.train_n[1]}")


@KINDS.register
class SequenceExperiment(Kind):
    """A model trained on a task's generated (or fixed) data, then tested by the task's protocol."""
    name = "sequence"
    Settings = SequenceSettings

    def __init__(self, settings: SequenceSettings):
        super().__init__(settings)
        self.task = get_task(settings.task)

    @classmethod
    def defaults(cls, task: str, model: str) -> SequenceSettings:
        """The model's defaults, the task's own training over the trainer's and the data's, and the model's
        (`SequenceModel.default_training`, e.g. the higher-order networks' noise regulariser) over those."""
        settings = with_changes(SequenceSettings(task, model), get_task(task).default_training)
        return with_changes(settings, get_model_class(model).default_training)

    def start_of(self, restart: int) -> dict:
        """The settings restart `restart` (1, 2, ...) changes: none (the settings given), then each of the model's
        other starts (`SequenceModel.starts`: model or training settings), in turn."""
        starts = ({}, *get_model_class(self.settings.model).starts)
        return starts[(restart - 1) % len(starts)]

    def for_restart(self, restart: int) -> "SequenceExperiment":
        """The experiment of restart `restart`: the settings given with `start_of(restart)` over them."""
        start = self.start_of(restart)
        return SequenceExperiment(with_changes(self.settings, start)) if start else self

    def starts(self) -> list:
        """The trainer's settings and builder of each start (`for_restart`): the restarts go through them in turn."""
        experiments = [self.for_restart(r) for r in range(1, len(get_model_class(self.settings.model).starts) + 2)]
        return [(e.settings.train, e.build) for e in experiments]

    def build(self, seed: int) -> SequenceObjective:
        s, task = self.settings, self.task
        pc = dy.ParameterCollection()
        model = get_model_class(s.model)(pc, s.model_config, len(task.symbols), len(task.outputs))
        hints = insert_rules(model, task.pda, s.data, s.train.seed)
        method = gradient_method(s.data, model, s.train.bptt, hints)
        return SequenceObjective(task, model, pc, s.train, s.data, method, validation_seed=s.train.seed,
                                 mirror=s.data.mirror)

    def hooks(self, objective: SequenceObjective) -> list:
        """The trainer hooks of one restart: the weights' and the learning rate's noise (each in its stage of
        two-stage incremental learning)."""
        return hooks_for(self.settings.data, objective.model, objective.stage)

    def test(self, objective: SequenceObjective) -> dict:
        s = self.settings
        objective.model.training = False    # a run that diverged stopped inside an epoch, its model in training mode
        report = evaluate_sizes(objective.model, self.task, np.random.default_rng([s.train.seed, 2]), s.test_n,
                                mirror=s.data.mirror)
        return {"task": s.task, "model": s.model, "seed": s.train.seed, **report.to_dict()}


def load(run_dir: Path | str, trained: bool = True) -> tuple[SequenceExperiment, SequenceObjective]:
    """The experiment of the restart kept (its start: `for_restart`) and its trained model (best parameters) of a
    finished run directory, for `inspect`; with `trained` false, a freshly initialised model of those settings
    instead (DyNet's random state as it stands)."""
    run_dir = Path(run_dir)
    if not (run_dir / "config.json").is_file() or not (run_dir / "best" / "params").is_file():
        raise UserError(f"{run_dir}: not a finished run (config.json or best/params missing)")
    kept = json.loads((run_dir / "best" / "metrics.json").read_text()).get("restart", 1) \
        if (run_dir / "best" / "metrics.json").is_file() else 1
    experiment = SequenceExperiment(_saved_settings(run_dir / "config.json")).for_restart(kept)
    objective = experiment.build(experiment.settings.train.seed)
    if trained:
        objective.restore(run_dir / "best")
    return experiment, objective


def _saved_settings(path: Path) -> SequenceSettings:
    """A run's saved settings. Runs saved before Algorithm 1 replaced `curriculum_two_stage` carry that
    setting: off, it changed nothing and is dropped; on, the run used the retired scheme and is refused."""
    saved = json.loads(path.read_text(encoding="utf-8"))
    if saved.get("data", {}).pop("curriculum_two_stage", False):
        raise UserError(f"{path.parent}: trained with the retired curriculum_two_stage scheme (not the paper's "
                        f"Algorithm 1); retrain it with --incremental two-stage")
    return from_dict(SequenceSettings, saved)
