"""Grefenstette et al.'s strength updates and reads in numpy, each with its vector-Jacobian product: what the numpy
mirror of the neural-memory models (`stackparse.models.neural_stack_arrays`) runs.

The same functions as `stackparse.memories.grefenstette`, over (B, n) arrays (a row per sequence, positions bottom
first), in the same order of operations, so that float32 gives the same numbers: "u_t (or 1) minus the strength
beyond position i" is one cumulative sum of [u_t; -s] walking in from that end (eq. 2, 4, 7, 8 and the reads' eq. 3,
5, 10, 11). The derivatives keep DyNet's conventions at ties: relu's derivative is 0 at 0, and min(a, b) = a - relu(a
- b) sends a tie's gradient to a (the paper's footnote 1).

Each forward function returns its result and what its vector-Jacobian product needs (the relus' masks); the
products take the gradient of the result and give those of the inputs.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np


def less_beyond(start: np.ndarray, s: np.ndarray, from_top: bool) -> np.ndarray:
    """start - sum_{j beyond i} s[:, j] for every position i, "beyond" being above i (from_top) or below it.
    start: (B, 1); s: (B, n). (B, n)."""
    n = s.shape[1]
    if not from_top:
        return np.cumsum(np.concatenate([start, -s], axis=1), axis=1)[:, :n]
    walk = np.cumsum(np.concatenate([start, -s[:, ::-1]], axis=1), axis=1)          # (B, n + 1); walk[:, n] unused
    return walk[:, n - 1::-1]                                                         # position i: walk[:, n - 1 - i]


def less_beyond_vjp(g: np.ndarray, from_top: bool) -> tuple[np.ndarray, np.ndarray]:
    """The gradients of `less_beyond`'s start, (B, 1), and s, (B, n), given g, (B, n), that of its result:
    s[j] enters every position i it is beyond, with the sign -1, so its gradient is minus the sum of g over the
    positions below j (from_top) or above it: an inclusive cumulative sum less g itself."""
    reach = np.cumsum(g, axis=1) if from_top else np.cumsum(g[:, ::-1], axis=1)[:, ::-1]
    reach -= g
    np.negative(reach, out=reach)
    return g.sum(axis=1, keepdims=True), reach


class Pop(NamedTuple):
    """What `pop_vjp` needs: where relu(less) and the new strengths were positive."""
    less_positive: np.ndarray
    kept: np.ndarray


def pop(s: np.ndarray, u: np.ndarray, from_top: bool) -> tuple[np.ndarray, Pop]:
    """Remove u, (B, 1), of strength from the top (last position) or the bottom (first) of s, (B, n): eq. 2 or 4
    (the deque's eq. 7, 8). s_new[i] = max(0, s[i] - max(0, u - (strength beyond i))). (B, n)."""
    less = less_beyond(u, s, from_top)
    y = s - np.maximum(less, 0)
    return np.maximum(y, 0), Pop(less > 0, y > 0)


def pop_vjp(g: np.ndarray, cache: Pop, from_top: bool) -> tuple[np.ndarray, np.ndarray]:
    """The gradients of `pop`'s s, (B, n), and u, (B, 1), given g, (B, n), that of the new strengths."""
    g_y = g * cache.kept
    g_u, g_s = less_beyond_vjp(-g_y * cache.less_positive, from_top)
    return g_s + g_y, g_u


class ReadWeights(NamedTuple):
    """What `read_weights_vjp` needs: where the room was positive and where it was below the strength."""
    room_positive: np.ndarray
    capped: np.ndarray


def read_weights(s: np.ndarray, from_top: bool) -> tuple[np.ndarray, ReadWeights]:
    """The weight of each row in a read, eq. 3 or 5 (the deque's 10, 11): min(s[i], max(0, 1 - strength beyond
    i)), for s (B, n). (B, n)."""
    room = less_beyond(np.ones_like(s[:, :1]), s, from_top)
    excess = s - np.maximum(room, 0)
    return s - np.maximum(excess, 0), ReadWeights(room > 0, excess > 0)


def read_weights_vjp(g: np.ndarray, cache: ReadWeights, from_top: bool) -> np.ndarray:
    """The gradient of `read_weights`' s, (B, n), given g, (B, n), that of the weights."""
    g_room = g * cache.capped
    _, g_s = less_beyond_vjp(g_room * cache.room_positive, from_top)
    return g_s + g - g_room
