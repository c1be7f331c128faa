"""Benchmark suites: named lists of experiments (task x column), each run over several seeds.

A column is a model with its own settings (one model may fill several columns: the Stack RNN with and
without rounding). A suite knows its experiments and the published table it reproduces; the runner
and the report know nothing of tasks or models. A profile says how much of a suite to run (`quick`:
minutes here; `full`: the papers' protocols); a composite runs several suites as one benchmark.

A suite may have a grid (`Suite.grid`: setting -> values, e.g. a paper's learning rates): every (task, column, seed)
then runs once at each point of it, and a selection rule (`Suite.select`: a metric, lower is better) keeps one run
of them in the report, as a paper keeps its best model by training perplexity.
"""
from __future__ import annotations

import itertools
import zlib
from dataclasses import dataclass, field, fields, replace

import numpy as np

from stackparse.benchmarks.published import (JOULIN_MIKOLOV_TABLE2, JOULIN_MIKOLOV_TABLE4, MALI_LANGUAGES,
                                             MALI_LANGUAGES4, MALI_TABLE1, MALI_TABLE2, MALI_TABLE3,
                                             MALI_TABLE4_TEST, MALI_TABLE4_TRAIN, MALI_TABLE6, MALI_TABLE7_TEST,
                                             MALI_TABLE7_TRAIN, grefenstette_table3)
from stackparse.encoders.grefenstette import STACK_LIKE_START
from stackparse.errors import UserError, unknown_name
from stackparse.grammars.realtime import realtime
from stackparse.models import get_model_class
from stackparse.models.nspda import EARLIER
from stackparse.models.programming import neurons_needed
from stackparse.tasks import get_task
from stackparse.tasks.transduction import TODAY_TRAINING, TransductionTask
from stackparse.training.sequence import SequenceDataConfig
from stackparse.training.trainer import TrainConfig


@dataclass(frozen=True)
class Column:
    """One column of a suite's table: `model` with the settings (model, trainer, the other training
    settings: data, gradient, noise, rules) that differ from its defaults, by name."""
    label: str
    model: str
    model_settings: dict = field(default_factory=dict)
    train_settings: dict = field(default_factory=dict)
    data_settings: dict = field(default_factory=dict)
    state_draw: tuple[int, int] | None = None
    """The NSPDA paper's sizes: `hidden` drawn for each run as the task's PDA states M + U(lo, hi), at least the
    neurons the inserted rules need (the second-order code needs one per rule: 27 for Dyck(2))."""
    points: tuple[dict, ...] = ({},)
    """The column's own alternatives (settings by name), each run at every point of the suite's grid: with a
    selection rule the report keeps one of them as it keeps one of the grid's points (the deque's two starts)."""

    def model_settings_for(self, task: str, seed: int) -> dict:
        """The model settings of one run: with `state_draw`, hidden = M + U(lo, hi), drawn from (seed, task)."""
        if self.state_draw is None:
            return self.model_settings
        lo, hi = self.state_draw
        rng = np.random.default_rng([seed, zlib.crc32(task.encode())])
        pda = get_task(task).pda
        drawn = len(pda.states) + int(rng.integers(lo, hi + 1))
        if self.data_settings.get("insert_rules", 0) > 0:
            drawn = max(drawn, neurons_needed(realtime(pda), {"nspda2": 2, "nspda3": 3}[self.model]))
        return {**self.model_settings, "hidden": drawn}


@dataclass(frozen=True)
class Job:
    """One experiment of a suite (`train TASK --model MODEL`) for one seed, of experiment `kind`: the
    suite's `overrides` of the kind's defaults, then the column's and the profile's settings, then the
    seed (`stackparse.benchmarks.runner.job_settings`)."""
    task: str
    model: str
    seed: int
    overrides: dict = field(default_factory=dict)
    label: str = ""
    kind: str = "sequence"
    model_settings: dict = field(default_factory=dict)
    train_settings: dict = field(default_factory=dict)
    data_settings: dict = field(default_factory=dict)
    point: dict = field(default_factory=dict)
    """The job's point of the suite's grid: settings by name, applied after all the others."""

    @property
    def key(self) -> str:
        """The job's name, and its directory's under the suite's results: a "/" of a label ("w/o reg") is "_"."""
        point = "".join(f"--{name}={value}" for name, value in self.point.items())
        return f"{self.task}--{self.label or self.model}{point}--s{self.seed}".replace("/", "_")


@dataclass(frozen=True)
class Profile:
    """How much of a suite `bench --profile NAME` runs: the default number of seeds, settings set on every
    job over the suite's and the column's (model settings on the jobs whose model has them), the grid (None: the
    suite's; {}: none), and a note for the report."""
    seeds: int
    train_settings: dict = field(default_factory=dict)
    data_settings: dict = field(default_factory=dict)
    note: str = ""
    model_settings: dict = field(default_factory=dict)
    grid: dict | None = None
    continued: dict = field(default_factory=dict)
    """Train settings under which each task's and column's kept run (the suite's `select`, over its grid and seeds)
    resumes from its checkpoint once all of them have finished: a longer budget for the run the selection keeps
    ({}: none). The runner does it before the report (`stackparse.benchmarks.runner.continuations`)."""


