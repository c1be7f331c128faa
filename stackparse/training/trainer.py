"""The one trainer, used by every task and by the parser.

It knows nothing of models or data: it drives an `Objective` (parameters, minibatches, losses,
validation) with SGD, Adam or RMSProp, gradient clipping (of its norm, or of each element: `clipping`),
a learning-rate schedule, early stopping, restarts (the one kept chosen on validation or by training loss,
optionally after a short probe of each: `keep`, `probe_epochs`), an atomic
checkpoint after every epoch, `resume`, a JSON-lines log, progress (a bar on a terminal, else a line every
30 seconds, with the time the run may still take), and the `Hook`s its builder registers (schemes acting on
the weights or the learning rate around each update: the NSPDA's noises). Every epoch re-seeds DyNet and numpy from
(seed, restart, epoch), so that a resumed run repeats the uninterrupted one. One state cannot go into a
checkpoint: Adam's and RMSProp's moment estimates (DyNet's Python API can neither read nor write them, and an
Adam of our own over numpy arrays is far slower, since DyNet copies arrays to numpy element by element:
BENCHMARKS.md, issue 17). `optimizer_state` chooses what gives way:
- "run" (the default): one optimizer for the whole run, as the papers train (Grefenstette et al.'s RMSProp
  runs uninterrupted); a resumed Adam or RMSProp run starts its moments afresh at the resumed epoch, so it
  is close to the uninterrupted run, not equal (SGD has no such state: equal);
- "epoch": a fresh optimizer at every epoch, so the checkpoint, taken between epochs, holds all the state
  and a resumed run is exactly the uninterrupted one, for every optimizer.

A run that diverges (a gradient that is not finite, which neither clipping can bound, or a validation
criterion that is not finite; a finite gradient too large for DyNet's single-precision norm is clipped all the same,
`clipping.NormRescue`) stops there and keeps its best epoch, as a run stopped by its time budget does;
the log and the result say where and why (`diverged`). A paper's table counts such a run by the model it had
learnt, and a benchmark of many runs must not lose one to a traceback. Diverging before the first epoch is
done leaves no model: that is an error.
"""
from __future__ import annotations

import json
import math
import os
import shutil
import sys
import time
import warnings
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
from stackparse.training.clipping import CLIP_KINDS, ElementClip, NormRescue
from stackparse.training.schedules import SCHEDULES

OPTIMIZERS = {
    "sgd": lambda pc, lr: dy.SimpleSGDTrainer(pc, learning_rate=lr),
    "adam": lambda pc, lr: dy.AdamTrainer(pc, alpha=lr),
    "rmsprop": lambda pc, lr: dy.RMSPropTrainer(pc, learning_rate=lr),     # Tieleman & Hinton; DyNet's rho 0.9, eps 1e-8
}
PROGRESS_EVERY = 30.0
"""Seconds between progress lines when standard error is not a terminal (a log file, a pipe)."""


