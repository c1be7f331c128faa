"""Nothing lost, nothing silent (issue 17): odd but valid input is read, files follow the umask,
the treebank tests find the treebank wherever `corpus get` or the mirror put it, and the library's
import reserves little memory."""
from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from parsers.conllu_io import NO_HEAD, ConlluError, ConlluWarning, read_conllu, write_conllu
from stackparse.config import write_json
from stackparse.errors import UserError
from tests import parsers_fixtures
from tests.parsers_fixtures import SMALL_CONLLU, TINY_PARSER, write

UNPARSED = "# text = Dogs bark .\n1\tDogs\tdog\tNOUN\t_\t_\t_\t_\t_\t_\n2\tbark\tbark\tVERB\t_\t_\t_\t_\t_\t_\n" \
           "3\t.\t.\tPUNCT\t_\t_\t_\t_\t_\t_\n\n"


def test_input_to_parse_may_have_no_tree(tmp_path):
    path = write(tmp_path, "in.conllu", UNPARSED)
    with pytest.raises(ConlluError, match="in.conllu:2: invalid HEAD '_'"):
        read_conllu(path)                                            # a treebank must have trees
    sentences, _ = read_conllu(path, require_trees=False)
    assert [w.head for w in sentences[0].words] == [NO_HEAD] * 3 and sentences[0].forms == ["Dogs", "bark", "."]


@pytest.mark.parametrize("columns", ["2\t_\t_\t_", "9\tnsubj\t_\t_", "1\tnsubj\t_\t_"])   # _, out of range, a cycle
def test_whatever_stands_in_head_and_deprel_is_not_checked_before_parsing(tmp_path, columns):
    text = UNPARSED.replace("1\tDogs\tdog\tNOUN\t_\t_\t_\t_\t_\t_", "1\tDogs\tdog\tNOUN\t_\t_\t" + columns)
    assert len(read_conllu(write(tmp_path, "in.conllu", text), require_trees=False)[0]) == 1


def test_crlf_and_a_byte_order_mark_are_read_with_a_warning_and_written_with_lf(tmp_path):
    path = write(tmp_path, "win.conllu", b"\xef\xbb\xbf" + SMALL_CONLLU.replace("\n", "\r\n").encode())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sentences, _ = read_conllu(path)
    assert sorted(str(w.message).split(": ", 1)[1] for w in caught if w.category is ConlluWarning) == [
        "Windows line endings (CRLF), read as LF", "a UTF-8 byte-order mark, ignored"]
    write_conllu(tmp_path / "out.conllu", sentences)
    assert (tmp_path / "out.conllu").read_bytes() == (SMALL_CONLLU + "\n\n").encode()


def test_written_files_follow_the_umask(tmp_path):
    old = os.umask(0o027)
    try:
        write_json(tmp_path / "a.json", {})
        write_conllu(tmp_path / "b.conllu", read_conllu(write(tmp_path, "s.conllu", SMALL_CONLLU))[0])
    finally:
        os.umask(old)
    assert {oct((tmp_path / name).stat().st_mode & 0o777) for name in ("a.json", "b.conllu")} == {oct(0o640)}


def test_a_missing_output_directory_is_refused(tmp_path):
    sentences, _ = read_conllu(write(tmp_path, "s.conllu", SMALL_CONLLU))
    with pytest.raises(UserError, match="no such directory"):
        write_conllu(tmp_path / "nope" / "x.conllu", sentences)
    assert not (tmp_path / "nope").exists()


def test_treebank_tests_find_the_treebank_in_corpora_or_the_mirror(tmp_path, monkeypatch):
    (tmp_path / "corpora").mkdir()
    write(tmp_path / "corpora", "en-dev.conllu", SMALL_CONLLU)
    monkeypatch.setattr(parsers_fixtures, "ROOT", tmp_path)
    monkeypatch.setattr(parsers_fixtures, "SHARED_CORPORA", tmp_path / "no-mirror")
    assert parsers_fixtures.shared_corpus("en_ewt-ud-dev.conllu") == tmp_path / "corpora" / "en-dev.conllu"
    write(tmp_path, "en_ewt-ud-dev.conllu", SMALL_CONLLU)
    monkeypatch.setattr(parsers_fixtures, "SHARED_CORPORA", tmp_path)      # STACKPARSE_CORPUS_DIR's role
    assert parsers_fixtures.shared_corpus("en_ewt-ud-dev.conllu") == tmp_path / "en_ewt-ud-dev.conllu"


def test_importing_the_library_reserves_little_memory():
    env = {k: v for k, v in os.environ.items() if k != "STACKPARSE_DYNET_MEM"}
    # The peak resident memory of the new process alone (getrusage's would include this one's, kept across exec).
    code = "import stackparse; print(next(l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM')))"
    kilobytes = int(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                                   check=True, cwd=Path(__file__).resolve().parents[1]).stdout)
    assert kilobytes < 400 * 1024


def test_batches_by_length_keep_a_long_sentence_alone():
    from parsers.decoding import length_batches
    assert length_batches([3, 50, 2, 7, 1200, 4], 2, 100) == [[2, 0], [5, 3], [1], [4]]
    assert length_batches([5] * 5, 32, 12) == [[0, 1], [2, 3], [4]]


def test_a_sentence_decoded_alone_is_not_autobatched(monkeypatch):
    """DyNet's autobatching engine walks the whole graph at every incremental forward: one long
    sentence decoded with it takes time quadratic in its length (BENCHMARKS.md, issue 17)."""
    import dynet as dy

    from parsers import decoding
    flags = []
    monkeypatch.setattr(decoding.dy, "renew_cg", lambda autobatching=False: flags.append(autobatching) or dy.cg())

    class Model:
        def parse(self, sentences, beam, predict_tags):
            return [None] * len(sentences)

    class Sentence:
        def __init__(self, n):
            self.words = [None] * n

    decoding.parse_sentences(Model(), [Sentence(3), Sentence(4), Sentence(2000)], words_per_batch=1000)
    assert flags == [True, False]


