"""The one trainer, used by every task and by the parser.

It knows nothing of models or data: it drives an `Objective` (parameters, minibatches, losses,
validation) with SGD or Adam, hard gradient clipping, a learning-rate schedule, early stopping,
random restarts that keep the best run on validation, an atomic checkpoint after every epoch,
`resume`, and a JSON-lines log. Training schemes that act on the weights or the learning rate around
each update (the NSPDA's noises) are `Hook`s, which whoever builds the trainer registers.

Determinism: every epoch re-seeds DyNet and numpy from (seed, restart, epoch), so a run interrupted
after epoch k and resumed from its checkpoint computes exactly what the uninterrupted run computes
(with SGD; DyNet does not expose Adam's moment estimates, so a resumed Adam run restarts them).
"""
from __future__ import annotations

import json
import math
import shutil
import time
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, Protocol, Sequence

import dynet as dy
import numpy as np
from tqdm import tqdm

from stackparse.config import check, setting, write_json
from stackparse.errors import UserError
from stackparse.training.averaging import ParameterAverage


OPTIMIZERS = {
    "sgd": lambda pc, lr: dy.SimpleSGDTrainer(pc, learning_rate=lr),
    "adam": lambda pc, lr: dy.AdamTrainer(pc, alpha=lr),
}


@dataclass(frozen=True)
class TrainConfig:
    """Settings of the shared trainer (defaults: Joulin & Mikolov 2015, §5: online SGD, lr 0.1,
    gradient clipping at 15, BPTT 50, learning rate halved when validation entropy stops improving).
    With `max_minutes`, epoch counts depend on the machine's speed."""
    epochs: int = setting(40, "maximum training epochs", min=1)
    batch_size: int = setting(1, "sequences (streams, sentences) per minibatch", min=1)
    bptt: int = setting(50, "truncated BPTT length, 0 = full BPTT", min=0)
    optimizer: str = setting("sgd", "sgd or adam", choices=OPTIMIZERS)
    lr: float = setting(0.1, "learning rate", min=0, min_open=True)
    lr_schedule: str = setting("plateau", "plateau (halve when validation stops improving), inverse "
                               "(lr / (1 + lr_decay * epoch), Dyer et al. 2015) or constant",
                               choices=("plateau", "inverse", "constant"))
    lr_decay: float = setting(0.0, "decay for the inverse schedule")
    clip: float = setting(15.0, "gradient norm clipping threshold, 0 = off", min=0)
    patience: int = setting(0, "stop after this many epochs without improvement, 0 = never", min=0)
    restarts: int = setting(1, "random restarts; the best on validation is kept", min=1)
    seed: int = setting(1, "random seed (DyNet and numpy)")
    max_minutes: float = setting(0.0, "time budget: no epoch starts that the last one's duration says "
                                 "would end past it, 0 = none", min=0)
    average: float = setting(0.0, "decay per update of a moving average of the parameters, used for "
                             "validation and the saved model (0.999: ~1,000 updates), 0 = off",
                             min=0, max=1, max_open=True)
    average_every: int = setting(1, "fold the parameters into the average every N updates (cheaper, "
                                 "same time constant)", min=1)

    def validate(self) -> None:
        check(self)


class Objective(Protocol):
    """What the trainer needs from a model and its data.

    criterion / maximize: the validation metric that selects models, and its direction.
    unit: what `losses` counts (for the progress bar: "chars", "sents", ...).
    """
    criterion: str
    maximize: bool
    unit: str

    def param_collection(self) -> dy.ParameterCollection: ...

    def batches(self, epoch: int, rng: np.random.Generator) -> list:
        """This epoch's minibatches (the epoch number lets a task run a curriculum)."""

    def losses(self, batch) -> Iterator[tuple[dy.Expression, int]]:
        """(loss, units) per graph: one for full BPTT, one per segment for truncated BPTT.
        Each is built in a fresh computation graph; the trainer backpropagates and updates.
        A loss is anything with `value()` and `backward()`: a `dy.Expression`, or a
        `stackparse.training.gradients.PrecomputedLoss`, whose `backward` adds gradients computed
        outside DyNet (RTRL, UORO) to the parameters' gradients."""

    def validate(self) -> dict[str, float]: ...

    def save(self, directory: Path) -> None:
        """Everything needed to reload the model (parameters, vocabularies, settings)."""

    def restore(self, directory: Path) -> None:
        """Load parameters saved by `save` into this (identically built) objective."""


