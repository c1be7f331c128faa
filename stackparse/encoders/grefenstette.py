"""The neural stack, queue and deque of Grefenstette et al. (2015) as encoders.

E. Grefenstette, K. M. Hermann, M. Suleyman and P. Blunsom, "Learning to Transduce with Unbounded
Memory", NeurIPS 2015. The encoder drives `stackparse.models.neural_stack.NeuralMemoryController`
(the LSTM controller of §3.4, which the neural-stack, -queue and -deque sequence models use) with the
user's vectors in place of the embeddings e(x_t); its output is o_t and its memory a `NeuralStack`,
`NeuralQueue` or `NeuralDeque` of `stackparse.memories.grefenstette`.

The output of the initial state, before any input, is the zero vector (the controller's h_0 = 0; o_t
is defined from the first input on).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import dynet as dy

from stackparse.encoders.base import Encoder, EncoderConfig
from stackparse.memories.grefenstette import NeuralDeque, NeuralQueue, NeuralStack
from stackparse.models.neural_stack import ControllerState, NeuralMemoryController


@dataclass(frozen=True)
class NeuralMemoryEncoderConfig(EncoderConfig):
    """memory_size: m, the width of the values pushed. layers: the LSTM controller's layers.
    pop_bias: the initial bias of every pop signal (the paper's Appendix B: -1).
    """
    memory_size: int
    layers: int = 1
    pop_bias: float = -1.0

    at_least_one: ClassVar[tuple[str, ...]] = EncoderConfig.at_least_one + ("memory_size", "layers")


class _NeuralMemoryEncoder(Encoder):
    """An encoder around NeuralMemoryController; subclasses name the memory class."""
    Config = NeuralMemoryEncoderConfig
    memory_class: ClassVar[type]

    def __init__(self, pc: dy.ParameterCollection, input_dim: int, hidden_dim: int, **options):
        # memory_size defaults to hidden_dim: the paper's settings make both the same (256 and 256).
        super().__init__(pc, input_dim, hidden_dim, **{"memory_size": hidden_dim, **options})
        c = self.spec
        self.controller = NeuralMemoryController(self.pc, self.memory_class, input_dim, hidden_dim,
                                                 c.memory_size, c.layers, c.pop_bias)

    def _start(self, batch_size: int) -> ControllerState:
        return self.controller.initial_state()

    def _step(self, controller_state: ControllerState, x: dy.Expression) -> ControllerState:
        return self.controller.step(controller_state, x)

    def _output(self, controller_state: ControllerState, batch_size: int) -> dy.Expression:
        if controller_state.output is None:
            return dy.zeros((self.spec.hidden_dim,), batch_size=batch_size)
        return controller_state.output

    def _memory(self, controller_state: ControllerState) -> NeuralStack | NeuralQueue | NeuralDeque:
        return controller_state.memory


_ARGS = """
    Args:
      pc: the user's ParameterCollection; the parameters go into a sub-collection of their own.
      input_dim: the width of the input vectors (the paper's embeddings e(x_t)).
      hidden_dim: h, the LSTM controller's width and that of o_t (the output).
      memory_size: m, the width of the values pushed (default: hidden_dim).
      layers: the LSTM controller's layers (default 1).
      pop_bias: the initial bias of the pop signals (default -1, the paper's Appendix B).
"""


class NeuralStackEncoder(_NeuralMemoryEncoder):
    __doc__ = """Grefenstette et al.'s LSTM controlling a neural stack (§3.1, eq. 1-3) as an encoder.

    `state.memory` is a `NeuralStack`: `values`, (m, t) x batch, one column per input read, the
    oldest first; `strengths`, (t,) x batch, how much of each is still on the stack; `read()`, [r_t].
    `state.controller_state.signals` holds the last push, pop and value.
""" + _ARGS
    memory_class = NeuralStack


class NeuralQueueEncoder(_NeuralMemoryEncoder):
    __doc__ = """Grefenstette et al.'s LSTM controlling a neural queue (§3.2, eq. 1, 4-5) as an encoder.

    `state.memory` is a `NeuralQueue`: `values` and `strengths` as the stack's, the front (the
    oldest) first; `read()`, [r_t] from the front.
""" + _ARGS
    memory_class = NeuralQueue


class NeuralDequeEncoder(_NeuralMemoryEncoder):
    __doc__ = """Grefenstette et al.'s LSTM controlling a neural double-ended queue (§3.3, eq. 6-11) as
    an encoder: each step pushes, pops and reads at both ends.

    `state.memory` is a `NeuralDeque`: `values`, (m, 2t) x batch, the bottom end first; `strengths`,
    (2t,) x batch; `read()`, [r_top, r_bottom].
""" + _ARGS
    memory_class = NeuralDeque
