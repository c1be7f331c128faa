"""Errors that reach the user as one clear line instead of a traceback."""


class UserError(Exception):
    """A problem with the user's input (file, option, name); the CLI prints it and exits non-zero."""


def unknown_name(kind: str, name: str, valid) -> UserError:
    """The one-line error for a name that is not in a registry, listing the valid names."""
    return UserError(f"unknown {kind} {name!r}; valid {kind}s: {', '.join(sorted(valid))}")