class Hook(Protocol):
    """Acts on the weights or the learning rate around each update (a training scheme's piece, e.g.
    `stackparse.training.noise`); `Trainer(hooks=...)` registers them, called in their list's order."""

    def before_update(self, optimizer: dy.Trainer, rng: np.random.Generator) -> None:
        """Before the trainer takes the objective's next loss: the loss and its gradient see what
        this leaves. `rng` is the epoch's generator (the objective's too), so a resumed run is exact."""

    def after_update(self, optimizer: dy.Trainer) -> None:
        """After that update, or after the objective had no loss left for the minibatch."""


@dataclass
class RunState:
    """What a checkpoint holds besides the parameters: enough to continue exactly."""
    restart: int
    epoch: int = 0              # the next epoch to run
    lr: float = 0.0
    best: float | None = None
    best_epoch: int = -1
    bad_epochs: int = 0
    seconds: float = 0.0        # training time so far, for the time budget
    finished: bool = False


@dataclass(frozen=True)
class TrainResult:
    best: float
    restart: int
    epoch: int
    metrics: dict
    model_dir: Path
    maximize: bool          # whether a larger `best` is better (the objective's criterion)
    objective: Objective    # the restart's objective, as training left it (restore `model_dir` into it)


def _better(value: float, best: float | None, maximize: bool) -> bool:
    return best is None or (value > best if maximize else value < best)


def save_dir_atomically(directory: Path, write: Callable[[Path], None]) -> None:
    """Write a directory's contents into a temporary sibling, then swap it in.

    A crash leaves either the old directory or the new one (or, between the two renames, the old
    one under `.old`, which `load_dir` falls back to), never a half-written one.
    """
    directory = Path(directory)
    tmp, old = directory.with_name(directory.name + ".tmp"), directory.with_name(directory.name + ".old")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    write(tmp)
    if directory.exists():
        shutil.rmtree(old, ignore_errors=True)
        directory.rename(old)
    tmp.rename(directory)
    shutil.rmtree(old, ignore_errors=True)


def existing_dir(directory: Path) -> Path | None:
    """`directory`, or its `.old` copy if a crash happened mid-swap, or None."""
    for d in (Path(directory), Path(directory).with_name(Path(directory).name + ".old")):
        if d.is_dir():
            return d
    return None


def _applied(average: ParameterAverage | None):
    """The averaged parameters in the model within the block, when averaging is on."""
    return nullcontext() if average is None else average.applied()


def epoch_seed(seed: int, restart: int, epoch: int) -> int:
    """A DyNet seed for one epoch of one restart; epoch -1 is the initialisation.
    (DyNet wants a positive 32-bit integer.)"""
    return int(np.random.SeedSequence([seed, restart, epoch + 1]).generate_state(1)[0] % (2**31 - 1)) + 1


def _updates(losses: Iterator, optimizer, average: ParameterAverage | None, hooks: Sequence[Hook], rng):
    """Backward and update for each (loss, units) of `losses`, the hooks before and after each, and
    around the last request, which finds `losses` exhausted (a hook cannot know that no update
    follows: Algorithm 2's noise draws once more per minibatch, the draw order of the published
    numbers). Yields (the loss's value, units) per update."""
    losses = iter(losses)
    while True:
        for hook in hooks:
            hook.before_update(optimizer, rng)
        item = next(losses, None)
        if item is not None:
            value = item[0].value()
            item[0].backward()
            optimizer.update()
            if average is not None:
                average.update()
        for hook in hooks:
            hook.after_update(optimizer)
        if item is None:
            return
        yield value, item[1]


