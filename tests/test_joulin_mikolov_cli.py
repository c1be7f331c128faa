"""The CLI paths of issue 4: `train --model stack-rnn / list-rnn` with their settings, and `inspect`."""
import json

import pytest
from click.testing import CliRunner

from cli import main

TINY = ["--hidden", "6", "--epochs", "2", "--epoch-size", "20", "--validation-size", "5", "--test-max-n", "20",
        "--quiet"]


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A tiny rounding Stack RNN run (its quality does not matter here)."""
    out = tmp_path_factory.mktemp("run")
    result = CliRunner().invoke(main, ["train", "anbn", "--model", "stack-rnn", "--stacks", "2", "--no-op",
                                       "--rounding", "--rounding-start", "1", *TINY, "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out


def test_train_saves_the_memory_settings(trained):
    config = json.loads((trained / "config.json").read_text())
    assert config["model"] == "stack-rnn"
    assert {k: config["model_config"][k] for k in ("stacks", "no_op", "rounding", "k")} == \
        {"stacks": 2, "no_op": True, "rounding": True, "k": 2}


def test_inspect_prints_one_row_per_step_with_each_stacks_action_and_top(trained):
    result = CliRunner().invoke(main, ["inspect", str(trained), "--n", "3"])
    assert result.exit_code == 0, result.output
    table = [line for line in result.output.splitlines() if line.startswith("| ")]
    kept = json.loads((trained / "best" / "metrics.json").read_text()).get("memories_in_use", 2)
    columns = table[0].rstrip(" |").split(" | ")[4:]              # rounding may have removed stacks
    assert len(columns) == 2 * kept and all(c.startswith("action ") for c in columns[:kept])
    assert len(table) == 1 + 6                                   # header, then aaabbb
    assert all(cell in ("PUSH", "POP", "NO-OP") for row in table[1:] for cell in row.split(" | ")[4:4 + kept])


def test_list_rnn_trains_and_a_stack_setting_is_refused(tmp_path):
    runner = CliRunner()
    ok = runner.invoke(main, ["train", "anbn", "--model", "list-rnn", "--lists", "2", *TINY, "--out", str(tmp_path)])
    assert ok.exit_code == 0, ok.output
    bad = runner.invoke(main, ["train", "anbn", "--model", "list-rnn", "--stacks", "2", *TINY,
                               "--out", str(tmp_path / "x")])
    assert bad.exit_code == 2 and "--stacks" in bad.output


def test_inspect_refuses_a_directory_without_a_run(tmp_path):
    result = CliRunner().invoke(main, ["inspect", str(tmp_path)])
    assert result.exit_code == 2 and "not a finished run" in result.output


def test_speed_prints_characters_per_second_by_batch_size():
    result = CliRunner().invoke(main, ["speed", "anbn", "--batch-sizes", "1,2", "--seconds", "1"])
    assert result.exit_code == 0, result.output
    rows = [line.split(" | ") for line in result.output.splitlines() if line.startswith("| ") and "---" not in line]
    assert [r[:3] for r in rows[1:]] == [["| tbptt", "1", "1"], ["| tbptt", "1", "2"]]   # grad | refine | batch size
    assert all(float(r[5].rstrip(" |")) > 0 for r in rows[1:])
    bad = CliRunner().invoke(main, ["speed", "--batch-sizes", "one"])
    assert bad.exit_code == 2 and "--batch-sizes" in bad.output
    zero = CliRunner().invoke(main, ["speed", "anbn", "--batch-sizes", "4,0"])
    assert zero.exit_code == 2 and "at least 1" in zero.output and "characters/s" not in zero.output   # no table


def test_inspect_refuses_a_size_the_task_has_no_sequence_of():
    # a^n b^n$ has no string of length 3: a one-line error, not a traceback
    from stackparse.errors import UserError
    from stackparse.evaluation.inspect import sample_for_inspection
    from stackparse.tasks import get_task
    with pytest.raises(UserError, match="pda-anbn-end has no strings of length 3: choose another size n"):
        sample_for_inspection(get_task("pda-anbn-end"), 3, 1)
