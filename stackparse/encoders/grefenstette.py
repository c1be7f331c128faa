"""The LSTM controllers of Grefenstette et al.'s neural stack, queue and deque (2015, §3.4): their one implementation.

E. Grefenstette, K. M. Hermann, M. Suleyman and P. Blunsom, "Learning to Transduce with Unbounded
Memory", NeurIPS 2015. With x_t the input (the paper's embedding e(x_t)), r_{t-1} the previous read
((m,) per end; the deque has two ends, top and bottom), h hidden units:
    o'_t, h_t = LSTM(x_t ; r_{t-1}, h_{t-1})                 (the controller, `layers` layers)
    d_t = sigmoid(W_d o'_t + b_d)     u_t = sigmoid(W_u o'_t + b_u)        (push, pop: one per end)
    v_t = tanh(W_v o'_t + b_v)        o_t = tanh(W_o o'_t + b_o)           (value (m,), output (h,))
    (V_t, s_t), r_t = memory(V_{t-1}, s_{t-1}, d_t, u_t, v_t)             (eq. 1-3, 4-5 or 6-11)
W_d and W_u are stacked as one (2 * ends, h) matrix, W_v as one (ends * m, h) matrix. The output is o_t, the memory
a `NeuralStack`, `NeuralQueue` or `NeuralDeque` (`stackparse.memories.grefenstette`); the neural-* sequence models
(`stackparse.models.neural_stack`) read embedded symbols through it.

The pop bias b_u starts at `pop_bias` = -1, as the paper's Appendix B recommends for the controller to use the
memory at all; the push bias at 0. h_0 is zero, or with `learned_h0` a learned vector per layer (the paper learns
h_0, §3.4); the LSTM's initial cell is zero either way, as are r_0, V_0 and s_0. Before any input the output is the
zero vector (o_t is defined from the first input on).

The deque's top pop, bottom push and bottom pop get constant offsets on their pre-activations: b_u^top + W_u^top
o'_t + `top_pop_offset`, and likewise `bottom_push_offset` and `bottom_pop_offset` (docs/deque.md). The paper gives
the deque's initialisation only as Appendix B's "likewise": start the pop biases at -1 so that the controller
over-uses the memory and the gradient reaches the values it holds. Read literally, the same biases at both ends
(d = 0.5 > u = 0.27), that intent fails for the deque: each end holds more than 1 of its own strength after three
steps, each read then sees only its own end's last pushes, and the read's max(0, 1 - sum) has gradient exactly 0
for every row behind them, so no gradient ever reaches the other end's values and the deque is two stacks (it
learnt nothing in any run: BENCHMARKS.md, issue 19). Our reading keeps one of the paper's own starts, the queue's
(push 0.5 at the top, pop 0.27 at the bottom: the offsets 0 on those two), and nearly shuts the other two
signals (top pop sigmoid(-3) = 0.05, bottom push sigmoid(-4) = 0.02):
- the bottom pop above the bottom push is what lets the bottom read and pop reach the values pushed at the top
  with a gradient (its own pushes are popped at once, so its read starts on the oldest top value, a queue's
  front, and max(0, u - sum) has a slope there). At or below the push, the relu sits at or below its kink and
  nothing reaches the other end until the pop outgrows the push;
- a top pop at the paper's 0.27 starts the top end as a stack, a path the controller takes instead of the
  queue's front on the tasks a queue solves (gender, SVO to SOV): nearly shut, it leaves the top read on the
  last value pushed and the strength where the bottom read finds it.
The price, measured: the bottom pop eats the oldest values during the input, which reversal needs last, and
reversal was not learnt in the runs measured. The stack-like start (`STACK_LIKE_START`: the top end as the paper's
stack, push 0.5 and pop 0.27, the bottom end shut, push 0.02 and pop 0.001) learns reversal as the neural stack does;
a bottom pop above its push eats from the top's oldest values, and reversal was not learnt with one 0.002 a step
above it (one run). No start measured learns all four tasks: docs/deque.md and BENCHMARKS.md give each start's
runs. So the deque's training tries both, as the paper restarted its runs and kept the one of lowest training
perplexity (`stackparse.models.neural_stack`: `NeuralDequeLSTM.starts`). 0, 0 and 0 are the paper's biases read
literally.
Constant offsets rather than different initial biases: b_du keeps its documented initial value tile([0,
pop_bias]), and SGD, Adam and RMSProp make the same updates either way (a bias's gradient does not depend on where
it starts).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, NamedTuple

import dynet as dy
import numpy as np

from stackparse.config import setting
from stackparse.encoders.base import Encoder, EncoderConfig
from stackparse.memories.grefenstette import NeuralDeque, NeuralQueue, NeuralStack, Signals


def learned_h0(pc: dy.ParameterCollection, hidden: int, layers: int) -> list[dy.Parameters]:
    """A learned initial hidden state h_0, one (hidden,) vector per layer of an LSTM (§3.4); the cells start at zero.
    The controllers here and the deep LSTM baseline (`stackparse.models.neural_stack.DeepLSTM`) share it."""
    return [pc.add_parameters((hidden,), name=f"h0{i}") for i in range(layers)]


def h0_state(h0: list[dy.Parameters], hidden: int) -> list[dy.Expression]:
    """The state vectors that start a DyNet LSTM at `h0` (`learned_h0`): [c_1..c_L = 0, h_1..h_L], broadcast over
    any batch."""
    return [dy.zeros((hidden,)) for _ in h0] + [h.expr(True) for h in h0]


@dataclass(frozen=True)
class NeuralMemoryConfig(EncoderConfig):
    memory_size: int = setting(help="dimension of the values pushed (neural-stack, -queue, -deque)", min=1)
    layers: int = setting(1, "recurrent layers", min=1)
    pop_bias: float = setting(-1.0, "initial bias of the pop signals (Grefenstette et al.'s Appendix B: -1)")
    learned_h0: bool = setting(False, "learn the controller's initial hidden state h_0, one vector per layer (§3.4; "
                               "the cells, r_0, V_0 and s_0 stay zero); false = a zero h_0")


STACK_LIKE_START = {"top_pop_offset": 0.0, "bottom_pop_offset": -6.0}
"""The deque's stack-like start, the settings that differ from its default (the queue's start): the top end as the
paper's stack, the bottom end shut (docs/deque.md, sixth part). Each start learns tasks the other does not."""


