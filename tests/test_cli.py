"""Every CLI path, run as a user would (in-process, through click), including bad input."""
import json

import pytest

from stackparse.benchmarks import suites
from stackparse.models import MODELS
from stackparse.tasks import TASKS
from stackparse.training import TrainConfig
from stackparse.training.sequence import SequenceDataConfig
from tests.cli_runner import run
from tests.parsers_fixtures import SHARED_CORPORA, SMALL_CONLLU, ewt, write
from parsers.conllu_io import write_conllu

TINY_TASK = ["--epochs", "1", "--epoch-size", "20", "--validation-size", "5", "--hidden", "4", "--quiet"]
TINY_PARSER = ["--epochs", "1", "--batch-size", "8", "--word-dim", "8", "--upos-dim", "4", "--char-hidden", "0",
               "--token-dim", "8", "--context-layers", "1", "--context-dim", "4", "--tagger-dim", "4",
               "--lstm-dim", "8", "--lstm-layers", "1", "--state-dim", "8", "--action-dim", "4", "--rel-dim", "4"]


def test_transduction_tasks_train_with_their_own_defaults_which_options_override(tmp_path):
    run("train", "copy", "--model", "neural-queue", "--out", tmp_path / "r", "--test-max-n", "66",
        "--epochs", "1", "--epoch-size", "20", "--validation-size", "5", "--hidden", "4", "--memory-size", "4",
        "--lr", "0.01", "--quiet")
    config = json.loads((tmp_path / "r" / "config.json").read_text())
    assert config["train"]["optimizer"] == "rmsprop" and config["train"]["batch_size"] == 10      # the kind's
    assert config["train"]["lr"] == 0.01 and config["train"]["epochs"] == 1                    # the user's
    assert config["data"]["curriculum_start"] == 0
    assert json.loads((tmp_path / "r" / "metrics.json").read_text())["task"] == "copy"


def test_tasks_and_models_are_listed():
    assert "anbn" in run("tasks") and "counting" in run("tasks")
    assert {"rnn", "lstm", "gru"} <= set(line.split()[0] for line in run("models").splitlines())


def test_train_writes_config_parameters_and_metrics(tmp_path):
    out = run("train", "anbn", "--model", "rnn", "--out", tmp_path / "r", *TINY_TASK)
    assert "% of n in 1..60 correct" in out and "never seen in training" in out
    metrics = json.loads((tmp_path / "r" / "metrics.json").read_text())
    assert set(metrics["accuracy_by_n"]) == {str(n) for n in range(1, 61)}
    assert json.loads((tmp_path / "r" / "config.json").read_text())["model_config"]["hidden"] == 4
    assert (tmp_path / "r" / "best" / "params").is_file()


@pytest.mark.parametrize("args, message", [
    (["train", "nope"], "unknown task 'nope'; valid tasks: " + ", ".join(sorted(TASKS))),
    (["train", "anbn", "--model", "nope"], "unknown model 'nope'; valid models: " + ", ".join(sorted(MODELS))),
    (["train", "anbn", "--hidden", "0"], "--hidden must be at least 1"),
    (["train", "anbn", "--test-max-n", "10"], "test range 1..10 ends below the training range 1..19"),
    (["train", "anbn", "--test-max-n", "-5"], "test range 1..-5 is empty"),
    (["train", "anbn", "--epochs", "0"], "--epochs must be at least 1"),
    (["train", "anbn", "--lr", "-0.1"], "--lr must be positive"),
    (["bench", "nope"], "unknown suite 'nope'"),
    (["corpus", "get", "xx"], "unknown corpus"),
])
def test_bad_options_are_one_line_errors(args, message, tmp_path):
    out = run(*args, "--out", tmp_path, ok=False) if args[0] == "train" else run(*args, ok=False)
    assert message in out and out.count("\n") == 1


def test_bench_then_report(tmp_path, monkeypatch):
    tiny = suites.Suite("tiny", "a smoke suite", ("anbn",), ("rnn",), {"anbn": {"rnn": 25.0}},
                        overrides={"train": TrainConfig(epochs=1),
                                   "data": SequenceDataConfig(epoch_size=10, validation_size=5)})
    monkeypatch.setitem(suites.SUITES, "tiny", tiny)
    out = run("bench", "tiny", "--seeds", "2", "--out", tmp_path)
    assert "| anbn |" in out and "2 seeds" in out and "25.0" in out
    results = sorted(tmp_path.glob("*/result.json"))
    assert len(results) == 2
    stamp = [p.stat().st_mtime_ns for p in results]
    run("bench", "tiny", "--seeds", "2", "--out", tmp_path)          # finished runs are not redone
    assert [p.stat().st_mtime_ns for p in results] == stamp
    assert "| anbn |" in run("report", tmp_path) and (tmp_path / "report.md").is_file()
    assert "not a benchmark directory" in run("report", tmp_path / "anbn--rnn--s1", ok=False)


