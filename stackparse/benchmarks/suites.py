"""Benchmark suites: named lists of (task, model) experiments, each run over several seeds.

A suite knows its experiments and which published table it reproduces; the runner and the report
know nothing of tasks or models.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from stackparse.benchmarks.published import JOULIN_MIKOLOV_TABLE2
from stackparse.errors import unknown_name


@dataclass(frozen=True)
class Job:
    """One experiment of a suite: `train TASK --model MODEL` for one seed.

    overrides: ExperimentConfig fields other than the defaults ("train", "data", "model_config", ...);
    the seed always comes from `seed`."""
    task: str
    model: str
    seed: int
    overrides: dict = field(default_factory=dict)

    @property
    def key(self) -> str:
        return f"{self.task}--{self.model}--s{self.seed}"


@dataclass(frozen=True)
class Suite:
    name: str
    description: str
    tasks: tuple[str, ...]
    models: tuple[str, ...]
    published: dict                     # task -> model -> the paper's number
    metric: str = "percent_n_correct"
    paper: str = ""
    overrides: dict = field(default_factory=dict)

    def jobs(self, seeds: int) -> list[Job]:
        return [Job(t, m, s, self.overrides) for t in self.tasks for m in self.models for s in range(1, seeds + 1)]


SUITES = {s.name: s for s in [
    Suite("counting-baselines",
          "Joulin & Mikolov 2015, Table 2, RNN and LSTM columns: the five counting tasks",
          ("anbn", "anbncn", "anbncndn", "anb2n", "anbmcnm"), ("rnn", "lstm"),
          JOULIN_MIKOLOV_TABLE2, paper="Joulin & Mikolov 2015, Table 2"),
]}


def get_suite(name: str) -> Suite:
    try:
        return SUITES[name]
    except KeyError:
        raise unknown_name("suite", name, SUITES) from None
