"""What every encoder shares: DyNet's builder idiom, the checks on its inputs, and immutable states.

An encoder is built like a DyNet RNN builder and used like one:
    encoder = SomeEncoder(pc, input_dim, hidden_dim, **options)
    state = encoder.initial_state(batch_size)
    state = state.add_input(x)          # a new state; `state` before it is unchanged
    state.output()                      # (hidden_dim,) x batch_size
    state.transduce(xs)                 # the outputs after each of xs
    state.memory                        # the memory value the inputs have left
An encoder is its architecture's one implementation (a sequence model is an embedding, an encoder and an output
layer). It checks the user's inputs and saves its settings (`spec`) for `dy.save` / `dy.load`; `start` and `step`
are the unchecked core the models drive.
"""
from __future__ import annotations

import abc
import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar, Sequence

import dynet as dy

from stackparse.config import SettingError, check, setting
from stackparse.errors import UserError


@dataclass(frozen=True)
class EncoderConfig:
    """The settings every encoder has; an encoder's own Config adds its options, with defaults. It is
    also its architecture's only settings class: a sequence model takes its options from it
    (`stackparse.models.base.model_settings`)."""
    input_dim: int = setting(help="the width of the vectors read", min=1)
    hidden_dim: int = setting(help="the width of the outputs", min=1)

    def validate(self, encoder: str) -> None:
        """A UserError naming `encoder` (its class name) and the setting if a setting is out of range."""
        try:
            for f in dataclasses.fields(self):
                value = getattr(self, f.name)
                if f.metadata.get("min") == 1 and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                    raise SettingError(f.name, f"must be an integer >= 1 (got {value!r})")
            self.check()
        except SettingError as error:
            raise UserError(f"{encoder}: {error}") from None

    def check(self) -> None:
        """`stackparse.config.check`, then the checks across settings (none here)."""
        check(self)


class EncoderState:
    """One immutable state of an encoder: what it has read, and the memory its reading left. Made by
    `Encoder.initial_state` and `add_input`, not directly.

    Args:
      encoder: the encoder this is a state of.
      controller_state: the state of the encoder's controller (see the encoder's documentation).
      batch_size: how many sequences the state holds.
    """
    __slots__ = ("encoder", "controller_state", "batch_size")

    def __init__(self, encoder: Encoder, controller_state: Any, batch_size: int):
        self.encoder, self.controller_state, self.batch_size = encoder, controller_state, batch_size

    def add_input(self, x: dy.Expression) -> "EncoderState":
        """Read one input vector per sequence.

        Args:
          x: (input_dim,) x batch_size.
        Returns:
          The new state (this one is unchanged).
        """
        return self._next(self.encoder.step(self.controller_state, self._checked(x)))

    def add_inputs(self, xs: Sequence[dy.Expression]) -> list["EncoderState"]:
        """Read a sequence of inputs, one after the other.

        Args:
          xs: a non-empty sequence of (input_dim,) x batch_size expressions.
        Returns:
          The state after each input.
        """
        xs = list(xs)
        if not xs:
            raise UserError(f"{self._name}: empty sequence; expected one or more inputs of {self._expected}")
        states = [self.add_input(xs[0])]
        for x in xs[1:]:
            states.append(states[-1].add_input(x))
        return states

    def transduce(self, xs: Sequence[dy.Expression]) -> list[dy.Expression]:
        """The outputs after each input of a sequence, as DyNet's RNNState.transduce.

        Args:
          xs: a non-empty sequence of (input_dim,) x batch_size expressions.
        Returns:
          One (hidden_dim,) x batch_size output per input.
        """
        return [state.output() for state in self.add_inputs(xs)]

    def output(self) -> dy.Expression:
        """The encoder's output in this state.

        Returns:
          (hidden_dim,) x batch_size.
        """
        return self.encoder._output(self.controller_state, self.batch_size)

    @property
    def memory(self) -> Any:
        """The memory value in this state (see the encoder's documentation for its fields).

        Returns:
          The memory: a value of `stackparse.memories`, never changed in place.
        """
        return self.encoder._memory(self.controller_state)

    def _next(self, controller_state: Any) -> "EncoderState":
        return type(self)(self.encoder, controller_state, self.batch_size)

    @property
    def _name(self) -> str:
        return type(self.encoder).__name__

    @property
    def _expected(self) -> str:
        return f"shape ({self.encoder.spec.input_dim},) with batch size {self.batch_size}"

    def _checked(self, x: Any) -> dy.Expression:
        """`x` if it is one input of this state's shape; a UserError naming the expected shape otherwise."""
        if not isinstance(x, dy.Expression):
            raise UserError(f"{self._name}: an input must be a DyNet expression of {self._expected}, "
                            f"got {type(x).__name__}")
        shape, batch = x.dim()
        if shape != (self.encoder.spec.input_dim,):
            raise UserError(f"{self._name}: expected an input of {self._expected}, got shape {shape}")
        if batch != self.batch_size:
            raise UserError(f"{self._name}: batch size mismatch: the state holds {self.batch_size} sequences "
                            f"(initial_state(batch_size={self.batch_size})) but the input holds {batch}; "
                            f"expected {self._expected}")
        return x