def test_corpus_get_from_the_mirror(tmp_path, monkeypatch):
    if not SHARED_CORPORA.is_dir():
        pytest.skip("no local treebank mirror")
    monkeypatch.setenv("STACKPARSE_CORPUS_DIR", str(SHARED_CORPORA))
    out = run("corpus", "get", "en", "--dest", tmp_path)
    assert {p.name for p in tmp_path.glob("*.conllu")} == {"en.conllu", "en-dev.conllu", "en-test.conllu"}
    assert "en-test.conllu" in out


def test_train_parser_parse_evaluate(tmp_path):
    write_conllu(tmp_path / "train.conllu", list(ewt("train")[:60]))
    write_conllu(tmp_path / "dev.conllu", list(ewt("dev")[:20]))
    out = run("train-parser", tmp_path / "train.conllu", "--dev", tmp_path / "dev.conllu",
              "--out", tmp_path / "run", *TINY_PARSER)
    assert "best dev LAS" in out
    run("parse", tmp_path / "run", tmp_path / "dev.conllu", "-o", tmp_path / "pred.conllu")
    scores = run("evaluate", tmp_path / "dev.conllu", tmp_path / "pred.conllu")
    bench = run("test-parser", tmp_path / "run", "--test", tmp_path / "dev.conllu", "--rounds", "3")
    assert "parse words/s" in bench and "the best of 3 rounds" in bench
    result = json.loads((tmp_path / "run" / "benchmark" / "result.json").read_text())
    assert result["rounds"] == 3 and round(result["parse_words_per_s"]) == max(result["parse_words_per_s_rounds"])
    # the model beside itself: an ensemble that parses as the model does
    twice = run("test-parser", tmp_path / "run", "--test", tmp_path / "dev.conllu", "--ensemble", tmp_path / "run")
    assert "parsing beside it as one" in twice
    both = json.loads((tmp_path / "run" / "benchmark-ensemble2" / "result.json").read_text())
    assert both["ensemble"] == [str(tmp_path / "run")]
    assert [both[k] for k in ("test_las", "test_las_predicted_tags")] == \
        [result[k] for k in ("test_las", "test_las_predicted_tags")]
    assert "ensemble parses greedily" in run("test-parser", tmp_path / "run", "--test", tmp_path / "dev.conllu",
                                             "--ensemble", tmp_path / "run", "--beam", "2", ok=False)
    assert scores.splitlines()[0] == "words " + str(sum(len(s.words) for s in ewt("dev")[:20]))
    assert {"UAS", "LAS"} <= {line.split()[0] for line in scores.splitlines()}


def test_evaluate_known_scores(tmp_path):
    gold = write(tmp_path, "gold.conllu", SMALL_CONLLU)
    # Sentence 1: "Dogs" now attaches to "." (wrong head); sentence 2: "today" obl:tmod -> obl.
    pred_text = SMALL_CONLLU.replace("1\tDogs\tdog\tNOUN\tNNS\tNumber=Plur\t2\tnsubj",
                                     "1\tDogs\tdog\tNOUN\tNNS\tNumber=Plur\t3\tnsubj")
    pred_text = pred_text.replace("\t4\tobl:tmod\t", "\t4\tobl\t").replace("\tNOUN\tNNS\t", "\tVERB\tVBZ\t")
    pred = write(tmp_path, "pred.conllu", pred_text)
    lines = run("evaluate", gold, pred).splitlines()
    assert lines == ["words 9", f"UAS {800 / 9:.2f}", f"LAS {700 / 9:.2f}",
                     f"LAS (universal relations) {800 / 9:.2f}", f"UPOS {800 / 9:.2f}", f"XPOS {800 / 9:.2f}"]


@pytest.mark.parametrize("bad, message", [
    ("1\tDogs\tdog\tNOUN\n", "bad.conllu:1: "),
    ("1\tDogs\t_\tNOUN\t_\t_\tx\tnsubj\t_\t_\n", "bad.conllu:1: "),
    ("1\tDogs\t_\tNOUN\t_\t_\t7\troot\t_\t_\n", "bad.conllu:1: "),
    ("", "bad.conllu:1: empty file"),
    (b"1\tD\xffogs\t_\tNOUN\t_\t_\t0\troot\t_\t_\n", "bad.conllu:1: "),
])
def test_malformed_conllu_gives_file_line_and_exit_status(tmp_path, bad, message):
    path = write(tmp_path, "bad.conllu", bad)
    out = run("evaluate", path, path, ok=False)
    assert message in out and out.startswith("error: ")
    out = run("train-parser", path, "--dev", path, "--out", tmp_path / "r", ok=False)
    assert message in out