FULL = Profile(3, note="the suite's own settings")


@dataclass(frozen=True)
class Suite:
    """models: model names, or `Column`s where a model needs settings or appears twice."""
    name: str
    description: str
    tasks: tuple[str, ...]
    models: tuple[str | Column, ...]
    published: dict                     # task -> column label -> the paper's number
    metric: str = "percent_n_correct"
    paper: str = ""
    overrides: dict = field(default_factory=dict)
    kind: str = "sequence"
    curves: bool = False                # also report and plot accuracy against n
    more_metrics: tuple[tuple[str, dict], ...] = ()   # more (metric, published) tables; "a.b": metrics["a"]["b"]
    decimals: int = 1                   # of the numbers in the report's tables
    metric_decimals: dict = field(default_factory=dict)
    """metric -> decimals, for a table whose numbers need others than `decimals` (percentages beside epochs)."""
    profiles: dict = field(default_factory=lambda: {"full": FULL})     # name -> Profile
    rows: str = "tasks"                 # of the report's tables: "tasks", or "models" (a column per task)
    grid: dict = field(default_factory=dict)
    """setting name -> values: each (task, column, seed) runs at every combination of them (a profile may change it)."""
    select: str = ""
    """The metric (a dotted path into a run's metrics, lower is better) by which the report keeps one run of the
    grid's and the seeds' per task and column (`stackparse.benchmarks.report.kept`); "": every run counts."""
    tolerance: float | None = None
    """The largest difference from the paper's number that the report counts as a match (an issue's criterion: 0.05
    of Table 3's accuracies, 2 points of Table 4's errors); None: the report counts none."""
    counted: tuple[str, ...] = ()
    """The column labels an issue's criterion counts (Table 3's four rows of the acceptance: the 2-layer LSTM, the
    stack, the queue, the deque); the report counts their cells apart, out of all the paper prints for them. (): none
    apart."""

    @property
    def all_published(self) -> tuple[dict, ...]:
        """The paper's numbers of every table the report writes (task -> column label -> number), the main first."""
        return (self.published, *(published for _, published in self.more_metrics))

    @property
    def columns(self) -> tuple[Column, ...]:
        return tuple(m if isinstance(m, Column) else Column(m, m) for m in self.models)

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(c.label for c in self.columns)

    def only(self, columns: str = "", tasks: str = "") -> Suite:
        """The suite of its columns whose label contains `columns` and its tasks whose name contains `tasks` (its
        jobs are the suite's of those columns and tasks: a job does not depend on the others)."""
        return replace(self, models=tuple(c for c in self.columns if columns in c.label),
                       tasks=tuple(t for t in self.tasks if tasks in t))

    def profile(self, name: str) -> Profile:
        try:
            return self.profiles[name]
        except KeyError:
            raise UserError(f"suite {self.name!r} has no profile {name!r}; its profiles: "
                            f"{', '.join(self.profiles)}") from None

    def grid_of(self, profile: str) -> dict:
        """The grid the profile runs: its own, or the suite's."""
        grid = self.profile(profile).grid
        return self.grid if grid is None else grid

    def points(self, profile: str) -> list[dict]:
        """Every combination of the grid's values, as settings by name ([{}] without a grid)."""
        grid = self.grid_of(profile)
        return [dict(zip(grid, values)) for values in itertools.product(*grid.values())]

    def jobs(self, seeds: int, profile: str = "full") -> list[Job]:
        p = self.profile(profile)
        return [Job(t, c.model, s, self.overrides, c.label, self.kind,
                    {**c.model_settings_for(t, s), **_model_has(c.model, p.model_settings)},
                    {**c.train_settings, **p.train_settings}, {**c.data_settings, **p.data_settings},
                    {**point, **own})
                for t in self.tasks for c in self.columns for point in self.points(profile) for own in c.points
                for s in range(1, seeds + 1)]


def _model_has(model: str, settings: dict) -> dict:
    """The `settings` that model `model` (a sequence model) has."""
    if not settings:
        return {}
    names = {f.name for f in fields(get_model_class(model).Config)}
    return {name: value for name, value in settings.items() if name in names}


@dataclass(frozen=True)
class Composite:
    """A suite made of suites (`parts`, names in SUITES): one benchmark, one run of all their jobs;
    each part keeps its own directory, tables and plots, and needs the profile asked for."""
    name: str
    description: str
    parts: tuple[str, ...]


COUNTING = ("anbn", "anbncn", "anbncndn", "anb2n", "anbmcnm")
TABLE2 = "Joulin & Mikolov 2015, Table 2"
# The Stack and List RNNs: online (batch size 1) as in the paper, 20 epochs (the curriculum reaches
# n = 19 at epoch 16), not the default 40, to fit this machine's time budget.
MEMORY_TRAINING = {"epochs": 20}
MEMORY_COLUMNS = (Column("list-rnn", "list-rnn", {"lists": 5}, MEMORY_TRAINING),
                  Column("stack-rnn", "stack-rnn", {"stacks": 10}, MEMORY_TRAINING),
                  Column("stack-rnn+rounding", "stack-rnn", {"stacks": 10, "rounding": True}, MEMORY_TRAINING))
