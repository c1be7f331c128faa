"""Shared fixtures: a tiny task and a tiny experiment, so tests stay fast and deterministic."""
from __future__ import annotations

import os

# One BLAS thread per test worker, before numpy loads: the workers (pytest-xdist, pyproject.toml) already use
# every core, and a product split over threads rounds differently from one computed whole.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import parsers  # noqa: E402,F401  (first: the parser's tests need DyNet's pools pre-allocated for autobatching)
import dynet as dy  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from stackparse.tasks.base import Example, Protocol, Task  # noqa: E402


class Parity(Task):
    """A toy task for trainer tests: after a run of 'a's, predict whether its length was even."""
    name = "toy-parity"
    kind = "toy"
    description = "toy"
    symbols = ("a", "=", "e", "o")
    protocol = Protocol(train_n=(1, 4), test_n=(1, 6), stream=False, curriculum_every=0)

    def sample(self, rng, n):
        text = "a" * n + "="
        answer = "e" if n % 2 == 0 else "o"
        ids = self.encode(text + answer)
        return Example(ids[:-1], ids[1:], tuple([False] * n + [True]), n)


@pytest.fixture
def parity():
    return Parity()


@pytest.fixture(autouse=True)
def fresh_graph():
    """Each test starts from a new computation graph and a fixed DyNet seed."""
    dy.reset_random_seed(1)
    dy.renew_cg()
    yield


@pytest.fixture
def rng():
    return np.random.default_rng(0)
