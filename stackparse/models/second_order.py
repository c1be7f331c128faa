"""Higher-order (tensor) recurrent networks, and the second-order RNN of Giles et al. (1992).

C. L. Giles, C. B. Miller, D. Chen, H. H. Chen, G. Z. Sun and Y. C. Lee, "Learning and Extracting
Finite State Automata with Second-Order Recurrent Neural Networks", Neural Computation 4(3), 1992:

    s_i^t = g( sum_{j,k} W_ijk s_j^{t-1} x_k^t + b_i )                                   (eq. 1)

with one-hot inputs x^t, so each input symbol selects its own state-transition matrix W[:, :, k]: the network is a
neural state machine. The NNPDA and the NSPDA (`nnpda`, `nspda`) extend the product with the stack read, a third factor.

A product of order p is stored as a matrix (`stackparse.encoders.tensors`). `TensorRNN` has `cell` and `response`
as pure functions of the state, the input and the weights: one implementation of each model's equations serves its
own `step` and the gradient methods that drive it with the weights as inputs (RTRL, UORO: `gradient_cell`).

Choices the papers leave open, and why:
- The response. Giles et al. read the answer off one state neuron at the end of the string. Here every model
  scores its outputs after every step, a task deciding which count; a softmax over the outputs replaces the
  response neuron (for two classes, the same thing up to a reparametrisation).
- s^0 = (1, 0, ..., 0) (`stackparse.encoders.tensors.start_vector`).
"""
from __future__ import annotations

import abc
from dataclasses import dataclass
from functools import partial
from typing import Any

import dynet as dy
import numpy as np

from stackparse.cells import Cell, MemoryCell
from stackparse.config import SettingError, setting
from stackparse.encoders.tensors import discretized, init_scale_setting, outer, start_vector, weight_tensor
from stackparse.models import arrays
from stackparse.models.arrays import SecondOrderArrays
from stackparse.models.base import ModelConfig, SequenceModel, register
from stackparse.sequences import reattach


@dataclass(frozen=True)
class TensorConfig(ModelConfig):
    """Settings of the higher-order models. `discretize_training` off is the paper's procedure as we read it (train,
    then discretize): training can find a solution in small weights that rounding sets to 0 (BENCHMARKS.md). On is
    not the default: the analog NNPDA's initial weights all round to 0, leaving no gradient into its action tensor
    (tests/test_nspda.py). Programmed weights (multiples of H) are unchanged by `weight_step`."""
    weight_step: float = setting(1.0, "higher-order models: round every weight to a multiple of this at "
                                 "evaluation (the NSPDA paper's discretized weights), 0 = off", min=0)
    init_scale: float = init_scale_setting()
    discretize_training: bool = setting(False, "higher-order models: the weights rounded by weight_step in "
                                        "training too (straight-through gradients), so the model trained is "
                                        "the model evaluated")

    def validate(self) -> None:
        super().validate()
        if self.layers != 1:
            raise SettingError("layers", f"must be 1: the higher-order models have one layer of state neurons "
                                         f"(got {self.layers})")