@dataclass(frozen=True)
class NeuralDequeConfig(NeuralMemoryConfig):
    top_pop_offset: float = setting(-2.0, "deque: constant added to the top end's pop pre-activation; with the "
                                    "bottom offsets, starts the deque as the paper's queue, pushing 0.5 at the "
                                    "top and popping 0.27 at the bottom, its other two signals nearly shut "
                                    "(docs/deque.md); 0 = the paper's pop bias at the top", absent=0.0)
    bottom_push_offset: float = setting(-4.0, "deque: constant added to the bottom end's push pre-activation (see "
                                        "top_pop_offset); 0 with the other two 0 = the paper's biases read "
                                        "literally, the same start at both ends", absent=0.0)
    bottom_pop_offset: float = setting(0.0, "deque: constant added to the bottom end's pop pre-activation (see "
                                       "top_pop_offset); 0 = the paper's pop bias; the stack-like start: "
                                       + ", ".join(f"{k} {v:g}" for k, v in STACK_LIKE_START.items())
                                       + " (docs/deque.md)", absent=0.0)


class ControllerState(NamedTuple):
    lstm: dy.RNNState
    output: dy.Expression | None       # o_t: (h,) x B; None before the first step
    memory: NeuralStack | NeuralQueue | NeuralDeque
    signals: list[Signals] | None      # the last step's signals, one per end (for inspection)


