"""Higher-order (tensor) recurrent networks, and the second-order RNN of Giles et al. (1992).

C. L. Giles, C. B. Miller, D. Chen, H. H. Chen, G. Z. Sun and Y. C. Lee, "Learning and Extracting
Finite State Automata with Second-Order Recurrent Neural Networks", Neural Computation 4(3), 1992:

    s_i^t = g( sum_{j,k} W_ijk s_j^{t-1} x_k^t + b_i )                                   (eq. 1)

with one-hot inputs x^t, so each input symbol selects its own state-transition matrix W[:, :, k]:
the network is a neural state machine. The NNPDA and the NSPDA (`nnpda`, `nspda`) extend the product
with the stack read, a third factor.

A product of order p is stored as a matrix W: (N, N * K_2 * ... * K_p), its columns indexed by the
flattened outer product of the factors, the first factor fastest (`outer`): column n + N (k + K l)
for (state n, input k, read l). The N-column blocks W[:, block] are the transition sub-matrices
W[:, :, k, l]: the unit the noise regularizer perturbs and the programming sets
(`stackparse.training.noise`, `stackparse.models.programming`). `TensorRNN` is a model built on such
tensors; its `cell` is a pure function of (state, input) so that other gradient methods (RTRL, UORO)
can drive it step by step.

Choices the papers leave open, and why:
- The response. Giles et al. read the answer off one state neuron at the end of the string. Here
  every model scores its outputs after every step (`SequenceModel.scores`), so a task decides which
  steps count; a softmax over the outputs replaces the single response neuron (for two classes,
  the same thing up to a reparametrisation).
- s^0 = (1, 0, ..., 0): the first state neuron is on at the start, as in Giles et al., so that the
  product has a nonzero factor at the first step.
"""
from __future__ import annotations

import abc
from dataclasses import dataclass

import dynet as dy
import numpy as np

from stackparse.errors import UserError
from stackparse.models.base import ModelConfig, SequenceModel, register


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
        product = dy.reshape(product * dy.transpose(factor), (size,))    # column-major: first index fastest
    return product


def straight_through_round(x: dy.Expression) -> dy.Expression:
    """round(x) forward, the identity's gradient backward (the straight-through estimator).

    Written as round(x) + (x - x) with the gradient blocked through round(x) and the second x, so the
    value is exactly round(x). (DyNet's own `dy.round(x, gradient_mode="straight_through_gradient")`
    was measured to give a zero gradient on some runs and not others of one same graph.)
    """
    return dy.nobackprop(dy.round(x, gradient_mode="zero_gradient")) + (x - dy.nobackprop(x))


def discretized(expression: dy.Expression, step: float) -> dy.Expression:
    """A weight rounded to the nearest multiple of `step` (0: unchanged); the gradient passes
    straight through, so the same expression serves training and evaluation."""
    if step <= 0:
        return expression
    return straight_through_round(expression * (1.0 / step)) * step


@dataclass(frozen=True)
class TensorConfig(ModelConfig):
    """Settings of the higher-order models.

    weight_step: at evaluation, every weight is rounded to the nearest multiple of this (the paper
      discretizes the trained weights before testing); 0 = never. Programmed weights (multiples of
      H) are unchanged by it.
    init_scale: weights start uniform in [-init_scale, init_scale] (Giles et al.: small random).
    """
    weight_step: float = 1.0
    init_scale: float = 0.5

    def validate(self) -> None:
        super().validate()
        if self.layers != 1:
            raise UserError(f"the higher-order models have one layer of state neurons (got --layers {self.layers})")
        if self.weight_step < 0 or self.init_scale <= 0:
            raise UserError("--weight-step must be >= 0 (0 = off) and --init-scale positive")


class TensorRNN(SequenceModel):
    """A model whose recurrence is a product of higher order (see the module docstring).

    Subclasses create their tensors with `add_tensor`, and say which ones are the transition
    tensors the noise regularizer perturbs (`weight_tensors`).
    """
    Config = TensorConfig

    def __init__(self, pc, config: TensorConfig, n_inputs, n_outputs, state_size: int | None = None):
        super().__init__(pc, config, n_inputs, n_outputs)
        self._tensors: dict[str, tuple[dy.Parameters, tuple[int, ...]]] = {}
        start = np.zeros((1, state_size or config.hidden))
        start[0, 0] = 1.0
        # A lookup table rather than an input tensor: DyNet's input tensors must be kept alive by the
        # caller as long as the graph, a table's rows live in the model.
        self.start = self.pc.add_lookup_parameters((1, start.shape[1]), init=start, name="start")

    def add_tensor(self, name: str, rows: int, factors: tuple[int, ...]) -> dy.Parameters:
        """A weight tensor (rows, *factors), stored as (rows, prod(factors)) (module docstring)."""
        scale = self.config.init_scale
        p = self.pc.add_parameters((rows, int(np.prod(factors))), init=dy.UniformInitializer(scale), name=name)
        self._tensors[name] = (p, (rows, *factors))
        return p

    def weight_tensors(self) -> list[tuple[dy.Parameters, tuple[int, ...]]]:
        """The transition tensors and their shapes (rows, N, K_2, ...): what noise perturbs."""
        return list(self._tensors.values())

    def weight(self, p: dy.Parameters) -> dy.Expression:
        """A parameter as this step uses it: discretized at evaluation when the settings say so."""
        return p.expr(True) if self.training else discretized(p.expr(True), self.config.weight_step)

    def start_vector(self, batch_size: int) -> dy.Expression:
        """s^0 = (1, 0, ..., 0) for every sequence: (N,) x B."""
        return dy.lookup_batch(self.start, [0] * batch_size, update=False)

    @abc.abstractmethod
    def cell(self, state, x: dy.Expression, ids):
        """One step as a function of (state, one-hot input x; the ids where a discrete memory needs them)."""

    def step(self, state, ids):
        return self.cell(state, self.embed(ids), ids)


@register
class SecondOrderRNN(TensorRNN):
    name = "rnn2"
    description = "second-order RNN, a neural state machine (Giles et al. 1992, eq. 1)"

    def __init__(self, pc, config, n_inputs, n_outputs):
        super().__init__(pc, config, n_inputs, n_outputs)
        self.W = self.add_tensor("W", config.hidden, (config.hidden, n_inputs))
        self.b = self.pc.add_parameters((config.hidden,), init=0.0, name="b")

    def initial_state(self, batch_size, tensors=None):
        return tensors[0] if tensors is not None else self.start_vector(batch_size)

    def cell(self, state, x, ids=None):
        """Eq. 1: s^t = sigmoid(W (s^{t-1} (x) x^t) + b)."""
        return dy.logistic(dy.affine_transform([self.b, self.weight(self.W), outer([state, x])]))

    def hidden(self, state):
        return state

    def state_tensors(self, state):
        return [state]