# Joulin & Mikolov's suites in minutes (one seed; half the training sequences, 20 epochs for every
# model): the quick profile of `algorithmic`, 12 minutes with one worker on this machine (BENCHMARKS.md).
QUICK_JM = Profile(1, {"epochs": 20}, {"epoch_size": 1000},
                   note="1 seed, 20 epochs of 1,000 sequences (the paper: 2,000; the RNN and LSTM 40 epochs)")
JM_PROFILES = {"quick": QUICK_JM, "full": FULL}

FIGURE2 = {"paper": "Joulin & Mikolov 2015, Figure 2", "overrides": {"train": TrainConfig(**MEMORY_TRAINING)},
           "curves": True, "profiles": JM_PROFILES}
TRANSDUCTION = ("copy", "reversal", "bigram-flip", "svo-sov", "gender")
TABLE3 = "Grefenstette et al. 2015, Table 3"
# Grefenstette et al.'s Table 3: each task's default training is the paper's recipe (`stackparse.tasks.transduction`),
# each model's defaults the paper's sizes (256 units, 256-dimensional values, a learned h_0); every model runs at
# each of the paper's five RMSProp rates, and the report keeps the run of lowest training perplexity, over the rates
# and the seeds, as the paper keeps its best model (§5): `validation.train_loss`, the kept epoch's training loss over
# its 100 batches (the trainer's: per scored symbol, the logarithm of the perplexity). The budget is the profile's:
# the paper trains "an unbounded number of steps".
RATES = (5e-3, 1e-3, 5e-4, 1e-4, 5e-5)
# The paper reports each model at convergence, which this machine cannot reach for every run of the grid: the full
# profiles train every run 10 minutes, then continue the one the rule keeps (of each task and column) to 30 minutes
# of training, resuming it (RMSProp's moments start afresh there: a checkpoint does not hold them). The selection is
# so made at 10 minutes, not at convergence; the budget goes where the selection puts it (docs/benchmarks.md).
CONTINUED_MINUTES = 30.0
# How far more training takes a run: `long` trains one run per task and column at the task's rate (the paper's grid's
# middle, the one the full profile keeps for most cells) for up to 100 minutes, more than three times the full
# profile's kept budget; the task's patience still ends a run whose validation has stopped improving.
LONG_MINUTES = 100.0
# The deque runs at its default start (the queue's) and at its stack-like start: each learns tasks the other does not
# (docs/deque.md), and the paper restarted its runs until they learnt (Appendix B), so the selection rule keeps one of
# the two as it keeps one of the rates. Each start is a run of its own here (one restart, the suite's rule choosing),
# where the deque's own training probes both starts in one run, each at its own rate (`stackparse.models.neural_stack`);
# here the rate is the grid's, or the task's where a profile has no grid, and the patience the task's, as every
# column's (the deque's own is longer: `stackparse.models.neural_stack.PATIENCE`).
ONE_START = {"restarts": 1, "keep": "validation", "probe_epochs": 0,
             **{name: TransductionTask.default_training["train"][name] for name in ("lr", "patience")}}
TRANSDUCTION_COLUMNS = (*(Column(f"deep-lstm-{k}", "deep-lstm", {"layers": k}) for k in (1, 2, 4, 8)),
                        *(Column(m, m) for m in ("neural-stack", "neural-queue")),
                        Column("neural-deque", "neural-deque", train_settings=ONE_START,
                               points=({}, STACK_LIKE_START)))
TODAY_MODELS = {"hidden": 64, "memory_size": 64, "learned_h0": False}
"""The models of this project's recipe before the paper's (`TODAY_TRAINING`)."""
TRANSDUCTION_PROFILES = {
    "quick": Profile(1, {"max_minutes": 1.0}, grid={}, note="1 seed, RMSProp at 1e-3 only, 1 minute of training "
                                                            "per run"),
    "medium": Profile(1, {"max_minutes": 3.0}, grid={"lr": (5e-3, 1e-3)},
                      note="1 seed, RMSProp at 5e-3 and 1e-3, 3 minutes of training per run"),
    "full": Profile(1, {"max_minutes": 10.0}, continued={"max_minutes": CONTINUED_MINUTES},
                    note=f"1 seed, the paper's five rates, 10 minutes of training per run, the run kept continued to "
                         f"{CONTINUED_MINUTES:g} minutes (the paper: until convergence)"),
    "long": Profile(1, {"max_minutes": LONG_MINUTES}, grid={},
                    note=f"1 seed, RMSProp at 1e-3 only, at most {LONG_MINUTES:g} minutes of training per run, the task's "
                         f"patience stopping it earlier (the paper: until convergence)"),
    "full-512": Profile(1, {"max_minutes": 10.0}, grid={"hidden": (256, 512), "lr": RATES},
                        continued={"max_minutes": CONTINUED_MINUTES},
                        note=f"1 seed, 256 and 512 units, the paper's five rates, 10 minutes of training per run, the "
                             f"run kept continued to {CONTINUED_MINUTES:g} minutes"),
    "today": Profile(1, {**TODAY_TRAINING["train"], "max_minutes": 3.0}, TODAY_TRAINING["data"], grid={},
                     model_settings=TODAY_MODELS,
                     note="1 seed, this project's earlier recipe: 64 units, 64-dimensional values, a zero h_0, Adam "
                          "at 0.003, the length curriculum, parameter averaging; 3 minutes of training per run"),
}


