"""Settings are frozen dataclasses, saved as JSON beside every model and result.

`save_config` / `load_config` round-trip any (nested) settings dataclass, so a model directory or a
result file always says exactly how it was made.
"""
from __future__ import annotations

import dataclasses
import json
import os
import tempfile
import typing
from pathlib import Path


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
    kwargs = {}
    for name, value in data.items():
        hint = hints[name]
        if dataclasses.is_dataclass(hint) and isinstance(value, dict):
            value = from_dict(hint, value)
        elif typing.get_origin(hint) is tuple and isinstance(value, list):
            value = tuple(value)
        kwargs[name] = value
    return cls(**kwargs)


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
