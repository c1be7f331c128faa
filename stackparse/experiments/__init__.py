"""Experiments: the one driver (`run`) and the registry of experiment kinds.

A kind (`Kind`: "sequence", "language-model", "parser") is built from its settings, `Kind(settings)`, and has
`defaults(task, model) -> Settings`. The benchmark runner looks kinds up here by name; `MODULES` says which module
registers each, imported on first use, so that the library never imports `parsers` with an import statement.
"""
from __future__ import annotations

import dataclasses
import importlib

from stackparse.errors import UserError
from stackparse.experiments.driver import Experiment, Kind, run
from stackparse.registry import Registry

__all__ = ["Experiment", "Kind", "run", "KINDS", "get_kind", "with_changes"]

KINDS = Registry("experiment kind")
MODULES = {"sequence": "stackparse.experiments.sequence",
           "language-model": "stackparse.experiments.language_model",
           "parser": "parsers.experiment"}


def get_kind(name: str):
    """The experiment class of kind `name` (its module imported first, if need be)."""
    if name not in KINDS and name in MODULES:
        importlib.import_module(MODULES[name])
    return KINDS.get_class(name)


def with_changes(settings, changes: dict):
    """`settings` with `changes` applied by `dataclasses.replace`, all the way down. A change names a field
    of `settings` or of nested settings (names are unique across a kind's settings, as flags: {"lr": 0.5}
    changes `train.lr`); a dict or dataclass for nested settings changes the fields it has (a
    `SequenceDataConfig` those of a `SequenceTraining`), any other value replaces the field."""
    for name, value in changes.items():
        path = _path(settings, name)
        if path is None:
            raise UserError(f"{name} is not a setting of {type(settings).__name__}")
        settings = _changed(settings, path, value)
    return settings


def _path(settings, name: str) -> tuple[str, ...] | None:
    """The fields that lead to setting `name` in `settings` (nested settings searched in order), or None."""
    fields = [f.name for f in dataclasses.fields(settings)]
    if name in fields:
        return (name,)
    for field in fields:
        inner = getattr(settings, field)
        found = _path(inner, name) if dataclasses.is_dataclass(inner) else None
        if found:
            return (field, *found)
    return None


def _changed(settings, path: tuple[str, ...], value):
    inner = getattr(settings, path[0])
    if len(path) > 1:
        value = _changed(inner, path[1:], value)
    elif dataclasses.is_dataclass(inner) and (isinstance(value, dict) or dataclasses.is_dataclass(value)):
        value = with_changes(inner, value if isinstance(value, dict) else
                             {f.name: getattr(value, f.name) for f in dataclasses.fields(value)})
    return dataclasses.replace(settings, **{path[0]: value})