# The NSPDA paper's suites, one per table (Mali, Ororbia & Giles). Every job starts from the grammar tasks' default
# training, the paper's (`stackparse.tasks.grammar.PAPER_TRAINING`: online SGD with annealing, clip 13, the loss at
# every step refined K = 4 times, Algorithm 1, at most 500 epochs or until 100 % training accuracy) and the models'
# (Algorithm 2's noise on every higher-order network: `TensorRNN.default_training`); the columns add half of the
# PDA's rules inserted as Hint #2 into the NSPDAs of the main tables (the share is our choice) and the state neurons
# drawn per run (J = M + U(12, 29) for M1, M + U(2, 6) for M2, M the PDA's states), or take the noise away.
# The higher-order networks train by UORO with refinement, as the paper's (`TensorRNN.default_training`), the
# first-order ones by BPTT. Deviations, for want of an implementation: the NNPDA trains by BPTT (its analog stack
# grows with the string: no fixed-size state for UORO), the J&M memory models train without refinement (they cannot
# re-read a step without their stacks acting), TBPTT is not run (its cut of 50 is never reached by strings of at
# most 21), and the NNPDA with dead-neuron hints is not built.
GRAMMARS = MALI_LANGUAGES
NO_REG = {"noise": 0.0}
HINT2 = {"insert_rules": 0.5, "rule_hint": "hint2"}
STATES = {"nspda2": (12, 29), "nspda3": (2, 6), "rnn2": (12, 29), "nnpda": (2, 6)}


def nspda_columns(label: str = "", **data) -> tuple[Column, Column]:
    """M1 and M2 (labels "LABEL M1", "LABEL M2") with `data`."""
    return tuple(Column(f"{label} {m}".strip(), model, data_settings=data,
                        state_draw=STATES[model]) for m, model in (("M1", "nspda2"), ("M2", "nspda3")))


def mali_profiles(seeds: int = 5) -> dict:
    """`full`: the paper's recipe, `seeds` runs; `capped`: `seeds` runs cut at 8 minutes of training each (500 epochs
    take most of an hour or more per run here); `sitting`: `seeds` runs cut at 24 seconds each, so that Table 4 with
    Table 7's rows (16 rows x 5 languages x 5 runs) runs in one sitting of at most 2.5 hours on a 2-core machine, as
    issue 18 asks;
    `short`: 2 seeds cut at 3 minutes; `quick`: one seed cut at 5 minutes per run; `long`: `seeds` runs cut at 20
    minutes, time for Algorithm 1's first random phase and, where it converges there, its second stage (most 8-minute
    runs end in the first stage: BENCHMARKS.md). A cut run still finishes the epoch it is in."""
    return {"full": Profile(seeds, note=f"{seeds} seeds, the paper's recipe"),
            "sitting": Profile(seeds, {"max_minutes": 0.4}, note=f"{seeds} seeds, the paper's recipe cut at 24 seconds "
                                                                "of training per run (no epoch starts after that)"),
            "capped": Profile(seeds, {"max_minutes": 8.0}, note=f"{seeds} seeds, the paper's recipe cut at 8 minutes "
                                                               "of training per run"),
            "short": Profile(2, {"max_minutes": 3.0}, note="2 seeds, the paper's recipe cut at 3 minutes of training "
                                                          "per run"),
            "long": Profile(seeds, {"max_minutes": 20.0}, note=f"{seeds} seeds, the paper's recipe cut at 20 minutes "
                                                               "of training per run"),
            "quick": Profile(1, {"max_minutes": 5.0}, note="1 seed, the paper's recipe cut at 5 minutes per run")}


# Which negatives the paper's suites read. The paper never says how its negatives were made; its own stackless
# baselines score below the error that near misses allow a model without a stack on the palindromes, and on random
# negatives the baselines and the NSPDA come far nearer its cells (BENCHMARKS.md, "Which negatives"). So the suites
# read random negatives (`pda-NAME-random`); near misses (`pda-NAME`) stay a reading, measured beside them by
# `mali-negatives`.
NEGATIVES = {"": "near-miss negatives", "-random": "random negatives"}
"""A task name's suffix -> the negatives it reads (`stackparse.tasks.grammar`)."""
PAPER_NEGATIVES = ("-random",)


