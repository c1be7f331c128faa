"""The NSPDA paper's two noises (Mali, Ororbia & Giles), as trainer hooks (`hooks_for`): the adaptive
noise regularizer for weight tensors of any order (Algorithm 2, `WeightNoise`), and the stochastic
learning rate (`LearningRateNoise`).

Before each update, a random share of the transition sub-matrices of every weight tensor is
perturbed with Gaussian noise; the gradient is taken at the perturbed weights; after the update the
same noise is taken off again, so the noise never accumulates in the weights:

    W <- W + E,   W <- W - lr grad L(W + E),   W <- W - E

The stochastic learning rate multiplies each update's learning rate by a factor drawn uniformly in
[1 - lr_noise, 1 + lr_noise], then restores it: with SGD the step the gradient gets is scaled, with
Adam the step size alpha (the rate, not the loss: Adam is invariant to the loss's scale).

A tensor (rows, N, K_2, ..., K_p) is stored as (rows, N K_2 ... K_p) (`stackparse.models.second_order`);
its sub-matrices W[:, :, k_2, ..., k_p] are its blocks of N consecutive columns, one per combination
of the higher-order indices (input symbol, read symbol): for a third-order tensor, one per
(input, read) pair. Perturbing whole sub-matrices perturbs whole transitions of the state machine.

Choices the paper leaves open, and why:
- "Adaptive": the noise of a sub-matrix has standard deviation `scale` times that sub-matrix's own
  root mean square, so it follows the weights as they grow (programmed weights of size H get noise of
  size scale * H, random small ones small noise) and does not depend on the tensor's order or size.
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
    """The weights' noise (Algorithm 2) and the learning rate's (module docstring)."""
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
    """Algorithm 2 as a hook: the noise goes on before each loss is taken and comes off after the update
    (`tensors`, `scale`, `share`: as `perturb` takes them)."""
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
    """The stochastic learning rate as a hook: the rate times a factor uniform in [1 - spread, 1 + spread]
    for one update, then the rate it was."""
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
    """Add the noise of Algorithm 2 (module docstring) to `tensors`.

    Args:
      tensors: (parameter, shape (rows, N, K_2, ...)) pairs, as a model's `weight_tensors` gives.
      scale: the noise's standard deviation relative to each sub-matrix's root mean square.
      share: the fraction of each tensor's sub-matrices perturbed.
      rng: the only source of randomness.
    Returns:
      The perturbation, for `remove`.
    """
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
