"""Stack RNN and List RNN (Joulin & Mikolov 2015, §4.2), on the memories of
`stackparse.memories.joulin_mikolov`.

With M memories (stacks or lists), k values read from each, m hidden units:
    h_t = sigmoid(U x_t + R h_{t-1} + P s^k_{t-1} + b)     (eq. 6; R only with --recurrent)
    a_t = softmax(beta A h_t), one softmax per memory         (eq. 3; A is (actions * M, m))
    v_t = sigmoid(D h_t)                                      (the value pushed or inserted; D is (M, m))
    s_t = update(s_{t-1}, a_t, v_t)                           (eq. 4-5, or the list's update)
    y_t = softmax(V h_t + c)                                  (eq. 2)
P is (m, k * M); s^k_{t-1} is the (k, M) top-k read, flattened. One step of a whole minibatch is one
DyNet batch: the controller is a few matrix products and the memory update a few slices.
`MemoryRNNController` holds these equations once; the sequence models here drive it with one-hot
symbols (and add rounding), the encoders of `stackparse.encoders` with the user's vectors.

Choices the paper leaves open, and why:
- Capacity 100 at truncated-BPTT cuts by default. Without it a controller that keeps pushing (an
  unused stack, or any stack once rounding sharpens the actions) grows its stack, and the cost of a
  step, with the length of the training stream (1,500 symbols for a^n b^n c^n d^n: 40 times slower
  epochs, measured). 100 is more than any sequence of the training sizes (n <= 19) needs, and the
  reference code's stacks hold 200 values at all times; test sequences are never cut.
- R is off by default (the paper sets R = 0 on the toy tasks, §5.1); `--recurrent` turns it on (the
  language model of Table 4). A bias b is added to the hidden layer, as in the Elman baseline.
- Rounding (§4.2 "Rounding": "discretizing the controllers at test time"). With `--rounding` the
  action logits are multiplied by beta = 1 until epoch `rounding_start`, then by
  `rounding_growth` ** (epochs since), which pushes the controllers towards discrete actions
  while they fine-tune; validation and test use discrete actions (each memory's most probable
  action, probability 1), as the reference code's `-hard` does at validation and test time; and
  during fine-tuning, unused memories are removed before each validation (`simplify`: a memory
  whose read never changes on the validation sequences is folded into the bias). beta is a
  function of the epoch, so a resumed run recomputes it. Without `--rounding`, actions stay
  continuous everywhere.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, NamedTuple

import dynet as dy
import numpy as np

from stackparse.errors import UserError
from stackparse.evaluation.sequence import pad
from stackparse.memories.joulin_mikolov import TRIM_TOLERANCE, ListMemory, StackMemory
from stackparse.models.base import ModelConfig, SequenceModel, register


@dataclass(frozen=True)
class MemoryRNNConfig(ModelConfig):
    """Settings shared by the Stack RNN and the List RNN.

    k: values read from the top (head) of each memory (eq. 6; the paper uses 2).
    no_op: add the NO-OP action. recurrent: use the recurrent matrix R.
    rounding: discretize actions at validation and test, with a growing multiplier on the action
      logits from epoch `rounding_start` (0-based), times `rounding_growth` per epoch.
    capacity: 0 = memories grow as needed everywhere; N > 0 = what lies deeper than N positions is
      dropped where a state crosses a truncated-BPTT cut of a training (or language-model) stream.
      A test sequence, run from the initial state without cuts, is never truncated.
    """
    k: int = 2
    no_op: bool = False
    recurrent: bool = False
    rounding: bool = False
    rounding_start: int = 10
    rounding_growth: float = 1.5
    capacity: int = 100

    @property
    def memories(self) -> int:
        raise NotImplementedError

    def validate(self) -> None:
        super().validate()
        if self.layers != 1:
            raise UserError(f"the Stack and List RNNs have one hidden layer (got --layers {self.layers})")
        if self.k < 1:
            raise UserError(f"--k must be at least 1 (got {self.k})")
        if self.memories < 1:
            raise UserError(f"the number of stacks or lists must be at least 1 (got {self.memories})")
        if self.capacity and self.capacity < self.k:
            raise UserError(f"--capacity must be 0 (unbounded) or at least --k (got {self.capacity})")
        if self.rounding_start < 0 or self.rounding_growth < 1:
            raise UserError("--rounding-start must be >= 0 and --rounding-growth >= 1")


@dataclass(frozen=True)
class StackRNNConfig(MemoryRNNConfig):
    """stacks: stacks in parallel, each with its own action softmax (the paper uses 10)."""
    stacks: int = 10

    @property
    def memories(self) -> int:
        return self.stacks


@dataclass(frozen=True)
class ListRNNConfig(MemoryRNNConfig):
    """lists: doubly-linked lists in parallel (the paper uses 5 on the counting tasks)."""
    lists: int = 5

    @property
    def memories(self) -> int:
        return self.lists


class MemoryState(NamedTuple):
    hidden: dy.Expression           # h_t: (m,) x B
    memory: StackMemory | ListMemory
    actions: dy.Expression | None   # a_t: (n_actions, M) x B, the probabilities used (for inspection)


class MemoryRNNController:
    """The controller of eq. 3-6 around a memory class with `actions`, `empty`, `next`, `read`,
    `restore`: its parameters and its step. The one implementation behind the Stack and List RNN
    sequence models below and the encoders of `stackparse.encoders`.

    Args:
      pc: the collection the parameters go into, under their own names (U, b, R, P, A, D): the
        caller's own sub-collection, so that models saved before this class existed still load.
      memory_class: StackMemory or ListMemory.
      input_dim: the width of x_t. hidden_dim: m.
      memories: M, the stacks or lists in parallel. k: values read from the top (head) of each.
      no_op: add the NO-OP action. recurrent: use the recurrent matrix R.
    """

    def __init__(self, pc: dy.ParameterCollection, memory_class: type, input_dim: int, hidden_dim: int,
                 memories: int, k: int, no_op: bool, recurrent: bool):
        self.memory_class, self.hidden_dim, self.memories, self.k = memory_class, hidden_dim, memories, k
        names = memory_class.actions
        self.actions_used = names[:len(names) - (0 if no_op else 1)]
        m = hidden_dim
        self.U = pc.add_parameters((m, input_dim), name="U")
        self.b = pc.add_parameters((m,), init=0.0, name="b")
        self.R = pc.add_parameters((m, m), name="R") if recurrent else None
        self.P = pc.add_parameters((m, k * memories), name="P")
        self.A = pc.add_parameters((len(self.actions_used) * memories, m), name="A")
        self.D = pc.add_parameters((memories, m), name="D")

    def initial_state(self, batch_size: int, tensors: list[dy.Expression] | None = None,
                      capacity: int = 0) -> MemoryState:
        """h_0 = 0 and empty memories, or the state whose `state_tensors` are `tensors`.

        Args:
          batch_size: B, the sequences in the DyNet batch.
          tensors: a state saved by `state_tensors` (truncated BPTT), or None.
          capacity: what `restore` keeps of restored memories (0: everything).
        Returns:
          The state before the next input.
        """
        if tensors is not None:
            hidden, *memory = tensors
            return MemoryState(hidden, self.memory_class.restore(memory, self.k, capacity), None)
        return MemoryState(dy.zeros((self.hidden_dim,), batch_size=batch_size),
                           self.memory_class.empty(self.memories, self.k), None)

    @staticmethod
    def state_tensors(state: MemoryState) -> list[dy.Expression]:
        """Every tensor of `state`, for `initial_state(tensors=...)` in a new graph.

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
        read = dy.reshape(state.memory.read(), (self.k * self.memories,))               # s^k_{t-1}, flat
        if read_mask is not None:
            read = dy.cmult(read, read_mask)
        terms = [self.b, self.U, x, self.P, read]
        if self.R is not None:
            terms += [self.R, state.hidden]
        h = dy.logistic(dy.affine_transform(terms))                                       # eq. 6
        actions = self.action_probabilities(h, beta, discrete)                            # (n_actions, M)
        written = dy.reshape(dy.logistic(self.D * h), (1, self.memories))                # sigma(D h_t)
        return MemoryState(h, state.memory.next(actions, written), actions)

    def action_probabilities(self, h: dy.Expression, beta: float = 1.0, discrete: bool = False) -> dy.Expression:
        """Eq. 3 for every memory at once, softmax(beta A h_t) per memory.

        Args:
          h: h_t, (m,) x B.
          beta: the multiplier of the logits (rounding's; the paper's eq. 3 has 1).
          discrete: put probability 1 on each memory's most probable action instead (rounding at test).
        Returns:
          (n_actions, M) x B, each column a distribution.
        """
        n = len(self.actions_used)
        logits = dy.reshape(self.A * h, (n, self.memories))
        if discrete:
            batch = logits.dim()[1]
            # One column per (memory, sequence): argmax works on vectors, so fold memories into the batch.
            flat = dy.reshape(logits, (n,), batch_size=self.memories * batch)
            return dy.reshape(dy.argmax(flat, gradient_mode="zero_gradient"), (n, self.memories), batch_size=batch)
        return dy.softmax(logits * beta if beta != 1.0 else logits, d=0)


