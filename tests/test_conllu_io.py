"""CoNLL-U reading (fields, validation with file:line errors) and byte-exact writing."""
import io
import time

import pytest

from parsers.conllu_io import ConlluError, Word, read_conllu, write_conllu
from tests.parsers_fixtures import SMALL_CONLLU, ewt, shared_corpus, write

WORD_1 = "1\tDogs\tdog\tNOUN\tNNS\t_\t2\tnsubj\t_\t_"
WORD_2 = "2\tbark\tbark\tVERB\tVBP\t_\t0\troot\t_\t_"


def line(word_id, head, deprel="dep"):
    """A minimal word line."""
    return f"{word_id}\tw{word_id}\t_\tX\t_\t_\t{head}\t{deprel}\t_\t_"


@pytest.fixture
def small(tmp_path):
    return write(tmp_path, "small.conllu", SMALL_CONLLU)


def test_read_words_and_sentences(small):
    sentences, errors = read_conllu(small)
    assert errors == [] and len(sentences) == 2
    first, second = sentences
    assert first.path == str(small) and first.line == 1 and second.line == 7
    assert first.words[1] == Word(2, "bark", "bark", "VERB", "VBP", "Mood=Ind", 0, "root", "0:root",
                                  "SpaceAfter=No", line=4)
    # Only syntactic words: the multiword token 2-3 and the empty node 4.1 are not words.
    assert second.forms == ["I", "ca", "n't", "run", "today", "."]
    assert second.upos == ["PRON", "AUX", "PART", "VERB", "NOUN", "PUNCT"]
    assert second.heads == [-1, 4, 4, 4, 0, 4, 4]
    assert second.deprels == ["", "nsubj", "aux", "advmod", "root", "obl:tmod", "punct"]
    assert [word.line for word in second.words] == [9, 11, 12, 13, 15, 16]
    # Raw lines, comments and all; the last sentence needs no blank line after it.
    assert second.lines == SMALL_CONLLU.split("\n")[6:]


def test_write_back_unchanged_is_byte_identical(small):
    sentences, _ = read_conllu(small)
    out = io.StringIO()
    write_conllu(out, sentences)
    assert out.getvalue() == SMALL_CONLLU + "\n\n"   # each sentence ends with a blank line


def test_write_replaces_only_head_and_deprel_of_words(small, tmp_path):
    sentences, _ = read_conllu(small)
    heads = [[-1, 2, 0, 1], [-1, 4, 1, 4, 0, 4, 4]]
    deprels = [["", "nsubj", "root", "punct"], ["", "nsubj", "aux", "advmod", "root", "obl", "punct"]]
    write_conllu(tmp_path / "out.conllu", sentences, heads, deprels)
    lines = (tmp_path / "out.conllu").read_text().split("\n")
    expected = (SMALL_CONLLU + "\n\n").split("\n")
    changed = {4: ("0", "root"), 5: ("1", "punct"), 11: ("1", "aux"), 15: ("4", "obl")}
    for number, (head, deprel) in changed.items():   # 1-based line numbers
        columns = expected[number - 1].split("\t")
        columns[6:8] = [head, deprel]
        expected[number - 1] = "\t".join(columns)
    assert lines == expected


def test_write_heads_only_keeps_deprels(small):
    sentences, _ = read_conllu(small)
    out = io.StringIO()
    write_conllu(out, sentences[:1], heads=[[-1, 3, 0, 2]])
    assert out.getvalue().split("\n")[2:5] == [
        "1\tDogs\tdog\tNOUN\tNNS\tNumber=Plur\t3\tnsubj\t2:nsubj\t_",
        "2\tbark\tbark\tVERB\tVBP\tMood=Ind\t0\troot\t0:root\tSpaceAfter=No",
        "3\t.\t.\tPUNCT\t.\t_\t2\tpunct\t2:punct\t_"]


@pytest.mark.parametrize("heads, problem", [([[-1, 2, 0, 2]], "2 sentences but 1 lists of heads"),
                                            ([[-1, 2, 0], [-1] * 7], "3 words, got 3 values")])
def test_write_checks_lengths(small, heads, problem):
    sentences, _ = read_conllu(small)
    with pytest.raises(ValueError, match=problem):
        write_conllu(io.StringIO(), sentences, heads)


