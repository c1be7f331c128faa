"""Grefenstette et al.'s strength updates and reads over a minibatch, with their vector-Jacobian products, as one
compiled call a step each way (`grefenstette_arrays.c`, where the equations and the layouts are written): what the
numpy mirror of the neural-memory models (`stackparse.models.neural_stack_arrays`) runs between its matrix products.

Per step, numpy would take some forty operations for the pops, pushes and reads of a minibatch of 10 rows, each
costing more in its call than in its arithmetic; the compiled step walks each row's memory once.
"""
from __future__ import annotations

from ctypes import c_int, c_void_p
from functools import cache
from pathlib import Path
from typing import NamedTuple

from stackparse import _native


class MemoryKernels(NamedTuple):
    """`memory_forward` and `memory_backward` of `grefenstette_arrays.c` (their arguments are documented there)."""
    forward: object
    backward: object


@cache
def kernels() -> MemoryKernels | None:
    """The compiled step, or None where no C compiler works (`stackparse._native`)."""
    library = _native.load(Path(__file__).with_suffix(".c"))
    if library is None:
        return None
    i, p = c_int, c_void_p
    return MemoryKernels(
        _native.declare(library, "memory_forward", i, i, i, i, i, i, p, i, p, i, i, p, i, i, p, p, p, i, i, p),
        _native.declare(library, "memory_backward", i, i, i, i, i, i, p, i, p, p, i, i, p, i, i, p, p, p, p, i, i, p,
                        p))


def end_bits(flags) -> int:
    """Bit e set where end e's flag is (`read_from_top`, `push_at_top` as the kernels take them)."""
    return sum(1 << e for e, flag in enumerate(flags) if flag)
