"""Benchmark suites: named lists of experiments (task x column), each run over several seeds.

A column is a model with its own settings (one model may fill several columns: the Stack RNN with and
without rounding). A suite knows its experiments and the published table it reproduces; the runner
and the report know nothing of tasks or models. A profile says how much of a suite to run (`quick`:
minutes here; `full`: the papers' protocols); a composite runs several suites as one benchmark.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from stackparse.benchmarks.published import (JOULIN_MIKOLOV_TABLE2, JOULIN_MIKOLOV_TABLE4, MALI_TABLE4_TEST,
                                             grefenstette_table3)
from stackparse.errors import UserError, unknown_name
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

    @property
    def key(self) -> str:
        return f"{self.task}--{self.label or self.model}--s{self.seed}"


@dataclass(frozen=True)
class Profile:
    """How much of a suite `bench --profile NAME` runs: the default number of seeds, settings set on every
    job over the suite's and the column's, and a note for the report."""
    seeds: int
    train_settings: dict = field(default_factory=dict)
    data_settings: dict = field(default_factory=dict)
    note: str = ""


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
    profiles: dict = field(default_factory=lambda: {"full": FULL})     # name -> Profile
    rows: str = "tasks"                 # of the report's tables: "tasks", or "models" (a column per task)

    @property
    def columns(self) -> tuple[Column, ...]:
        return tuple(m if isinstance(m, Column) else Column(m, m) for m in self.models)

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(c.label for c in self.columns)

    def profile(self, name: str) -> Profile:
        try:
            return self.profiles[name]
        except KeyError:
            raise UserError(f"suite {self.name!r} has no profile {name!r}; its profiles: "
                            f"{', '.join(self.profiles)}") from None

    def jobs(self, seeds: int, profile: str = "full") -> list[Job]:
        p = self.profile(profile)
        return [Job(t, c.model, s, self.overrides, c.label, self.kind, c.model_settings,
                    {**c.train_settings, **p.train_settings}, {**c.data_settings, **p.data_settings})
                for t in self.tasks for c in self.columns for s in range(1, seeds + 1)]


@dataclass(frozen=True)
class Composite:
    """A suite made of suites (`parts`, names in SUITES): one benchmark, one run of all their jobs;
    each part keeps its own directory, tables and plots, and needs the profile asked for."""
    name: str
    description: str
    parts: tuple[str, ...]


COUNTING = ("anbn", "anbncn", "anbncndn", "anb2n", "anbmcnm")
GRAMMARS = ("pda-palindrome", "pda-anbn", "pda-anbncbmam", "pda-anmbncm", "pda-dyck2")
# The NSPDA suites' recipes. "nspda-paper", the paper's (Mali et al., the training section and Algorithms 1-2): SGD
# from 0.1005000321 with the stochastic annealing it cites (the rate of epoch e lr / (1 + lr_decay e), each update's
# a uniform factor around it: stackparse.training.noise), gradients clipped at 13, two-stage incremental learning
# (Algorithm 1, N_Tr = 14, random phases bounded at 200 / 350 epochs) over passes of the whole training set, the
# multiplicative noise regulariser (Algorithm 2, N_p in 8-30 %) on every higher-order network, at most 500 epochs
# or until 100 % training accuracy, 5 runs. UORO and per-step refinement come with the model's defaults. The text
# gives neither the annealing's decay and spread nor beta: ours are choices (NSPDA_PAPER_CHOICES).
NSPDA_PAPER_CHOICES = {"lr_decay": 0.01, "lr_noise": 0.5, "noise": 1.0}
NSPDA_PAPER_TRAINING = TrainConfig(lr=0.1005000321, lr_schedule="inverse", lr_decay=NSPDA_PAPER_CHOICES["lr_decay"],
                                   clip=13.0, epochs=500, bptt=0, stop_metric="train_accuracy", stop_at=1.0)
NSPDA_PAPER_DATA = {"incremental": "two-stage", "epoch_size": 4000, "noise_kind": "algorithm2",
                    "noise": NSPDA_PAPER_CHOICES["noise"], "lr_noise": NSPDA_PAPER_CHOICES["lr_noise"]}
# "nspda-2020", this project's earlier recipe, kept beside it (the `earlier` profiles): SGD at 0.5 (at the default
# 0.1, halved after every epoch without improvement, training from few rules stayed at chance, measured while the
# weights were still rounded at evaluation), 3 epochs of 2,000 strings, full BPTT, additive noise 0.05 on half the
# sub-matrices, no incremental learning, no stopping rule.
NSPDA_TRAINING = TrainConfig(lr=0.5, epochs=3, bptt=0)
NSPDA_NOISE = 0.05
NSPDA_TODAY_TRAIN = {"lr": 0.5, "epochs": 3, "bptt": 0, "lr_schedule": "plateau", "lr_decay": 0.0, "clip": 15.0,
                     "stop_metric": ""}
NSPDA_TODAY_DATA = {"incremental": "curriculum", "epoch_size": 2000, "noise_kind": "additive", "noise_share": 0.5,
                    "noise": NSPDA_NOISE, "lr_noise": 0.0}
# The NSPDAs' sizes (state neurons for every language's programmed automaton: nspda2 one per rule, at
# most 27; nspda3 one per PDA state, at most 6), with continuous weights at evaluation (--weight-step 0):
# on nspda-trained (5 seeds, BENCHMARKS.md), rounding the trained weights at evaluation (the paper's
# discretization as we read it) erases what training learnt in small weights (mean error 34.7 % over
# the ten cells), training with them rounded does worse (38.5 %), no rounding does best (31.1 %).
NSPDA2 = {"hidden": 32, "weight_step": 0.0}
NSPDA3 = {"hidden": 8, "weight_step": 0.0}
NSPDA_ABLATED = ("pda-anbn", "pda-dyck2")     # the languages of the ablations (the issue: "at least")
# Incremental learning (the paper's Table 2 columns): Standard (all lengths from the first epoch), IL (one
# stage: lengths up to 7, 14, then 21, an epoch each) and 2-IL (Algorithm 1).
INCREMENTAL_COLUMNS = (("all lengths", {"incremental": "curriculum"}),
                       ("incremental", {"incremental": "curriculum", "curriculum_start": 7, "curriculum_step": 7,
                                        "curriculum_every": 1}),
                       ("two-stage", {"incremental": "two-stage"}))
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


def nspda_profiles(seeds: int, quick: bool = True, earlier: bool = True) -> dict:
    """The paper-recipe NSPDA suites' profiles: `full` (`seeds` runs), `quick` (one seed, minutes of training)
    and `earlier` (the nspda-2020 recipe, measured beside the paper's; not where a column varies what it sets)."""
    profiles = {"full": Profile(seeds, note=f"{seeds} seeds, the nspda-paper recipe")}
    if quick:
        profiles["quick"] = Profile(1, {"max_minutes": 5.0}, note="1 seed, the nspda-paper recipe cut at 5 minutes "
                                                               "of training per run")
    if earlier:
        profiles["earlier"] = Profile(seeds, NSPDA_TODAY_TRAIN, NSPDA_TODAY_DATA,
                                    note=f"{seeds} seeds, the nspda-2020 recipe (SGD 0.5, 3 epochs, additive noise)")
    return profiles


def mali(name: str, what: str, tasks: tuple[str, ...], columns: tuple[Column, ...], table: int, changes: dict,
         more_metrics: tuple = (("error_by_split.test-960", {}),), paper_recipe: bool = False, **options) -> Suite:
    """A suite of the NSPDA paper (`what`: what it compares): an NSPDA recipe (`paper_recipe`: nspda-paper, else
    nspda-2020) with `changes` (the settings the columns start from); percent of the test strings misclassified,
    and `more_metrics`."""
    if paper_recipe:
        overrides = {"train": NSPDA_PAPER_TRAINING, **NSPDA_PAPER_DATA, **changes}
        options.setdefault("profiles", nspda_profiles(5))
    else:
        overrides = {"train": NSPDA_TRAINING, **NSPDA_TODAY_DATA, **changes}
    published = options.pop("published", {})
    return Suite(name, f"Mali, Ororbia & Giles, {what}; percent of test strings (lengths 1..60) misclassified",
                 tasks, columns, published, metric="error_by_split.test",
                 paper=f"Mali et al., Table {table}" + ("" if published else " (not beside ours here)"),
                 more_metrics=more_metrics, overrides=overrides, **options)


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
    # Trained NSPDAs (Mali et al., Table 4's setting: rule insertion and the noise regulariser): half of
    # each PDA's rules written in (H = 8) as hints, the nspda-paper recipe (the `earlier` profile: nspda-2020's);
    # error on the test strings up to length 60 and on the long tests.
    mali("nspda-trained", "the NSPDA trained from half of each PDA's rules, with the noise regulariser", GRAMMARS,
         (Column("nspda2", "nspda2", NSPDA2), Column("nspda3", "nspda3", NSPDA3)), 4,
         {"insert_rules": 0.5},
         (("error_by_split.test-480", {}), ("error_by_split.test-960", {})), paper_recipe=True,
         published=MALI_TABLE4_TEST),
    # The ablations, on a^n b^n and Dyck(2). Hints (the paper's Table 1 question: do inserted rules
    # help?): no rules, half, all.
    mali("nspda-hints", "ablation of the hints: nspda2 trained from none, half or all of the PDA's rules",
         NSPDA_ABLATED, tuple(Column(f"rules {share}", "nspda2", NSPDA2, data_settings={"insert_rules": share})
                              for share in (0.0, 0.5, 1.0)), 1, {"noise": NSPDA_NOISE}),
    # Incremental learning (the paper's Table 2 question), with the nspda-paper recipe otherwise: all lengths
    # 1..21 from the first epoch, single-stage incremental learning (lengths up to 7, 14, then 21, an epoch
    # each), and Algorithm 1's two stages. (Before Algorithm 1 was implemented, the "two-stage" column trained
    # each epoch after the first on the new lengths only: not two-stage learning.)
    mali("nspda-incremental", "ablation of incremental learning: nspda2 (half the rules, noise) trained on all "
         "lengths at once, in one stage, or in Algorithm 1's two stages", NSPDA_ABLATED,
         tuple(Column(label, "nspda2", NSPDA2, data_settings=settings) for label, settings in INCREMENTAL_COLUMNS),
         2, {"insert_rules": 0.5}, paper_recipe=True, profiles=nspda_profiles(3, earlier=False)),
    # The noise regulariser (the paper's Table 3 question): none, the suites' 0.05, and four times that.
    mali("nspda-noise", "ablation of the noise regulariser (Algorithm 2): nspda2 (half the rules) with noise 0, "
         "0.05 or 0.2 on half the sub-matrices", NSPDA_ABLATED,
         tuple(Column(f"noise {level}", "nspda2", NSPDA2, data_settings={"noise": level})
               for level in (0.0, NSPDA_NOISE, 0.2)), 3, {"insert_rules": 0.5}),
    # The gradient algorithm (the paper's Table 6 question). RTRL costs O(d p) per step (d state + read neurons, p
    # parameters), so this ablation uses the 3rd-order NSPDA with 8 state neurons, which holds both languages'
    # programmed automata (3 states each): with nspda2's 32 neurons RTRL trains at ~80 characters per second here. No
    # truncated BPTT: its default cut (50) is never reached by the training strings (at most 21 long), and a shorter one
    # would have to carry the discrete stack from one graph to the next, which the NSPDA does not do (a one-line error).
    mali("nspda-grad", "ablation of the gradient algorithm: nspda3 (8 state neurons, half the rules, noise) "
         "trained by BPTT, RTRL or UORO", NSPDA_ABLATED,
         tuple(Column(grad, "nspda3", NSPDA3, data_settings={"grad": grad}) for grad in ("bptt", "rtrl", "uoro")),
         6, {"insert_rules": 0.5, "noise": NSPDA_NOISE},
         (("error_by_split.test-960", {}), ("validation.train_chars_per_s", {}))),
    # Table 4's comparison: the second-order RNN and the NNPDA (no rules: they have no discrete stack to
    # program) beside the NSPDAs of nspda-trained, all with the noise regulariser and the nspda-paper recipe;
    # the `earlier` profile is the nspda-2020 recipe (its quick run: one seed, 8 minutes with one worker here,
    # BENCHMARKS.md); accuracy by length is plotted.
    mali("grammar", "Table 4: 2nd-order RNN, NNPDA, NSPDA (2nd and 3rd order, half the rules inserted) on the "
         "five languages, trained on lengths 1..21", GRAMMARS,
         (Column("rnn2", "rnn2"), Column("nnpda", "nnpda"),
          Column("nspda2", "nspda2", NSPDA2, data_settings={"insert_rules": 0.5}),
          Column("nspda3", "nspda3", NSPDA3, data_settings={"insert_rules": 0.5})), 4, {},
         curves=True, paper_recipe=True, published=MALI_TABLE4_TEST),
    Suite("transduction",
          "Grefenstette et al. 2015, Table 3: copy, reversal, bigram flipping, SVO to SOV, gender conjugation; "
          "2-layer LSTM and Stack-, Queue-, DeQue-LSTMs, 64 units; coarse accuracy on lengths 65-128",
          TRANSDUCTION,
          tuple(Column(m, m) for m in ("deep-lstm", "neural-stack", "neural-queue", "neural-deque")),
          grefenstette_table3("test coarse"), metric="coarse_accuracy", paper=TABLE3, decimals=2,
          more_metrics=(("fine_accuracy", grefenstette_table3("test fine")),
                        ("validation.val_accuracy", grefenstette_table3("train coarse")),
                        ("validation.val_fine_accuracy", grefenstette_table3("train fine")),
                        ("validation.train_chars_per_s", {})),     # the transduction tasks' default training
          # medium: Table 3 over 3 seeds in under two hours with two workers on this machine
          profiles={"quick": Profile(1, {"max_minutes": 1.0}, note="1 seed, 1 minute of training per run "
                                                                  "(the default: 10)"),
                    "medium": Profile(3, {"max_minutes": 3.0}, note="3 seeds, 3 minutes of training per run "
                                                                    "(the default: 10)"),
                    "full": FULL}),
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
    Composite("nspda-ablations", "Mali, Ororbia & Giles: the ablations of hints, incremental learning, noise and "
              "gradient algorithm (Tables 1-3, 6) on a^n b^n and Dyck(2)",
              ("nspda-hints", "nspda-incremental", "nspda-noise", "nspda-grad")),
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