@dataclass(frozen=True)
class TrainConfig:
    """Settings of the shared trainer (defaults: Joulin & Mikolov 2015, §5: online SGD, lr 0.1,
    gradient clipping at 15, BPTT 50, learning rate halved when validation entropy stops improving). Their
    "hard clipping of 15" is here the gradient's norm; their code clips each back-propagated error element-wise
    (`stackparse.training.clipping`), which no setting reproduces. With `max_minutes`, epoch counts depend on
    the machine's speed."""
    epochs: int = setting(40, "maximum training epochs", min=1)
    batch_size: int = setting(1, "sequences (streams, sentences) per minibatch", min=1)
    bptt: int = setting(50, "truncated BPTT length, 0 = full BPTT", min=0)
    optimizer: str = setting("sgd", "sgd, adam or rmsprop", choices=OPTIMIZERS)
    lr: float = setting(0.1, "learning rate", min=0, min_open=True)
    lr_schedule: str = setting("plateau", "plateau (halve when validation stops improving), inverse "
                               "(lr / (1 + lr_decay * epoch), Dyer et al. 2015), linear (at every update lr "
                               "times the share of the run still ahead: of max_minutes where there is a time "
                               "budget, else of the epochs) or constant",
                               choices=SCHEDULES)
    lr_decay: float = setting(0.0, "decay for the inverse schedule")
    clip: float = setting(15.0, "gradient clipping threshold, 0 = off", min=0)
    clip_kind: str = setting("norm", "norm: the whole gradient rescaled to a norm of at most clip (DyNet's); value: "
                             "each element clipped to [-clip, clip] ('hard clipping', stackparse.training.clipping)",
                             choices=CLIP_KINDS)
    patience: int = setting(0, "stop after this many epochs without improvement, 0 = never", min=0)
    restarts: int = setting(1, "random restarts (a model with several starts tries them in turn: "
                            "`SequenceModel.starts`); `keep` chooses the one kept", min=1)
    keep: str = setting("validation", "the restart kept: validation (the best validation criterion) or "
                        "train_loss (the lowest training loss of its kept epoch: Grefenstette et al. 2015, §5, 'the "
                        "best models were automatically selected based on average training perplexity')",
                        choices=("validation", "train_loss"), absent="validation")
    probe_epochs: int = setting(0, "with restarts: each restart trains this many epochs first, then only the one "
                                "`keep` chooses goes on (to the epochs, patience or max_minutes); 0 = every restart "
                                "trains to the end", min=0, absent=0)
    seed: int = setting(1, "random seed (DyNet and numpy)")
    max_minutes: float = setting(0.0, "time budget of each restart, in wall-clock minutes from building its "
                                 "model: no epoch starts that the longest one so far (validation and saves "
                                 "included) says would end past it, 0 = none; a run it stopped goes on when "
                                 "resumed with a larger one", min=0)
    average: float = setting(0.0, "decay per update of a moving average of the parameters, used for "
                             "validation and the saved model (0.999: ~1,000 updates), 0 = off",
                             min=0, max=1, max_open=True)
    average_every: int = setting(1, "fold the parameters into the average every N updates (cheaper, "
                                 "same time constant)", min=1)
    stop_metric: str = setting("", "stop a run after the first epoch whose metric of this name (e.g. "
                               "train_accuracy, which the sequence objective then measures) reaches "
                               "stop_at; '' = never")
    stop_at: float = setting(1.0, "the value of stop_metric that stops a run")
    optimizer_state: str = setting("run", "run: one optimizer for the whole run (Adam's and RMSProp's moments "
                                   "restart only when a run is resumed); epoch: a fresh optimizer every "
                                   "epoch, so that --resume is exact for Adam and RMSProp too",
                                   choices=("run", "epoch"))

    def validate(self) -> None:
        check(self)


DONE = "done"
"""A metric an objective's `validate` may report: true once its data schedule has ended (the run stops)."""


class Objective(Protocol):
    """What the trainer needs from a model and its data. criterion / maximize: the validation metric
    that selects models, and its direction; unit: what `losses` counts ("chars", "sents", ...)."""
    criterion: str
    maximize: bool
    unit: str

    def param_collection(self) -> dy.ParameterCollection: ...

    def batches(self, epoch: int, rng: np.random.Generator) -> list:
        """This epoch's minibatches (the epoch number lets a task run a curriculum)."""

    def losses(self, batch) -> Iterator[tuple[dy.Expression, int]]:
        """(loss, units) per graph (one for full BPTT, one per truncated-BPTT segment), each built in a
        fresh graph; the loss is the mean over the batch's sequences (the update's scale: the trainer multiplies
        it back by `len(batch)` to report the loss per unit). A loss has `value()` and `backward()`: a
        `dy.Expression`, or a `stackparse.training.gradients.PrecomputedLoss` (gradients computed outside DyNet:
        RTRL, UORO)."""

    def validate(self) -> dict[str, float]:
        """The epoch's metrics: `criterion`, and any others (`DONE`: the objective has no more to train)."""

    def save(self, directory: Path) -> None:
        """Everything needed to reload the model (parameters, vocabularies, settings)."""

    def restore(self, directory: Path) -> None:
        """Load parameters saved by `save` into this (identically built) objective."""


