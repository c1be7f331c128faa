"""The one interface every sequence model implements, baselines and memory-augmented models alike.

A model reads one input symbol per step (a minibatch is one DyNet batch) and emits scores over the output alphabet.
It knows alphabet sizes and its own settings, never the task. State is opaque except through `state_tensors`,
what truncated BPTT carries from one graph to the next.

A memory-augmented model is generic (`EncoderModel`): an input embedding, the architecture's encoder and the output
layer V h + c; its settings are the encoder's options (`model_settings`) and `ModelConfig`'s. What a model supports
beyond this interface it declares through `stackparse.models.capabilities`.
"""
from __future__ import annotations

import abc
import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar, Sequence

import dynet as dy
import numpy as np

from stackparse.config import check, setting
from stackparse.encoders.base import Encoder, EncoderConfig
from stackparse.registry import Registry


@dataclass(frozen=True)
class ModelConfig:
    """Settings shared by the sequence models; a model may subclass this to add its own."""
    hidden: int = setting(40, "hidden units", min=1)
    layers: int = setting(1, "recurrent layers", min=1)

    def validate(self) -> None:
        """`stackparse.config.check`; a subclass adds its checks across settings."""
        check(self)


@dataclass(frozen=True)
class EmbeddingConfig(ModelConfig):
    """Settings of a model that may learn its input embeddings."""
    embedding: int = setting(64, "dimension of the learned input embeddings, 0 = one-hot (neural-*, deep-lstm)",
                             min=0)


def model_settings(name: str, core: type[EncoderConfig], base: type[ModelConfig] = ModelConfig,
                   exclude: tuple[str, ...] = (), **defaults) -> type[ModelConfig]:
    """The settings class `name` of a sequence model around an encoder: `base`'s fields, then the
    options of the encoder's Config `core`, declared there once (but its sizes: input_dim is the
    embedding's, hidden_dim is `hidden`; and `exclude`, options the model fixes itself, e.g. the
    NSPDA's order), with `defaults` where the model's differ from the encoder's. A frozen dataclass."""
    skip = {"input_dim", "hidden_dim", *exclude}
    fields = [(f.name, f.type, dataclasses.field(default=defaults.get(f.name, f.default), metadata=f.metadata))
              for f in dataclasses.fields(core) if f.name not in skip]
    return dataclasses.make_dataclass(name, fields, bases=(base,), frozen=True, namespace={"__module__": __name__})


class Memoryless:
    """A model whose state is all it remembers: reading a step again (`Refinable.refine`) is stepping again."""

    def refine(self, state, ids, hold=None):
        if hold is not None:
            raise ValueError(f"{self.name}: no step of it can be hinted (only rule insertion gives hints)")
        return self.step(state, ids)


class SequenceModel(abc.ABC):
    """Base class; subclasses set `name`, `description` and optionally `Config`.

    Inputs are one-hot (a fixed identity lookup table), as in Joulin & Mikolov's eq. 1, so that
    every model sees exactly the same input and differs only in its recurrence; with an `embedding`
    setting, `add_embedding` makes learned embeddings `E` instead (Grefenstette et al. §4)."""
    name: ClassVar[str]
    description: ClassVar[str]
    Config: ClassVar[type[ModelConfig]] = ModelConfig
    training: bool = False
    """True while the objective trains the model (it sets this); a model may act differently at
    evaluation, e.g. discretize its memory actions."""
    default_training: ClassVar[dict] = {}
    """Training settings of this kind of model over the task's ({"data": {field: value}}), e.g. a regulariser its
    paper uses on it."""
    starts: ClassVar[tuple[dict, ...]] = ()
    """Other starts of this kind of model (settings by name, model's or training's, over those given) that restarts
    try in turn after the settings given (`TrainConfig.restarts`; restart 2 the first of them), e.g. the deque's
    stack-like start with its rate."""
    evaluation_batch: ClassVar[int] = 256
    """Sequences per DyNet batch when scoring (validation, test): fewer for a model whose state grows
    with time, since a graph keeps every step's state."""
    E = None

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

    def add_embedding(self) -> None:
        """Learned input embeddings E, (n_inputs, embedding), when the `embedding` setting is not 0."""
        if self.config.embedding:
            self.E = self.pc.add_lookup_parameters((self.n_inputs, self.config.embedding), name="E")

    def input_size(self) -> int:
        """The width of the vectors `embed` gives."""
        return getattr(self.config, "embedding", 0) or self.n_inputs

    def embed(self, ids: Sequence[int]) -> dy.Expression:
        """The input vectors of a batch of symbols, (input_size,) x batch: learned, or one-hot."""
        if self.E is not None:
            return dy.lookup_batch(self.E, list(ids))
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
        """(column, value) pairs for `inspect`'s step-by-step table (e.g. memory actions); none here."""
        return []

    def scores(self, state) -> dy.Expression:
        """Unnormalised output scores, eq. 2 of Joulin & Mikolov: V h_t + c. (n_outputs,) x batch."""
        return dy.affine_transform([self.c, self.V, self.hidden(state)])

    def readout(self) -> list[dy.Expression]:
        """V and c of the output layer (`readout_parameters`) as expressions of the current graph."""
        return [p.expr(True) for p in self.readout_parameters()]

    def readout_parameters(self) -> list[dy.Parameters]:
        return [self.V, self.c]


class EncoderModel(SequenceModel):
    """A sequence model around an encoder: embedding, then `Encoder` as the controller, then V h + c.

    The encoder's options are the settings' fields of the same names; the embedding (when the
    settings have one) is made before the encoder."""
    Encoder: ClassVar[type[Encoder]]

    def __init__(self, pc, config, n_inputs, n_outputs):
        super().__init__(pc, config, n_inputs, n_outputs)
        if hasattr(config, "embedding"):
            self.add_embedding()
        core = self.Encoder.Config
        options = {f.name: getattr(config, f.name) for f in dataclasses.fields(core)
                   if f.name not in ("input_dim", "hidden_dim")}
        self.controller = self.Encoder(self.pc, self.input_size(), config.hidden, **options)

    def initial_state(self, batch_size, tensors=None) -> Any:
        return self.controller.start(batch_size, tensors)

    def step(self, state, ids):
        return self.controller.step(state, self.embed(ids))

    def state_tensors(self, state):
        return self.controller.state_tensors(state)


MODELS = Registry("model")
register = MODELS.register
get_model_class = MODELS.get_class
