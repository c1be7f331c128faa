"""The NSPDA paper's two noises (Mali, Ororbia & Giles), as trainer hooks (`hooks_for`).

`WeightNoise`, the adaptive noise regularizer for weight tensors of any order: before each update some of every
weight tensor's transition sub-matrices are perturbed, the gradient is taken at the perturbed weights, and after
the update the perturbation is taken off again (it never accumulates):

    W <- W + E,   W <- W - lr grad L(W + E),   W <- W - E

E is drawn by one of two rules (`noise_kind`):

- `algorithm2`, the paper's Algorithm 2 (`algorithm2`): the tensor's sub-matrices M_1..M_K, K = len(W), are cut
  into three partitions P_1, P_2, P_3 (`partitions`: the bounds as printed, by integer division, the odd and even
  cases as printed); from each a share N_p of its matrices is drawn at random; one Gaussian scalar p ~ N(0, 1) is
  drawn, and each chosen matrix in turn (P_1's, then P_2's, then P_3's) becomes (p * beta) M, p halving after each.
- `additive`, this project's earlier reading: Gaussian noise added to `noise_share` of the sub-matrices, with a
  standard deviation of `noise` times each one's root mean square (`perturb`).

`LearningRateNoise`, the stochastic learning rate: each update's rate times a factor uniform in
[1 - lr_noise, 1 + lr_noise], then restored (with Adam, its step size alpha: Adam ignores the loss's scale). With the
trainer's `inverse` schedule it is the stochastic annealing the paper cites (`TrainConfig`: the rate of epoch e is
lr / (1 + lr_decay e), each update's a random factor around it).

A tensor (rows, N, K_2, ..., K_p) is stored as (rows, N K_2 ... K_p) (`stackparse.encoders.tensors`); its
sub-matrices W[:, :, k_2, ..., k_p], blocks of N columns, are whole transitions of the state machine.

Choices the paper leaves open, and why:
- Algorithm 2's "matrices" are the sub-matrices, whole transitions: the paper's W is A x B x C x D with A B
  matrices of C x D; ours are the tensor's transitions, one per combination of the non-state indices.
- The product (p * beta) M is applied as printed: it scales a chosen transition by a random factor that shrinks
  toward zero along Q (a DropConnect of whole transitions); beta is `noise`, which the paper does not give.
- N_p: the paper found shares between its lower and upper bound to help; each update draws N_p uniformly between
  `noise_share_min` and `noise_share_max` (equal bounds fix it); a partition gives ceil(N_p |P_i|) matrices, so
  a non-empty one always gives one; p is drawn afresh for each tensor at each update.
- "Adaptive" (additive rule): the noise follows each sub-matrix's own size, whatever the tensor's order or size.
- With two-stage incremental learning the paper found the stochastic rate better in the first stage and a
  fixed rate with weight noise in the second (`noise_by_stage`: each noise only in its stage).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import dynet as dy
import numpy as np

from stackparse.config import SettingError, check, setting
from stackparse.models.capabilities import WeightTensors, require


NOISE_KINDS = ("algorithm2", "additive")


@dataclass(frozen=True)
class NoiseSettings:
    noise: float = setting(0.0, "higher-order models: weight noise (NSPDA Algorithm 2), its scale: beta "
                           "(algorithm2) or the standard deviation relative to each sub-matrix's (additive); "
                           "0 = off", min=0)
    noise_kind: str = setting("algorithm2", "algorithm2 (the paper's: a Gaussian p times beta, multiplied into "
                              "some sub-matrices of each of three partitions, halved per matrix) or additive",
                              choices=NOISE_KINDS)
    noise_share: float = setting(0.5, "additive noise: share of the transition sub-matrices perturbed at each "
                                 "update", min=0, min_open=True, max=1)
    noise_share_min: float = setting(0.08, "algorithm2: the least share N_p of each partition's sub-matrices "
                                     "scaled (drawn at each update up to noise_share_max)", min=0, max=1)
    noise_share_max: float = setting(0.30, "algorithm2: the largest share N_p", min=0, max=1)
    noise_by_stage: bool = setting(True, "with two-stage incremental learning: the stochastic learning rate in "
                                   "stage 1 only, the weight noise in stage 2 only (the paper's text)")
    lr_noise: float = setting(0.0, "stochastic learning rate: each step times a factor uniform in [1-x, 1+x], "
                              "0 = off", min=0, max=1, max_open=True)

    def validate(self) -> None:
        check(self)
        if self.noise_share_min > self.noise_share_max:
            raise SettingError("noise_share_min", f"must be at most noise_share_max ({self.noise_share_max}), "
                               f"got {self.noise_share_min}")


def hooks_for(settings: NoiseSettings, model, stage: Callable[[], int] | None = None) -> list:
    """The trainer hooks (`stackparse.training.trainer.Hook`) `settings` turn on for `model`: the
    weights' noise first, so that its draws come first from the epoch's generator. `stage`: the
    two-stage schedule's stage now (1, 2, or 0 without one), for `noise_by_stage`."""
    hooks = []
    if settings.noise > 0:
        require(model, WeightTensors, "noise")
        hooks.append(WeightNoise(model.weight_tensors(), settings.noise, settings.noise_share, settings.noise_kind,
                                 (settings.noise_share_min, settings.noise_share_max)))
    if settings.lr_noise > 0:
        hooks.append(LearningRateNoise(settings.lr_noise))
    if settings.noise_by_stage and stage is not None:
        hooks = [InStage(h, 1 if isinstance(h, LearningRateNoise) else 2, stage) for h in hooks]
    return hooks