class Hook(Protocol):
    """Acts on the weights or the learning rate around each update (e.g. `stackparse.training.noise`);
    called in `Trainer(hooks=...)`'s order. `before_update` runs before the objective's next loss is
    taken (the loss and its gradient see what it leaves), with the epoch's generator, so a resumed run
    is exact; `after_update` after that update, or after the minibatch had no loss left."""

    def before_update(self, optimizer: dy.Trainer, rng: np.random.Generator) -> None: ...

    def after_update(self, optimizer: dy.Trainer) -> None: ...


@dataclass
class RunState:
    """What a checkpoint holds besides the parameters: enough to continue exactly."""
    restart: int
    epoch: int = 0              # the next epoch to run
    lr: float = 0.0
    best: float | None = None
    best_epoch: int = -1
    bad_epochs: int = 0
    seconds: float = 0.0        # wall time so far (building, epochs, validation, saves), for the time budget
    finished: bool = False
    out_of_time: bool = False   # finished by the time budget alone: a resume with a larger one goes on
    epoch_seconds: float = 0.0  # the longest epoch so far, its validation and saves included: whether another fits
    diverged: str = ""          # where and why the run diverged (it stopped there), "" if it did not


@dataclass(frozen=True)
class TrainResult:
    best: float
    restart: int
    epoch: int
    metrics: dict
    model_dir: Path
    maximize: bool          # whether a larger `best` is better (the objective's criterion)
    objective: Objective    # the restart's objective, as training left it (restore `model_dir` into it)
    diverged: str = ""      # where and why the restart diverged and stopped ("": it did not)


class Diverged(Exception):
    """Training produced a gradient or a validation criterion that is not finite."""


def _out_of_time(cfg: TrainConfig, state: RunState) -> bool:
    """Whether the time budget leaves no room for another epoch as long as the longest so far (the epochs of a
    run vary by a fifth on a shared machine: the last one's length let runs end past their budget)."""
    return cfg.max_minutes > 0 and state.seconds + state.epoch_seconds > 60 * cfg.max_minutes


def _stops(cfg: TrainConfig, metrics: dict) -> bool:
    """The stopping rules beyond the epoch count, the time budget and patience: the objective says it is done,
    or `stop_metric` has reached `stop_at` (the NSPDA paper: training until its accuracy is perfect)."""
    if metrics.get(DONE):
        return True
    if not cfg.stop_metric:
        return False
    if cfg.stop_metric not in metrics:
        raise UserError(f"stop_metric {cfg.stop_metric!r} is not a metric of this objective: "
                        f"{', '.join(sorted(metrics))}")
    return metrics[cfg.stop_metric] >= cfg.stop_at


def _better(value: float, best: float | None, maximize: bool) -> bool:
    return best is None or (value > best if maximize else value < best)


_STAGING = ".tmp"


def save_dir_atomically(directory: Path, write: Callable[[Path], None]) -> None:
    """Write a directory's contents into a temporary sibling, then swap it in: a crash leaves the old
    directory or the new one (between the renames, the old under `.old`: `existing_dir`), never half."""
    directory = Path(directory)
    tmp, old = directory.with_name(directory.name + _STAGING), directory.with_name(directory.name + ".old")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    write(tmp)
    if directory.exists():
        shutil.rmtree(old, ignore_errors=True)
        directory.rename(old)
    tmp.rename(directory)
    shutil.rmtree(old, ignore_errors=True)


def published(directory: Path) -> Path:
    """Where a directory being written by `save_dir_atomically` (the `directory` its `write` was given) ends up;
    any other directory stays where it is."""
    directory = Path(directory)
    return directory.with_name(directory.name.removesuffix(_STAGING))


def hard_link(source: Path, target: Path) -> bool:
    """Whether `target` is now a hard link to `source` (False where `source` is gone or the file system has no
    links). Safe for a saved model's files, which are never changed in place; a parser's are hundreds of megabytes."""
    try:
        os.link(source, target)
    except OSError:
        return False
    return True


def _link_or_copy(source: Path, target: Path) -> None:
    if not hard_link(source, target):
        shutil.copy2(source, target)


def existing_dir(directory: Path) -> Path | None:
    """`directory`, or its `.old` copy if a crash happened mid-swap, or None."""
    directory = Path(directory)
    return next((d for d in (directory, directory.with_name(directory.name + ".old")) if d.is_dir()), None)