class TensorRNN(SequenceModel):
    """A model whose recurrence is a product of higher order (module docstring). Subclasses create their tensors
    with `add_tensor` (what noise perturbs), list `recurrent_parameters` and write `cell` with the weights given; a
    state whose differentiable part is not one vector says how it packs into one (`pack`, `unpack`)."""
    Config = TensorConfig
    # The NSPDA paper: "All higher-order RNNs made use of our proposed adaptive noise regularizer" (Algorithm 2;
    # its beta is not given: 1 is our choice), and "for higher order networks, UORO performed better and we use this
    # to optimize all RNNs of this type" (Experimental details), with the refinement the task asks for.
    default_training = {"data": {"noise": 1.0, "noise_kind": "algorithm2", "grad": "uoro"}}

    def __init__(self, pc, config: TensorConfig, n_inputs, n_outputs, state_size: int | None = None):
        super().__init__(pc, config, n_inputs, n_outputs)
        self._tensors: dict[str, tuple[dy.Parameters, tuple[int, ...]]] = {}
        self.state_size = state_size or config.hidden

    def add_tensor(self, name: str, rows: int, factors: tuple[int, ...]) -> dy.Parameters:
        """A weight tensor (rows, *factors) (`weight_tensor`), registered for `weight_tensors`."""
        p = weight_tensor(self.pc, name, rows, factors, self.config.init_scale)
        self._tensors[name] = (p, (rows, *factors))
        return p

    def weight_tensors(self) -> list[tuple[dy.Parameters, tuple[int, ...]]]:
        """The transition tensors and their shapes (rows, N, K_2, ...): what noise perturbs."""
        return list(self._tensors.values())

    def weight(self, e: dy.Expression) -> dy.Expression:
        """A parameter's expression as this step uses it: discretized at evaluation when the settings say so."""
        if self.training and not self.config.discretize_training:
            return e
        return discretized(e, self.config.weight_step)

    def start_vector(self, batch_size: int) -> dy.Expression:
        """s^0 = (1, 0, ..., 0) for every sequence: (N,) x B."""
        return start_vector(self.state_size, batch_size)

    @abc.abstractmethod
    def recurrent_parameters(self) -> list[dy.Parameters]:
        """The parameters of the recurrence, in the order `cell` takes their expressions."""

    def trained_parameters(self) -> list[dy.Parameters]:
        """Every parameter training changes: the recurrence's, then the response's V and c."""
        return [*self.recurrent_parameters(), *self.readout_parameters()]

    def weights(self, theta: list[dy.Expression] | None = None) -> list[dy.Expression]:
        """`weight` of each recurrent parameter; `theta`: the expressions that stand for them (the gradient
        cell's), None for the parameters themselves."""
        return [self.weight(e) for e in theta or self.parameter_expressions()]

    def array_rounding(self) -> tuple:
        """`weights` in training, in numpy, for the mirror (`ArrayCell.rounding`): each recurrent parameter to a
        multiple of `weight_step` with `discretize_training`, else nothing."""
        if not self.config.discretize_training or self.config.weight_step <= 0:
            return ()
        return (partial(arrays.discretized, step=self.config.weight_step),) * len(self.recurrent_parameters())

    def parameter_expressions(self) -> list[dy.Expression]:
        """The recurrent parameters as expressions of the current graph."""
        return [p.expr(True) for p in self.recurrent_parameters()]

    @abc.abstractmethod
    def cell(self, state, x: dy.Expression, ids, weights: list[dy.Expression]):
        """One step as a function of (state, one-hot input x; the ids where a discrete memory needs
        them; the recurrence's weights, in the order of `recurrent_parameters`)."""

    def step(self, state, ids):
        return self.cell(state, self.embed(ids), ids, self.weights())

    def refine_cell(self, state, x: dy.Expression, ids, weights: list[dy.Expression]):
        """The recurrence again on x with any memory left as it is (`Refinable`); `cell` for a memoryless model."""
        return self.cell(state, x, ids, weights)

    def refine(self, state, ids, hold=None, weights: list[dy.Expression] | None = None):
        """`refine_cell` on the step's input with `weights` (None: `weights()`); the sequences `hold` marks keep
        their state (`Refinable`)."""
        new = self.refine_cell(state, self.embed(ids), ids, self.weights() if weights is None else weights)
        if hold is None or not np.any(hold):
            return new
        (old, rest), (vector, _) = self.pack(state), self.pack(new)
        held = np.asarray(hold, dtype=float).reshape(1, -1)
        keep, change = reattach([held, 1.0 - held])
        return self.unpack(dy.cmult(keep, old) + dy.cmult(change, vector), rest)

    def response(self, state, V: dy.Expression, c: dy.Expression) -> dy.Expression:
        """The output scores V hidden(state) + c (`scores`), with the weights given: (n_outputs,) x B."""
        return dy.affine_transform([c, V, self.hidden(state)])

    def scores(self, state):
        return self.response(state, *self.readout())

    def neurons(self, state) -> dy.Expression:
        """The state neurons s^t: (N,) x B (the state itself here)."""
        return state

    def pack(self, state) -> tuple[dy.Expression, Any]:
        """The state's differentiable part in one vector, (D,) x B, and the rest (None here)."""
        return state, None

    def unpack(self, vector: dy.Expression, rest: Any):
        """The inverse of `pack`."""
        return vector

    def gradient_cell(self) -> tuple[Cell, list[dy.Parameters]]:
        """This model's step (`cell`), refinement pass (`refine`) and loss (-log softmax of `response`) as a cell for
        the gradient methods, and its parameters in order: the recurrence's, then V and c. The cell uses the weights
        as the step does (`weights`: discretized in training with `discretize_training`). A step's inputs are the
        batch's input ids, the loss's targets its target ids; `pack`'s rest, when there is one (the NSPDA's discrete
        stack), is the memory of a `MemoryCell` (copies of a batch act on its stacks as one: `DiscreteStack.tile`)."""
        recurrent = len(self.recurrent_parameters())

        def transition(theta, vector, ids, memory=None):
            weights = self.weights(theta[:recurrent])
            return self.pack(self.cell(self.unpack(vector, memory), self.embed(ids), ids, weights))

        def refine(theta, vector, ids, hold):
            return self.pack(self.refine(self.unpack(vector, None), ids, hold, self.weights(theta[:recurrent])))[0]

        def loss(theta, vector, targets):
            return dy.pickneglogsoftmax_batch(self.response(self.unpack(vector, None), *theta[recurrent:]),
                                              list(targets))

        dy.renew_cg()
        vector, memory = self.pack(self.initial_state(1))
        initial, params = vector.npvalue().reshape(-1), self.trained_parameters()
        if memory is None:
            return Cell(lambda theta, vector, ids: transition(theta, vector, ids)[0], loss, initial, refine), params
        return MemoryCell(transition, loss, initial, refine, memory=memory), params

    def parameter_count(self) -> int:
        """p: the numbers in `trained_parameters`."""
        return sum(int(np.prod(p.shape())) for p in self.trained_parameters())


