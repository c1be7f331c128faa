"""The Stack RNN and List RNN of Joulin & Mikolov (2015, §4.2) as encoders.

A. Joulin and T. Mikolov, "Inferring Algorithmic Patterns with Stack-Augmented Recurrent Nets",
NeurIPS 2015. The encoder drives `stackparse.models.stack_rnn.MemoryRNNController` (eq. 3-6, the
equations the Stack and List RNN sequence models use) with the user's vectors as x_t; its output is
h_t and its memory a `StackMemory` or `ListMemory` of `stackparse.memories.joulin_mikolov`.

Defaults differ from the sequence models' in one place, and why: `recurrent` is on. The paper sets
R = 0 on its toy tasks to make the network use its stacks, and turns R on for language modelling
(Table 4); an encoder inside someone else's model is in the second situation. Rounding (§4.2) is a
training schedule of the sequence models, not offered here; actions are always continuous.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import dynet as dy

from stackparse.encoders.base import Encoder, EncoderConfig
from stackparse.memories.joulin_mikolov import ListMemory, StackMemory
from stackparse.models.stack_rnn import MemoryRNNController, MemoryState


@dataclass(frozen=True)
class _MemoryRNNEncoderConfig(EncoderConfig):
    """k: values read from the top (head) of each memory (eq. 6; the paper uses 2).
    no_op: add the NO-OP action. recurrent: use the recurrent matrix R of eq. 6.
    """
    k: int = 2
    no_op: bool = False
    recurrent: bool = True

    at_least_one: ClassVar[tuple[str, ...]] = EncoderConfig.at_least_one + ("k",)

    @property
    def memories(self) -> int:
        """M, the stacks or lists in parallel."""
        raise NotImplementedError


@dataclass(frozen=True)
class StackRNNEncoderConfig(_MemoryRNNEncoderConfig):
    """stacks: continuous stacks in parallel, each with its own action softmax (the paper uses 10)."""
    stacks: int = 10

    at_least_one: ClassVar[tuple[str, ...]] = _MemoryRNNEncoderConfig.at_least_one + ("stacks",)

    @property
    def memories(self) -> int:
        return self.stacks


@dataclass(frozen=True)
class ListRNNEncoderConfig(_MemoryRNNEncoderConfig):
    """lists: continuous doubly-linked lists in parallel (the paper uses 5)."""
    lists: int = 5

    at_least_one: ClassVar[tuple[str, ...]] = _MemoryRNNEncoderConfig.at_least_one + ("lists",)

    @property
    def memories(self) -> int:
        return self.lists


class _MemoryRNNEncoder(Encoder):
    """An encoder around MemoryRNNController; subclasses name the memory class and its Config."""
    memory_class: ClassVar[type]

    def __init__(self, pc: dy.ParameterCollection, input_dim: int, hidden_dim: int, **options):
        super().__init__(pc, input_dim, hidden_dim, **options)
        c = self.spec
        self.controller = MemoryRNNController(self.pc, self.memory_class, input_dim, hidden_dim,
                                              c.memories, c.k, c.no_op, c.recurrent)

    def _start(self, batch_size: int) -> MemoryState:
        return self.controller.initial_state(batch_size)

    def _step(self, controller_state: MemoryState, x: dy.Expression) -> MemoryState:
        return self.controller.step(controller_state, x)

    def _output(self, controller_state: MemoryState, batch_size: int) -> dy.Expression:
        return controller_state.hidden

    def _memory(self, controller_state: MemoryState) -> StackMemory | ListMemory:
        return controller_state.memory


class StackRNNEncoder(_MemoryRNNEncoder):
    """Joulin & Mikolov's Stack RNN (eq. 3-6) as an encoder: h_t from x_t, h_{t-1} and the top k
    values of each continuous stack, which it then pushes, pops (or leaves).

    `state.memory` is a `StackMemory`: `content`, (p, stacks) x batch, row 0 the tops (EMPTY = -1 where
    nothing was pushed); `read()`, the top k. `state.controller_state.actions` holds a_t.

    Args:
      pc: the user's ParameterCollection; the parameters go into a sub-collection of their own.
      input_dim: the width of x_t.
      hidden_dim: m, the width of h_t (the output).
      stacks: stacks in parallel (default 10, the paper's).
      k: values read from the top of each stack (default 2, the paper's).
      no_op: add the NO-OP action (default False).
      recurrent: use the recurrent matrix R (default True).
    """
    Config = StackRNNEncoderConfig
    memory_class = StackMemory


class ListRNNEncoder(_MemoryRNNEncoder):
    """Joulin & Mikolov's List RNN (§4.2, "Doubly-linked lists") as an encoder: the Stack RNN's
    controller around continuous lists, which it INSERTs into or moves the head of LEFT or RIGHT.

    `state.memory` is a `ListMemory`: `content`, (2r + 1, lists) x batch with the head in row r = `head`;
    `read()`, the k values ending at the head.

    Args:
      pc: the user's ParameterCollection; the parameters go into a sub-collection of their own.
      input_dim: the width of x_t.
      hidden_dim: m, the width of h_t (the output).
      lists: lists in parallel (default 5, the paper's).
      k: values read ending at each list's head (default 2).
      no_op: add the NO-OP action (default False).
      recurrent: use the recurrent matrix R (default True).
    """
    Config = ListRNNEncoderConfig
    memory_class = ListMemory