def _applied(average: ParameterAverage | None):
    return nullcontext() if average is None else average.applied()


def epoch_seed(seed: int, restart: int, epoch: int) -> int:
    """A DyNet seed for one epoch of one restart; epoch -1 is the initialisation.
    (DyNet wants a positive 32-bit integer.)"""
    return int(np.random.SeedSequence([seed, restart, epoch + 1]).generate_state(1)[0] % (2**31 - 1)) + 1


class Trainer:
    """Train an objective built by `build(seed)`; `fit` returns the best run's result.

    Args:
        config: the trainer's settings.
        build: a fresh objective (new parameters) for one restart from a seed, just after DyNet's random
          seed is reset from it, so initialisation is reproducible; or several starts, (settings, build) pairs (a
          model's starts: `SequenceModel.starts`), restart r trained as the ((r - 1) mod k)-th says: its settings
          may differ from `config` in how a restart trains (the rate), while `config` says how many restarts run
          and which is kept.
        progress: show a progress bar (tqdm, on standard error).
        hooks: makes the hooks of one restart from its objective (none if not given).
    """

    def __init__(self, config: TrainConfig,
                 build: Callable[[int], Objective] | Sequence[tuple[TrainConfig, Callable[[int], Objective]]],
                 progress: bool = True,
                 hooks: Callable[[Objective], Sequence[Hook]] | None = None):
        config.validate()
        self.config, self.build, self.progress, self.hooks = config, build, progress, hooks
        self._last_epoch = 0.0          # seconds the last epoch took, validation included

    def fit(self, out: Path | str, resume: bool = False) -> TrainResult:
        """Run every restart (resuming finished and interrupted ones from `out` if asked) and return the one
        `keep` chooses; with `probe_epochs`, every restart trains that many epochs, then only the chosen one goes
        on."""
        cfg, out = self.config, Path(out)
        out.mkdir(parents=True, exist_ok=True)
        probe = cfg.probe_epochs if cfg.restarts > 1 else 0
        starts = [Trainer(settings, build, self.progress, self.hooks) for settings, build in self.build] \
            if isinstance(self.build, Sequence) else [self]
        restarts = []
        for number in range(1, cfg.restarts + 1):
            trainer = starts[(number - 1) % len(starts)]
            restarts.append(trainer._start(out, number, resume))
            trainer._train(restarts[-1], out, probe)
        kept = min(restarts, key=lambda r: self._keep_value(r))
        if probe:
            kept.trainer._train(kept, out)
        self._keep_overall_best(out, kept.run_dir, kept.state, kept.objective.maximize, force=True)
        best_metrics = json.loads((existing_dir(kept.run_dir / "best") / "metrics.json").read_text())
        return TrainResult(kept.state.best, kept.state.restart, kept.state.best_epoch, best_metrics, out / "best",
                           kept.objective.maximize, kept.objective, kept.state.diverged)

    def _keep_value(self, restart: "_Restart") -> float:
        """What `keep` minimises over the restarts: the validation criterion (negated where larger is better), or
        the training loss of the restart's kept epoch."""
        if self.config.keep == "train_loss":
            return json.loads((existing_dir(restart.run_dir / "best") / "metrics.json").read_text())["train_loss"]
        return -restart.state.best if restart.objective.maximize else restart.state.best

    def _start(self, out: Path, restart: int, resume: bool) -> "_Restart":
        """A restart's objective and state: built afresh, or as its checkpoint left it when resuming."""
        cfg = self.config
        run_dir = out / f"run-{restart}"
        seed = cfg.seed * 1000 + restart
        built = time.perf_counter()
        dy.reset_random_seed(epoch_seed(seed, restart, -1))
        objective = self.build(seed)
        state = RunState(restart=restart, lr=cfg.lr)
        checkpoint = existing_dir(run_dir / "checkpoint") if resume else None
        if checkpoint is not None:
            saved = json.loads((checkpoint / "run_state.json").read_text())
            state = RunState(**saved)
            objective.restore(checkpoint)
            if "out_of_time" not in saved:      # a checkpoint from before the field: what else could have stopped it
                state.out_of_time = state.finished and state.epoch < cfg.epochs and not (
                    cfg.patience > 0 and state.bad_epochs >= cfg.patience)
            if state.out_of_time and not _out_of_time(cfg, state):
                state.finished = state.out_of_time = False      # resumed with a larger time budget
        elif run_dir.exists():
            shutil.rmtree(run_dir)
        average = ParameterAverage(objective.param_collection(), cfg.average, cfg.average_every) if cfg.average else None
        if checkpoint is not None and average is not None:
            average.load(checkpoint / "average.npz")
        state.seconds += time.perf_counter() - built         # building (or restoring) is part of the budget
        hooks = self.hooks(objective) if self.hooks else ()
        return _Restart(self, objective, state, seed, run_dir, average, hooks, resumed=checkpoint is not None)

    def _train(self, restart: "_Restart", out: Path, pause_at: int = 0) -> None:
        """Train `restart` until it finishes, or, with `pause_at`, until that many epochs are done (a probe: the
        restart is not finished, and goes on where it paused)."""
        cfg, state, objective = self.config, restart.state, restart.objective
        restart.mark = time.perf_counter()
        while not state.finished and state.epoch < cfg.epochs and not (pause_at and state.epoch >= pause_at):
            if restart.optimizer is None and restart.resumed and cfg.optimizer_state == "run" and cfg.optimizer != "sgd":
                warnings.warn(f"{restart.run_dir}: resuming at epoch {state.epoch + 1} with {cfg.optimizer}'s moment "
                              "estimates started afresh (a checkpoint cannot hold them): close to the uninterrupted "
                              "run, not equal; --optimizer-state epoch makes resumed runs exact")
            if restart.optimizer is None or cfg.optimizer_state == "epoch":
                restart.optimizer = OPTIMIZERS[cfg.optimizer](objective.param_collection(), cfg.lr)
                restart.optimizer.set_clip_threshold(cfg.clip if cfg.clip_kind == "norm" else 0)     # 0: DyNet's off
            try:
                metrics = self._epoch(objective, restart.optimizer, restart.average, state, restart.seed, restart.hooks)
                self._after_epoch(restart, metrics, out)
            except Diverged as why:
                self._stop_diverged(state, str(why), restart.run_dir, out)
        if existing_dir(restart.run_dir / "best") is None:      # no epoch ran (resumed a finished run)
            raise UserError(f"{restart.run_dir}: no trained model found to resume from")

    def _stop_diverged(self, state: RunState, why: str, run_dir: Path, out: Path) -> None:
        """End a run that diverged in epoch `state.epoch + 1` (the module docstring): the checkpoint of the last
        finished epoch is marked finished, so that a resume keeps the result, and the log says why."""
        state.diverged = f"epoch {state.epoch + 1}: {why}"
        checkpoint = existing_dir(run_dir / "checkpoint")
        if state.best is None or checkpoint is None:
            raise UserError(f"training diverged in its first epoch ({why}), before any model was kept; "
                            f"try a smaller lr or clip")
        state.finished = True
        write_json(checkpoint / "run_state.json", state.__dict__)
        with open(out / "log.jsonl", "a", encoding="utf-8") as log:
            log.write(json.dumps({"epoch": state.epoch + 1, "restart": state.restart, "diverged": why}) + "\n")
        warnings.warn(f"{run_dir}: training diverged in epoch {state.epoch + 1} ({why}); stopped, keeping epoch "
                      f"{state.best_epoch}, its best")

    def _epoch(self, objective, optimizer: dy.Trainer, average: ParameterAverage | None, state: RunState, seed: int,
               hooks: Sequence[Hook]) -> dict:
        cfg = self.config
        rng = np.random.default_rng([seed, state.restart, state.epoch])
        dy.reset_random_seed(epoch_seed(seed, state.restart, state.epoch))
        schedule = SCHEDULES[cfg.lr_schedule](cfg)
        optimizer.learning_rate = schedule.at_epoch(state)
        batches = objective.batches(state.epoch, rng)
        start = time.perf_counter()
        desc = f"run {state.restart} epoch {state.epoch + 1}/{cfg.epochs}"
        total_loss, total_units = self.run_epoch(objective, optimizer, batches, average, desc, hooks, rng,
                                                 lambda done, elapsed: self._time_left(state, done, elapsed),
                                                 lambda done, elapsed: schedule.at_batch(state, done, elapsed))
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
                  desc: str = "training", hooks: Sequence[Hook] = (), rng: np.random.Generator | None = None,
                  time_left: Callable[[float, float], float] | None = None,
                  lr_at: Callable[[float, float], float | None] | None = None) -> tuple[float, int]:
        """The inner loop: per loss of each batch, backward and an optimizer update (then the average's),
        bracketed by the hooks (which draw from `rng`), and the hooks once more around the request that finds
        the batch's losses exhausted (a hook cannot know that no update follows: Algorithm 2's noise draws once
        more per minibatch, the draw order of the published numbers). Returns the summed losses (each batch's
        mean times its size: `train_loss` is then the loss per unit, whatever the batch size) and
        units over `batches` (any iterable: the speed measure stops early). `time_left(share of the epoch
        done, seconds)` says how long the run may still take, for the progress shown; `lr_at(share of the
        epoch done, seconds)`, if given, sets the learning rate before each batch where it gives one."""
        total_loss, total_units, start = 0.0, 0, time.perf_counter()
        cfg = self.config
        clip = ElementClip(objective.param_collection(), cfg.clip) if cfg.clip_kind == "value" and cfg.clip else None
        rescue = NormRescue(objective.param_collection(), cfg.clip) if cfg.clip_kind == "norm" and cfg.clip else None
        lines, last_line = self.progress and not sys.stderr.isatty(), start
        with tqdm(batches, desc=desc, unit="batch", disable=None if self.progress else True, leave=False) as bar:
            for done, batch in enumerate(bar, 1):
                rate = lr_at and lr_at((done - 1) / len(batches), time.perf_counter() - start)
                if rate is not None:
                    optimizer.learning_rate = rate
                losses, item = iter(objective.losses(batch)), ()
                while item is not None:
                    for hook in hooks:
                        hook.before_update(optimizer, rng)
                    item = next(losses, None)
                    if item is not None:
                        total_loss += item[0].value() * len(batch)      # a loss is its batch's mean
                        total_units += item[1]
                        item[0].backward()
                        _update(optimizer, clip, rescue, item[0])
                        if average is not None:
                            average.update()
                    for hook in hooks:
                        hook.after_update(optimizer)
                now = time.perf_counter()
                shown = {"loss": f"{total_loss / max(total_units, 1):.4f}",
                         "rate": f"{total_units / max(now - start, 1e-9):.0f} {objective.unit}/s"}
                if time_left is not None and hasattr(batches, "__len__"):
                    shown["run left"] = duration(time_left(done / len(batches), now - start))
                bar.set_postfix(shown)
                if lines and now - last_line >= PROGRESS_EVERY:
                    print(f"{desc}: {done}/{getattr(batches, '__len__', lambda: '?')()} batches, "
                          + ", ".join(f"{k} {v}" for k, v in shown.items()), file=sys.stderr, flush=True)
                    last_line = now
        return total_loss, total_units

    def _time_left(self, state: RunState, done: float, elapsed: float) -> float:
        """At most how long the run still takes: this epoch at its pace so far, then the epochs left at the
        last one's pace (validation included), within the time budget (patience may stop it sooner)."""
        epoch = elapsed / max(done, 1e-9)
        left = epoch - elapsed + (self.config.epochs - state.epoch - 1) * max(epoch, self._last_epoch)
        if self.config.max_minutes:
            left = min(left, 60 * self.config.max_minutes - state.seconds - elapsed)
        return max(left, 0.0)

    def _after_epoch(self, restart: "_Restart", metrics: dict, out: Path) -> None:
        cfg, objective, average, state, run_dir = (self.config, restart.objective, restart.average, restart.state,
                                                   restart.run_dir)
        self._last_epoch = metrics["epoch_seconds"]
        value = metrics[objective.criterion]
        if not math.isfinite(value):
            raise Diverged(f"validation {objective.criterion} is {value}")
        improved = _better(value, state.best, objective.maximize)
        if improved:
            state.best, state.best_epoch, state.bad_epochs = value, state.epoch + 1, 0
        metrics["best"] = state.best
        if improved:
            with _applied(average):
                save_dir_atomically(run_dir / "best", lambda d: self._save(objective, d, "metrics.json", metrics))
            self._keep_overall_best(out, run_dir, state, objective.maximize)     # so Ctrl-C always leaves out/best
        else:
            state.bad_epochs += 1
        SCHEDULES[cfg.lr_schedule](cfg).after_validation(state, improved)
        state.epoch += 1
        # wall time from the last epoch's end (its checkpoint's save included) through this one's saved best
        now = time.perf_counter()
        state.seconds += now - restart.mark
        state.epoch_seconds = max(state.epoch_seconds, now - restart.mark)
        restart.mark = now
        out_of_time = _out_of_time(cfg, state)
        done = state.epoch >= cfg.epochs or (cfg.patience > 0 and state.bad_epochs >= cfg.patience) or _stops(cfg, metrics)
        state.finished, state.out_of_time = done or out_of_time, out_of_time and not done
        with open(out / "log.jsonl", "a", encoding="utf-8") as log:       # when: a benchmark's record says it
            log.write(json.dumps({**metrics, "ended": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}) + "\n")
        if self.progress:
            tqdm.write(f"run {state.restart} epoch {state.epoch}/{cfg.epochs}: " + "  ".join(
                f"{k} {v:.4g}" for k, v in metrics.items() if isinstance(v, float)))
        save_dir_atomically(run_dir / "checkpoint",
                            lambda d: self._save(objective, d, "run_state.json", state.__dict__, average))

    @staticmethod
    def _save(objective, directory: Path, name: str, content: dict, average: ParameterAverage | None = None) -> None:
        """The model and `content` as `name`; a checkpoint's model is the raw parameters (training goes on
        from them), with the average beside."""
        objective.save(directory)
        if average is not None:
            average.save(directory / "average.npz")
        write_json(directory / name, content)

    @staticmethod
    def _keep_overall_best(out: Path, run_dir: Path, state: RunState, maximize: bool, force: bool = False) -> None:
        """Copy the restart's best model to `out/best` if it is better than the one there, by the validation
        criterion (so that an interrupted run always leaves the best so far), or, with `force`, in any case."""
        overall = existing_dir(out / "best")
        if overall is not None and not force:
            previous = json.loads((overall / "metrics.json").read_text())
            if previous.get("restart") != state.restart and not _better(state.best, previous["best"], maximize):
                return
        source = existing_dir(run_dir / "best")
        save_dir_atomically(out / "best", lambda d: [_link_or_copy(f, d / f.name) for f in source.iterdir()])


