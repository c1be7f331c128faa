"""C kernels compiled on first use: a source file beside its Python module, built by the machine's C compiler into a
shared library cached per source, flags and processor, and loaded with ctypes.

Why not a build step: the package installs as plain Python (`pip install -e .`), and the kernels are compiled for
the processor they run on (`-march=native`: the vector instructions are most of their speed), which an installed
binary could not be. Where no compiler works (`CC`, else `cc`), `load` says so and returns None; the callers then
take another path (the numpy mirror of the neural memories: DyNet's graph), never a wrong one.

The cache: `$STACKPARSE_NATIVE_CACHE`, else `~/.cache/stackparse/native`. A library is written under a temporary
name and renamed, so processes compiling at once (a benchmark's workers) never load a half-written file.
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import platform
import shlex
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path
from types import SimpleNamespace

FLAGS = ("-O3", "-march=native", "-fno-math-errno", "-fno-trapping-math", "-std=c11", "-fPIC", "-shared")
"""No -ffast-math: the compiler keeps the float32 arithmetic as written (no reassociation), so the memory's running
sums are taken in numpy's cumulative order; -fno-trapping-math lets a select between two computed values (one of
them a division) vectorise: nothing here reads the floating-point exception flags."""

_loaded: dict[Path, ctypes.CDLL | None] = {}


CPUINFO = Path("/proc/cpuinfo")


def _cpuinfo_lines(cpuinfo: Path = CPUINFO) -> list[str] | None:
    """The lines of the kernel's processor description, or None where there is none (not Linux)."""
    try:
        return cpuinfo.read_text().splitlines()
    except OSError:
        return None


def _processor() -> str:
    """What -march=native compiles for: the processor's model and flags."""
    lines = _cpuinfo_lines()
    if lines is None:
        return platform.processor()
    return "".join(line for line in lines if line.startswith(("model name", "flags")))[:4000]


VECTOR_EXTENSIONS = ("avx512f", "avx2", "fma", "neon", "asimd")
"""The processor flags, of those /proc/cpuinfo lists, that a result records: the compiled kernels and the kernels
OpenBLAS picks turn on them, so a speed measured on one machine holds on another only with the same ones
(BENCHMARKS.md, "Which processor")."""


def processor_summary(cpuinfo: Path = CPUINFO) -> str:
    """The processor as a benchmark's result records it beside its speeds: model, logical cores, vector extensions
    (`VECTOR_EXTENSIONS`), e.g. "AMD EPYC; 2 cores; avx2 fma"; machines of one name can differ in all three."""
    lines = _cpuinfo_lines(cpuinfo)
    if lines is None:
        return f"{platform.processor() or platform.machine()}; {os.cpu_count()} cores"
    fields = [line.partition(":") for line in lines]
    model = next((value.strip() for key, _, value in fields if key.strip() == "model name"), platform.machine())
    flags = set(next((value.split() for key, _, value in fields if key.strip() in ("flags", "Features")), []))
    return "; ".join([model, f"{os.cpu_count()} cores", " ".join(f for f in VECTOR_EXTENSIONS if f in flags)])


def _cache_dir() -> Path:
    return Path(os.environ.get("STACKPARSE_NATIVE_CACHE") or Path.home() / ".cache" / "stackparse" / "native")


def load(source: Path) -> ctypes.CDLL | None:
    """The compiled library of a C source file (cached), or None where it cannot be compiled (a warning says why)."""
    source = Path(source)
    if source in _loaded:
        return _loaded[source]
    compiler = shlex.split(os.environ.get("CC", "cc"))
    key = hashlib.sha256(b"\0".join([source.read_bytes(), " ".join(compiler + list(FLAGS)).encode(),
                                     _processor().encode(), sys.platform.encode()])).hexdigest()[:20]
    library = _cache_dir() / f"{source.stem}-{key}.so"
    if not library.exists():
        tmp = None
        try:
            library.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile(dir=library.parent, suffix=".so", delete=False) as tmp:
                pass
            subprocess.run([*compiler, *FLAGS, "-o", tmp.name, str(source), "-lm"], check=True, capture_output=True,
                           text=True)
            os.replace(tmp.name, library)
        except (OSError, subprocess.CalledProcessError) as error:
            if tmp is not None:
                Path(tmp.name).unlink(missing_ok=True)
            detail = getattr(error, "stderr", "") or str(error)
            warnings.warn(f"could not compile {source.name} ({' '.join(compiler)}): {detail.strip()[:500]}",
                          stacklevel=2)
            _loaded[source] = None
            return None
    _loaded[source] = ctypes.CDLL(str(library))
    return _loaded[source]


ARGUMENTS = {"i": ctypes.c_int, "p": ctypes.c_void_p}
"""The argument types `kernels` reads: an int, a pointer (an address as a Python int, or None)."""


def kernels(source: Path, signatures: dict[str, str]) -> SimpleNamespace | None:
    """The functions of the compiled `source` that `signatures` names, each with its arguments spelt in
    `ARGUMENTS`' letters ("iip": two ints and a pointer) and no result; None where it cannot be compiled."""
    library = load(source)
    if library is None:
        return None
    functions = {}
    for name, arguments in signatures.items():
        function = getattr(library, name)
        function.argtypes, function.restype = [ARGUMENTS[a] for a in arguments], None
        functions[name] = function
    return SimpleNamespace(**functions)
