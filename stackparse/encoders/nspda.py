"""The Neural State Pushdown Automaton (Mali, Ororbia & Giles) as an encoder.

A. Mali, A. Ororbia and C. L. Giles, "The Neural State Pushdown Automata" (2019/2020), §3. The encoder
drives `stackparse.models.nspda.NSPDAController` (eq. 1-2 and 6, the equations nspda2 and nspda3 use)
with the user's vectors as x^t; its output is the state neurons s^t, and its memory the model's own
discrete stack, a `DiscreteStack` of `stackparse.memories.discrete_stack`.

What the stack holds, and why. The model pushes the current input symbol and reads the top through
e(.), that symbol's one-hot vector. The encoder pushes the current input vector: its stack holds
positions (input t is pushed as the id t, as the model pushes a symbol's id), and e(input t) is
[x_t; 0; 0], the bottom marker [0; 1; 0], the empty stack [0; 0; 1] (R = input_dim + 2):
- On one-hot inputs this is the NSPDA itself: e(input t) is then e(symbol), so the encoder with a
  model's weights computes the model's states, reads and actions (tested).
- The stack stays digital, which is the NSPDA's point against the analog NNPDA: one whole input
  pushed, popped or left per step, by the quantized action neuron, and the read (eq. 6) is exactly
  the top. Nothing is mixed.
- No extra parameters, and no information lost: quantizing the inputs into codes first would add a
  learned symbolizer the paper does not have, and cut the gradient that reaches x through the read.

Choices beyond the model's, and why:
- Output: s^t, N = hidden_dim, the finite control. (The model's response reads s^t (x) r^t, so that
  the verdict can see the stack after the last action; the user's layer plays V's role and may read
  `state.controller_state.read` too.) s^0 = (1, 0, ..., 0), as the model's.
- The state neurons are quantized as the settings say, in training and use alike: an encoder has no
  evaluation mode, so the model's discretized states and weights at evaluation (`weight_step`) are
  not offered. The action neuron is always quantized: the stack is discrete.
- Third order by default (the paper's M2). W^s then has N * N * I * (I + 2) entries: for wide inputs,
  order 2 (M1, N * (N + I + 2) * I) is the affordable one.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, NamedTuple

import dynet as dy

from stackparse.encoders.base import Encoder, EncoderConfig
from stackparse.errors import UserError
from stackparse.memories.discrete_stack import EMPTY, DiscreteStack
from stackparse.models.nspda import NSPDAController, NSPDAState

BOTTOM = -2
"""The bottom marker's id on the encoder's stacks (inputs are 0, 1, ...; EMPTY is -1)."""


@dataclass(frozen=True)
class NSPDAEncoderConfig(EncoderConfig):
    """order: 3 (P = s (x) x (x) r, the paper's M2) or 2 (P = [s; r] (x) x, M1).
    bottom: the stack starts holding a bottom marker. quantize_states: g = round(sigmoid), else sigmoid.
    init_scale: the weight tensors start uniform in [-init_scale, init_scale].
    """
    order: int = 3
    bottom: bool = True
    quantize_states: bool = True
    init_scale: float = 0.5

    def validate(self, encoder: str) -> None:
        super().validate(encoder)
        if self.order not in (2, 3) or isinstance(self.order, bool):
            raise UserError(f"{encoder}: order must be 2 or 3 (got {self.order!r})")
        if not self.init_scale > 0:
            raise UserError(f"{encoder}: init_scale must be positive (got {self.init_scale!r})")


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
    Config = NSPDAEncoderConfig

    def __init__(self, pc: dy.ParameterCollection, input_dim: int, hidden_dim: int, **options):
        super().__init__(pc, input_dim, hidden_dim, **options)
        c = self.spec
        self.read_size = input_dim + 2           # the input's values, the bottom marker, the empty stack
        self.controller = NSPDAController(self.pc, c.order, hidden_dim, input_dim, self.read_size, self._tensor)

    def _tensor(self, name: str, rows: int, factors: tuple[int, ...]) -> dy.Parameters:
        """A weight tensor (rows, *factors), stored as a matrix as the models store it."""
        columns = 1
        for factor in factors:
            columns *= factor
        return self.pc.add_parameters((rows, columns), init=dy.UniformInitializer(self.spec.init_scale), name=name)

    def _start(self, batch_size: int) -> NSPDAEncoderControllerState:
        stack = DiscreteStack.empty(batch_size, (BOTTOM,) if self.spec.bottom else ())
        s0 = dy.one_hot(self.spec.hidden_dim, [0] * batch_size)                     # s^0 = (1, 0, ..., 0)
        return NSPDAEncoderControllerState(s0, self._codes(())(stack.read()), stack, None, ())

    def _step(self, controller_state: NSPDAEncoderControllerState, x: dy.Expression) -> NSPDAEncoderControllerState:
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

        def e(tops: list[int]) -> dy.Expression:
            columns = [t if top == BOTTOM else t + 1 if top == EMPTY else top for top in tops]
            return table * dy.one_hot(t + 2, columns)                                # (R,) x B
        return e

    def _output(self, controller_state: NSPDAEncoderControllerState, batch_size: int) -> dy.Expression:
        return controller_state.state

    def _memory(self, controller_state: NSPDAEncoderControllerState) -> DiscreteStack:
        return controller_state.stack