class _MemoryRNN(SequenceModel):
    """A sequence model around `MemoryRNNController`: one-hot inputs, and rounding (a growing beta,
    discrete actions at evaluation, removal of unused memories)."""
    memory_class: ClassVar[type]

    def __init__(self, pc, config: MemoryRNNConfig, n_inputs, n_outputs):
        super().__init__(pc, config, n_inputs, n_outputs)
        c = config
        self.controller = MemoryRNNController(self.pc, self.memory_class, n_inputs, c.hidden, c.memories, c.k,
                                              c.no_op, c.recurrent)
        # Rounding removes unused memories: 1 where the flat read s^k comes from a memory in use, 0 for a
        # removed one (the same layout as P's columns, i + k * memory); never trained.
        self.active = self.pc.add_parameters((c.k * c.memories,), init=1.0, name="active") if c.rounding else None
        self.beta = 1.0

    def start_epoch(self, epoch: int) -> None:
        c = self.config
        self.beta = c.rounding_growth ** max(0, epoch - c.rounding_start + 1) if c.rounding else 1.0

    @property
    def discrete(self) -> bool:
        """Whether actions are discretized now: with rounding, at validation and test."""
        return self.config.rounding and not self.training

    def initial_state(self, batch_size, tensors=None):
        return self.controller.initial_state(batch_size, tensors, self.config.capacity)

    def step(self, state, ids):
        mask = self.active.expr(update=False) if self.active is not None else None
        return self.controller.step(state, self.embed(ids), mask, self.beta, self.discrete)

    def action_probabilities(self, h: dy.Expression) -> dy.Expression:
        """Eq. 3 as the model acts now (its beta; discrete when rounding says so): (n_actions, M) x B."""
        return self.controller.action_probabilities(h, self.beta, self.discrete)

    def hidden(self, state):
        return state.hidden

    def simplify(self, examples):
        """Rounding's removal of unused memories. During fine-tuning (beta > 1), a memory whose top-k
        read is the same at every step of every example (with discrete actions) only adds a constant
        to the hidden layer: the constant moves into the bias b, the memory's columns of P are zeroed
        and its read is masked off for good. Predictions on `examples` do not change."""
        if not (self.config.rounding and self.beta > 1.0):
            return {}
        k, count = self.config.k, self.config.memories
        reads = self._reads(examples)                                                      # (N, k, M)
        active = self.memories_in_use()
        remove = np.zeros(count, dtype=bool)
        remove[active] = np.all(np.ptp(reads[..., active], axis=0) <= TRIM_TOLERANCE, axis=0)
        if remove.any():
            c = self.controller
            P, b, mask = c.P.as_array(), c.b.as_array(), self.active.as_array()
            columns = [i + k * s for s in np.flatnonzero(remove) for i in range(k)]       # P's column of (i, s)
            c.b.set_value(b + P[:, columns] @ reads[0].reshape(-1, order="F")[columns])
            P[:, columns], mask[columns] = 0, 0
            c.P.set_value(P)
            self.active.set_value(mask)
        return {"memories_in_use": len(self.memories_in_use())}

    def memories_in_use(self) -> np.ndarray:
        """The indices of the memories that rounding has not removed."""
        if self.active is None:
            return np.arange(self.config.memories)
        return np.flatnonzero(self.active.as_array()[::self.config.k] > 0)

    def _reads(self, examples) -> np.ndarray:
        """The (k, M) read feeding every step of every example (padding excluded): (N, k, M)."""
        inputs, _, mask = pad(examples)
        dy.renew_cg()
        state, reads = self.initial_state(len(examples)), []
        shape = (self.config.k, self.config.memories, len(examples))
        for ids in inputs:
            reads.append(np.broadcast_to(state.memory.read().npvalue().reshape(shape[:2] + (-1,)), shape))
            state = self.step(state, ids)
        return np.stack(reads).transpose(0, 3, 1, 2)[mask > 0]

    def trace(self, state):
        """Each memory's most probable action at the last step, then its top (head) value; memories
        removed by rounding are left out."""
        names = self.controller.actions_used
        actions = state.actions.npvalue().reshape(len(names), -1).argmax(axis=0)
        tops = state.memory.top().npvalue().reshape(-1)
        used = self.memories_in_use()
        return ([(f"action {i + 1}", names[actions[i]]) for i in used]
                + [(f"top {i + 1}", f"{tops[i]:.2f}") for i in used])

    def state_tensors(self, state):
        return self.controller.state_tensors(state)


@register
class StackRNN(_MemoryRNN):
    name = "stack-rnn"
    description = "Stack RNN: continuous stacks, PUSH/POP(/NO-OP) (Joulin & Mikolov 2015, eq. 3-6)"
    Config = StackRNNConfig
    memory_class = StackMemory


@register
class ListRNN(_MemoryRNN):
    name = "list-rnn"
    description = "List RNN: continuous doubly-linked lists, INSERT/LEFT/RIGHT(/NO-OP) (Joulin & Mikolov 2015, §4.2)"
    Config = ListRNNConfig
    memory_class = ListMemory
