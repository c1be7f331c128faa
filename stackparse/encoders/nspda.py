"""The Neural State Pushdown Automaton (Mali, Ororbia & Giles) as an encoder.

A. Mali, A. Ororbia and C. L. Giles, "The Neural State Pushdown Automata" (2019/2020), §3.
`NSPDAController` is the one implementation of eq. 1-2 and 6 (written out in `stackparse.models.nspda`,
whose nspda2, nspda3 and NNPDA drive it with one-hot symbols); the encoder drives it with the user's
vectors as x^t. Its output is s^t, its memory a `DiscreteStack` (`stackparse.memories.discrete_stack`).

What the stack holds, and why. The model pushes the input symbol and reads the top through e(.), its one-hot
vector. The encoder pushes the input vector: its stack holds positions (input t pushed as the id t), and
e(input t) is [x_t; 0; 0], the bottom marker [0; 1; 0], the empty stack [0; 0; 1] (R = input_dim + 2):
- On one-hot inputs this is the NSPDA itself: with a model's weights it computes the model's states, reads and
  actions (tested).
- The stack stays digital, the NSPDA's point against the analog NNPDA: one whole input pushed, popped or left per
  step, and the read (eq. 6) is exactly the top.
- No extra parameters, no information lost: quantizing the inputs into codes first would add a learned symbolizer
  the paper does not have, and cut the gradient that reaches x through the read.

Choices beyond the model's, and why:
- Output: s^t, N = hidden_dim, the finite control (the model's response reads s^t (x) r^t; the user's layer plays
  V's role and may read `state.controller_state.read` too). s^0 = (1, 0, ..., 0), as the model's.
- The state neurons are quantized as the settings say, in training and use alike: an encoder has no evaluation
  mode, so discretized weights at evaluation (`weight_step`) are not offered. The action is always quantized, by
  eq. 14's cuts (`action_quantizer`). The reads are e(.) exactly: the paper's read values (`stackparse.models.nspda`)
  are for one-hot symbols.
- Third order by default (the paper's M2). W^s then has N * N * I * (I + 2) entries: for wide inputs, order 2
  (M1: N * N * (2 I + 2) for the paper's s (x) [r; x], N * (N + I + 2) * I for [s; r] (x) x) is the affordable one.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, NamedTuple, Sequence

import dynet as dy
import numpy as np

from stackparse._dynet import product as matmul
from stackparse.config import SettingError, setting
from stackparse.encoders.base import Encoder, EncoderConfig
from stackparse.encoders.tensors import init_scale_setting, levels, outer, quantized, start_vector, weight_tensor
from stackparse.memories.discrete_stack import EMPTY, Action, DiscreteStack, Signals

BOTTOM = -2
"""The bottom marker's id on the encoder's stacks (inputs are 0, 1, ...; EMPTY is -1)."""
PAIRINGS = ("read-input", "state-read")
QUANTIZERS = ("paper", "round")
UP, DOWN = 0.13, -0.09
"""Eq. 14's cuts of f^(A) = 2 g(A) - 1: PUSH above UP, POP below DOWN, NO-OP between."""


@dataclass(frozen=True)
class NSPDAConfig(EncoderConfig):
    order: int = setting(3, "3 (P = s (x) x (x) r, the paper's M2) or 2 (M1, the product `pairing` says)")
    pairing: str = setting("read-input", "order 2: P = s (x) [r; x] (read-input, the paper's M1) or "
                           "[s; r] (x) x (state-read, this project's earlier M1)", choices=PAIRINGS)
    action_quantizer: str = setting("paper", "the action neuron f: paper (2 sigmoid(A) - 1 cut at 0.13 and -0.09, "
                                    "eq. 7 and 14) or round (round(tanh A), cuts at +-0.5)", choices=QUANTIZERS)
    bottom: bool = setting(True, "nspda: the stack starts with a bottom marker (a PDA's Z)")
    quantize_states: bool = setting(True, "nspda, nnpda: quantized state neurons during training too "
                                    "(straight-through gradients); the NSPDA quantizes them at evaluation always")
    init_scale: float = init_scale_setting()

    def check(self) -> None:
        super().check()
        if self.order not in (2, 3) or isinstance(self.order, bool):
            raise SettingError("order", f"must be 2 or 3 (got {self.order!r})")


class NSPDAState(NamedTuple):
    state: dy.Expression          # s^t: (N,) x B
    read: dy.Expression           # r^t: (R,) x B
    stack: object                 # DiscreteStack (NSPDA) or NeuralStack (NNPDA)
    action: dy.Expression | None  # a^t: (1,) x B, for inspection