def mali(name: str, what: str, columns: tuple[Column, ...], table: int, published: dict, metric: str,
         tasks: tuple[str, ...] = MALI_LANGUAGES4, readings: tuple[str, ...] = PAPER_NEGATIVES, **options) -> Suite:
    """The suite of the NSPDA paper's Table `table` (`what` it compares), reported by `metric`: each of `tasks` in each
    of `readings` (a suffix of `NEGATIVES`), the paper's numbers (`published` and `more_metrics`', by task) beside
    each reading."""
    unit = {"converged_epoch": "epochs until every training string is right",
            "converged_chars": "characters trained on until every training string is right"}.get(
        metric, "percent of test strings (lengths 1..60) misclassified")

    def each_reading(cells: dict) -> dict:
        return {f"{task}{reading}": row for task, row in cells.items() for reading in readings}

    options.setdefault("profiles", mali_profiles())
    options["more_metrics"] = tuple((m, each_reading(cells)) for m, cells in options.get("more_metrics", ()))
    return Suite(name, f"Mali, Ororbia & Giles, Table {table}: {what}; {unit}; "
                       f"{' and '.join(NEGATIVES[r] for r in readings)}",
                 tuple(f"{task}{reading}" for task in tasks for reading in readings), columns, each_reading(published),
                 metric=metric, paper=f"Mali et al., Table {table}", **options)


# This project's training before the paper's text was at hand, measured beside the paper's (`mali-variants`, profile
# `earlier`): SGD at 0.5 halved on plateaus, 3 epochs of 2,000 strings, the loss on the last step only, no refinement,
# no incremental learning, additive noise 0.05 on half the sub-matrices, no stopping rule.
EARLIER_TRAINING = {"lr": 0.5, "epochs": 3, "bptt": 0, "lr_schedule": "plateau", "lr_decay": 0.0, "clip": 15.0,
                    "stop_metric": ""}
EARLIER_DATA = {"incremental": "curriculum", "epoch_size": 2000, "noise_kind": "additive", "noise_share": 0.5,
                "noise": 0.05, "lr_noise": 0.0, "score_every_step": False, "refine": 1}

TEST_ERROR_TOO = {"more_metrics": (("error_by_split.test", {}),), "metric_decimals": {"error_by_split.test": 2}}
"""Tables 1 and 2 count epochs and characters to convergence; the runs' test error beside them (not in the paper)
says what a run that never converged had learnt."""

TRAINED_WEIGHTS = {"weight_values": "step", "weight_step": 0.0}
"""The NSPDA's model settings that evaluate its trained weights as they are, not rounded to binary/ternary."""

VARIANTS = (("paper", {}, {}, {}), ("state-read", {"readout": "state-read"}, {}, {}),
            ("state-read, K=1", {"readout": "state-read"}, {"refine": 1}, {}),
            ("state-read, K=1, continuous", {"readout": "state-read", **TRAINED_WEIGHTS}, {"refine": 1}, {}),
            ("earlier", {**EARLIER, "weight_step": 0.0}, {}, {}),
            ("binary at 1", {"binary_scale": 1.0}, {}, {}),
            ("last step", {}, {"score_every_step": False}, {}),
            ("last step, continuous", TRAINED_WEIGHTS, {"score_every_step": False}, {}),
            ("prefix targets", {}, {"step_targets": "own"}, {}),
            ("prefix targets, continuous", TRAINED_WEIGHTS, {"step_targets": "own"}, {}),
            ("norm clip, continuous", TRAINED_WEIGHTS, {}, {}),
            ("value clip, continuous", TRAINED_WEIGHTS, {}, {"clip_kind": "value"}))
"""(label, model settings, training settings, trainer settings) of `mali-variants`' columns. "last step": the loss on
each string's last step only, where the paper's eq. 15 scores every step with the string's label (on the palindromes,
every step's loss drives the state into all zeros within a few epochs: BENCHMARKS.md). "prefix targets": every step
scored, each by whether the prefix read so far is in the language, not by the string's label (eq. 17's y_t read as a
target per step: `stackparse.tasks.grammar`). "binary at 1": the paper's
binary/ternary weights at evaluation as printed, {0, 1} and {-1, 0, 1}, not of the inserted rules' size H = 8 (the
model's `binary_scale`). "continuous": the trained weights at evaluation. "norm clip" and "value clip": the paper's
"hard clipped to 13" read as the gradient's norm clipped (the recipe's default) and as each of its elements clipped to
[-13, 13] (`stackparse.training.clipping`)."""

TABLE4_COLUMNS = (
    Column("RNN", "rnn", {"hidden": 50}), Column("LSTM", "lstm", {"hidden": 50}),
    Column("LSTM-p", "lstm-p", {"hidden": 50}), Column("GRU", "gru", {"hidden": 50}),
    Column("Stack RNN 40+10", "stack-rnn", {"hidden": 40, "stacks": 10}, data_settings={"refine": 1}),
    Column("Stack RNN 40+10 + rounding", "stack-rnn", {"hidden": 40, "stacks": 10, "rounding": True},
           data_settings={"refine": 1}),
    Column("listRNN 40+5", "list-rnn", {"hidden": 40, "lists": 5}, data_settings={"refine": 1}),
    Column("2nd Order RNN", "rnn2", data_settings=NO_REG, state_draw=STATES["rnn2"]),
    Column("2nd Order RNN reg", "rnn2", state_draw=STATES["rnn2"]),
    Column("NNPDA", "nnpda", data_settings=NO_REG, state_draw=STATES["nnpda"]),
    Column("NNPDA reg", "nnpda", state_draw=STATES["nnpda"]),
    *(Column(f"NSPDA, {c.label}", c.model, data_settings={**c.data_settings, **HINT2}, state_draw=c.state_draw)
      for c in nspda_columns()))


