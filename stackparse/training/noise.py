"""The adaptive noise regularizer for weight tensors of any order (Mali, Ororbia & Giles, Algorithm 2).

Before each update, a random share of the transition sub-matrices of every weight tensor is
perturbed with Gaussian noise; the gradient is taken at the perturbed weights; after the update the
same noise is taken off again, so the noise never accumulates in the weights:

    W <- W + E,   W <- W - lr grad L(W + E),   W <- W - E

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
      tensors: (parameter, shape (rows, N, K_2, ...)) pairs, as `TensorRNN.weight_tensors` gives.
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