def test_an_existing_run_is_never_replaced_silently(tmp_path):
    from tests.cli_runner import run
    tiny = ["--epochs", "1", "--epoch-size", "10", "--validation-size", "4", "--hidden", "3", "--quiet",
            "--out", tmp_path / "r"]
    run("train", "anbn", "--model", "rnn", *tiny)
    before = (tmp_path / "r" / "metrics.json").read_bytes()
    refused = run("train", "anbn", "--model", "rnn", "--seed", "2", *tiny, ok=False)
    assert "holds a run already: --resume continues it, --force replaces it" in refused and refused.count("\n") == 1
    assert (tmp_path / "r" / "metrics.json").read_bytes() == before
    run("train", "anbn", "--model", "rnn", "--seed", "2", "--force", *tiny)
    assert json_of(tmp_path / "r" / "config.json")["train"]["seed"] == 2


def json_of(path):
    import json
    return json.loads(path.read_text())


def test_progress_is_logged_when_output_is_not_a_terminal(tmp_path, monkeypatch):
    from stackparse.training import trainer
    from tests.cli_runner import run
    monkeypatch.setattr(trainer, "PROGRESS_EVERY", 0.0)        # a line per batch instead of every 30 s
    out = run("train", "anbn", "--model", "rnn", "--epochs", "2", "--epoch-size", "10", "--validation-size", "4",
              "--hidden", "3", "--out", tmp_path / "r")
    lines = [line for line in out.splitlines() if line.startswith("run 1 epoch 1/2: 1/1 batches, ")]
    assert lines and all("loss " in line and " chars/s, run left " in line for line in lines)


def test_one_sentence_treebank_trains_and_the_parser_reads_input_without_trees(tmp_path):
    from tests.cli_runner import run
    one = write(tmp_path, "one.conllu", SMALL_CONLLU.split("\n\n")[0] + "\n\n")
    out = run("train-parser", one, "--out", tmp_path / "r", *TINY_PARSER)
    assert "best dev LAS" in out
    run("parse", tmp_path / "r", write(tmp_path, "in.conllu", UNPARSED), "--out", tmp_path / "p.conllu", "--quiet")
    heads = [line.split("\t")[6] for line in (tmp_path / "p.conllu").read_text().splitlines() if line[:1].isdigit()]
    assert len(heads) == 3 and all(h.isdigit() for h in heads)
    assert "no such directory" in run("parse", tmp_path / "r", tmp_path / "in.conllu", "--out",
                                      tmp_path / "nope" / "p.conllu", ok=False)


def test_one_cli_dialect(tmp_path):
    from tests.cli_runner import run
    bad = run("train", "anbn", "--optimizer", "adagrad", "--out", tmp_path / "x", ok=False)
    assert bad == "error: --optimizer must be one of sgd, adam, rmsprop (got 'adagrad')\n"
    assert "[sgd|adam|rmsprop]" in run("train", "anbn", "--help") and "[default: 40]" in run("train", "anbn", "--help")
    assert "--stacks" in run("train", "anbn", "--model", "stack-rnn", "--help")
    assert "--stacks" not in run("train", "anbn", "--model", "lstm", "--help")
    for command in ("train", "train-parser", "parse", "bench"):
        assert "--quiet" in run(command, "--help")
    assert "--out" in run("parse", "--help") and "test-parser" in run("--help") and "bench-parser" not in run("--help")


def test_a_system_without_a_dynamic_oracle_trains_without_exploring(tmp_path):
    from tests.cli_runner import run
    treebank = write(tmp_path, "t.conllu", SMALL_CONLLU + "\n\n")
    out = run("train-parser", treebank, "--dev", treebank, "--system", "arc-standard", "--out", tmp_path / "r",
              *TINY_PARSER)
    assert "arc-standard has no dynamic oracle: training with the static oracle alone" in out
    assert "needs a system with a dynamic oracle" in run("train-parser", treebank, "--dev", treebank, "--system",
                                                         "arc-standard", "--explore-after", "1", "--out",
                                                         tmp_path / "s", *TINY_PARSER, ok=False)


def test_bench_progress_shows_the_epoch_of_each_run_under_way(tmp_path):
    from stackparse.benchmarks.runner import _epochs
    from stackparse.benchmarks.suites import Job
    running, done = Job("anbn", "rnn", 1), Job("anbn", "rnn", 2)
    for job, lines in ((running, 3), (done, 5)):
        (tmp_path / job.key).mkdir()
        (tmp_path / job.key / "log.jsonl").write_text("{}\n" * lines)
    (tmp_path / done.key / "result.json").write_text("{}")
    assert _epochs([(running, tmp_path), (done, tmp_path), (Job("anbn", "rnn", 3), tmp_path)]) == {
        running.key: "epoch 3"}


def test_ctrl_c_says_what_is_really_kept(tmp_path, monkeypatch):
    from stackparse import experiments
    from tests.cli_runner import invoke

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt
    monkeypatch.setattr(experiments, "run", interrupted)
    result = invoke("train", "anbn", "--model", "rnn", "--out", tmp_path / "r", "--quiet")
    assert result.exit_code == 130
    assert result.output == f"interrupted: no epoch had finished, no model was saved in {tmp_path / 'r'}\n"
    (tmp_path / "r" / "best").mkdir(parents=True)
    assert "the best model so far is in" in invoke("train", "anbn", "--model", "rnn", "--out", tmp_path / "r").output