class Trainer:
    """Train an objective built by `build(seed)`; `fit` returns the best run's result.

    Args:
        config: the trainer's settings.
        build: makes a fresh objective (new parameters) for one restart, from a seed; DyNet's
          random seed is reset to that seed just before, so initialisation is reproducible.
        progress: show a progress bar (tqdm, on standard error).
        hooks: makes the hooks of one restart from its objective (none if not given).
    """

    def __init__(self, config: TrainConfig, build: Callable[[int], Objective], progress: bool = True,
                 hooks: Callable[[Objective], Sequence[Hook]] | None = None):
        config.validate()
        self.config, self.build, self.progress, self.hooks = config, build, progress, hooks

    def fit(self, out: Path | str, resume: bool = False) -> TrainResult:
        """Run every restart (resuming finished and interrupted ones from `out` if asked)."""
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        results = [self._run(out, restart, resume) for restart in range(1, self.config.restarts + 1)]
        return max(results, key=lambda r: r.best if r.maximize else -r.best)

    def _run(self, out: Path, restart: int, resume: bool) -> TrainResult:
        cfg = self.config
        run_dir = out / f"run-{restart}"
        seed = cfg.seed * 1000 + restart
        dy.reset_random_seed(epoch_seed(seed, restart, -1))
        objective = self.build(seed)
        state = RunState(restart=restart, lr=cfg.lr)
        checkpoint = existing_dir(run_dir / "checkpoint") if resume else None
        if checkpoint is not None:
            state = RunState(**json.loads((checkpoint / "run_state.json").read_text()))
            objective.restore(checkpoint)
        elif run_dir.exists():
            shutil.rmtree(run_dir)
        optimizer = OPTIMIZERS[cfg.optimizer](objective.param_collection(), state.lr)
        optimizer.set_clip_threshold(cfg.clip)    # DyNet: a threshold of 0 turns clipping off
        average = ParameterAverage(objective.param_collection(), cfg.average, cfg.average_every) if cfg.average else None
        if checkpoint is not None and average is not None:
            average.load(checkpoint / "average.npz")
        hooks = self.hooks(objective) if self.hooks else ()
        try:
            while not state.finished and state.epoch < cfg.epochs:
                metrics = self._epoch(objective, optimizer, average, state, seed, hooks)
                self._after_epoch(objective, average, state, metrics, run_dir, out)
        except KeyboardInterrupt:
            tqdm.write(f"interrupted: the best model so far is kept in {out / 'best'}")
            raise
        if existing_dir(run_dir / "best") is None:      # no epoch ran (resumed a finished run)
            raise UserError(f"{run_dir}: no trained model found to resume from")
        best_metrics = json.loads((existing_dir(run_dir / "best") / "metrics.json").read_text())
        return TrainResult(state.best, restart, state.best_epoch, best_metrics, out / "best", objective.maximize,
                           objective)

    def _epoch(self, objective, optimizer, average: ParameterAverage | None, state: RunState, seed: int,
               hooks: Sequence[Hook]) -> dict:
        cfg = self.config
        rng = np.random.default_rng([seed, state.restart, state.epoch])
        dy.reset_random_seed(epoch_seed(seed, state.restart, state.epoch))
        optimizer.learning_rate = self._lr(state)
        batches = objective.batches(state.epoch, rng)
        start = time.perf_counter()
        desc = f"run {state.restart} epoch {state.epoch + 1}/{cfg.epochs}"
        total_loss, total_units = self.run_epoch(objective, optimizer, batches, average, desc, hooks, rng)
        train_time = time.perf_counter() - start
        metrics = {"epoch": state.epoch + 1, "restart": state.restart, "lr": optimizer.learning_rate,
                   "train_loss": total_loss / max(total_units, 1),
                   f"train_{objective.unit}_per_s": total_units / max(train_time, 1e-9),
                   "train_seconds": train_time}
        with _applied(average):
            metrics.update(objective.validate())
        metrics["epoch_seconds"] = time.perf_counter() - start
        return metrics

    def run_epoch(self, objective, optimizer, batches, average: ParameterAverage | None = None,
                  desc: str = "training", hooks: Sequence[Hook] = (),
                  rng: np.random.Generator | None = None) -> tuple[float, int]:
        """The inner loop: for each batch's losses, backward and an optimizer update (then the average's),
        each bracketed by the hooks, which draw from `rng`.

        Returns:
            The summed loss values and units over `batches` (any iterable: the speed measure stops early).
        """
        total_loss, total_units, start = 0.0, 0, time.perf_counter()
        with tqdm(batches, desc=desc, unit="batch", disable=None if self.progress else True, leave=False) as bar:
            for batch in bar:
                for loss, units in _updates(objective.losses(batch), optimizer, average, hooks, rng):
                    total_loss += loss
                    total_units += units
                elapsed = time.perf_counter() - start
                bar.set_postfix(loss=f"{total_loss / max(total_units, 1):.4f}",
                                rate=f"{total_units / max(elapsed, 1e-9):.0f} {objective.unit}/s")
        return total_loss, total_units

    def _lr(self, state: RunState) -> float:
        if self.config.lr_schedule == "inverse":
            return self.config.lr / (1 + self.config.lr_decay * state.epoch)
        return state.lr

    def _after_epoch(self, objective, average: ParameterAverage | None, state, metrics, run_dir: Path, out: Path) -> None:
        cfg = self.config
        value = metrics[objective.criterion]
        if not math.isfinite(value):
            raise UserError(f"training diverged: validation {objective.criterion} is {value} at "
                            f"epoch {state.epoch + 1}; try a smaller lr or clip")
        improved = _better(value, state.best, objective.maximize)
        if improved:
            state.best, state.best_epoch, state.bad_epochs = value, state.epoch + 1, 0
        metrics["best"] = state.best
        if improved:
            with _applied(average):
                save_dir_atomically(run_dir / "best", lambda d: self._save(objective, d, metrics))
            self._keep_overall_best(out, run_dir, state, objective.maximize)     # so Ctrl-C always leaves out/best
        else:
            state.bad_epochs += 1
            if cfg.lr_schedule == "plateau":
                state.lr /= 2    # Joulin & Mikolov: halve the rate when validation stops improving
        state.epoch += 1
        state.seconds += metrics["epoch_seconds"]
        out_of_time = cfg.max_minutes > 0 and state.seconds + metrics["epoch_seconds"] > 60 * cfg.max_minutes
        state.finished = (state.epoch >= cfg.epochs or out_of_time
                          or (cfg.patience > 0 and state.bad_epochs >= cfg.patience))
        with open(out / "log.jsonl", "a", encoding="utf-8") as log:
            log.write(json.dumps(metrics) + "\n")
        if self.progress:
            tqdm.write(f"run {state.restart} epoch {state.epoch}/{cfg.epochs}: " + "  ".join(
                f"{k} {v:.4g}" for k, v in metrics.items() if isinstance(v, float)))
        save_dir_atomically(run_dir / "checkpoint", lambda d: self._checkpoint(objective, average, d, state))

    @staticmethod
    def _save(objective, directory: Path, metrics: dict) -> None:
        objective.save(directory)
        write_json(directory / "metrics.json", metrics)

    @staticmethod
    def _checkpoint(objective, average: ParameterAverage | None, directory: Path, state: RunState) -> None:
        objective.save(directory)      # the raw parameters: training goes on from them
        if average is not None:
            average.save(directory / "average.npz")
        write_json(directory / "run_state.json", state.__dict__)

    @staticmethod
    def _keep_overall_best(out: Path, run_dir: Path, state: RunState, maximize: bool) -> None:
        overall = existing_dir(out / "best")
        if overall is not None:
            previous = json.loads((overall / "metrics.json").read_text())
            if previous.get("restart") != state.restart and not _better(state.best, previous["best"], maximize):
                return
        source = existing_dir(run_dir / "best")
        save_dir_atomically(out / "best", lambda d: [shutil.copy2(f, d / f.name) for f in source.iterdir()])
