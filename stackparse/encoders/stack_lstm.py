"""The persistent stack-LSTM (Dyer et al. 2015) as an encoder.

The stack-LSTM has no controller: the model using it decides what is pushed and popped (a parser pushes on SHIFT,
pops on REDUCE). So `add_input(x)` pushes x, `pop()` returns the state below, `output()` is the LSTM encoding of
the contents, bottom to top; pushes only (`transduce`) make it an LSTM whose first input is the learned empty-stack
guard. States are values: old ones stay valid and may be pushed again (branches, beam search). It wraps
`stackparse.memories.StackLSTM`, the one implementation the parser uses too.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import dynet as dy

from stackparse.config import setting
from stackparse.encoders.base import Encoder, EncoderConfig, EncoderState
from stackparse.errors import UserError
from stackparse.memories.stack_lstm import StackLSTM, StackState


@dataclass(frozen=True)
class StackLSTMConfig(EncoderConfig):
    layers: int = setting(1, "the LSTM's layers", min=1)


class StackLSTMEncoderState(EncoderState):
    """A state of a StackLSTMEncoder: one version of the stack. `add_input(x)` is `push(x)`.

    Args:
      encoder, controller_state, batch_size: as EncoderState; controller_state is the StackState.
    """
    __slots__ = ()

    def push(self, x: dy.Expression, payload: Any = None) -> "StackLSTMEncoderState":
        """The stack with `x` on top of this one (add_input, with a payload).

        Args:
          x: (input_dim,) x batch_size.
          payload: anything to keep with the element (e.g. a token index); see `top`.
        Returns:
          The new state (this one is unchanged).
        """
        return self._next(self.controller_state.push(self._checked(x), payload))

    def pop(self) -> "StackLSTMEncoderState":
        """The stack without its top element: the state that the top was pushed onto.

        Returns:
          The state below (its memory is the very StackState the top was pushed onto).
        """
        if len(self) == 0:
            raise UserError(f"{self._name}: pop from an empty stack")
        return self._next(self.controller_state.pop())

    @property
    def top(self) -> Any:
        """The payload of the top element.

        Returns:
          What `push` was given with it (None for add_input, and on the empty stack).
        """
        return self.controller_state.top

    def __len__(self) -> int:
        """The number of elements on the stack."""
        return len(self.controller_state)


class StackLSTMEncoder(Encoder):
    """The persistent stack-LSTM of Dyer et al. (2015) as an encoder; see the module docstring.

    Args:
      pc: the user's ParameterCollection; the parameters go into a sub-collection of their own.
      input_dim: the width of the vectors pushed.
      hidden_dim: the width of the LSTM's output, the stack's encoding.
      layers: the LSTM's layers (default 1).
    """
    Config = StackLSTMConfig
    State = StackLSTMEncoderState

    def __init__(self, pc: dy.ParameterCollection, input_dim: int, hidden_dim: int, **options):
        super().__init__(pc, input_dim, hidden_dim, **options)
        self.stack_lstm = StackLSTM(self.pc, input_dim, hidden_dim, self.spec.layers)

    def start(self, batch_size: int) -> StackState:
        """The empty stack (its guard's encoding broadcasts over any batch).

        Args:
          batch_size: unused.
        Returns:
          The empty StackState.
        """
        return self.stack_lstm.initial_state()

    def step(self, controller_state: StackState, x: dy.Expression) -> StackState:
        """Push `x`.

        Args:
          controller_state: the stack. x: (input_dim,) x batch.
        Returns:
          The stack with x on top.
        """
        return controller_state.push(x)

    def _output(self, controller_state: StackState, batch_size: int) -> dy.Expression:
        output = controller_state.output()
        if output.dim()[1] == batch_size:
            return output
        # The empty stack's encoding (the guard's) is one vector for every sequence: give each its copy.
        return dy.concatenate_to_batch([output] * batch_size)

    def _memory(self, controller_state: StackState) -> StackState:
        return controller_state