def test_skip_invalid_reports_skipped_sentences(tmp_path):
    sentences = list(ewt("train")[:40])
    write_conllu(tmp_path / "train.conllu", sentences)
    broken = (tmp_path / "train.conllu").read_text() + "1\tBroken\t_\tNOUN\t_\t_\t5\troot\t_\t_\n\n"
    (tmp_path / "train.conllu").write_text(broken)
    write_conllu(tmp_path / "dev.conllu", list(ewt("dev")[:10]))
    assert "HEAD" in run("train-parser", tmp_path / "train.conllu", "--dev", tmp_path / "dev.conllu",
                         "--out", tmp_path / "r", *TINY_PARSER, ok=False)
    out = run("train-parser", tmp_path / "train.conllu", "--dev", tmp_path / "dev.conllu", "--skip-invalid",
              "--out", tmp_path / "r", *TINY_PARSER)
    assert "skipped 1 invalid sentence" in out


def test_missing_or_corrupt_model_directory(tmp_path):
    source = write(tmp_path, "in.conllu", SMALL_CONLLU)
    assert "not a parser model directory" in run("parse", tmp_path / "nope", source, "-o", tmp_path / "o", ok=False)
    model = tmp_path / "model"
    model.mkdir()
    for name in ("params", "vocab.json", "config.json"):
        (model / name).write_text("garbage")
    assert "corrupt parser model" in run("parse", model, source, "-o", tmp_path / "o", ok=False)


def test_resume_refuses_other_settings(tmp_path):
    run("train", "anbn", "--model", "rnn", "--out", tmp_path, *TINY_TASK)
    assert "--resume with settings other than the run's own (differ: model_config.hidden)" in run(
        "train", "anbn", "--model", "rnn", "--out", tmp_path, "--resume", *TINY_TASK[:-3], "--hidden", "5",
        "--quiet", ok=False)
    assert "% of n" in run("train", "anbn", "--model", "rnn", "--out", tmp_path, "--resume", *TINY_TASK)


def test_a_run_stopped_by_its_time_budget_goes_on_when_resumed_with_a_larger_one(tmp_path):
    import json
    args = ["train", "anbn", "--model", "rnn", "--out", tmp_path, "--epochs", "3", "--epoch-size", "20",
            "--hidden", "4", "--quiet"]
    run(*args, "--max-minutes", "1e-6")                 # stopped by the budget after its first epoch
    log = tmp_path / "log.jsonl"
    assert len(log.read_text().splitlines()) == 1
    run(*args, "--max-minutes", "1e-6", "--resume")     # the same budget: nothing more
    assert len(log.read_text().splitlines()) == 1
    run(*args, "--max-minutes", "10", "--resume")       # a larger one: it goes on, to its last epoch
    assert len(log.read_text().splitlines()) == 3
    assert json.loads((tmp_path / "config.json").read_text())["train"]["max_minutes"] == 10


def test_a_run_saved_before_a_setting_existed_resumes(tmp_path):
    # A config written before `mirror` existed, or with the other gradient path, resumes (the path changes the
    # speed, not the run); so does one written before `offset` existed, whose value it was trained with is the
    # setting's `absent`. Any other difference is still refused.
    import json
    from dataclasses import dataclass
    from stackparse.config import setting, write_run_config
    from stackparse.errors import UserError

    @dataclass(frozen=True)
    class Data:
        grad: str = "tbptt"
        mirror: bool = True
        offset: float = setting(-4.0, "added since", absent=0.0)

    @dataclass(frozen=True)
    class Settings:
        lr: float = 0.001
        max_minutes: float = 120.0
        data: Data = Data()

    config = tmp_path / "config.json"
    config.write_text(json.dumps({"lr": 0.001, "max_minutes": 40.0, "data": {"grad": "tbptt"}}))
    write_run_config(config, Settings(data=Data(offset=0.0)), resume=True)
    assert json.loads(config.read_text())["data"] == {"grad": "tbptt", "mirror": True, "offset": 0.0}
    config.write_text(json.dumps({"lr": 0.001, "max_minutes": 40.0, "data": {"grad": "tbptt"}}))
    with pytest.raises(UserError, match=r"differ: data\.offset\)"):
        write_run_config(config, Settings(), resume=True)          # the default offset is not the run's
    with pytest.raises(UserError, match=r"differ: data\.grad\)"):
        write_run_config(config, Settings(data=Data(grad="bptt", mirror=False, offset=0.0)), resume=True)
    config.write_text(json.dumps({"lr": 0.001, "retired": 1}))
    with pytest.raises(UserError, match="cannot resume, the saved settings do not load"):
        write_run_config(config, Settings(), resume=True)


def test_reading_no_tag_needs_training_without_gold_tags(tmp_path):
    source = write(tmp_path, "train.conllu", SMALL_CONLLU)
    assert "--gold-tags must be below 1 with tag_reading none" in run(
        "train-parser", source, "--out", tmp_path / "r", "--tag-reading", "none", *TINY_PARSER, ok=False)
