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
from tests.parsers_fixtures import SMALL_CONLLU, write

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