def test_ewt_dev_round_trip_is_byte_identical(tmp_path):
    path = shared_corpus("en_ewt-ud-dev.conllu")
    sentences, _ = read_conllu(path)
    write_conllu(tmp_path / "dev.conllu", sentences)
    assert (tmp_path / "dev.conllu").read_bytes() == path.read_bytes()


def test_ewt_train_reads_in_seconds():
    start = time.perf_counter()
    sentences = ewt("train")
    elapsed = time.perf_counter() - start
    assert (len(sentences), sum(len(s.words) for s in sentences)) == (12544, 204577)
    assert elapsed < 15, f"reading EWT train took {elapsed:.1f} s"


# --- malformed input: one file per kind of error, each reported at its file:line ----------------

@pytest.mark.parametrize("content, line_number, what", [
    (b"# ok\n" + WORD_1.encode() + b"\n2\tb\xe9rk\t_\tX\t_\t_\t0\troot\t_\t_\n", 3,
     "invalid UTF-8 (byte 0xe9)"),
    (f"{WORD_1}\n2\tbark\tbark\tVERB\n", 2, "expected 10 tab-separated columns, found 4"),
    (WORD_1 + "\n" + WORD_2.replace("\t", " ", 1) + "\n", 2,
     "expected 10 tab-separated columns, found 9"),
    (f"{WORD_1}\n{line('two', 0)}\n", 2, "invalid ID 'two'"),
    (f"{WORD_1}\n{line(2, '_')}\n", 2, "invalid HEAD '_'"),
    (f"{WORD_1}\n{line(2, 'x1')}\n", 2, "invalid HEAD 'x1'"),
    (f"{line(1, 3)}\n{line(2, 0)}\n", 1, "HEAD 3 out of range 0..2"),
    (f"{line(1, -1)}\n{line(2, 0)}\n", 1, "HEAD -1 out of range 0..2"),
    (f"{line(1, 2)}\n{line(3, 0)}\n", 2, "word ID 3 out of order: expected 2"),
    (f"{line(1, 2)}\n{line(2, 0)}\n{line(2, 0)}\n", 3, "word ID 2 duplicate: expected 3"),
    (f"{line(1, 2)}\n{line(2, 1)}\n", 1, "no root (no word has HEAD 0)"),
    (f"{line(1, 0)}\n{line(2, 3)}\n{line(3, 2)}\n", 2, "cycle 2 -> 3 -> 2 (each word's HEAD is the next)"),
    (f"{line(1, 0)}\n{line(2, 2)}\n", 2, "cycle 2 -> 2 (each word's HEAD is the next)"),
    (f"{line(1, 0)}\n{line(2, 1)}\n{line(3, 0)}\n", 3,
     "2 roots (words 1, 3 have HEAD 0); UD requires exactly one"),
    (f"{WORD_1}\n{WORD_2}\n\n# sent_id = 2\n# text = nothing\n", 4, "sentence has no words"),
    (b"", 1, "empty file, no sentence"),
    (b"\n\n", 1, "empty file, no sentence"),
])
def test_malformed_input_is_reported_at_file_and_line(tmp_path, content, line_number, what):
    path = write(tmp_path, "bad.conllu", content)
    with pytest.raises(ConlluError) as caught:
        read_conllu(path)
    assert str(caught.value) == f"{path}:{line_number}: {what}"
    assert (caught.value.path, caught.value.line) == (str(path), line_number)


def test_missing_file(tmp_path):
    with pytest.raises(ConlluError, match=r"^.*missing\.conllu: no such file$"):
        read_conllu(tmp_path / "missing.conllu")


def test_skip_invalid_keeps_the_valid_sentences(tmp_path):
    path = write(tmp_path, "mixed.conllu",
                 f"{line(1, 0)}\n\n{line(1, 2)}\n{line(2, 1)}\n\n{line(1, 0)}\n{line(2, 1)}\n")
    sentences, errors = read_conllu(path, skip_invalid=True)
    assert [s.line for s in sentences] == [1, 6]
    assert [str(e) for e in errors] == [f"{path}:3: no root (no word has HEAD 0)"]
    with pytest.raises(ConlluError, match=":3: no root"):
        read_conllu(path)


def test_skip_invalid_still_raises_for_the_whole_file(tmp_path):
    path = write(tmp_path, "latin1.conllu", f"{line(1, 0)}\n".encode() + b"# caf\xe9\n")
    with pytest.raises(ConlluError, match=":2: invalid UTF-8"):
        read_conllu(path, skip_invalid=True)