# The paper never says how its negatives were made (stackparse.grammars.Negatives). Its first-order and second-order
# baselines say something of it: at most 50 units and no stack, they reach 0.00 training error on every language but
# Dyck(2), and 9-15 % test error on the palindromes, below the 22 % that near misses allow a stackless model there
# (`scripts/negative_kinds.py`). `mali-negatives` runs those rows and Table 4's NSPDA (its binary/ternary weights at
# evaluation, and the trained ones) on both readings of each language, the same budget, beside the paper's numbers.
NEGATIVES_COLUMNS = (*(c for c in TABLE4_COLUMNS if c.label in ("LSTM", "GRU", "2nd Order RNN")), *TABLE4_COLUMNS[-2:],
                     *(replace(c, label=f"continuous {c.label}", model_settings=TRAINED_WEIGHTS)
                       for c in TABLE4_COLUMNS[-2:]))


END_READINGS = (("", {}, {}), ("continuous ", TRAINED_WEIGHTS, {}),
                ("rounded in training, H=1 ", {"discretize_training": True, "binary_scale": 1.0},
                 {"rule_strength": 1.0}))
"""(label prefix, model settings, training settings) of `mali-end`'s readings of the paper's weights: binary/ternary
at evaluation (the paper's), the trained continuous ones, and binary/ternary in training too (straight-through) with
the rules inserted at H = 1 and the levels of size 1, weights a binary/ternary network holds as they are."""


END_COLUMNS = tuple(Column(f"{label}{c.label}", c.model, settings, data_settings={**c.data_settings, **data},
                           state_draw=c.state_draw)
                    for label, settings, data in END_READINGS for c in TABLE4_COLUMNS[-2:])
VARIANT_COLUMNS = tuple(Column(f"{label} {c.label}", c.model, settings, {**c.train_settings, **train},
                               {**c.data_settings, **data}, c.state_draw)
                        for label, settings, data, train in VARIANTS for c in nspda_columns(**HINT2))


def _beside(published: dict, columns: tuple[Column, ...], paper_label, task_suffix: str = "") -> dict:
    """The paper's cell of a Table 4 dict beside each of `columns`, for each task + `task_suffix`: the cell of the
    row `paper_label(column label)` (a reading or a variant of one of the paper's rows)."""
    return {f"{task}{task_suffix}": {c.label: row[paper_label(c.label)] for c in columns}
            for task, row in published.items()}


def _beside_nspda(published: dict, columns: tuple[Column, ...], task_suffix: str = "") -> dict:
    """The paper's NSPDA beside each of `columns` (readings or variants of it, each label ending in its order)."""
    return _beside(published, columns, lambda label: f"NSPDA, {label[-2:]}", task_suffix)


def _negatives_columns(published: dict) -> dict:
    """The cells of `NEGATIVES_COLUMNS`: the paper's row beside each (its NSPDA beside each reading of the weights)."""
    return _beside(published, NEGATIVES_COLUMNS, lambda label: label.removeprefix("continuous "))


