"""C kernels compiled on first use (`stackparse._native`): cached per source, and None, with a warning, where the
compiler fails."""
import ctypes

import pytest

from stackparse import _native

SOURCE = "void twice(int n, float *x) { for (int i = 0; i < n; i++) x[i] *= 2.0f; }\n"


def test_a_source_is_compiled_once_and_runs(tmp_path, monkeypatch):
    monkeypatch.setenv("STACKPARSE_NATIVE_CACHE", str(tmp_path / "cache"))
    source = tmp_path / "twice.c"
    source.write_text(SOURCE)
    functions = _native.kernels(source, {"twice": "ip"})
    x = (ctypes.c_float * 3)(1, 2, 3)
    functions.twice(3, ctypes.addressof(x))
    assert list(x) == [2, 4, 6]
    assert [p.suffix for p in (tmp_path / "cache").iterdir()] == [".so"]      # no temporary file left
    assert _native.load(source) is _native.load(source)


def test_without_a_working_compiler_load_warns_and_gives_none(tmp_path, monkeypatch):
    monkeypatch.setenv("STACKPARSE_NATIVE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("CC", "false")
    source = tmp_path / "broken.c"
    source.write_text(SOURCE)
    with pytest.warns(UserWarning, match="could not compile broken.c"):
        assert _native.kernels(source, {"twice": "ip"}) is None
    assert list((tmp_path / "cache").iterdir()) == []


def test_the_processor_summary_names_model_cores_and_vector_extensions(tmp_path, monkeypatch):
    monkeypatch.setattr(_native.os, "cpu_count", lambda: 2)
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nmodel name\t: AMD EPYC\nflags\t\t: fpu sse2 avx fma avx2 bmi2\n\n"
                       "processor\t: 1\nmodel name\t: AMD EPYC\nflags\t\t: fpu sse2 avx fma avx2 bmi2\n")
    assert _native.processor_summary(cpuinfo) == "AMD EPYC; 2 cores; avx2 fma"
    assert _native.processor_summary(tmp_path / "absent").endswith("; 2 cores")
