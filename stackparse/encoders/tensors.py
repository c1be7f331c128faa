"""Higher-order (tensor) products, the pieces of the second-order RNN and the NSPDA (floor 2, so the
models and the NSPDA encoder share them).

A product of order p is stored as a matrix W: (N, N * K_2 * ... * K_p), its columns indexed by the flattened outer
product of the factors, the first factor fastest (`outer`): column n + N (k + K l) for (state n, input k, read l). The
N-column blocks W[:, block] are the transition sub-matrices W[:, :, k, l]: the unit the noise regularizer perturbs and
the programming sets (`stackparse.training.noise`, `stackparse.models.programming`).
"""
from __future__ import annotations

import dynet as dy
import numpy as np

from stackparse._dynet import product as matmul
from stackparse.config import setting


def outer(factors: list[dy.Expression]) -> dy.Expression:
    """The flattened outer product of batched vectors, the first factor's index fastest.

    Args:
      factors: vectors (K_1,) x B, (K_2,) x B, ...
    Returns:
      (K_1 K_2 ...,) x B, entry k_1 + K_1 (k_2 + K_2 (...)) = prod_i factors[i][k_i].
    """
    product = factors[0]
    for factor in factors[1:]:
        size = product.dim()[0][0] * factor.dim()[0][0]
        product = dy.reshape(matmul(product, dy.transpose(factor)), (size,))    # column-major: first index fastest
    return product


def straight_through_round(x: dy.Expression) -> dy.Expression:
    """round(x) forward, the identity's gradient backward (the straight-through estimator).

    Written as round(x) + (x - x) with the gradient blocked through round(x) and the second x, so the
    value is exactly round(x). (DyNet's own `dy.round(x, gradient_mode="straight_through_gradient")`
    was measured to give a zero gradient on some runs and not others of one same graph.)"""
    return dy.nobackprop(dy.round(x, gradient_mode="zero_gradient")) + (x - dy.nobackprop(x))


def levels(x: dy.Expression, above: tuple[float, ...] = (), below: tuple[float, ...] = (),
           scale: float = 1.0) -> dy.Expression:
    """scale (sum_a [x > a scale] - sum_b [x < b scale]) forward (a step function: the NSPDA's quantizers, binary and
    ternary weights of size `scale`), the identity's gradient backward (straight-through, as `straight_through_round`).

    The indicator [v > 0] is 1 - relu(1 - 1e30 relu(v)): exact in float32 (a v below 1e-30 counts as 0), and a tie
    falls on the side the comparison says, the same in every graph. round() at exactly 0.5 was not: with the
    paper's M1, whose state of zeros gives sigmoid(b) = 0.5 at b = 0, a batch of copies of a state (RTRL) and the
    state alone (BPTT) rounded it differently, and their losses differed."""
    def indicator(v: dy.Expression) -> dy.Expression:
        return -dy.rectify(-dy.rectify(v) * 1e30 + 1.0) + 1.0
    q = dy.esum([indicator(x - a * scale) for a in above] + [-indicator(-x + b * scale) for b in below])
    # No product at scale 1: the action quantizer calls this at every step.
    return dy.nobackprop(q * scale if scale != 1.0 else q) + (x - dy.nobackprop(x))


def quantized(x: dy.Expression, on: bool = True) -> dy.Expression:
    """round(x) for x in (-1.5, 1.5) (sigmoid and tanh units), ties toward 0, with the straight-through gradient
    (identity) (`levels`); or x itself when `on` is False."""
    return levels(x, above=(0.5,), below=(-0.5,)) if on else x


def discretized(expression: dy.Expression, step: float) -> dy.Expression:
    """A weight rounded to the nearest multiple of `step` (0: unchanged); the gradient passes
    straight through, so the same expression serves training and evaluation."""
    if step <= 0:
        return expression
    return straight_through_round(expression * (1.0 / step)) * step


def init_scale_setting():
    """The `init_scale` setting of every model built on weight tensors (`weight_tensor`'s scale)."""
    return setting(0.5, "higher-order models: initial weights uniform in [-x, x]", min=0, min_open=True)


def weight_tensor(pc: dy.ParameterCollection, name: str, rows: int, factors: tuple[int, ...],
                  scale: float) -> dy.Parameters:
    """A weight tensor (rows, *factors), stored as (rows, prod(factors)) (module docstring), uniform
    in [-scale, scale] (Giles et al.: small random weights)."""
    return pc.add_parameters((rows, int(np.prod(factors))), init=dy.UniformInitializer(scale), name=name)


def start_vector(size: int, batch_size: int) -> dy.Expression:
    """s^0 = (1, 0, ..., 0) for every sequence, (size,) x B: the first state neuron is on at the
    start, as in Giles et al., so that the product has a nonzero factor at the first step."""
    return dy.one_hot(size, [0] * batch_size)
