"""An exponential moving average of a model's parameters (Polyak & Juditsky 1992; the decayed form
of Polyak averaging that parsers train with, e.g. spaCy's and UDPipe 2's).

The trainer calls `update` after parameter updates and `applied` around validation and saving, so
the averaged weights are selected and kept while training goes on from the raw ones; it smooths the
epoch-to-epoch noise of Adam with minibatches. DyNet copies parameters to numpy element by element
(~40 ns a value), so reading millions after every update would cost more than the update: the Parameters are read
and written through views of DyNet's memory where they can be had (`stackparse._dynet_views`), and `every`
samples every k-th update with the decay raised to the k-th power (the same time constant).
"""
from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

import dynet as dy
import numpy as np

from stackparse._dynet_views import read, write


class ParameterAverage:
    """avg <- d^k avg + (1 - d^k) theta every k-th update (k = `every`), d = min(decay, (1 + n) / (10 + n))
    after n updates: TensorFlow's ExponentialMovingAverage warm-up, so the random initial values are
    forgotten within the first epoch instead of weighing decay^n. Averages every parameter of `pc` that
    training updates (Parameters and LookupParameters; a fixed one, such as pretrained vectors, is its own
    average, and reading it would cost the most); decay 0.999 is a time constant of about 1,000 updates."""

    def __init__(self, pc: dy.ParameterCollection, decay: float, every: int = 1):
        self.params = [p for p in pc.parameters_list() if p.is_updated()]
        self.lookups = [p for p in pc.lookup_parameters_list() if p.is_updated()]
        self.decay, self.every, self.updates = decay, every, 0
        self.values = self._read()

    def _read(self) -> list[np.ndarray]:
        return [read(p) for p in self.params] + [p.as_array() for p in self.lookups]

    def _write(self, values: list[np.ndarray]) -> None:
        for p, v in zip(self.params, values):
            write(p, v)
        for p, v in zip(self.lookups, values[len(self.params):]):
            p.init_from_array(v)

    def update(self) -> None:
        """Count one parameter update; fold the current parameters in on every k-th."""
        self.updates += 1
        if self.updates % self.every == 0:
            n = self.updates
            d = min(self.decay, (1 + n) / (10 + n)) ** self.every
            for avg, value in zip(self.values, self._read()):
                avg *= d
                avg += (1 - d) * value

    @contextmanager
    def applied(self):
        """The averaged values in the model for the duration of the block, the raw ones after."""
        raw = self._read()
        self._write(self.values)
        try:
            yield
        finally:
            self._write(raw)

    def save(self, path: Path) -> None:
        np.savez(path, *self.values, updates=self.updates)

    def load(self, path: Path) -> None:
        with np.load(path) as saved:
            self.updates = int(saved["updates"])
            self.values = [saved[f"arr_{i}"] for i in range(len(self.values))]
