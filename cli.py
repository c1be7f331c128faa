"""stackparse command line: stack-augmented networks on algorithmic tasks, and dependency parsing.

Run `python cli.py --help`, or `python cli.py COMMAND --help` for any command.
"""
from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import click

from stackparse.errors import UserError
from stackparse.models.base import ModelConfig
from stackparse.training.sequence import SequenceDataConfig
from stackparse.training.trainer import TrainConfig


class Group(click.Group):
    """Turns a UserError anywhere below into one line on standard error and exit status 2."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except UserError as e:
            click.echo(f"error: {e}", err=True)
            sys.exit(2)


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


def _fields_as_options(cls, skip=()):
    """click options for the fields of a settings dataclass, defaults taken from the dataclass."""
    def decorate(f):
        for fld in reversed(dataclasses.fields(cls)):
            if fld.name in skip:
                continue
            default = fld.default
            f = click.option(f"--{fld.name.replace('_', '-')}", fld.name, type=type(default), default=None,
                             show_default=str(default), help=_field_help(cls, fld.name))(f)
        return f
    return decorate


def _field_help(cls, name: str) -> str:
    return {
        "hidden": "hidden units", "layers": "recurrent layers", "epochs": "maximum training epochs",
        "batch_size": "streams (sequences) per minibatch", "bptt": "truncated BPTT length, 0 = full BPTT",
        "optimizer": "sgd or adam", "lr": "learning rate", "lr_schedule": "plateau (halve when validation "
        "stops improving), inverse or constant", "lr_decay": "decay for the inverse schedule",
        "clip": "gradient norm clipping threshold, 0 = off", "patience": "stop after this many epochs "
        "without improvement, 0 = never", "restarts": "random restarts; the best on validation is kept",
        "seed": "random seed (DyNet and numpy)", "epoch_size": "examples per epoch",
        "stream_examples": "examples concatenated into one training stream",
        "validation_size": "validation examples (drawn from the training sizes)",
    }.get(name, name.replace("_", " "))


def _settings(cls, options: dict, base=None):
    """The dataclass `cls` with the options the user gave (None = keep the default)."""
    given = {f.name: options.pop(f.name) for f in dataclasses.fields(cls) if f.name in options}
    return dataclasses.replace(base or cls(), **{k: v for k, v in given.items() if v is not None})


@main.command()
@click.argument("task")
@click.option("--model", "model_name", default="lstm", show_default=True,
              help="model name (see `python cli.py models`)")
@_fields_as_options(ModelConfig)
@_fields_as_options(TrainConfig)
@_fields_as_options(SequenceDataConfig)
@click.option("--test-max-n", type=int, default=None, help="largest test size (default: the task's protocol)")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="output directory [default: runs/TASK-MODEL-sSEED]")
@click.option("--resume", is_flag=True, help="continue an interrupted run in --out from its checkpoints")
@click.option("--quiet", is_flag=True, help="no progress bar or per-epoch lines")
def train(task, model_name, test_max_n, out, resume, quiet, **options):
    """Train MODEL on TASK with the task's protocol, then test every n of the test range.

    Writes config.json, the parameters (best/) and metrics.json into --out and prints the percent of
    sizes n solved (every scored symbol right), overall and among sizes never seen in training.
    """
    from stackparse.experiments import ExperimentConfig, run_experiment
    from stackparse.models import get_model_class
    from stackparse.tasks import get_task

    task_obj, model_cls = get_task(task), get_model_class(model_name)
    model_config = _settings(model_cls.Config, options)
    train_config = _settings(TrainConfig, options)
    data_config = _settings(SequenceDataConfig, options)
    test_n = None if test_max_n is None else (task_obj.protocol.test_n[0], test_max_n)
    config = ExperimentConfig(task, model_name, dataclasses.asdict(model_config), train_config, data_config, test_n)
    out = out or Path("runs") / f"{task}-{model_name}-s{train_config.seed}"
    metrics = run_experiment(config, out, resume=resume, progress=not quiet)
    solved = "".join("#" if a == 1.0 else "." for a in metrics["accuracy_by_n"].values())
    lo = min(int(n) for n in metrics["accuracy_by_n"])
    click.echo(f"{task} / {model_name}: {metrics['percent_n_correct']:.1f}% of n in "
               f"{lo}..{lo + len(solved) - 1} correct; {metrics['percent_unseen_n_correct']:.1f}% of n never "
               f"seen in training (n > {metrics['train_max_n']})")
    click.echo(f"per n (# = correct): {solved}")
    click.echo(f"results in {out}/metrics.json")


if __name__ == "__main__":
    main()
