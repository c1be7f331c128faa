"""Settings are frozen dataclasses, saved as JSON beside every model and result.

Each field is declared once with `setting(default, help, bounds...)`: its help text and its bounds
live in the field's metadata, where `check` validates them and the command line reads them to build
its options. Errors name the setting (`hidden must be at least 1`), never a command-line flag: the
CLI turns `SettingError.setting` into its flag.

`to_dict` / `from_dict` (`load_config` from a file) round-trip any (nested) settings dataclass, so a
model directory or a result file always says exactly how it was made.
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

_MISSING = dataclasses.MISSING


class SettingError(UserError):
    """A setting out of its bounds. `setting` is the field's name, `problem` the rest of the message."""

    def __init__(self, setting: str, problem: str):
        super().__init__(f"{setting} {problem}")
        self.setting, self.problem = setting, problem


def setting(default=_MISSING, help: str = "", *, min=None, max=None, min_open: bool = False,
            max_open: bool = False, choices=None, default_factory=_MISSING, absent=_MISSING):
    """A dataclass field carrying its default (as for `dataclasses.field`), its help text (one line, the
    CLI's help for its option) and its bounds (`min`, `max`, strict with `min_open` / `max_open`;
    `choices`: the allowed values of a closed set), in one place. `absent`: the value that settings saved
    before the field existed were made with, where it is not the default (`from_dict`), so that a saved
    model loads as it was trained when a new setting's default changes what it computes."""
    metadata = {"help": help, "min": min, "max": max, "min_open": min_open, "max_open": max_open,
                "choices": tuple(choices) if choices is not None else None, "absent": absent}
    return dataclasses.field(default=default, default_factory=default_factory, metadata=metadata)


def check(settings) -> None:
    """Validate every field of `settings` declared with bounds or choices; a SettingError otherwise."""
    for f in dataclasses.fields(settings):
        meta, value = f.metadata, getattr(settings, f.name)
        if meta.get("choices") is not None and value not in meta["choices"]:
            raise SettingError(f.name, f"must be one of {', '.join(map(str, meta['choices']))} (got {value!r})")
        problem = _out_of_bounds(value, meta)
        if problem:
            raise SettingError(f.name, f"{problem} (got {value})")


def _out_of_bounds(value, meta) -> str:
    """What is wrong with a number against its field's bounds, or "" if nothing."""
    lo, hi, lo_open, hi_open = meta.get("min"), meta.get("max"), meta.get("min_open"), meta.get("max_open")
    if (lo is None and hi is None) or isinstance(value, bool) or not isinstance(value, (int, float)):
        return ""
    if (lo is None or (value > lo if lo_open else value >= lo)) and (hi is None or (value < hi if hi_open else value <= hi)):
        return ""
    if hi is None:
        return "must be positive" if lo == 0 and lo_open else f"must be {'above' if lo_open else 'at least'} {lo}"
    if lo is None:
        return f"must be {'below' if hi_open else 'at most'} {hi}"
    return f"must be in {'(' if lo_open else '['}{lo}, {hi}{')' if hi_open else ']'}"


def to_dict(config) -> dict:
    """A plain-JSON dict of a (possibly nested) settings dataclass."""
    return dataclasses.asdict(config)


def from_dict(cls, data: dict):
    """Rebuild the dataclass `cls` from `to_dict`'s output, as saved (a field it lacks takes its `absent`
    value where the field has one, else its default); unknown keys are an error."""
    hints = typing.get_type_hints(cls)
    fields = dataclasses.fields(cls)
    unknown = set(data) - {f.name for f in fields}
    if unknown:
        raise ValueError(f"{cls.__name__}: unknown settings {sorted(unknown)}")
    older = {f.name: f.metadata["absent"] for f in fields
             if f.name not in data and f.metadata.get("absent", _MISSING) is not _MISSING}
    return cls(**older, **{name: _revive(hints[name], value) for name, value in data.items()})


def _revive(hint, value):
    """JSON has no tuples and no dataclasses: rebuild them from the field's type hint."""
    options = typing.get_args(hint) if typing.get_origin(hint) in (typing.Union, types.UnionType) else (hint,)
    for option in options:
        if dataclasses.is_dataclass(option) and isinstance(value, dict):
            return from_dict(option, value)
        if (option is tuple or typing.get_origin(option) is tuple) and isinstance(value, list):
            return tuple(value)
    return value


def atomic_write(path: Path | str, write, make_parents: bool = True) -> None:
    """Call `write(tmp_path)` then rename onto `path`, so a crash never leaves a half-written file.

    The file gets the permissions a plain `open` would give it (0666 less the umask), not the
    private ones of a temporary file. Missing directories are created, unless `make_parents` is
    False: then a missing directory is a UserError naming it.
    """
    path = Path(path)
    if make_parents:
        path.parent.mkdir(parents=True, exist_ok=True)
    elif not path.parent.is_dir():
        raise UserError(f"{path}: cannot write, no such directory {path.parent}")
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        write(tmp)
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def _umask() -> int:
    """The process's umask (reading it means setting it: it is set straight back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_json(path: Path | str, data) -> None:
    """Atomically write `data` as indented JSON."""
    def write(tmp):
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=2, sort_keys=False)
            f.write("\n")
    atomic_write(path, write)


def load_config(path: Path | str, cls):
    with open(path, encoding="utf-8") as f:
        return from_dict(cls, json.load(f))


RESUME_MAY_CHANGE = frozenset({"max_minutes", "mirror"})
"""Settings a resumed run may have other than its own: a larger time budget extends a finished run, and the
gradient's path (DyNet's graph or the model's numpy mirror, equal to within float rounding) changes the speed
only, so a run saved before the mirror existed resumes with it."""


def _fixed(data):
    """`data` (JSON values) without the settings of RESUME_MAY_CHANGE, at any depth."""
    if isinstance(data, dict):
        return {k: _fixed(v) for k, v in data.items() if k not in RESUME_MAY_CHANGE}
    return data


def write_run_config(path: Path | str, settings, resume: bool) -> None:
    """Write a run's settings (a settings dataclass); when resuming, insist they are the ones the run was started
    with (but for RESUME_MAY_CHANGE). The saved settings are read back through their class first, so a setting
    added since the run started counts as the value the run was trained with (its `absent`), not as a change."""
    path, data = Path(path), to_dict(settings)
    if resume and path.is_file():
        try:
            saved = to_dict(load_config(path, type(settings)))
        except (ValueError, TypeError) as e:
            raise UserError(f"{path}: cannot resume, the saved settings do not load ({e})") from e
        saved, new = (_fixed(json.loads(json.dumps(d))) for d in (saved, data))
        if saved != new:
            raise UserError(f"{path}: --resume with settings other than the run's own (differ: "
                            f"{', '.join(_differences(saved, new))})")
    write_json(path, data)


def _differences(a: dict, b: dict, prefix: str = "") -> list[str]:
    """The dotted names of the settings whose values differ between `a` and `b` (nested dicts compared inside)."""
    names = []
    for key in sorted(set(a) | set(b)):
        x, y = a.get(key), b.get(key)
        if isinstance(x, dict) and isinstance(y, dict):
            names += _differences(x, y, f"{prefix}{key}.")
        elif x != y:
            names.append(f"{prefix}{key}")
    return names
