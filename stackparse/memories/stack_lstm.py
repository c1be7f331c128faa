"""The persistent (immutable) stack-LSTM of Dyer et al. (2015), Goldberg's primer §10.5.

A stack is a value: `push(x)` returns a new one, its encoding one LSTM step from the one below, in O(1); `pop()`
returns the very object pushed onto. Old versions stay valid and may be pushed again: the stacks, and the graph,
form a tree (the primer's figures 12-13); a gradient from a top flows through every element on it, and only those.
Each version carries a payload (e.g. a token index): a parser's stack of indices and its encoding are one object.

DyNet builder idiom:
    pc = dy.ParameterCollection()
    stack_lstm = StackLSTM(pc, input_dim=4, hidden_dim=8)
    dy.renew_cg()
    empty = stack_lstm.initial_state()
    s = empty.push(dy.inputVector([1, 2, 3, 4]), payload=7)
    s.output()        # the encoding of the whole stack, (hidden_dim,)
    s.pop() is empty  # True
"""
from __future__ import annotations

from typing import Any, Iterator

import dynet as dy


class StackLSTM:
    """Builds persistent stack-LSTM states.

    Args:
        pc: the caller's ParameterCollection; parameters go into a sub-collection of their own.
        input_dim, hidden_dim, layers: the LSTM's sizes.
    """

    def __init__(self, pc: dy.ParameterCollection, input_dim: int, hidden_dim: int, layers: int = 1):
        self.spec = (input_dim, hidden_dim, layers)
        self.pc = pc.add_subcollection("stacklstm")
        self.lstm = dy.VanillaLSTMBuilder(layers, input_dim, hidden_dim, self.pc)
        # Dyer et al. push a learned guard symbol first, so an empty stack has an encoding too.
        self.guard = self.pc.add_parameters((input_dim,), name="empty")

    def param_collection(self) -> dy.ParameterCollection:
        """DyNet's saving protocol.

        Returns:
          The sub-collection holding this stack-LSTM's parameters.
        """
        return self.pc

    @staticmethod
    def from_spec(spec, pc: dy.ParameterCollection) -> "StackLSTM":
        """DyNet's saving protocol: rebuild from `spec` (used by dy.load).

        Args:
          spec: the saved stack-LSTM's (input_dim, hidden_dim, layers).
          pc: the ParameterCollection to build on.
        Returns:
          A new StackLSTM; dy.load then fills in the saved values.
        """
        return StackLSTM(pc, *spec)

    def set_dropout(self, p: float) -> None:
        """Dropout on the LSTM (DyNet's builder dropout).

        Args:
          p: the dropout rate.
        """
        self.lstm.set_dropout(p)

    def disable_dropout(self) -> None:
        """No dropout from now on (at test)."""
        self.lstm.disable_dropout()

    def initial_state(self) -> "StackState":
        """The empty stack, in the current computation graph.

        Returns:
          The stack holding only the guard: depth 0, no payload.
        """
        return StackState(self.lstm.initial_state().add_input(self.guard), None, None, 0)


class StackState:
    """One immutable version of a stack: its encoding, the version below it, and its top payload.

    Made by `StackLSTM.initial_state` and `push`, not directly.

    Args:
      rnn: the LSTM state after the stack's elements. below: the version below (None: the empty stack).
      payload: the top element's payload. depth: the number of elements.
    """
    __slots__ = ("rnn", "below", "payload", "depth")

    def __init__(self, rnn, below: "StackState | None", payload: Any, depth: int):
        self.rnn, self.below, self.payload, self.depth = rnn, below, payload, depth

    def push(self, x: dy.Expression, payload: Any = None) -> "StackState":
        """A new stack with `x` on top of this one (this one is unchanged).

        Args:
          x: the element's vector, (input_dim,) (x batch).
          payload: anything to keep with the element (e.g. a token index).
        Returns:
          The new version.
        """
        return StackState(self.rnn.add_input(x), self, payload, self.depth + 1)

    def pop(self) -> "StackState":
        """The stack below the top: exactly the version that the top was pushed onto.

        Returns:
          That version (an IndexError on the empty stack).
        """
        if self.below is None:
            raise IndexError("pop from an empty stack")
        return self.below

    def output(self) -> dy.Expression:
        """The LSTM encoding of the stack's whole contents, bottom to top.

        Returns:
          (hidden_dim,) (x batch).
        """
        return self.rnn.output()

    @property
    def top(self) -> Any:
        """The payload of the top element.

        Returns:
          What `push` was given with it (None on the empty stack).
        """
        return self.payload

    def __len__(self) -> int:
        return self.depth

    def __iter__(self) -> Iterator[Any]:
        """Payloads from the top down."""
        node = self
        while node.below is not None:
            yield node.payload
            node = node.below

    def __repr__(self) -> str:
        return f"StackState({list(self)!r})"
