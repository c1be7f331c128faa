"""Stack memories: values with a pure update, usable inside any DyNet model.

The controlled memories (Joulin & Mikolov's stacks and lists, Grefenstette et al.'s stack, queue and deque, the NSPDA's
discrete stack) share one protocol, `Memory`: `next(signals)` with the one argument that memory's module defines (its
`Signals`; the Grefenstette memories take one Signals per end), `read()` and `batch_size`. The stack-LSTM (`StackLSTM`)
has no controller: whoever uses it pushes and pops.
"""
from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from stackparse.memories.stack_lstm import StackLSTM, StackState


@runtime_checkable
class Memory(Protocol):
    """An immutable memory: `next` returns the memory after one step, never changing this one."""

    @property
    def batch_size(self) -> int: ...

    def next(self, signals: Any) -> "Memory": ...

    def read(self) -> Any: ...


__all__ = ["Memory", "StackLSTM", "StackState"]
