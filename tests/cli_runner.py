"""Running the command line as a user would, in-process through click, for the tests of every command."""
from click.testing import CliRunner

import cli


def invoke(*args):
    """`python cli.py ARGS...` run in-process: click's Result (output, exit_code, exception)."""
    return CliRunner().invoke(cli.main, [str(a) for a in args])


def run(*args, ok=True) -> str:
    """The output of `python cli.py ARGS...`; asserts the exit status (0 when `ok`) and no traceback."""
    result = invoke(*args)
    assert (result.exit_code == 0) == ok, result.output
    assert "Traceback" not in result.output
    return result.output
