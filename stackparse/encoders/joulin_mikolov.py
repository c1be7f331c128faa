"""The Stack RNN and List RNN of Joulin & Mikolov (2015, §4.2): their one implementation.

A. Joulin and T. Mikolov, "Inferring Algorithmic Patterns with Stack-Augmented Recurrent Nets",
NeurIPS 2015. With M memories (stacks or lists), k values read from each, m hidden units:
    h_t = sigmoid(U x_t + R h_{t-1} + P s^k_{t-1} + b)     (eq. 6; R only with `recurrent`)
    a_t = softmax(beta A h_t), one softmax per memory         (eq. 3; A is (actions * M, m))
    v_t = sigmoid(D h_t)                                      (the value pushed or inserted; D is (M, m))
    s_t = update(s_{t-1}, a_t, v_t)                           (eq. 4-5, or the list's update)
P is (m, k * M); s^k_{t-1} is the (k, M) top-k read, flattened. A minibatch step is one DyNet batch. The output is
h_t, the memory a `StackMemory` or `ListMemory` (`stackparse.memories.joulin_mikolov`); the stack-rnn and list-rnn
models (`stackparse.models.stack_rnn`) read one-hot symbols through it and add rounding (beta, discrete).

Defaults differ from the sequence models' in one place, and why: `recurrent` is on. The paper sets R = 0 on its
toy tasks to make the network use its stacks, and turns R on for language modelling (Table 4), the situation of an
encoder inside someone else's model. Rounding (§4.2), a training schedule, is not offered: actions are continuous.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, NamedTuple

import dynet as dy

from stackparse._dynet import product as matmul
from stackparse.config import setting
from stackparse.encoders.base import Encoder, EncoderConfig
from stackparse.memories.joulin_mikolov import ListMemory, Signals, StackMemory


@dataclass(frozen=True)
class _MemoryRNNConfig(EncoderConfig):
    k: int = setting(2, "values read from each stack's top (list's head)", min=1)
    no_op: bool = setting(False, "add the NO-OP action")
    recurrent: bool = setting(True, "use the recurrent matrix R (the paper sets R = 0 on the toy tasks)")


@dataclass(frozen=True)
class StackRNNConfig(_MemoryRNNConfig):
    stacks: int = setting(10, "stacks in parallel (stack-rnn)", min=1)


@dataclass(frozen=True)
class ListRNNConfig(_MemoryRNNConfig):
    lists: int = setting(5, "doubly-linked lists in parallel (list-rnn)", min=1)


class MemoryState(NamedTuple):
    hidden: dy.Expression           # h_t: (m,) x B
    memory: StackMemory | ListMemory
    actions: dy.Expression | None   # a_t: (n_actions, M) x B, the probabilities used (for inspection)


class _MemoryRNNEncoder(Encoder):
    """The controller of eq. 3-6 around the memory class its subclass names."""
    memory_class: ClassVar[type]
    count: ClassVar[str]
    """The setting that says M, how many memories run in parallel."""

    def __init__(self, pc: dy.ParameterCollection, input_dim: int, hidden_dim: int, **options):
        super().__init__(pc, input_dim, hidden_dim, **options)
        c, m = self.spec, hidden_dim
        self.memories = getattr(c, self.count)                                            # M
        names = self.memory_class.actions
        self.actions_used = names[:len(names) - (0 if c.no_op else 1)]
        self.U = self.pc.add_parameters((m, input_dim), name="U")
        self.b = self.pc.add_parameters((m,), init=0.0, name="b")
        self.R = self.pc.add_parameters((m, m), name="R") if c.recurrent else None
        self.P = self.pc.add_parameters((m, c.k * self.memories), name="P")
        self.A = self.pc.add_parameters((len(self.actions_used) * self.memories, m), name="A")
        self.D = self.pc.add_parameters((self.memories, m), name="D")

    def start(self, batch_size: int, tensors: list[dy.Expression] | None = None,
              capacity: int = 0) -> MemoryState:
        """h_0 = 0 and empty memories, or the state whose `state_tensors` are `tensors`.

        Args:
          batch_size: B, the sequences in the DyNet batch.
          tensors: a state saved by `state_tensors` (truncated BPTT), or None.
          capacity: what `restore` keeps of restored memories (0: everything).
        Returns:
          The state before the next input.
        """
        c = self.spec
        if tensors is not None:
            hidden, *memory = tensors
            return MemoryState(hidden, self.memory_class.restore(memory, c.k, capacity), None)
        return MemoryState(dy.zeros((c.hidden_dim,), batch_size=batch_size),
                           self.memory_class.empty(self.memories, c.k), None)

    @staticmethod
    def state_tensors(state: MemoryState) -> list[dy.Expression]:
        """Every tensor of `state`, for `start(tensors=...)` in a new graph.

        Args:
          state: a state of this controller.
        Returns:
          h_t, then the memory's tensors.
        """
        return [state.hidden, *state.memory.tensors()]

    def step(self, state: MemoryState, x: dy.Expression, read_mask: dy.Expression | None = None,
             beta: float = 1.0, discrete: bool = False) -> MemoryState:
        """Read one input: eq. 6, then eq. 3, then the memory update (eq. 4-5 or the list's).

        Args:
          state: h_{t-1} and the memories s_{t-1}.
          x: x_t, (input_dim,) x B.
          read_mask: (k M,), multiplied into the flat read (rounding's removed memories); None: none.
          beta, discrete: how actions are chosen; see `action_probabilities`.
        Returns:
          h_t, s_t and a_t.
        """
        memories = self.memories
        read = dy.reshape(state.memory.read(), (self.spec.k * memories,))                # s^k_{t-1}, flat
        if read_mask is not None:
            read = dy.cmult(read, read_mask)
        terms = [self.b, self.U, x, self.P, read]
        if self.R is not None:
            terms += [self.R, state.hidden]
        h = dy.logistic(dy.affine_transform(terms))                                       # eq. 6
        actions = self.action_probabilities(h, beta, discrete)                            # (n_actions, M)
        written = dy.reshape(dy.logistic(matmul(self.D, h)), (1, memories))                      # sigma(D h_t)
        return MemoryState(h, state.memory.next(Signals(actions, written)), actions)

    def action_probabilities(self, h: dy.Expression, beta: float = 1.0, discrete: bool = False) -> dy.Expression:
        """Eq. 3 for every memory at once, softmax(beta A h_t) per memory.

        Args:
          h: h_t, (m,) x B.
          beta: the multiplier of the logits (rounding's; the paper's eq. 3 has 1).
          discrete: put probability 1 on each memory's most probable action instead (rounding at test).
        Returns:
          (n_actions, M) x B, each column a distribution.
        """
        n, memories = len(self.actions_used), self.memories
        logits = dy.reshape(matmul(self.A, h), (n, memories))
        if discrete:
            batch = logits.dim()[1]
            # One column per (memory, sequence): argmax works on vectors, so fold memories into the batch.
            flat = dy.reshape(logits, (n,), batch_size=memories * batch)
            return dy.reshape(dy.argmax(flat, gradient_mode="zero_gradient"), (n, memories), batch_size=batch)
        return dy.softmax(logits * beta if beta != 1.0 else logits, d=0)

    def _output(self, controller_state: MemoryState, batch_size: int) -> dy.Expression:
        return controller_state.hidden


_ARGS = """
    Args:
      pc: the user's ParameterCollection; the parameters go into a sub-collection of their own.
      input_dim: the width of x_t.
      hidden_dim: m, the width of h_t (the output).
      {}
      k: values read from each {} (default 2).
      no_op: add the NO-OP action (default False).
      recurrent: use the recurrent matrix R (default True).
"""


class StackRNNEncoder(_MemoryRNNEncoder):
    __doc__ = """Joulin & Mikolov's Stack RNN (eq. 3-6) as an encoder: h_t from x_t, h_{t-1} and the top k
    values of each continuous stack, which it then pushes, pops (or leaves).

    `state.memory` is a `StackMemory`: `content`, (p, stacks) x batch, row 0 the tops (EMPTY = -1 where
    nothing was pushed); `read()`, the top k. `state.controller_state.actions` holds a_t.
""" + _ARGS.format("stacks: stacks in parallel (default 10, the paper's).", "stack's top")
    Config = StackRNNConfig
    memory_class = StackMemory
    count = "stacks"


class ListRNNEncoder(_MemoryRNNEncoder):
    __doc__ = """Joulin & Mikolov's List RNN (§4.2, "Doubly-linked lists") as an encoder: the Stack RNN's
    controller around continuous lists, which it INSERTs into or moves the head of LEFT or RIGHT.

    `state.memory` is a `ListMemory`: `content`, (2r + 1, lists) x batch with the head in row r = `head`;
    `read()`, the k values ending at the head.
""" + _ARGS.format("lists: lists in parallel (default 5, the paper's).", "list, ending at its head")
    Config = ListRNNConfig
    memory_class = ListMemory
    count = "lists"
