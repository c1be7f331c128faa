"""Settings are frozen dataclasses, saved as JSON beside every model and result.

`save_config` / `load_config` round-trip any (nested) settings dataclass, so a model directory or a
result file always says exactly how it was made.
"""
from __future__ import annotations

import dataclasses
import json
import os
import tempfile
import types
import typing
from pathlib import Path

from stackparse.errors import UserError


def to_dict(config) -> dict:
    """A plain-JSON dict of a (possibly nested) settings dataclass."""
    return dataclasses.asdict(config)


def from_dict(cls, data: dict):
    """Rebuild the dataclass `cls` from `to_dict`'s output; unknown keys are an error."""
    hints = typing.get_type_hints(cls)
    fields = {f.name for f in dataclasses.fields(cls)}
    unknown = set(data) - fields
    if unknown:
        raise ValueError(f"{cls.__name__}: unknown settings {sorted(unknown)}")
    return cls(**{name: _revive(hints[name], value) for name, value in data.items()})


def _revive(hint, value):
    """JSON has no tuples and no dataclasses: rebuild them from the field's type hint."""
    options = typing.get_args(hint) if typing.get_origin(hint) in (typing.Union, types.UnionType) else (hint,)
    for option in options:
        if dataclasses.is_dataclass(option) and isinstance(value, dict):
            return from_dict(option, value)
        if (option is tuple or typing.get_origin(option) is tuple) and isinstance(value, list):
            return tuple(value)
    return value


def atomic_write(path: Path | str, write) -> None:
    """Call `write(tmp_path)` then rename onto `path`, so a crash never leaves a half-written file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def write_json(path: Path | str, data) -> None:
    """Atomically write `data` as indented JSON."""
    def write(tmp):
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=2, sort_keys=False)
            f.write("\n")
    atomic_write(path, write)


def save_config(path: Path | str, config) -> None:
    write_json(path, to_dict(config))


def load_config(path: Path | str, cls):
    with open(path, encoding="utf-8") as f:
        return from_dict(cls, json.load(f))


def write_run_config(path: Path | str, data: dict, resume: bool) -> None:
    """Write a run's settings; when resuming, insist they are the ones the run was started with."""
    path = Path(path)
    if resume and path.is_file():
        with open(path, encoding="utf-8") as f:
            saved = json.load(f)
        if saved != json.loads(json.dumps(data)):
            changed = sorted(k for k in set(saved) | set(data) if saved.get(k) != json.loads(json.dumps(data.get(k))))
            raise UserError(f"{path}: --resume with settings other than the run's own (differ: {', '.join(changed)})")
    write_json(path, data)
