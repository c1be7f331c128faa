"""LSTM controllers of Grefenstette et al.'s neural stack, queue and deque (2015, §3.4), on the memories
of `stackparse.memories.grefenstette`, and the deep-LSTM baseline of their §4.4.

With e(x_t) the embedding of the input symbol (§4: 64 dimensions), r_{t-1} the previous read ((m,)
per end; the deque has two ends, top and bottom), h hidden units:
    o'_t, h_t = LSTM(e(x_t) ; r_{t-1}, h_{t-1})              (the controller, `layers` layers)
    d_t = sigmoid(W_d o'_t + b_d)     u_t = sigmoid(W_u o'_t + b_u)        (push, pop: one per end)
    v_t = tanh(W_v o'_t + b_v)        o_t = tanh(W_o o'_t + b_o)           (value (m,), output (h,))
    (V_t, s_t), r_t = memory(V_{t-1}, s_{t-1}, d_t, u_t, v_t)             (eq. 1-3, 4-5 or 6-11)
    y_t = softmax(V o_t + c)                                               (SequenceModel.scores)
W_d and W_u are stacked as one (2 * ends, h) matrix, W_v as one (ends * m, h) matrix.
`NeuralMemoryController` holds these equations once; the sequence models here drive it with embedded
symbols, the encoders of `stackparse.encoders` with the user's vectors.

Choices the paper leaves open, and why:
- One embedding matrix for all input symbols, source and target ones alike (§4 has "separate
  embedding matrices ... for input and output": here inputs and outputs have separate ids, and the
  outputs are the softmax layer's rows, so that is what we read it as). The deep-LSTM benchmark
  reads the same embeddings; `--embedding 0` gives one-hot inputs as the other models here.
- The pop bias b_u starts at `pop_bias` = -1, the initialisation the paper's Appendix B recommends
  for the controller to use the memory at all; the push bias starts at 0.
- h_0 and the LSTM's initial cell are zero, like the other models here (the paper learns h_0).
- Defaults: 64 hidden units and 64-dimensional memory values (the paper's smaller setting is 256
  and 256), so a run trains in minutes on one CPU core; with the transduction tasks' default
  training (stackparse/experiments.py) the stack learns reversal and the queue copy at that size.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, NamedTuple

import dynet as dy
import numpy as np

from stackparse.errors import UserError
from stackparse.memories.grefenstette import (
    NeuralDeque,
    NeuralQueue,
    NeuralStack,
    Signals,
)
from stackparse.models.base import ModelConfig, SequenceModel, register
from stackparse.models.recurrent import LSTM


@dataclass(frozen=True)
class TransducerConfig(ModelConfig):
    """Settings shared by the models of Grefenstette et al.'s experiments.

    hidden: controller units (the paper: 256 or 512; 64 here, to train in minutes on a CPU core,
      and enough for the transduction tasks with the length curriculum).
    embedding: dimension of the learned input embeddings (§4: 64); 0 = one-hot inputs, as the
      other models of this package.
    """
    hidden: int = 64
    embedding: int = 64

    def validate(self) -> None:
        super().validate()
        if self.embedding < 0:
            raise UserError(f"--embedding must be 0 (one-hot) or positive (got {self.embedding})")


@dataclass(frozen=True)
class NeuralMemoryConfig(TransducerConfig):
    """Settings of the memory-enhanced LSTMs.

    memory_size: m, the dimension of the values pushed (the paper: 256; 64 here, as `hidden`).
    pop_bias: the initial bias of every pop signal (the paper's Appendix B: -1).
    """
    memory_size: int = 64
    pop_bias: float = -1.0

    def validate(self) -> None:
        super().validate()
        if self.memory_size < 1:
            raise UserError(f"--memory-size must be at least 1 (got {self.memory_size})")


@dataclass(frozen=True)
class DeepLSTMConfig(TransducerConfig):
    """The benchmark of §4.4; 2 layers have about as many parameters as the memory models."""
    layers: int = 2


class _Embedded:
    """Mixin for SequenceModels: learned input embeddings `E` (§4), or one-hot inputs when the
    `embedding` setting is 0. Call `add_embedding` in __init__."""
    E = None

    def add_embedding(self) -> None:
        if self.config.embedding:
            self.E = self.pc.add_lookup_parameters((self.n_inputs, self.config.embedding), name="E")

    def input_size(self) -> int:
        return self.config.embedding or self.n_inputs

    def embed(self, ids):
        """(input_size,) x batch."""
        return dy.lookup_batch(self.E, list(ids)) if self.E is not None else super().embed(ids)


@register
class DeepLSTM(_Embedded, LSTM):
    name = "deep-lstm"
    description = "Deep LSTM over learned embeddings, the benchmark of Grefenstette et al. 2015 (§4.4)"
    Config = DeepLSTMConfig

    def __init__(self, pc, config: DeepLSTMConfig, n_inputs, n_outputs):
        super().__init__(pc, config, n_inputs, n_outputs)
        self.add_embedding()


class ControllerState(NamedTuple):
    lstm: dy.RNNState
    output: dy.Expression | None       # o_t: (h,) x B; None before the first step
    memory: NeuralStack | NeuralQueue | NeuralDeque
    signals: list[Signals] | None      # the last step's signals, one per end (for inspection)


class NeuralMemoryController:
    """The LSTM controller of §3.4 around a memory class with `ends`, `empty`, `next`, `read`,
    `restore`: its parameters and its step. The one implementation behind the sequence models below
    and the encoders of `stackparse.encoders`.

    Args:
      pc: the collection the parameters go into, under their own names: the caller's own
        sub-collection, so that models saved before this class existed still load.
      memory_class: NeuralStack, NeuralQueue or NeuralDeque.
      input_dim: the width of the input e(x_t). hidden_dim: h. memory_size: m.
      layers: the LSTM's layers. pop_bias: the initial bias of every pop signal.
    """

    def __init__(self, pc: dy.ParameterCollection, memory_class: type, input_dim: int, hidden_dim: int,
                 memory_size: int, layers: int, pop_bias: float):
        self.memory_class, self.memory_size, self.layers = memory_class, memory_size, layers
        h, m, ends = hidden_dim, memory_size, memory_class.ends
        self.lstm = dy.VanillaLSTMBuilder(layers, input_dim + ends * m, h, pc)                     # input ; reads
        self.W_du = pc.add_parameters((2 * ends, h), name="Wdu")
        self.b_du = pc.add_parameters((2 * ends,), init=np.tile([0.0, pop_bias], ends), name="bdu")
        self.W_v = pc.add_parameters((ends * m, h), name="Wv")
        self.b_v = pc.add_parameters((ends * m,), init=0.0, name="bv")
        self.W_o = pc.add_parameters((h, h), name="Wo")
        self.b_o = pc.add_parameters((h,), init=0.0, name="bo")

    def initial_state(self, tensors: list[dy.Expression] | None = None) -> ControllerState:
        """A zero LSTM state and an empty memory (both broadcast over any batch), or the state whose
        `state_tensors` are `tensors`.

        Args:
          tensors: a state saved by `state_tensors` (truncated BPTT), or None.
        Returns:
          The state before the next input.
        """
        if tensors is None:
            return ControllerState(self.lstm.initial_state(), None, self.memory_class.empty(self.memory_size), None)
        lstm, memory = tensors[:2 * self.layers], tensors[2 * self.layers:]
        return ControllerState(self.lstm.initial_state(lstm), None,
                               self.memory_class.restore(memory, self.memory_size), None)

    def step(self, state: ControllerState, x: dy.Expression) -> ControllerState:
        """Read one input: the LSTM step on e(x_t) ; r_{t-1}, the signals, o_t and the memory update.

        Args:
          state: the LSTM and the memory after t-1 inputs.
          x: e(x_t), (input_dim,) x B.
        Returns:
          The state after t inputs.
        """
        lstm = state.lstm.add_input(dy.concatenate([x, *state.memory.read()]))              # r_{t-1}
        controller = lstm.output()                                                           # o'_t: (h,)
        signals = self.signals(controller)
        output = dy.tanh(dy.affine_transform([self.b_o, self.W_o, controller]))             # o_t: (h,)
        return ControllerState(lstm, output, state.memory.next(*signals), signals)

    def signals(self, controller: dy.Expression) -> list[Signals]:
        """d_t, u_t and v_t for every end of the memory.

        Args:
          controller: the LSTM's output o'_t, (h,) x B.
        Returns:
          One Signals per end (the deque: top, then bottom).
        """
        m = self.memory_size
        actions = dy.logistic(dy.affine_transform([self.b_du, self.W_du, controller]))      # (2 ends,)
        values = dy.tanh(dy.affine_transform([self.b_v, self.W_v, controller]))            # (ends m,)
        return [Signals(dy.pick(actions, 2 * e), dy.pick(actions, 2 * e + 1),
                        dy.pick_range(values, e * m, (e + 1) * m))
                for e in range(self.memory_class.ends)]

    @staticmethod
    def state_tensors(state: ControllerState) -> list[dy.Expression]:
        """Every tensor of `state`, for `initial_state(tensors)` in a new graph.

        Args:
          state: a state of this controller.
        Returns:
          The LSTM's cells and hidden vectors, then the memory's tensors.
        """
        return [*state.lstm.s(), *state.memory.tensors()]


class _NeuralMemoryLSTM(_Embedded, SequenceModel):
    """A sequence model around `NeuralMemoryController`, reading embedded input symbols."""
    Config = NeuralMemoryConfig
    memory_class: ClassVar[type]
    end_names: ClassVar[tuple[str, ...]] = ("",)
    evaluation_batch = 16       # a graph holds every step's memory: ~25 MB per 250-step sequence

    def __init__(self, pc, config: NeuralMemoryConfig, n_inputs, n_outputs):
        super().__init__(pc, config, n_inputs, n_outputs)
        self.add_embedding()
        c = config
        self.controller = NeuralMemoryController(self.pc, self.memory_class, self.input_size(), c.hidden,
                                                 c.memory_size, c.layers, c.pop_bias)

    def initial_state(self, batch_size, tensors=None):
        return self.controller.initial_state(tensors)

    def step(self, state, ids):
        return self.controller.step(state, self.embed(ids))

    def hidden(self, state):
        return state.output

    def state_tensors(self, state):
        return self.controller.state_tensors(state)

    def trace(self, state):
        """Push and pop signals of the last step, per end, and the total strength in the memory."""
        columns = []
        for name, signal in zip(self.end_names, state.signals):
            columns += [(f"push{name}", f"{signal.push.npvalue().item(0):.2f}"),
                        (f"pop{name}", f"{signal.pop.npvalue().item(0):.2f}")]
        return columns + [("strength", f"{state.memory.strengths.npvalue().reshape(-1).sum():.2f}")]


@register
class NeuralStackLSTM(_NeuralMemoryLSTM):
    name = "neural-stack"
    description = "LSTM controlling a neural stack (Grefenstette et al. 2015, eq. 1-3)"
    memory_class = NeuralStack


@register
class NeuralQueueLSTM(_NeuralMemoryLSTM):
    name = "neural-queue"
    description = "LSTM controlling a neural queue (Grefenstette et al. 2015, eq. 4-5)"
    memory_class = NeuralQueue


@register
class NeuralDequeLSTM(_NeuralMemoryLSTM):
    name = "neural-deque"
    description = "LSTM controlling a neural double-ended queue (Grefenstette et al. 2015, eq. 6-11)"
    memory_class = NeuralDeque
    end_names = (" top", " bottom")
    evaluation_batch = 8        # twice the rows of a stack

