"""Numpy views of a DyNet parameter's values and gradient, without a copy: what the numpy mirrors of training read
and write (`stackparse.models.neural_stack_arrays`, `stackparse.training.gradients.PrecomputedLoss`).

DyNet's Python API copies a tensor to or from numpy element by element (`as_array`, `npvalue`, `inputTensor`,
`set_value`): tens of nanoseconds an element, which at the paper's sizes (a 256-unit LSTM's 1024 x 576 weights)
costs more than the whole numpy training step it would feed. A parameter's values and gradient are two float arrays
in DyNet's parameter pool, column-major, at fixed addresses while its collection lives; `views` maps them, so a
mirror reads the weights and adds its gradient where DyNet's backward pass would have.

How: the Python `Parameters` object holds a C++ `Parameter`, a shared pointer to the `ParameterStorage`, whose
`values` and `g` Tensors each hold a Dim (7 dimensions, their number, the batch) and a float pointer. The byte
offsets below are those of the dyNET38 2.2 wheel (CPU). Nothing is trusted unchecked: the shared pointer must have
make_shared's signature (its control block 16 bytes before the object) before the storage is read, both Dims must be
the parameter's shape, and the first parameter mapped in a process must read back exactly as `as_array()`. Another
DyNet (a GPU build, another version) or any failed check gives None, and the callers take DyNet's copies instead:
slower, the same numbers.
"""
from __future__ import annotations

import ctypes
from importlib import metadata
from typing import NamedTuple

import numpy as np

import stackparse._dynet  # noqa: F401  (DyNet's settings before its import)
import dynet as dy

SUPPORTED = ("dyNET38", "2.2")
"""The DyNet distribution and version whose CPU build the offsets are those of."""
OBJECT_STORAGE, OBJECT_CONTROL = 32, 40         # in the Python object: the shared pointer's object, control block
VALUES_DIM, VALUES, GRAD_DIM, GRAD = 56, 96, 120, 160     # in ParameterStorage: values.d, values.v, g.d, g.v
DIMS = 7                                        # DYNET_MAX_TENSOR_DIM

_checked: bool | None = None
"""Whether a first parameter read back as `as_array()` (None: none mapped yet in this process)."""


class ParameterViews(NamedTuple):
    """A parameter's values and gradient as float32 arrays of its shape (column-major views of DyNet's memory)."""
    values: np.ndarray
    grad: np.ndarray


def _supported() -> bool:
    try:
        return metadata.version(SUPPORTED[0]) == SUPPORTED[1] and not dy.HAVE_CUDA
    except metadata.PackageNotFoundError:
        return False


SUPPORTED_HERE = _supported()


def _word(address: int) -> int:
    return ctypes.c_uint64.from_address(address).value


def _dim(address: int) -> tuple[tuple[int, ...], int]:
    """The shape and batch size of the Dim at `address`."""
    words = (ctypes.c_uint32 * (DIMS + 2)).from_address(address)
    n = words[DIMS]
    return tuple(words[:n]) if n <= DIMS else (), words[DIMS + 1]


def _array(address: int, shape: tuple[int, ...]) -> np.ndarray:
    flat = np.ctypeslib.as_array((ctypes.c_float * int(np.prod(shape))).from_address(address))
    return flat.reshape(shape[::-1]).T                   # column-major, as DyNet stores it


def views(p: dy.Parameters) -> ParameterViews | None:
    """Numpy views of `p`'s values and gradient in DyNet's memory, or None where they cannot be had safely (module
    docstring). Valid while p's collection lives: take them anew for each use rather than keep them."""
    global _checked
    if not SUPPORTED_HERE or _checked is False or type(p) is not dy.Parameters:
        return None
    storage, control = _word(id(p) + OBJECT_STORAGE), _word(id(p) + OBJECT_CONTROL)
    if storage == 0 or storage - control != 16:
        return None
    shape = tuple(p.shape())
    if _dim(storage + VALUES_DIM) != (shape, 1) or _dim(storage + GRAD_DIM) != (shape, 1):
        return None
    values, grad = _word(storage + VALUES), _word(storage + GRAD)
    if not values or not grad:
        return None
    result = ParameterViews(_array(values, shape), _array(grad, shape))
    if _checked is None:
        _checked = bool(np.array_equal(result.values, p.as_array().astype(np.float32)))
        return result if _checked else None
    return result


def read(p: dy.Parameters) -> np.ndarray:
    """A copy of p's values, float64 in its shape: `as_array()`'s numbers, without its copy element by element
    where a view can be had."""
    view = views(p)
    return p.as_array() if view is None else view.values.astype(np.float64)


def write(p: dy.Parameters, values: np.ndarray) -> None:
    """Set p's values (`set_value`, without its copy element by element where a view can be had)."""
    view = views(p)
    if view is None:
        p.set_value(values)
    else:
        view.values[...] = values
