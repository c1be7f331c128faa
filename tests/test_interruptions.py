"""Killed at a random point (seeded), with Ctrl-C or SIGKILL, then resumed: `train`, `train-parser` and
`bench` end exactly where the uninterrupted run ends, with SGD and with Adam (issue 17).

Each command runs in a process of its own, as a user runs it; the kill lands somewhere in the time
the uninterrupted run took (so before the first epoch, inside one, while a checkpoint is written or
after the last), and the same command with `--resume` (`bench`: the same command) finishes the run.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from tests.parsers_fixtures import SMALL_CONLLU

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "STACKPARSE_DYNET_MEM": "64"}
TRAIN = ["train", "anbn", "--model", "stack-rnn", "--hidden", "6", "--stacks", "2", "--epochs", "6",
         "--epoch-size", "400", "--validation-size", "10", "--quiet"]
PARSER = ["--epochs", "6", "--batch-size", "2", "--word-dim", "4", "--upos-dim", "2", "--char-hidden", "0",
          "--token-dim", "4", "--context-layers", "0", "--lstm-dim", "4", "--lstm-layers", "1", "--state-dim", "4",
          "--action-dim", "2", "--rel-dim", "2", "--quiet"]
TIMES = ("seconds", "per_s", "minutes")


def _cli(*args) -> list[str]:
    return [sys.executable, str(ROOT / "cli.py"), *map(str, args)]


def _interrupted(args: list, sig: int, seed: int, full_seconds: float) -> None:
    """Run `args`, send `sig` at a random moment of the time a whole run takes, and wait for the end."""
    process = subprocess.Popen(_cli(*args), cwd=ROOT, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(np.random.default_rng(seed).uniform(0.2, full_seconds))
    process.send_signal(sig)
    process.wait(timeout=120)


def _timed(args: list) -> float:
    start = time.perf_counter()
    subprocess.run(_cli(*args), cwd=ROOT, env=ENV, check=True, capture_output=True)
    return time.perf_counter() - start


def _without_times(value):
    if isinstance(value, dict):
        return {k: _without_times(v) for k, v in value.items() if not any(t in k for t in TIMES)}
    return value


def _same_run(a: Path, b: Path) -> None:
    assert _without_times(json.loads((a / "metrics.json").read_text())) == \
        _without_times(json.loads((b / "metrics.json").read_text()))
    assert (a / "best" / "params").read_bytes() == (b / "best" / "params").read_bytes()


EXACT = ["--optimizer-state", "epoch"]     # Adam's moments cannot be checkpointed: restart them every epoch
CASES = [(sig, optimizer) for sig in (signal.SIGINT, signal.SIGKILL) for optimizer in ("sgd", "adam")]


@pytest.mark.parametrize("sig, optimizer", CASES)
def test_train_killed_then_resumed_ends_as_the_uninterrupted_run(tmp_path, sig, optimizer):
    args = [*TRAIN, "--optimizer", optimizer, "--lr", "0.01" if optimizer == "adam" else "0.1", *EXACT]
    seconds = _timed([*args, "--out", tmp_path / "whole"])
    _interrupted([*args, "--out", tmp_path / "cut"], sig, CASES.index((sig, optimizer)), seconds)
    subprocess.run(_cli(*args, "--out", tmp_path / "cut", "--resume"), cwd=ROOT, env=ENV, check=True,
                   capture_output=True)
    _same_run(tmp_path / "whole", tmp_path / "cut")


@pytest.mark.parametrize("sig, optimizer", CASES)
def test_train_parser_killed_then_resumed_ends_as_the_uninterrupted_run(tmp_path, sig, optimizer):
    treebank = tmp_path / "t.conllu"
    treebank.write_text((SMALL_CONLLU + "\n\n") * 40)
    args = ["train-parser", treebank, "--dev", treebank, *PARSER, "--optimizer", optimizer, *EXACT]
    seconds = _timed([*args, "--out", tmp_path / "whole"])
    _interrupted([*args, "--out", tmp_path / "cut"], sig, 10 + CASES.index((sig, optimizer)), seconds)
    subprocess.run(_cli(*args, "--out", tmp_path / "cut", "--resume"), cwd=ROOT, env=ENV, check=True,
                   capture_output=True)
    _same_run(tmp_path / "whole", tmp_path / "cut")


@pytest.mark.parametrize("sig", (signal.SIGINT, signal.SIGKILL))
def test_bench_killed_then_run_again_ends_as_the_uninterrupted_run(tmp_path, sig):
    args = ["bench", "smoke", "--workers", "1"]
    seconds = _timed([*args, "--out", tmp_path / "whole"])
    _interrupted([*args, "--out", tmp_path / "cut"], sig, 20 + sig, seconds)
    time.sleep(2)                       # a job process orphaned by SIGKILL finishes or dies on its own
    subprocess.run(_cli(*args, "--out", tmp_path / "cut"), cwd=ROOT, env=ENV, check=True, capture_output=True)
    whole, cut = sorted((tmp_path / "whole").glob("*/result.json")), sorted((tmp_path / "cut").glob("*/result.json"))
    assert [p.parent.name for p in whole] == [p.parent.name for p in cut]
    for a, b in zip(whole, cut):
        assert _without_times(json.loads(a.read_text())["metrics"]) == _without_times(json.loads(b.read_text())["metrics"])