class NSPDAController:
    """Eq. 1-2 and 6: the state and action tensors around a stack, and one NSPDA step; the one implementation
    behind `NSPDAEncoder`, nspda2/nspda3 and the NNPDA (eq. 1-2 around its analog stack), each saying what e(.)
    is for its stack. Biases go into `pc`; sizes N, I (x^t's width), R; `add_tensor` (name, rows, factors) ->
    Parameters makes W^s, then W^a (`weight_tensor`, or `TensorRNN.add_tensor`, which registers it for noise)."""

    def __init__(self, pc: dy.ParameterCollection, order: int, state_size: int, input_size: int,
                 read_size: int, add_tensor: Callable[[str, int, tuple[int, ...]], dy.Parameters],
                 pairing: str = "read-input", quantizer: str = "paper"):
        n, r = state_size, read_size
        self.order, self.pairing, self.quantizer = order, pairing, quantizer
        if order == 3:
            factors = (n, input_size, r)
        else:
            factors = (n, r + input_size) if pairing == "read-input" else (n + r, input_size)
        self.Ws = add_tensor("Ws", n, factors)
        self.Wa = add_tensor("Wa", 1, factors)
        self.bs = pc.add_parameters((n,), init=0.0, name="bs")
        self.ba = pc.add_parameters((1,), init=0.0, name="ba")

    @property
    def parameters(self) -> list[dy.Parameters]:
        """W^s, b^s, W^a, b^a: the order in which `state_and_action` takes their expressions."""
        return [self.Ws, self.bs, self.Wa, self.ba]

    def product(self, state: NSPDAState, x: dy.Expression) -> dy.Expression:
        """P^t of eq. 1-2, flattened (see `outer`), from s^{t-1} (N,) x B, r^{t-1} (R,) x B and x^t (I,) x B:
        (N I R,) x B for order 3; for order 2 (N (R + I),) x B (read-input) or ((N + R) I,) x B (state-read)."""
        if self.order == 3:
            return outer([state.state, x, state.read])
        if self.pairing == "read-input":
            return outer([state.state, dy.concatenate([state.read, x])])
        return outer([dy.concatenate([state.state, state.read]), x])

    def action(self, A: dy.Expression) -> dy.Expression:
        """a^t = f(A^t) in {-1, 0, 1} (eq. 2), the gradient of its continuous version passed straight through:
        the paper's f (eq. 7 and 14: f^ = 2 g(A) - 1, cut at 0.13 and -0.09) or round(tanh A)."""
        if self.quantizer == "paper":
            return levels(dy.logistic(A) * 2.0 - 1.0, above=(UP,), below=(DOWN,))
        return quantized(dy.tanh(A))

    def state_and_action(self, state: NSPDAState, x: dy.Expression, weights: list[dy.Expression] | None = None,
                         quantize_states: bool = True) -> tuple[dy.Expression, dy.Expression]:
        """Eq. 1-2: s^t = g(W^s P^t + b^s), (N,) x B, and A^t = W^a P^t + b^a, (1,) x B. `weights`: W^s, b^s,
        W^a, b^a as expressions (discretized ones, say), None for the parameters; g = round(sigmoid) with
        the straight-through gradient when `quantize_states`, else sigmoid."""
        Ws, bs, Wa, ba = weights or [p.expr(True) for p in self.parameters]
        p = self.product(state, x)
        s = quantized(dy.logistic(dy.affine_transform([bs, Ws, p])), quantize_states)
        return s, dy.affine_transform([ba, Wa, p])

    def step(self, state: NSPDAState, x: dy.Expression, pushed: Sequence[int],
             codes: Callable[[list[int]], dy.Expression], weights: list[dy.Expression] | None = None,
             quantize_states: bool = True) -> NSPDAState:
        """One step on a discrete stack: eq. 1-2, a^t = f(A^t), the stack's update and the read of eq. 6: s^t, r^t, the
        stack after a^t, and a^t, (1,) x B in {-1, 0, 1}. PUSH puts `pushed[b]` (an id) on stack b; `codes` is e(.): B
        tops (ids, or EMPTY) -> their read vectors, (R,) x B, given for the POP candidate the tops it pops too (the
        paper's read values mark them); the rest as for `state_and_action`."""
        s, A = self.state_and_action(state, x, weights, quantize_states)
        a = self.action(A)                                                          # f(A^t), eq. 2
        actions = np.rint(a.npvalue()).astype(int).reshape(-1)
        if len(actions) == 1 and len(pushed) > 1:    # the same action everywhere (no batch dependence)
            actions = np.repeat(actions, len(pushed))
        candidates = state.stack.candidates(pushed)
        alphas = dy.concatenate([dy.cmult(a, a + 1) * 0.5, dy.cmult(a, a - 1) * 0.5, -dy.square(a) + 1.0])
        tops = dy.concatenate_cols([codes(candidates[Action.PUSH]), codes(candidates[Action.POP], state.stack.read()),
                                    codes(candidates[Action.NO_OP])])
        read = matmul(tops, alphas)                                                       # eq. 6: (R,) x B
        return NSPDAState(s, read, state.stack.next(Signals(actions.tolist(), pushed)), a)


