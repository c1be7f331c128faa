"""The device DyNet runs on: --device on the commands that train or parse, STACKPARSE_DEVICE for the Python
API, applied before DyNet starts; a GPU asked of a DyNet without CUDA is a one-line error naming the build
script (this machine's dyNET38 is CPU-only: the GPU itself is checked on a GPU machine, README's GPU)."""
import os
import subprocess
import sys
from pathlib import Path

import dynet as dy
import dynet_config
import pytest

import cli
from stackparse import _dynet
from tests.cli_runner import run

ROOT = Path(__file__).resolve().parent.parent
cpu_only = pytest.mark.skipif(dy.HAVE_CUDA, reason="this DyNet has CUDA: the error is for a CPU-only one")


@pytest.mark.parametrize("device, number", [("cpu", None), ("CPU", None), ("gpu", -1), ("GPU", -1),
                                            ("GPU:0", 0), ("gpu:3", 3), (" GPU:1 ", 1)])
def test_device_names(device, number):
    assert _dynet.gpu_number(device) == number


@pytest.mark.parametrize("device", ["tpu", "cuda", "", "GPU:", "GPU:x", "gpu:-1", "cpu:0", "GPU:0:1"])
def test_other_device_names_are_refused(device):
    with pytest.raises(_dynet.DeviceError, match="is not cpu, gpu or GPU:N"):
        _dynet.gpu_number(device)


@pytest.fixture
def dynet_settings(monkeypatch):
    """What _configure passes to dynet_config (recorded, not applied: DyNet runs already)."""
    calls = []
    monkeypatch.setattr(dynet_config, "set", lambda **settings: calls.append(settings))
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)    # restored after the test, whatever was set
    monkeypatch.delenv("STACKPARSE_DYNET_MEM", raising=False)
    return calls


@pytest.mark.parametrize("device, gpus, visible", [("cpu", 0, None), ("gpu", 1, None), ("GPU:2", 1, "2")])
def test_the_device_becomes_dynets_settings(dynet_settings, device, gpus, visible):
    _dynet._configure(device)
    assert dynet_settings == [{"mem": _dynet.LIBRARY_MEMORY, "random_seed": 1, "requested_gpus": gpus}]
    assert os.environ.get("CUDA_VISIBLE_DEVICES") == visible


def test_gpu_n_counts_among_the_visible_gpus(dynet_settings, monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "4,6")
    _dynet._configure("GPU:1")
    assert os.environ["CUDA_VISIBLE_DEVICES"] == "6"
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "4,6")
    with pytest.raises(_dynet.DeviceError, match="GPU:2 is not among the 2 that CUDA_VISIBLE_DEVICES=4,6"):
        _dynet._configure("GPU:2")


def test_a_device_other_than_the_one_dynet_started_on_is_refused(monkeypatch):
    monkeypatch.setattr(dy, "HAVE_CUDA", True)
    monkeypatch.setattr(_dynet, "STARTED_ON", "cpu")
    _dynet.require("CPU")
    with pytest.raises(_dynet.DeviceError, match="already runs on cpu"):
        _dynet.require("gpu")


def test_every_command_that_trains_or_parses_has_one_device_option_and_no_other_has_it():
    for name, command in cli.main.commands.items():
        count = command.params.count(cli.DEVICE)
        assert count == (name in cli.DEVICE_COMMANDS), name
    for name in cli.DEVICE_COMMANDS:
        text = " ".join(run(name, "--help").split())
        assert "--device cpu|gpu|GPU:N" in text and "STACKPARSE_DEVICE" in text and "default: cpu" in text, name


def test_device_cpu_is_the_default_and_can_be_given(tmp_path):
    out = run("train", "anbn", "--model", "rnn", "--out", tmp_path / "r", "--epochs", "1", "--epoch-size", "10",
              "--validation-size", "5", "--hidden", "4", "--quiet", "--device", "cpu")
    assert "% of n in 1..60 correct" in out


@cpu_only
@pytest.mark.parametrize("device", ["gpu", "GPU:0"])
def test_a_gpu_from_a_dynet_without_cuda_is_one_line_naming_the_build_script(tmp_path, device):
    out = run("train", "anbn", "--out", tmp_path, "--device", device, ok=False)
    assert out.count("\n") == 1 and out.startswith("error: ") and "scripts/build-dynet-gpu.sh" in out


def fresh(*args: str, **env: str) -> subprocess.CompletedProcess:
    """Python run in a new process (DyNet not started yet), with `env` added to the environment."""
    environment = {**os.environ, "STACKPARSE_DYNET_MEM": "32", **env}
    return subprocess.run([sys.executable, *args], cwd=ROOT, env=environment, capture_output=True, text=True)


@cpu_only
def test_the_command_line_asks_dynet_for_the_gpu_before_it_starts():
    for result in (fresh("cli.py", "speed", "--device", "gpu"), fresh("cli.py", "parse", "m", "in", "-o", "x",
                                                                        STACKPARSE_DEVICE="gpu")):
        assert result.returncode == 2 and "Traceback" not in result.stderr
        assert result.stderr.splitlines()[-1].startswith("error: gpu asked for, but this DyNet was built without CUDA")
        assert "scripts/build-dynet-gpu.sh" in result.stderr


@cpu_only
def test_the_python_api_reads_stackparse_device():
    code = ("import dynet_config\ntry:\n    import stackparse\nexcept ImportError as e:\n"
            "    print(type(e).__name__, e)\nprint(dynet_config.get()['requested_gpus'], dynet_config.get()['mem'])")
    lines = fresh("-c", code, STACKPARSE_DEVICE="gpu").stdout.splitlines()
    assert lines[0].startswith("DeviceError gpu asked for") and "scripts/build-dynet-gpu.sh" in lines[0]
    assert lines[1] == "1 32"


def test_the_parsers_commands_start_dynet_with_its_memory_and_the_others_with_the_librarys():
    code = "import sys, cli, dynet_config\ncli._start_dynet(sys.argv[1:])\nprint(dynet_config.get()['mem'])"
    environment = {k: v for k, v in os.environ.items() if k != "STACKPARSE_DYNET_MEM"}
    for args, memory in ((["parse", "m", "in"], "512,512,256,128"), (["train", "anbn"], "128")):
        result = subprocess.run([sys.executable, "-c", code, *args], cwd=ROOT, env=environment, capture_output=True,
                                text=True)
        assert result.stdout.strip() == memory, result.stderr