@register
class SecondOrderRNN(TensorRNN):
    name = "rnn2"
    description = "second-order RNN, a neural state machine (Giles et al. 1992, eq. 1)"

    def __init__(self, pc, config, n_inputs, n_outputs):
        super().__init__(pc, config, n_inputs, n_outputs)
        self.W = self.add_tensor("W", config.hidden, (config.hidden, n_inputs))
        self.b = self.pc.add_parameters((config.hidden,), init=0.0, name="b")

    def initial_state(self, batch_size, tensors=None, start=None):
        """s^0; or the state `tensors` holds; or `start`, (N,) x B (`stackparse.training.refinement`)."""
        if tensors is not None:
            return tensors[0]
        return self.start_vector(batch_size) if start is None else start

    def recurrent_parameters(self):
        return [self.W, self.b]

    def weights(self, theta=None):
        """W as `weight` makes it; b as it is (only the weight tensor is discretized at evaluation)."""
        W, b = theta or self.parameter_expressions()
        return [self.weight(W), b]

    def cell(self, state, x, ids, weights):
        """Eq. 1: s^t = sigmoid(W (s^{t-1} (x) x^t) + b)."""
        W, b = weights
        return dy.logistic(dy.affine_transform([b, W, outer([state, x])]))

    def hidden(self, state):
        return state

    def state_tensors(self, state):
        return [state]

    def array_cell(self):
        """`gradient_cell` in numpy, with its derivatives (`stackparse.models.arrays`)."""
        return SecondOrderArrays(self.config.hidden, self.n_inputs, self.parameter_count(), self.array_rounding())
