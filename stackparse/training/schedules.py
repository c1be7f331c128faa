"""Learning-rate schedules: which rate the trainer gives the optimizer, and when.

A schedule is a small object the trainer asks at three points of a run: the rate at an epoch's start (`at_epoch`),
the rate before each minibatch (`at_batch`; None leaves it), and what a validation does to the run's rate
(`after_validation`). What a schedule reads and changes is the run's state (`trainer.RunState`: its epoch, the
seconds spent, its current rate `lr`), which checkpoints keep, so a resumed run goes on with its schedule exactly.
`SCHEDULES` names them for `TrainConfig.lr_schedule`.
"""
from __future__ import annotations

LINEAR_FLOOR = 0.01
"""The linear schedule's last rate, as a share of lr."""


class Schedule:
    """The rate the run's state holds, unchanged by validation (`constant`); the others change one of these."""

    def __init__(self, config):
        self.config = config            # a `TrainConfig`: lr, lr_decay, epochs, max_minutes

    def at_epoch(self, state) -> float:
        """The rate for the epoch `state.epoch` starts."""
        return state.lr

    def at_batch(self, state, done: float, elapsed: float) -> float | None:
        """The rate before a minibatch, `done` of the epoch being done after `elapsed` seconds; None: as it is."""
        return None

    def after_validation(self, state, improved: bool) -> None:
        """What a validation that did or did not improve on the best does to `state.lr`."""


class Plateau(Schedule):
    """Joulin & Mikolov (2015, §5): halve the rate when validation stops improving."""

    def after_validation(self, state, improved: bool) -> None:
        if not improved:
            state.lr /= 2


class Inverse(Schedule):
    """Dyer et al. (2015): lr / (1 + lr_decay · epoch)."""

    def at_epoch(self, state) -> float:
        return self.config.lr / (1 + self.config.lr_decay * state.epoch)


class Linear(Schedule):
    """lr times the share of the run still ahead, set before every minibatch: the larger of the shares done of the
    epochs and of the time budget. Under a time budget the rate decays to the end of the time the run is given,
    whatever the machine's speed: Li, Yumer & Ramanan (2020, "Budgeted training: rethinking deep neural network
    training under resource constraints") find a linear decay to the budget's end the best of the schedules they
    compare. A floor (`LINEAR_FLOOR`) keeps the last updates from vanishing where the last epoch runs past the
    budget's estimate."""

    def at_batch(self, state, done: float, elapsed: float) -> float:
        cfg = self.config
        share = (state.epoch + done) / cfg.epochs
        if cfg.max_minutes > 0:
            share = max(share, (state.seconds + elapsed) / (60 * cfg.max_minutes))
        return cfg.lr * max(1.0 - share, LINEAR_FLOOR)


SCHEDULES = {"plateau": Plateau, "inverse": Inverse, "linear": Linear, "constant": Schedule}
