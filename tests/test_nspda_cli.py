"""The NSPDA's CLI paths (issue 6): `program`, `train` on a grammar task, and their one-line errors."""
import json

from tests.cli_runner import run

TINY = ["--epochs", "1", "--epoch-size", "20", "--hidden", "3", "--quiet"]


def test_grammar_tasks_and_models_are_listed():
    assert "pda-dyck2" in run("tasks") and "grammar" in run("tasks")
    assert {"rnn2", "nnpda", "nspda2", "nspda3"} <= {line.split()[0] for line in run("models").splitlines()}


def test_program_a_shipped_grammar_is_exact(tmp_path):
    out = run("program", "pda-anbn", "--order", "3", "--out", tmp_path)
    assert "test error 0.0%" in out and "test-960 error 0.0%" in out
    saved = json.loads((tmp_path / "program.json").read_text())
    assert saved["order"] == 3 and set(saved["error_by_split"].values()) == {0.0} and saved["binary_scale"] is None
    binary = run("program", "anbn", "--order", "2", "--binary", "8", "--out", tmp_path)
    assert "binary/ternary weights of size 8" in binary and "test-960 error 0.0%" in binary
    assert json.loads((tmp_path / "program.json").read_text())["binary_scale"] == 8.0


def test_program_bad_input_is_one_line(tmp_path):
    assert "unknown grammar 'nope'" in run("program", "nope", ok=False)
    bad = tmp_path / "bad.pda"
    bad.write_text("states: q\ninput: a\nnonsense\n")
    assert f"{bad}:3:" in run("program", bad, ok=False)
    guess = tmp_path / "guess.pda"
    guess.write_text("states: q p\ninput: a\nstack: A\nstart: q\naccept: p\nq a - -> q A\nq a - -> p -\n")
    assert "cannot be programmed" in run("program", guess, ok=False)
    assert "Usage" in run("program", "anbn", "--order", "4", ok=False)


def test_train_on_a_grammar_task_reports_split_errors(tmp_path):
    # The response that sees the top and the weights as programmed: what a PDA's rules are written for.
    out = run("train", "pda-anbn", "--model", "nspda3", "--insert-rules", "1", "--readout", "state-read",
              "--weight-values", "step", "--out", tmp_path / "r", *TINY)
    assert "test error 0.0%" in out and "test-480" in out
    metrics = json.loads((tmp_path / "r" / "metrics.json").read_text())
    assert set(metrics["error_by_split"]) == {"test", "test-480", "test-960", "train"}
    assert json.loads((tmp_path / "r" / "config.json").read_text())["data"]["insert_rules"] == 1.0


def test_train_bad_grammar_options_are_one_line(tmp_path):
    assert "unknown task" in run("train", "pda-nope", "--out", tmp_path / "a", *TINY, ok=False)
    assert "needs a grammar task" in run("train", "anbn", "--model", "nspda3", "--insert-rules", "1",
                                         "--out", tmp_path / "b", *TINY, ok=False)
    assert "needs an NSPDA model" in run("train", "pda-anbn", "--model", "rnn2", "--insert-rules", "1",
                                         "--out", tmp_path / "c", *TINY, ok=False)
    assert "a test range does not apply" in run("train", "pda-anbn", "--model", "rnn2", "--test-max-n", "80",
                                                "--out", tmp_path / "d", *TINY, ok=False)
    assert not (tmp_path / "d").exists()            # refused before any training