class Encoder(abc.ABC):
    """Base class of the encoders: settings, sub-collection, saving and states. Subclasses set `Config`
    (and `State`, for a state with more operations) and implement `start`, `step` and `_output`, and
    `_memory` where the controller state's memory is not its `memory` field.

    Args:
      pc: the user's ParameterCollection; the parameters go into a sub-collection of their own.
      input_dim: the width of the input vectors.
      hidden_dim: the width of the outputs.
      **options: the encoder's own settings (its Config's fields); each has a default.
    """
    Config: ClassVar[type[EncoderConfig]]
    State: ClassVar[type[EncoderState]] = EncoderState

    def __init__(self, pc: dy.ParameterCollection, input_dim: int, hidden_dim: int, **options):
        known = [f.name for f in dataclasses.fields(self.Config)]
        unknown = sorted(set(options) - set(known))
        if unknown:
            raise UserError(f"{type(self).__name__}: unknown option {', '.join(unknown)}; "
                            f"its options are {', '.join(known[2:])}")
        self.spec = self.Config(input_dim=input_dim, hidden_dim=hidden_dim, **options)
        self.spec.validate(type(self).__name__)
        # One sub-collection per encoder, named after its class (DyNet names allow no "_" or "/").
        self.pc = pc.add_subcollection(type(self).__name__.lower())

    def param_collection(self) -> dy.ParameterCollection:
        """DyNet's saving protocol: the collection holding this encoder's parameters.

        Returns:
          The encoder's own sub-collection of the ParameterCollection it was built on.
        """
        return self.pc

    @classmethod
    def from_spec(cls, spec: EncoderConfig, pc: dy.ParameterCollection) -> "Encoder":
        """DyNet's saving protocol: the encoder that `spec` describes, built on `pc` (dy.load calls this).

        Args:
          spec: the `spec` of the encoder that was saved.
          pc: the ParameterCollection to build on.
        Returns:
          A new encoder of this class; dy.load then fills in the saved parameter values.
        """
        return cls(pc, **dataclasses.asdict(spec))

    def initial_state(self, batch_size: int = 1) -> "EncoderState":
        """The state before any input, in the current computation graph.

        Args:
          batch_size: how many sequences each input holds (the batch size of DyNet expressions).
        Returns:
          A state whose memory is empty and whose output is that of the empty memory.
        """
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise UserError(f"{type(self).__name__}: batch_size must be an integer >= 1 (got {batch_size!r})")
        return self.State(self, self.start(batch_size), batch_size)

    @abc.abstractmethod
    def start(self, batch_size: int) -> Any:
        """The controller's state before any input (unchecked: the core the models drive).

        Args:
          batch_size: the sequences in the DyNet batch.
        Returns:
          The controller state.
        """

    @abc.abstractmethod
    def step(self, controller_state: Any, x: dy.Expression) -> Any:
        """The controller's state after reading `x` (unchecked: the core the models drive).

        Args:
          controller_state: the state before. x: (input_dim,) x batch.
        Returns:
          The state after.
        """

    @abc.abstractmethod
    def _output(self, controller_state: Any, batch_size: int) -> dy.Expression:
        """The output of a controller state: (hidden_dim,) x batch_size."""

    def _memory(self, controller_state: Any) -> Any:
        """The memory value inside a controller state."""
        return controller_state.memory