class _NeuralMemoryEncoder(Encoder):
    """The LSTM controller of §3.4 around the memory class its subclass names."""
    Config = NeuralMemoryConfig
    memory_class: ClassVar[type]

    def __init__(self, pc: dy.ParameterCollection, input_dim: int, hidden_dim: int, **options):
        # memory_size defaults to hidden_dim: the paper's settings make both the same (256 and 256).
        super().__init__(pc, input_dim, hidden_dim, **{"memory_size": hidden_dim, **options})
        c = self.spec
        h, m, ends = hidden_dim, c.memory_size, self.memory_class.ends
        self.lstm = dy.VanillaLSTMBuilder(c.layers, input_dim + ends * m, h, self.pc)             # input ; reads
        self.W_du = self.pc.add_parameters((2 * ends, h), name="Wdu")
        self.b_du = self.pc.add_parameters((2 * ends,), init=np.tile([0.0, c.pop_bias], ends), name="bdu")
        self.W_v = self.pc.add_parameters((ends * m, h), name="Wv")
        self.b_v = self.pc.add_parameters((ends * m,), init=0.0, name="bv")
        self.W_o = self.pc.add_parameters((h, h), name="Wo")
        self.b_o = self.pc.add_parameters((h,), init=0.0, name="bo")
        # Constants added to the pre-activations of [push, pop] per end: the deque's start (module docstring).
        self.signal_offsets = (0.0, getattr(c, "top_pop_offset", 0.0), getattr(c, "bottom_push_offset", 0.0),
                               getattr(c, "bottom_pop_offset", 0.0))[:2 * ends]
        # Last, so that the other parameters' initial values do not depend on the setting (DyNet draws in order).
        self.h0 = learned_h0(self.pc, h, c.layers) if c.learned_h0 else []

    def start(self, batch_size: int, tensors: list[dy.Expression] | None = None) -> ControllerState:
        """The initial LSTM state (zero cells; h_0 zero or learned) and an empty memory, all broadcast over any
        batch, or the state whose `state_tensors` are `tensors`.

        Args:
          batch_size: unused (the zero state broadcasts).
          tensors: a state saved by `state_tensors` (truncated BPTT), or None.
        Returns:
          The state before the next input.
        """
        m, lstm_tensors = self.spec.memory_size, 2 * self.spec.layers
        if tensors is None:
            return ControllerState(self._initial_lstm(), None, self.memory_class.empty(m), None)
        return ControllerState(self.lstm.initial_state(tensors[:lstm_tensors]), None,
                               self.memory_class.restore(tensors[lstm_tensors:], m), None)

    def _initial_lstm(self) -> dy.RNNState:
        """The LSTM before any input: zero cells, and h_0 zero or learned (one (h,) vector per layer, broadcast
        over the batch)."""
        if not self.h0:
            return self.lstm.initial_state()
        return self.lstm.initial_state(vecs=h0_state(self.h0, self.spec.hidden_dim))

    def step(self, state: ControllerState, x: dy.Expression) -> ControllerState:
        """Read one input: the LSTM step on x_t ; r_{t-1}, the signals, o_t and the memory update.

        Args:
          state: the LSTM and the memory after t-1 inputs.
          x: x_t, (input_dim,) x B.
        Returns:
          The state after t inputs.
        """
        lstm = state.lstm.add_input(dy.concatenate([x, state.memory.read_all()]))           # r_{t-1}, all ends
        controller = lstm.output()                                                           # o'_t: (h,)
        signals = self.signals(controller)
        output = dy.tanh(dy.affine_transform([self.b_o, self.W_o, controller]))             # o_t: (h,)
        return ControllerState(lstm, output, state.memory.next(signals), signals)

    def signals(self, controller: dy.Expression) -> list[Signals]:
        """d_t, u_t and v_t for every end of the memory.

        Args:
          controller: the LSTM's output o'_t, (h,) x B.
        Returns:
          One Signals per end (the deque: top, then bottom).
        """
        m, ends = self.spec.memory_size, self.memory_class.ends
        pre = dy.affine_transform([self.b_du, self.W_du, controller])                        # (2 ends,)
        if any(self.signal_offsets):
            pre = pre + dy.inputVector(self.signal_offsets)
        actions = dy.logistic(pre)
        values = dy.tanh(dy.affine_transform([self.b_v, self.W_v, controller]))            # (ends m,)
        return [Signals(dy.pick(actions, 2 * e), dy.pick(actions, 2 * e + 1),
                        values if ends == 1 else dy.pick_range(values, e * m, (e + 1) * m)) for e in range(ends)]

    @staticmethod
    def state_tensors(state: ControllerState) -> list[dy.Expression]:
        """Every tensor of `state`, for `start(tensors=...)` in a new graph.

        Args:
          state: a state of this controller.
        Returns:
          The LSTM's cells and hidden vectors, then the memory's tensors.
        """
        return [*state.lstm.s(), *state.memory.tensors()]

    def _output(self, controller_state: ControllerState, batch_size: int) -> dy.Expression:
        if controller_state.output is None:
            return dy.zeros((self.spec.hidden_dim,), batch_size=batch_size)
        return controller_state.output


_ARGS = """
    Args:
      pc: the user's ParameterCollection; the parameters go into a sub-collection of their own.
      input_dim: the width of the input vectors (the paper's embeddings e(x_t)).
      hidden_dim: h, the LSTM controller's width and that of o_t (the output).
      memory_size: m, the width of the values pushed (default: hidden_dim).
      layers: the LSTM controller's layers (default 1).
      pop_bias: the initial bias of the pop signals (default -1, the paper's Appendix B).
      learned_h0: learn h_0, one vector per layer (default False: zero; the paper learns it, §3.4).
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
""" + _ARGS + """      top_pop_offset, bottom_push_offset, bottom_pop_offset: added to the top pop's, bottom push's and bottom
        pop's pre-activations (defaults -2, -4 and 0: the deque starts as the paper's queue, its top pop and
        bottom push nearly shut; 0, 0 and 0, the paper's biases read literally: the module docstring,
        docs/deque.md).
"""
    Config = NeuralDequeConfig
    memory_class = NeuralDeque