@dataclass
class _Restart:
    """One restart as it trains: the trainer of its start (its settings), its objective, state, optimizer (created at
    its first epoch) and what goes with them."""
    trainer: Trainer
    objective: Objective
    state: RunState
    seed: int
    run_dir: Path
    average: ParameterAverage | None
    hooks: Sequence[Hook]
    resumed: bool = False       # from a checkpoint: its optimizer's moments start afresh (the module docstring)
    optimizer: dy.Trainer | None = None
    mark: float = 0.0           # when the time budget last counted (`time.perf_counter`)


def _update(optimizer: dy.Trainer, clip: ElementClip | None, rescue: NormRescue | None, loss=None) -> None:
    """The optimizer's update, after `clip` where there is one; a gradient whose norm DyNet's clipping finds not
    finite is rescaled by `rescue` (from `loss`'s own gradient where it has one in double precision) and applied,
    and one that cannot be (not finite) is `Diverged`."""
    if clip is not None and not clip():
        raise Diverged("the gradient is not finite")
    try:
        optimizer.update()
        return
    except RuntimeError as error:
        if not str(error).startswith("Magnitude of gradient is bad"):
            raise
        why = f"the gradient's norm is {str(error).rsplit(' ', 1)[-1]}"
    if rescue is None or not rescue(loss):
        raise Diverged(why)
    optimizer.update()          # the norm now at the threshold: DyNet's clipping finds it finite


def duration(seconds: float) -> str:
    """1h05m, 12m30s or 45s."""
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes // 60}h{minutes % 60:02d}m" if minutes >= 60 else f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"
