"""What a model supports beyond the sequence-model interface, as protocols that training checks.

A training scheme asks `isinstance(model, Capability)` of a protocol here, never of a concrete
model class, and `require` turns a missing capability into one user error. A model declares a
capability by having its methods; nothing is registered.
"""
from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import dynet as dy

from stackparse.errors import UserError


@runtime_checkable
class OnlineGradients(Protocol):
    """a higher-order model with a state of fixed size (rnn2, nspda2 and nspda3; nnpda's analog stack grows with the string)

    Its step and loss as a cell over its trained parameters, for RTRL and UORO
    (`stackparse.training.gradients`).
    """

    def gradient_cell(self) -> tuple[Any, list[dy.Parameters]]: ...


@runtime_checkable
class ArrayGradients(Protocol):
    """a model whose gradient cell has a numpy mirror (rnn2, nspda2, nspda3)

    `gradient_cell`'s step and loss in numpy with their derivatives (`stackparse.models.arrays`), what UORO runs
    fast.
    """

    def array_cell(self) -> Any: ...


@runtime_checkable
class ArrayMirror(Protocol):
    """a model with a numpy mirror of its passes over whole sequences (neural-stack, neural-queue, neural-deque,
    deep-lstm)

    `array_mirror()`: `gradient(batch)`, the minibatch's summed loss and its gradient by BPTT without cuts, and
    `scores(examples)`, every step's output scores; the same numbers as DyNet's graph gives, in a few array
    operations a step (`stackparse.models.neural_stack_arrays`). None where its compiled kernels cannot be built
    (no C compiler): DyNet's graph then does the work.
    """

    def array_mirror(self) -> Any: ...


@runtime_checkable
class WeightTensors(Protocol):
    """a higher-order model (rnn2, nspda2, nspda3, nnpda)

    The transition tensors and their shapes (rows, N, K_2, ...), which weight noise perturbs
    (NSPDA Algorithm 2).
    """

    def weight_tensors(self) -> list[tuple[dy.Parameters, tuple[int, ...]]]: ...


@runtime_checkable
class Refinable(Protocol):
    """a model that can read a step again with its memory left as it is (rnn, lstm, gru, rnn2, nspda2, nspda3, nnpda)

    What per-step iterative refinement (NSPDA eq. 17, `stackparse.training.refinement`) runs between a step's
    predictions: the recurrence again on the step's input ids, the memory (a stack) neither read anew nor changed;
    `hold` (B,) bool, where given, keeps those sequences' states as they are (their step is hinted).
    """

    def refine(self, state, ids, hold=None): ...


@runtime_checkable
class Programmable(Protocol):
    """an NSPDA model (nspda2, nspda3)

    Weights a PDA's rules can be written into (`stackparse.models.programming.insert`).
    """

    def programmable_parameters(self) -> dict[str, dy.Parameters]: ...


@runtime_checkable
class Scheduled(Protocol):
    """a model with a training schedule (stack-rnn, list-rnn)

    Called by the objective: `start_epoch` before each training epoch (0-based); `simplify`
    before each validation, in evaluation mode, with the validation examples, returning numbers
    for the training log (rounding's schedule and its removal of unused memories).
    """

    def start_epoch(self, epoch: int) -> None: ...

    def simplify(self, examples) -> dict[str, float]: ...


def require(model, capability: type, what: str) -> None:
    """A UserError unless `model` has `capability` (a protocol here): "{what} needs {the capability's
    first docstring line}, not {model.name}", `what` being what needs it (a setting, e.g. "grad rtrl")."""
    if not isinstance(model, capability):
        needs = capability.__doc__.strip().splitlines()[0]
        raise UserError(f"{what} needs {needs}, not {model.name}")
