"""Stack RNN and List RNN (Joulin & Mikolov 2015, §4.2) as sequence models: one-hot symbols through
the encoders of `stackparse.encoders.joulin_mikolov` (eq. 3-6, written there once), then
    y_t = softmax(V h_t + c)                                  (eq. 2)
and rounding: a growing beta, discrete actions at evaluation, removal of unused memories.

Choices the paper leaves open, and why:
- Capacity 100 at truncated-BPTT cuts by default: else a controller that keeps pushing grows its stack, and the cost of
  a step, with the training stream (1,500 symbols for a^n b^n c^n d^n: 40 times slower epochs, measured). 100 is more
  than the training sizes (n <= 19) need; the reference code's stacks hold 200; test sequences are never cut.
- R is off by default (the paper sets R = 0 on the toy tasks, §5.1); `recurrent` turns it on (the language model
  of Table 4). A bias b is added to the hidden layer, as in the Elman baseline.
- Rounding (§4.2: "discretizing the controllers at test time"). With `rounding` the action logits are multiplied by beta
  = 1 until epoch `rounding_start`, then by `rounding_growth` ** (epochs since), pushing the controllers towards
  discrete actions while they fine-tune; validation and test use each memory's most probable action, as the reference
  code's `-hard`; during fine-tuning, unused memories are removed before each validation (`simplify`). beta is a
  function of the epoch, so a resumed run recomputes it. Without `rounding`, actions stay continuous.
"""
from __future__ import annotations

from dataclasses import dataclass

import dynet as dy
import numpy as np

from stackparse.config import SettingError, setting
from stackparse.encoders.joulin_mikolov import ListRNNConfig, ListRNNEncoder, StackRNNConfig, StackRNNEncoder
from stackparse.memories.joulin_mikolov import TRIM_TOLERANCE
from stackparse.models.base import EncoderModel, ModelConfig, model_settings, register
from stackparse.sequences import pad, unroll


@dataclass(frozen=True)
class MemoryRNNConfig(ModelConfig):
    """The sequence models' own settings; the encoder's options join them (`model_settings`)."""
    rounding: bool = setting(False, "discrete actions at validation and test; during fine-tuning, a growing "
                             "multiplier on the action logits and removal of unused stacks")
    rounding_start: int = setting(10, "epoch where rounding's fine-tuning starts", min=0)
    rounding_growth: float = setting(1.5, "factor per fine-tuning epoch of the action-logit multiplier", min=1)
    capacity: int = setting(100, "keep the top N values where truncated BPTT cuts a training stream (0 = "
                            "unbounded; test sequences are never cut)", min=0)

    def validate(self) -> None:
        super().validate()
        if self.layers != 1:
            raise SettingError("layers", f"must be 1: the Stack and List RNNs have one hidden layer (got {self.layers})")
        if self.capacity and self.capacity < self.k:
            raise SettingError("capacity", f"must be 0 (unbounded) or at least k (got {self.capacity})")


class _MemoryRNN(EncoderModel):
    """A sequence model around a Stack or List RNN encoder, with rounding (a growing beta, discrete
    actions at evaluation, removal of unused memories): the `Scheduled` capability."""
    # A graph holds every step's memory, as deep as the steps so far: 256 strings of length 960 (the NSPDA paper's
    # long test set) took over 14 GB and were killed.
    evaluation_batch = 16

    def __init__(self, pc, config: MemoryRNNConfig, n_inputs, n_outputs):
        super().__init__(pc, config, n_inputs, n_outputs)
        c = config
        # Rounding removes unused memories: 1 where the flat read s^k comes from a memory in use, 0 for a
        # removed one (the same layout as P's columns, i + k * memory); never trained.
        self.active = self.pc.add_parameters((c.k * self.controller.memories,), init=1.0, name="active") if c.rounding else None
        self.beta = 1.0

    def start_epoch(self, epoch: int) -> None:
        """Rounding's beta for this training epoch (0-based): 1, then growing from `rounding_start`."""
        c = self.config
        self.beta = c.rounding_growth ** max(0, epoch - c.rounding_start + 1) if c.rounding else 1.0

    @property
    def discrete(self) -> bool:
        """Whether actions are discretized now: with rounding, at validation and test."""
        return self.config.rounding and not self.training

    def initial_state(self, batch_size, tensors=None):
        return self.controller.start(batch_size, tensors, self.config.capacity)

    def step(self, state, ids):
        mask = self.active.expr(update=False) if self.active is not None else None
        return self.controller.step(state, self.embed(ids), mask, self.beta, self.discrete)

    def action_probabilities(self, h: dy.Expression) -> dy.Expression:
        """Eq. 3 as the model acts now (its beta; discrete when rounding says so): (n_actions, M) x B."""
        return self.controller.action_probabilities(h, self.beta, self.discrete)

    def simplify(self, examples):
        """Rounding's removal of unused memories. During fine-tuning (beta > 1), a memory whose top-k
        read is the same at every step of every example (with discrete actions) only adds a constant
        to the hidden layer: the constant moves into the bias b, the memory's columns of P are zeroed
        and its read is masked off for good. Predictions on `examples` do not change."""
        if not (self.config.rounding and self.beta > 1.0):
            return {}
        k, count = self.config.k, self.controller.memories
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
            return np.arange(self.controller.memories)
        return np.flatnonzero(self.active.as_array()[::self.config.k] > 0)

    def _reads(self, examples) -> np.ndarray:
        """The (k, M) read feeding every step of every example (padding excluded): (N, k, M)."""
        inputs, _, mask = pad(examples)
        dy.renew_cg()
        start = self.initial_state(len(examples))
        states = [start] + [state for _, state in unroll(self, inputs[:-1], start)]    # before each step
        shape = (self.config.k, self.controller.memories, len(examples))
        reads = [np.broadcast_to(s.memory.read().npvalue().reshape(shape[:2] + (-1,)), shape) for s in states]
        return np.stack(reads).transpose(0, 3, 1, 2)[mask > 0]

    def hidden(self, state):
        return state.hidden

    def trace(self, state):
        """Each memory's most probable action at the last step, then its top (head) value; memories
        removed by rounding are left out."""
        names = self.controller.actions_used
        actions = state.actions.npvalue().reshape(len(names), -1).argmax(axis=0)
        tops = state.memory.top().npvalue().reshape(-1)
        used = self.memories_in_use()
        return ([(f"action {i + 1}", names[actions[i]]) for i in used]
                + [(f"top {i + 1}", f"{tops[i]:.2f}") for i in used])


@register
class StackRNN(_MemoryRNN):
    name = "stack-rnn"
    description = "Stack RNN: continuous stacks, PUSH/POP(/NO-OP) (Joulin & Mikolov 2015, eq. 3-6)"
    Config = model_settings("StackRNNModelConfig", StackRNNConfig, MemoryRNNConfig, recurrent=False)
    Encoder = StackRNNEncoder


@register
class ListRNN(_MemoryRNN):
    name = "list-rnn"
    description = "List RNN: continuous doubly-linked lists, INSERT/LEFT/RIGHT(/NO-OP) (Joulin & Mikolov 2015, §4.2)"
    Config = model_settings("ListRNNModelConfig", ListRNNConfig, MemoryRNNConfig, recurrent=False)
    Encoder = ListRNNEncoder
