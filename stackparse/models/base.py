"""The one interface every sequence model implements, baselines and memory-augmented models alike.

A model reads one input symbol per step (a minibatch of sequences is one DyNet batch) and emits
scores over the output alphabet. It knows alphabet sizes and its own settings, never the task.
State is opaque to callers except through `state_tensors`, which is what truncated BPTT carries from
one computation graph to the next.
"""
from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import ClassVar, Sequence

import dynet as dy
import numpy as np

from stackparse.errors import UserError
from stackparse.registry import Registry


@dataclass(frozen=True)
class ModelConfig:
    """Settings shared by the sequence models; a model may subclass this to add its own."""
    hidden: int = 40
    layers: int = 1

    def validate(self) -> None:
        if self.hidden < 1:
            raise UserError(f"--hidden must be at least 1 (got {self.hidden})")
        if self.layers < 1:
            raise UserError(f"--layers must be at least 1 (got {self.layers})")


class SequenceModel(abc.ABC):
    """Base class; subclasses set `name`, `description` and optionally `Config`.

    Inputs are one-hot (a fixed identity lookup table), as in Joulin & Mikolov's eq. 1, so that
    every model sees exactly the same input and differs only in its recurrence.
    """
    name: ClassVar[str]
    description: ClassVar[str]
    Config: ClassVar[type[ModelConfig]] = ModelConfig
    training: bool = False
    """True while the objective trains the model, False while it is evaluated (the objective sets
    it); a model may act differently at evaluation, e.g. discretize its memory actions."""
    evaluation_batch: ClassVar[int] = 256
    """Sequences per DyNet batch when scoring (validation, test): fewer for a model whose state grows
    with time, since a graph keeps every step's state."""

    def __init__(self, pc: dy.ParameterCollection, config: ModelConfig, n_inputs: int, n_outputs: int):
        config.validate()
        self.config, self.n_inputs, self.n_outputs = config, n_inputs, n_outputs
        self.pc = pc.add_subcollection(self.name.replace("-", ""))   # DyNet names allow no "_" or "/"
        self.onehot = self.pc.add_lookup_parameters(
            (n_inputs, n_inputs), init=np.eye(n_inputs), name="onehot")
        self.V = self.pc.add_parameters((n_outputs, config.hidden), name="V")
        self.c = self.pc.add_parameters((n_outputs,), init=0.0, name="c")

    def param_collection(self) -> dy.ParameterCollection:
        return self.pc

    def start_epoch(self, epoch: int) -> None:
        """Called by the objective before each training epoch (0-based), for models whose
        training follows a schedule; the default does nothing."""

    def simplify(self, examples) -> dict[str, float]:
        """Called by the objective before each validation, in evaluation mode, with the validation
        examples: a model may remove parts it does not use on them (e.g. memories) without changing
        its predictions there. Returns numbers for the training log; the default does nothing."""
        return {}

    def embed(self, ids: Sequence[int]) -> dy.Expression:
        """One-hot vectors for a batch of input symbols: (n_inputs,) x batch."""
        return dy.lookup_batch(self.onehot, list(ids), update=False)

    @abc.abstractmethod
    def initial_state(self, batch_size: int, tensors: list[dy.Expression] | None = None):
        """The state before any input; `tensors` restores a state saved by `state_tensors`."""

    @abc.abstractmethod
    def step(self, state, ids: Sequence[int]):
        """The state after reading one symbol per sequence of the batch."""

    @abc.abstractmethod
    def hidden(self, state) -> dy.Expression:
        """The top hidden layer: (hidden,) x batch."""

    @abc.abstractmethod
    def state_tensors(self, state) -> list[dy.Expression]:
        """Every tensor of the state, so it can be detached and carried to a new graph."""

    def trace(self, state) -> list[tuple[str, str]]:
        """(column, value) pairs describing a state for the step-by-step table of `inspect`
        (e.g. memory actions); none by default."""
        return []

    def scores(self, state) -> dy.Expression:
        """Unnormalised output scores, eq. 2 of Joulin & Mikolov: V h_t + c. (n_outputs,) x batch."""
        return dy.affine_transform([self.c, self.V, self.hidden(state)])


def detach(tensors: list[dy.Expression]) -> list[np.ndarray]:
    """Values of state tensors as arrays whose last axis is the batch (truncated BPTT's cut)."""
    out = []
    for e in tensors:
        shape, batch = e.dim()
        out.append(e.npvalue().reshape(shape + (batch,)))
    return out


def reattach(values: list[np.ndarray]) -> list[dy.Expression]:
    """Constant expressions, in the current graph, holding values saved by `detach`."""
    # DyNet's inputTensor rejects a batch axis of size 1, so batch-1 values go in unbatched.
    return [dy.inputTensor(v, batched=True) if v.shape[-1] > 1 else dy.inputTensor(v[..., 0])
            for v in values]


MODELS = Registry("model")
register = MODELS.register
get_model_class = MODELS.get_class
