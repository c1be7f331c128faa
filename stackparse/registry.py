"""Name → class registries, so the CLI and benchmarks can list and look up components by name."""
from __future__ import annotations

from stackparse.errors import unknown_name


class Registry(dict):
    """A dict of classes by their `name`, filled by the `register` class decorator; `kind` says what it
    holds ("task", "model"), for error messages."""

    def __init__(self, kind: str):
        super().__init__()
        self.kind = kind

    def register(self, cls):
        """Class decorator: make `cls` available under `cls.name`."""
        if cls.name in self:
            raise ValueError(f"{self.kind} {cls.name!r} registered twice")
        self[cls.name] = cls
        return cls

    def get_class(self, name: str):
        """The class registered as `name`; a UserError listing the valid names otherwise."""
        try:
            return self[name]
        except KeyError:
            raise unknown_name(self.kind, name, self) from None
