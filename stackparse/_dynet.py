"""DyNet reads its settings once, at its first import; every stackparse entry point passes here first.
It also holds `product`, the matrix product that the library uses instead of DyNet's `a * b`.

Memory is chosen per use. DyNet's pools normally grow on demand, so the library starts small
(`LIBRARY_MEMORY`) and a program that embeds an encoder pays only what its graphs need. Autobatching
(the parser's) cannot grow them: DyNet refuses with an error, so the parser wing
(`parsers/__init__.py`) asks for pre-allocated pools before it imports stackparse. Either way
STACKPARSE_DYNET_MEM (MB: one number, or `forward,backward,parameters,scratch`) overrides the
default; docs/encoders.md says more.

The device too: STACKPARSE_DEVICE is `cpu` (the default), `gpu` (one GPU, the one with the most free
memory) or `GPU:N` (GPU number N); the command line's `--device` sets it. A GPU needs DyNet built with
CUDA (`scripts/build-dynet-gpu.sh`, README.md "GPU"): asking for one from a DyNet without CUDA, or from a
machine where DyNet finds no GPU, makes `import stackparse` fail with a `DeviceError`, one line. If the
user's program imported dynet already, its own settings stand, its device included.
"""
import os
import sys

from stackparse.errors import UserError

LIBRARY_MEMORY = "128"
"""Initial pools (MB) when nothing asks for more: they grow as graphs need, without autobatching."""

BUILD_SCRIPT = "scripts/build-dynet-gpu.sh"


class DeviceError(UserError, ImportError):
    """DyNet cannot run on the device asked for. An ImportError too: `import stackparse` is what fails."""


def gpu_number(device: str) -> int | None:
    """The GPU that `device` names: None for `cpu`, -1 for `gpu` (any one), N for `GPU:N` (any case).

    Raises:
        DeviceError: `device` is none of these.
    """
    kind, colon, number = device.strip().lower().partition(":")
    if not colon and kind in ("cpu", "gpu"):
        return None if kind == "cpu" else -1
    if kind == "gpu" and number.isdigit():
        return int(number)
    raise DeviceError(f"device {device!r} is not cpu, gpu or GPU:N (a GPU's number)")


def _only_gpu(number: int) -> str:
    """CUDA_VISIBLE_DEVICES showing GPU `number` alone, counted among the GPUs already visible."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if not visible:
        return str(number)
    ids = visible.split(",")
    if number >= len(ids):
        raise DeviceError(f"GPU:{number} is not among the {len(ids)} that CUDA_VISIBLE_DEVICES={visible} shows")
    return ids[number].strip()


def _configure(device: str) -> None:
    """DyNet's settings, before its first import: memory, seed and device.

    `GPU:N` shows DyNet that GPU alone (CUDA_VISIBLE_DEVICES) and asks for one GPU: DyNet 2.1's own
    `gpu_mask` setting, as dynet_config passes it, asks for one GPU more than it names.
    """
    import dynet_config
    gpu = gpu_number(device)
    if gpu is not None and gpu >= 0:
        os.environ["CUDA_VISIBLE_DEVICES"] = _only_gpu(gpu)
    dynet_config.set(mem=os.environ.get("STACKPARSE_DYNET_MEM", LIBRARY_MEMORY), random_seed=1,
                     requested_gpus=0 if gpu is None else 1)


def require(device: str) -> None:
    """Check that DyNet, as it started in this process, runs on `device`.

    Raises:
        DeviceError: `device` is a GPU and this DyNet has no CUDA, or DyNet started on another device.
    """
    gpu = gpu_number(device)
    if gpu is not None and not dy.HAVE_CUDA:
        raise DeviceError(f"{device} asked for, but this DyNet was built without CUDA (the dyNET38 wheel is "
                          f"CPU-only): {BUILD_SCRIPT} builds one with it (README.md, GPU)")
    if STARTED_ON is not None and gpu != gpu_number(STARTED_ON):
        raise DeviceError(f"{device} asked for, but DyNet already runs on {STARTED_ON} in this process: the "
                          f"device is chosen before DyNet starts (STACKPARSE_DEVICE, or --device)")


STARTED_ON = None
"""The device stackparse started DyNet on (STACKPARSE_DEVICE); None if the user's program started it."""
if "dynet" not in sys.modules:
    STARTED_ON = os.environ.get("STACKPARSE_DEVICE", "cpu")
    _configure(STARTED_ON)
try:
    import dynet as dy  # noqa: E402  (after the configuration above)
except RuntimeError as e:   # a CUDA build that finds no usable GPU (DyNet's lines above say why)
    raise DeviceError(f"DyNet could not start on {STARTED_ON}: CUDA failed in {e}") from None
if STARTED_ON is not None:
    require(STARTED_ON)


def product(a: dy.Expression, b: dy.Expression) -> dy.Expression:
    """The matrix product a b, as `a * b` means it, computed without reading stale memory.

    DyNet's own `a * b` (this build, on the CPU) reads its output's memory before writing it, as
    0 * old + a b: a NaN or an infinity that an earlier graph left in the memory pool (the parser's
    restricted log-softmax leaves -inf) turns the product into NaN, silently, in whatever model runs
    next in the same process. `affine_transform` starts from its bias instead: with a zero bias the
    values are those of `a * b`, to the bit (tests/test_dynet_memory.py).
    """
    (rows, *_), _ = a.dim()
    (_, *columns), _ = b.dim()
    return dy.affine_transform([dy.zeros((rows, *columns)), a, b])
