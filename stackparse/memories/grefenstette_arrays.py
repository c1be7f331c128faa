"""Grefenstette et al.'s strength updates and reads over a minibatch, with their vector-Jacobian products, as one
compiled call a step each way (`grefenstette_arrays.c`, where the equations and the layouts are written): what the
numpy mirror of the neural-memory models (`stackparse.models.neural_stack_arrays`) runs between its matrix products.

Per step, numpy would take some forty operations for the pops, pushes and reads of a minibatch of 10 rows, each
costing more in its call than in its arithmetic; the compiled step walks each row's memory once.
"""
from __future__ import annotations

from functools import cache
from pathlib import Path

from stackparse._native import kernels as compiled


@cache
def kernels():
    """The compiled step: `memory_forward` and `memory_backward` (their arguments are documented in the C), or None
    where no C compiler works (`stackparse._native`)."""
    return compiled(Path(__file__).with_suffix(".c"), {"memory_forward": "iiiiiipipiipiipppiip",
                                                       "memory_backward": "iiiiiipippiipiippppiipp"})


def end_bits(flags) -> int:
    """Bit e set where end e's flag is (`read_from_top`, `push_at_top` as the kernels take them)."""
    return sum(1 << e for e, flag in enumerate(flags) if flag)