@dataclass
class WeightNoise:
    """The weight noise as a hook: drawn (`kind`: `algorithm2` or `perturb`) before each loss is taken,
    removed after the update. `scale`: beta or the relative deviation; `share`: the additive share;
    `shares`: Algorithm 2's range of N_p."""
    tensors: list[tuple[dy.Parameters, tuple[int, ...]]]
    scale: float
    share: float
    kind: str = "additive"
    shares: tuple[float, float] = (0.0, 0.0)
    applied: Perturbation | None = None

    def before_update(self, optimizer, rng: np.random.Generator) -> None:
        if self.kind == "algorithm2":
            self.applied = algorithm2(self.tensors, self.scale, self.shares, rng)
        else:
            self.applied = perturb(self.tensors, self.scale, self.share, rng)

    def after_update(self, optimizer) -> None:
        self.applied.remove()


@dataclass
class InStage:
    """`hook`, acting only while the two-stage schedule is in stage `active` (`now()`)."""
    hook: object
    active: int
    now: Callable[[], int]
    on: bool = False

    def before_update(self, optimizer, rng: np.random.Generator) -> None:
        self.on = self.now() in (0, self.active)
        if self.on:
            self.hook.before_update(optimizer, rng)

    def after_update(self, optimizer) -> None:
        if self.on:
            self.hook.after_update(optimizer)


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


def partitions(count: int) -> tuple[range, range, range]:
    """Algorithm 2's three partitions of K = `count` sub-matrices (0-based), with its bounds as printed: K odd:
    up to K/3, 2K/3, K; K even: up to (K-1)/3, (2K-1)/3, K (integer division)."""
    a, b = (count // 3, 2 * count // 3) if count % 2 else ((count - 1) // 3, (2 * count - 1) // 3)
    a, b = max(a, 0), max(b, 0)
    return range(0, a), range(a, b), range(b, count)


def algorithm2(tensors: list[tuple[dy.Parameters, tuple[int, ...]]], beta: float, shares: tuple[float, float],
               rng: np.random.Generator) -> Perturbation:
    """Algorithm 2 on `tensors` ((parameter, shape) pairs, as `weight_tensors` gives), drawing from `rng` only:
    for each tensor a share N_p in `shares`, ceil(N_p |P_i|) sub-matrices of each partition, one p ~ N(0, 1),
    and each chosen sub-matrix M becomes (p beta) M, p halving after each. Returns the change, for `remove`."""
    deltas = []
    for p, shape in tensors:
        values, width = p.as_array(), shape[1]
        share = float(rng.uniform(*shares))
        chosen = [int(k) for part in partitions(submatrices(shape))
                  for k in rng.permutation(np.arange(part.start, part.stop))[:math.ceil(share * len(part))]]
        p_hat = float(rng.normal())
        delta = np.zeros_like(values)
        for block in chosen:
            columns = slice(block * width, (block + 1) * width)
            delta[:, columns] = (p_hat * beta - 1.0) * values[:, columns]
            p_hat /= 2
        p.set_value(values + delta)
        deltas.append((p, delta))
    return Perturbation(tuple(deltas))
