"""The NSPDA paper's two noises (Mali, Ororbia & Giles), as trainer hooks (`hooks_for`).

`WeightNoise`, the adaptive noise regularizer for weight tensors of any order (Algorithm 2): before each
update a random share of every weight tensor's transition sub-matrices gets Gaussian noise, the gradient
is taken at the perturbed weights, and after the update the same noise is taken off (it never accumulates):

    W <- W + E,   W <- W - lr grad L(W + E),   W <- W - E

`LearningRateNoise`, the stochastic learning rate: each update's rate times a factor uniform in
[1 - lr_noise, 1 + lr_noise], then restored (with Adam, its step size alpha: Adam ignores the loss's scale).

A tensor (rows, N, K_2, ..., K_p) is stored as (rows, N K_2 ... K_p) (`stackparse.encoders.tensors`); its
sub-matrices W[:, :, k_2, ..., k_p], blocks of N columns, are whole transitions of the state machine.

Choices the paper leaves open, and why:
- "Adaptive": a sub-matrix's noise has standard deviation `scale` times its own root mean square, so it follows
  the weights as they grow (programmed weights H get noise scale * H) whatever the tensor's order or size.
- Which sub-matrices: ceil(share * count) of each tensor, drawn afresh at every update.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import dynet as dy
import numpy as np

from stackparse.config import setting
from stackparse.models.capabilities import WeightTensors, require


@dataclass(frozen=True)
class NoiseSettings:
    noise: float = setting(0.0, "higher-order models: adaptive weight noise (NSPDA Algorithm 2), relative to "
                           "each sub-matrix's size, 0 = off", min=0)
    noise_share: float = setting(0.5, "share of the transition sub-matrices perturbed at each update",
                                 min=0, min_open=True, max=1)
    lr_noise: float = setting(0.0, "stochastic learning rate: each step times a factor uniform in [1-x, 1+x], "
                              "0 = off", min=0, max=1, max_open=True)


def hooks_for(settings: NoiseSettings, model) -> list:
    """The trainer hooks (`stackparse.training.trainer.Hook`) `settings` turn on for `model`: the
    weights' noise first, so that its draws come first from the epoch's generator."""
    hooks = []
    if settings.noise > 0:
        require(model, WeightTensors, "noise")
        hooks.append(WeightNoise(model.weight_tensors(), settings.noise, settings.noise_share))
    if settings.lr_noise > 0:
        hooks.append(LearningRateNoise(settings.lr_noise))
    return hooks


@dataclass
class WeightNoise:
    """Algorithm 2 as a hook: `perturb` before each loss is taken, removed after the update."""
    tensors: list[tuple[dy.Parameters, tuple[int, ...]]]
    scale: float
    share: float
    applied: Perturbation | None = None

    def before_update(self, optimizer, rng: np.random.Generator) -> None:
        self.applied = perturb(self.tensors, self.scale, self.share, rng)

    def after_update(self, optimizer) -> None:
        self.applied.remove()


@dataclass
class LearningRateNoise:
    """The stochastic learning rate as a hook: times a factor uniform in [1 - spread, 1 + spread] for one update."""
    spread: float
    rate: float = 0.0

    def before_update(self, optimizer, rng: np.random.Generator) -> None:
        self.rate = optimizer.learning_rate
        optimizer.learning_rate = self.rate * float(rng.uniform(1 - self.spread, 1 + self.spread))

    def after_update(self, optimizer) -> None:
        optimizer.learning_rate = self.rate


@dataclass(frozen=True)
class Perturbation:
    """The noise added to some parameters, so that `remove` can take it off again."""
    deltas: tuple[tuple[dy.Parameters, np.ndarray], ...]

    def remove(self) -> None:
        for p, delta in self.deltas:
            p.set_value(p.as_array() - delta)


def submatrices(shape: tuple[int, ...]) -> int:
    """How many sub-matrices W[:, :, k_2, ...] a tensor of this shape (rows, N, K_2, ...) has."""
    return int(np.prod(shape[2:], dtype=int))


def perturb(tensors: list[tuple[dy.Parameters, tuple[int, ...]]], scale: float, share: float,
            rng: np.random.Generator) -> Perturbation:
    """Add Algorithm 2's noise to `tensors`, (parameter, shape (rows, N, K_2, ...)) pairs as a model's
    `weight_tensors` gives: a `share` of each tensor's sub-matrices, with a standard deviation of
    `scale` times each one's root mean square, drawn from `rng` only. Returns it, for `remove`."""
    deltas = []
    for p, shape in tensors:
        values, width, count = p.as_array(), shape[1], submatrices(shape)
        delta = np.zeros_like(values)
        for block in rng.permutation(count)[:math.ceil(share * count)]:
            columns = slice(block * width, (block + 1) * width)
            rms = float(np.sqrt(np.mean(values[:, columns] ** 2)))
            delta[:, columns] = rng.normal(0.0, scale * rms, size=(values.shape[0], width))
        p.set_value(values + delta)
        deltas.append((p, delta))
    return Perturbation(tuple(deltas))