class NSPDAEncoderControllerState(NamedTuple):
    """The NSPDA's state (`NSPDAState`'s fields) and the read vectors of the inputs so far."""
    state: dy.Expression              # s^t: (N,) x B
    read: dy.Expression               # r^t: (R,) x B, e(top) (eq. 6)
    stack: DiscreteStack              # positions of the inputs on each stack, bottom first (BOTTOM: the marker)
    action: dy.Expression | None      # a^t: (1,) x B in {-1: POP, 0: NO-OP, 1: PUSH}; None before any input
    codes: tuple[dy.Expression, ...]  # e(input p) = [x_p; 0; 0], (R,) x B, for p = 0 .. t-1


class NSPDAEncoder(Encoder):
    """The NSPDA (Mali, Ororbia & Giles, eq. 1-2 and 6) as an encoder: quantized state neurons s^t from
    the product of s^{t-1}, x^t and the stack's top r^{t-1}, and an action neuron that pushes x^t, pops
    or leaves a discrete stack (module docstring: what the stack holds and why).

    `state.memory` is a `DiscreteStack`: `stacks`, one tuple per sequence of the positions of the
    inputs on it, bottom first (BOTTOM, -2, is the marker); `read()`, each top (EMPTY, -1, when empty).
    `state.controller_state` also holds `read` (r^t), `action` (a^t) and `state` (s^t, the output).

    Args:
      pc: the user's ParameterCollection; the parameters go into a sub-collection of their own.
      input_dim: I, the width of x^t.
      hidden_dim: N, the state neurons (the output).
      order: 3 (default, the paper's M2) or 2 (M1).
      bottom: the stack starts with a bottom marker (default True).
      quantize_states: quantized state neurons, straight-through gradient (default True).
      init_scale: the weight tensors start uniform in [-init_scale, init_scale] (default 0.5).
    """
    Config = NSPDAConfig

    def __init__(self, pc: dy.ParameterCollection, input_dim: int, hidden_dim: int, **options):
        super().__init__(pc, input_dim, hidden_dim, **options)
        c = self.spec
        self.read_size = input_dim + 2           # the input's values, the bottom marker, the empty stack
        self.controller = NSPDAController(self.pc, c.order, hidden_dim, input_dim, self.read_size,
                                          lambda *tensor: weight_tensor(self.pc, *tensor, c.init_scale))

    def start(self, batch_size: int) -> NSPDAEncoderControllerState:
        """s^0 and the stack holding the bottom marker (or nothing), with its read.

        Args:
          batch_size: B.
        Returns:
          The controller state before any input.
        """
        stack = DiscreteStack.empty(batch_size, (BOTTOM,) if self.spec.bottom else ())
        s0 = start_vector(self.spec.hidden_dim, batch_size)
        return NSPDAEncoderControllerState(s0, self._codes(())(stack.read()), stack, None, ())

    def step(self, controller_state: NSPDAEncoderControllerState, x: dy.Expression) -> NSPDAEncoderControllerState:
        """Eq. 1-2 and 6 on x^t, pushing the input's position (module docstring).

        Args:
          controller_state: the state after t-1 inputs. x: x^t, (input_dim,) x B.
        Returns:
          The state after t inputs.
        """
        codes = controller_state.codes + (dy.concatenate([x, dy.zeros((2,))]),)   # e(x_t): (R,) x B
        position = len(codes) - 1
        nspda = NSPDAState(*controller_state[:4])
        pushed = [position] * controller_state.stack.batch_size
        after = self.controller.step(nspda, x, pushed, self._codes(codes), quantize_states=self.spec.quantize_states)
        return NSPDAEncoderControllerState(*after, codes)

    def _codes(self, codes: tuple[dy.Expression, ...]):
        """e(.) for the inputs whose read vectors are `codes`: B tops -> (R,) x B (module docstring)."""
        r, t = self.read_size, len(codes)
        table = dy.concatenate_cols([*codes, dy.one_hot(r, r - 2), dy.one_hot(r, r - 1)])   # (R, t + 2)

        def e(tops: list[int], popped: list[int] | None = None) -> dy.Expression:
            columns = [t if top == BOTTOM else t + 1 if top == EMPTY else top for top in tops]
            return matmul(table, dy.one_hot(t + 2, columns))                               # (R,) x B
        return e

    def _output(self, controller_state: NSPDAEncoderControllerState, batch_size: int) -> dy.Expression:
        return controller_state.state

    def _memory(self, controller_state: NSPDAEncoderControllerState) -> DiscreteStack:
        return controller_state.stack