SUITES = {s.name: s for s in [
    Suite("counting-baselines",
          "Joulin & Mikolov 2015, Table 2, RNN and LSTM columns: the five counting tasks",
          COUNTING, ("rnn", "lstm"), JOULIN_MIKOLOV_TABLE2, paper=TABLE2),
    Suite("counting-memory",
          "Joulin & Mikolov 2015, Table 2, List RNN 40+5, Stack RNN 40+10 and Stack RNN 40+10 + rounding",
          COUNTING, MEMORY_COLUMNS, JOULIN_MIKOLOV_TABLE2, paper=TABLE2),
    Suite("counting",
          "Joulin & Mikolov 2015, Table 2: RNN, LSTM, List RNN 40+5, Stack RNN 40+10 and Stack RNN 40+10 + "
          "rounding on the five counting tasks",
          COUNTING, ("rnn", "lstm", *MEMORY_COLUMNS), JOULIN_MIKOLOV_TABLE2, paper=TABLE2, curves=True,
          profiles=JM_PROFILES, rows="models"),
    Suite("memorization",
          "Joulin & Mikolov 2015, Figure 2 (left): memorization, accuracy against n; 100 hidden units",
          ("memorization",),
          (Column("rnn", "rnn", {"hidden": 100}), Column("lstm", "lstm", {"hidden": 100}),
           Column("list-rnn", "list-rnn", {"hidden": 100, "lists": 10}),
           Column("stack-rnn", "stack-rnn", {"hidden": 100, "stacks": 10})),
          {}, **FIGURE2),
    Suite("addition",
          "Joulin & Mikolov 2015, Figure 2 (right): binary addition, accuracy against n; Stack RNN 100+10",
          ("addition",), (Column("stack-rnn", "stack-rnn", {"hidden": 100, "stacks": 10}),), {}, **FIGURE2),
    Suite("lm-treebank",
          "Joulin & Mikolov 2015, Table 4 on the UD English EWT words (the PTB is not available here): "
          "test perplexity, 100 hidden units",
          ("treebank-lm",),
          (Column("rnn", "rnn", {"hidden": 100}), Column("lstm", "lstm", {"hidden": 100}),
           Column("stack-rnn", "stack-rnn", {"hidden": 100, "stacks": 60, "recurrent": True, "capacity": 50})),
          JOULIN_MIKOLOV_TABLE4, metric="test_perplexity", kind="language-model",
          paper="Joulin & Mikolov 2015, Table 4, PTB: not the same data",
          # Minibatches of 32 streams (the paper trains online), a rate of 1 and clipping at 5, as usual
          # for batched word-level LMs; at most 5 epochs and 4 minutes per model (this machine's budget).
          overrides={"train": TrainConfig(batch_size=32, lr=1.0, clip=5.0, epochs=5, max_minutes=4.0)}),
    mali("mali-table1", "NSPDAs trained without hints, with Hint #1 and with Hint #2, and the NNPDA without "
         "hints (third order only: M2)",
         (*nspda_columns("NSPDA w/o hints"), *nspda_columns("NSPDA w/ Hint #1", insert_rules=0.5, rule_hint="hint1"),
          *nspda_columns("NSPDA w/ Hint #2", **HINT2),
          Column("NNPDA w/o hints M2", "nnpda", state_draw=STATES["nnpda"])),
         1, MALI_TABLE1, "converged_epoch", decimals=0, **TEST_ERROR_TOO),
    mali("mali-table2", "incremental learning of the NSPDA without hints: all lengths from the start (Standard), "
         "lengths up to 7, 14, then 21 (IL), Algorithm 1 (2-IL)",
         (*nspda_columns("Standard", incremental="curriculum"),
          *nspda_columns("IL", incremental="curriculum", curriculum_start=7, curriculum_step=7, curriculum_every=1),
          *nspda_columns("2-IL", incremental="two-stage")),
         2, MALI_TABLE2, "converged_chars", decimals=0, **TEST_ERROR_TOO),
    mali("mali-table3", "the NSPDA (Hint #2) without and with the noise regulariser (Algorithm 2)",
         (*nspda_columns("w/o reg", **NO_REG, **HINT2), *nspda_columns("w reg", **HINT2)),
         3, MALI_TABLE3, "error_by_split.test", decimals=2),
    mali("mali-table4", "every architecture on the five languages (trained on lengths 1..21)", TABLE4_COLUMNS,
         4, MALI_TABLE4_TEST, "error_by_split.test", MALI_LANGUAGES, decimals=2, rows="models", curves=True,
         more_metrics=(("error_by_split.train", MALI_TABLE4_TRAIN), ("error_by_split.test-960", {}),
                       ("converged_epoch", {})), tolerance=2.0),
    mali("mali-table7", "the rows Table 7 adds to Table 4: RNN, LSTM and GRU with multiplicative integration "
         "(Wu et al. 2016)",
         tuple(Column(f"MI-{m.upper()}", f"mi-{m}", {"hidden": 50}) for m in ("rnn", "lstm", "gru")),
         7, MALI_TABLE7_TEST, "error_by_split.test", MALI_LANGUAGES, decimals=2, rows="models",
         more_metrics=(("error_by_split.train", MALI_TABLE7_TRAIN), ("converged_epoch", {}))),
    mali("mali-table6", "the NSPDA (Hint #2) trained by BPTT, RTRL or UORO",
         (*nspda_columns("BPTT", grad="bptt", **HINT2), *nspda_columns("RTRL", grad="rtrl", **HINT2),
          *nspda_columns("UORO", grad="uoro", **HINT2)),
         6, MALI_TABLE6, "error_by_split.test", decimals=2),
    # The paper's NSPDA beside variants, each changing what measured worst (BENCHMARKS.md): the response read off
    # the state and the top (state-read), no refinement, continuous weights at evaluation, this project's earlier
    # model (`stackparse.models.nspda.EARLIER`), the loss on the last step only; all trained by the paper's recipe
    # otherwise (Hint #2, noise).
    mali("mali-variants", "the paper's NSPDA and variants of it, under the paper's recipe, the paper's NSPDA cells "
         "beside each", VARIANT_COLUMNS, 4, _beside_nspda(MALI_TABLE4_TEST, VARIANT_COLUMNS), "error_by_split.test",
         MALI_LANGUAGES, decimals=2,
         more_metrics=(("error_by_split.train", _beside_nspda(MALI_TABLE4_TRAIN, VARIANT_COLUMNS)),
                       ("converged_epoch", {})),
         profiles={**mali_profiles(), "earlier": Profile(5, EARLIER_TRAINING, EARLIER_DATA,
                                                         note="5 seeds, this project's earlier training")}),
    # Table 4's NSPDA on the same strings each followed by an end marker (`pda-NAME-end`, the recurrent PDAs'
    # reading: `stackparse.tasks.grammar`), the paper's recipe, with each reading of its weights (`END_READINGS`);
    # the paper's cells beside each.
    mali("mali-end", "Table 4's NSPDA on end-marked strings (w$), the paper's recipe, binary/ternary, trained or "
         "binary/ternary in training too (rules at H = 1) weights at evaluation",
         END_COLUMNS, 4, _beside_nspda(MALI_TABLE4_TEST, END_COLUMNS, "-end"), "error_by_split.test",
         tuple(f"{t}-end" for t in MALI_LANGUAGES), decimals=2,
         more_metrics=(("error_by_split.train", _beside_nspda(MALI_TABLE4_TRAIN, END_COLUMNS, "-end")),
                       ("error_by_split.test-960", {}), ("converged_epoch", {}))),
    mali("mali-negatives", "the first- and second-order baselines and the NSPDA (binary/ternary or trained weights "
         "at evaluation), the paper's numbers beside each reading (`pda-NAME`, `pda-NAME-random`)",
         NEGATIVES_COLUMNS, 4, _negatives_columns(MALI_TABLE4_TEST), "error_by_split.test", MALI_LANGUAGES,
         tuple(NEGATIVES), decimals=2,
         more_metrics=(("error_by_split.train", _negatives_columns(MALI_TABLE4_TRAIN)), ("converged_epoch", {}))),
    Suite("transduction",
          "Grefenstette et al. 2015, Table 3: copy, reversal, bigram flipping, SVO to SOV, gender conjugation; "
          "1-, 2-, 4- and 8-layer LSTMs and Stack-, Queue-, DeQue-LSTMs (256 units), the paper's recipe; coarse "
          "accuracy on lengths 65-128 of the model of lowest training perplexity (validation.train_loss: the kept "
          "epoch's mean loss per scored symbol over its 100 batches), as the paper selects",
          TRANSDUCTION, TRANSDUCTION_COLUMNS,
          grefenstette_table3("test coarse"), metric="coarse_accuracy", paper=TABLE3, decimals=2,
          more_metrics=(("fine_accuracy", grefenstette_table3("test fine")),
                        ("validation.val_accuracy", grefenstette_table3("train coarse")),
                        ("validation.val_fine_accuracy", grefenstette_table3("train fine")),
                        ("validation.train_loss", {}), ("validation.train_chars_per_s", {})),
          grid={"lr": RATES}, select="validation.train_loss", profiles=TRANSDUCTION_PROFILES, tolerance=0.05,
          counted=("deep-lstm-2", "neural-stack", "neural-queue", "neural-deque")),
    # The parser's main job: training (the default `train-parser`, or one epoch), then test accuracy and
    # parsing speed (`test-parser`'s figures); the task is the treebank's `corpus get` name.
    Suite("parser",
          "The stack-LSTM parser (Dyer et al. 2015) on UD English EWT v2.15: test LAS (gold tokenization "
          "and UPOS), greedy decoding",
          ("en",), ("stack-lstm",), {}, metric="test_las", kind="parser", decimals=2,
          overrides={"train_file": "corpora/en.conllu", "test_file": "corpora/en-test.conllu"},
          more_metrics=(("test_uas", {}), ("parse_words_per_s", {}), ("train_seconds", {})),
          profiles={"quick": Profile(1, {"epochs": 1}, note="1 epoch of training"),
                    "full": Profile(1, note="the default train-parser job")}),
    # Seconds, not science: tiny models and one epoch of 10 sequences, to check a set-up (a Dask cluster, say)
    # end to end; the tests run it.
    Suite("smoke",
          "A smoke test of the machinery: 4-unit RNN and LSTM, one epoch of 10 sequences of a^n b^n and "
          "a^n b^n c^n, tested on n = 19 only",
          ("anbn", "anbncn"), (Column("rnn", "rnn", {"hidden": 4}), Column("lstm", "lstm", {"hidden": 4})),
          JOULIN_MIKOLOV_TABLE2, paper=TABLE2,
          overrides={"train": TrainConfig(epochs=1), "data": SequenceDataConfig(epoch_size=10, validation_size=5),
                     "test_n": (19, 19)},
          profiles={"quick": Profile(2, note="2 seeds"), "full": Profile(2, note="2 seeds")}),
]}
COMPOSITES = {c.name: c for c in [
    Composite("algorithmic", "Joulin & Mikolov 2015: Table 2 (counting), Figure 2 (memorization, binary addition)",
              ("counting", "memorization", "addition")),
    Composite("mali", "Mali, Ororbia & Giles: Tables 1, 2, 3, 4, 6 and 7's added rows (Table 5, programmed NSPDAs: "
              "`program`)", ("mali-table1", "mali-table2", "mali-table3", "mali-table4", "mali-table6", "mali-table7")),
]}


def get_suite(name: str) -> Suite:
    try:
        return SUITES[name]
    except KeyError:
        raise unknown_name("suite", name, [*SUITES, *COMPOSITES]) from None


def suite_parts(name: str) -> tuple[Suite, ...]:
    """The suites `bench NAME` runs: a composite's parts, or the one suite."""
    if name in COMPOSITES:
        return tuple(get_suite(part) for part in COMPOSITES[name].parts)
    return (get_suite(name),)
