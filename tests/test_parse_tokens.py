"""`parse --format tokens`: pre-tokenized text in (a file or standard input), valid CoNLL-U out.

"Valid" is checked by `format_errors`: the UD validator's level-1 rules and level 2's format, tree and
metadata rules, written from UniversalDependencies/tools (udtools, `level1.py` and `level2.py`; not on
PyPI). Text has no tags, so the output's UPOS and XPOS are the model's tagger's.
"""
from __future__ import annotations

import re
import unicodedata

import pytest
from click.testing import CliRunner

import cli
from parsers.conllu_io import ConlluError, read_conllu, write_conllu
from parsers.text_io import read_tokens
from tests.parsers_fixtures import SMALL_CONLLU, write

# The 17 UD part-of-speech tags (universaldependencies.org/u/pos).
UPOS = set("ADJ ADP ADV AUX CCONJ DET INTJ NOUN NUM PART PRON PROPN PUNCT SCONJ SYM VERB X".split())
# udtools' regular expressions (utils.CompiledRegexes), for the rules below.
SENT_ID = re.compile(r"#\s*sent_id\s*=\s*(\S+)")
TEXT = re.compile(r"#\s*text\s*=\s*(.*)")
HEAD = re.compile(r"0|[1-9][0-9]*")
DEPREL = re.compile(r"[a-z]+(:[a-z]+)?")
WORD_ID = re.compile(r"[1-9][0-9]*")
FEATURE = re.compile(r"[A-Z][A-Za-z0-9]*(\[[a-z0-9]+\])?=[A-Z0-9][A-Za-z0-9]*(,[A-Z0-9][A-Za-z0-9]*)*")
NO_WHITESPACE = (0, 3, 4, 5, 6, 7, 8)      # ID, UPOS, XPOS, FEATS, HEAD, DEPREL, DEPS

# A tiny parser: seconds to train on two sentences; what it predicts does not matter here, only
# that it writes a tree and tags. Seed 1 (train-parser's default), given for the record. The tagger
# needs a sentence BiLSTM (--context-layers 1).
TINY_PARSER = ["--epochs", "1", "--batch-size", "4", "--word-dim", "4", "--upos-dim", "2", "--char-hidden", "0",
               "--token-dim", "4", "--context-dim", "4", "--tagger-dim", "4", "--lstm-dim", "4", "--lstm-layers", "1",
               "--state-dim", "4", "--action-dim", "2", "--rel-dim", "2", "--seed", "1", "--quiet"]


def format_errors(text: str) -> list[str]:
    """The UD validator's complaints about CoNLL-U `text` at levels 1 and 2, as `line N: rule`; empty
    when valid."""
    if not text.endswith("\n"):
        return ["end: missing empty line after the last sentence (or no newline)"]
    errors, block, seen_ids = [], [], set()
    for number, line in enumerate(text[:-1].split("\n"), start=1):
        if "\r" in line:
            errors.append(f"line {number}: non-unix-newline")
        if unicodedata.normalize("NFC", line) != line:
            errors.append(f"line {number}: unicode-normalization")
        if line and not line.strip():
            errors.append(f"line {number}: pseudo-empty-line")
        elif line:
            block.append((number, line))
        elif not block:
            errors.append(f"line {number}: extra-empty-line")
        else:
            errors += _sentence_errors(block, seen_ids)
            block = []
    if block:
        errors.append(f"line {block[-1][0]}: missing-empty-line")
    return errors


def _sentence_errors(block: list[tuple[int, str]], seen_ids: set[str]) -> list[str]:
    """Level 1 and 2 rules for one sentence: (line number, line) pairs, comments first."""
    head = next((i for i, (_, line) in enumerate(block) if not line.startswith("#")), len(block))
    comments = [line for _, line in block[:head]]
    rows = [(number, line.split("\t")) for number, line in block[head:] if not line.startswith("#")]
    errors = [f"line {number}: misplaced-comment" for number, line in block[head:] if line.startswith("#")]
    errors += [f"line {number}: invalid-line" for number, line in block[head:] if not line[0].isdigit()
               and not line.startswith("#")]
    for number, cols in rows:
        errors += [f"line {number}: {e}" for e in _column_errors(cols)]
    if errors:
        return errors
    words = [cols for _, cols in rows if WORD_ID.fullmatch(cols[0])]
    first = rows[0][0] if rows else block[0][0]
    if [int(cols[0]) for cols in words] != list(range(1, len(words) + 1)) or not words:
        return [f"line {first}: word-id-sequence"]
    return [f"line {first}: {e}" for e in _tree_errors(words) + _metadata_errors(comments, words, seen_ids)]


def _column_errors(cols: list[str]) -> list[str]:
    """Level 1's rules for one token line, and level 2's for its columns."""
    if len(cols) != 10:
        return ["number-of-columns"]
    errors = []
    for index, value in enumerate(cols):
        if not value:
            errors.append(f"empty-column {index + 1}")
        elif index in NO_WHITESPACE and re.search(r"\s", value):
            errors.append(f"invalid-whitespace in column {index + 1}")
        elif value[0].isspace() or value[-1].isspace() or re.search(r"\s\s", value):
            errors.append(f"leading, trailing or repeated whitespace in column {index + 1}")
    if not WORD_ID.fullmatch(cols[0]):
        return errors + [f"invalid-word-id {cols[0]!r}"]      # (no multiword tokens nor empty nodes here)
    if cols[3] not in UPOS:
        errors.append(f"unknown-upos {cols[3]!r}")
    if cols[5] != "_" and not all(FEATURE.fullmatch(f) for f in cols[5].split("|")):
        errors.append(f"invalid-feature {cols[5]!r}")
    if not HEAD.fullmatch(cols[6]):
        errors.append(f"invalid-head {cols[6]!r}")
    if not DEPREL.fullmatch(cols[7]):
        errors.append(f"invalid-deprel {cols[7]!r}")
    return errors


def _tree_errors(words: list[list[str]]) -> list[str]:
    """Level 2: HEADs within the sentence, no self-loop, exactly one root, a tree."""
    heads = [int(cols[6]) for cols in words]
    if any(head > len(words) for head in heads):
        return ["unknown-head"]
    if any(head == i for i, head in enumerate(heads, start=1)):
        return ["head-self-loop"]
    if heads.count(0) != 1:
        return [f"multiple-roots or none ({heads.count(0)} words with HEAD 0)"]
    for word in range(1, len(heads) + 1):
        seen = set()
        while word and word not in seen:
            seen.add(word)
            word = heads[word - 1]
        if word:
            return ["non-tree (a cycle)"]
    return []


def _metadata_errors(comments: list[str], words: list[list[str]], seen_ids: set[str]) -> list[str]:
    """Level 2: one unique sent_id without a slash; one `# text` that the FORMs and SpaceAfter=No spell."""
    errors = []
    ids = [m.group(1) for c in comments if (m := SENT_ID.fullmatch(c))]
    if len(ids) != 1 or ids[0] in seen_ids or "/" in ids[0]:
        errors.append(f"missing, multiple, repeated or slashed sent-id {ids}")
    seen_ids.update(ids)
    texts = [m.group(1) for c in comments if (m := TEXT.fullmatch(c))]
    if len(texts) != 1 or not texts[0] or texts[0][-1].isspace():
        return errors + [f"missing, multiple, empty or space-ended text {texts}"]
    rest = texts[0]
    for cols in words:
        if not rest.startswith(cols[1]):
            return errors + [f"text-form-mismatch at word {cols[0]}"]
        rest = rest[len(cols[1]):]
        if "SpaceAfter=No" not in cols[9].split("|"):
            if rest and not rest[0].isspace():
                return errors + [f"missing-spaceafter at word {cols[0]}"]
            rest = rest.lstrip()
    return errors + ([f"text-extra-chars {rest!r}"] if rest else [])


def cli_run(*args, input: bytes | None = None):
    """`python cli.py ARGS` in-process with `input` on standard input: click's Result, whose
    `stdout` is the CoNLL-U written to `-o -` and `stderr` the messages."""
    return CliRunner().invoke(cli.main, [str(a) for a in args], input=input)


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    """A tiny parser trained on two sentences: its run directory."""
    d = tmp_path_factory.mktemp("tokens")
    treebank = write(d, "t.conllu", SMALL_CONLLU + "\n\n")
    result = cli_run("train-parser", treebank, "--dev", treebank, "--out", d / "run", "--context-layers", "1",
                     *TINY_PARSER)
    assert result.exit_code == 0, result.output
    return d / "run"


# --- the checker checks ---------------------------------------------------------------------------

def test_the_format_checker_accepts_ud_and_rejects_what_the_validator_rejects():
    ud = SMALL_CONLLU.split("\n\n")[0] + "\n\n"
    assert format_errors(ud) == []
    broken = {
        "missing-empty-line": ud[:-1],
        "extra-empty-line": ud + "\n",
        "number-of-columns": ud.replace("\tdog\t", "\t"),
        "empty-column": ud.replace("\tdog\t", "\t\t"),
        "invalid-head": ud.replace("\t2\tnsubj", "\t_\tnsubj"),
        "multiple-roots": ud.replace("\t2\tnsubj", "\t0\tnsubj"),
        "non-tree": ud.replace("\t0\troot", "\t1\troot").replace("\t2\tpunct", "\t0\tpunct"),
        "sent-id": ud.replace("# sent_id = 1\n", ""),
        "text-form-mismatch": ud.replace("Dogs bark.", "Dogs barked."),
        "missing-spaceafter": ud.replace("SpaceAfter=No", "_"),
        "unicode-normalization": ud.replace("Dogs", "Doe\u0301s"),
        "misplaced-comment": ud.replace("3\t.", "# late\n3\t."),
        "word-id-sequence": ud.replace("3\t.\t.", "4\t.\t."),
        "invalid-deprel": ud.replace("\tnsubj\t", "\t_\t"),
        "pseudo-empty-line": ud[:-1] + " \n",
        "unknown-upos": ud.replace("\tNOUN\t", "\t_\t"),
    }
    for rule, text in broken.items():
        assert any(rule in e for e in format_errors(text)), (rule, format_errors(text))


# --- reading tokens (no model) ----------------------------------------------------------------------

def test_each_non_blank_line_is_a_sentence_numbered_by_its_line(tmp_path):
    path = write(tmp_path, "in.txt", "The cat  sat .\n\n   \t\nIt\tpurred\u00a0loudly\u3000!\n")
    sentences = read_tokens(path)
    assert [s.forms for s in sentences] == [["The", "cat", "sat", "."], ["It", "purred", "loudly", "!"]]
    assert [s.line for s in sentences] == [1, 4]
    assert sentences[1].lines[:2] == ["# sent_id = 4", "# text = It purred loudly !"]
    assert sentences[1].lines[2] == "1\tIt\t_\t_\t_\t_\t_\t_\t_\t_"
    assert all(w.line == 4 and w.upos == "_" for w in sentences[1].words)


def test_a_bom_crlf_and_decomposed_letters_are_read_as_nfc_text(tmp_path):
    path = write(tmp_path, "in.txt", b"\xef\xbb\xbfcafe\xcc\x81 ok\r\nno \r\n")
    sentences = read_tokens(path)
    assert [s.forms for s in sentences] == [["caf\u00e9", "ok"], ["no"]]
    assert sentences[0].lines[1] == "# text = caf\u00e9 ok"


@pytest.mark.parametrize("content, line, what", [
    (b"fine\nsome \xe9t\xe9 words\n", 2, "invalid UTF-8 (byte 0xe9 at column 6); convert the input to UTF-8 first"),
    (b"\xc3\xa9 \xc3\xa9 \xff\n", 1, "invalid UTF-8 (byte 0xff at column 5); convert the input to UTF-8 first"),
    (b"ok\nnul\x00here\n", 2, "control character U+0000 at column 4; a token must be printable text"),
    (b"esc \x1b[0m\n", 1, "control character U+001B at column 5; a token must be printable text"),
])
def test_bad_bytes_are_reported_at_line_and_column(tmp_path, content, line, what):
    path = write(tmp_path, "bad.txt", content)
    with pytest.raises(ConlluError) as caught:
        read_tokens(path)
    assert str(caught.value) == f"{path}:{line}: {what}"


@pytest.mark.parametrize("content", [b"", b"\n\n", b" \t \r\n\r\n", b"\xef\xbb\xbf\n"])
def test_input_without_a_token_is_an_error(tmp_path, content):
    path = write(tmp_path, "empty.txt", content)
    with pytest.raises(ConlluError, match=r": no sentence: the input is empty or every line is blank$"):
        read_tokens(path)


def test_heads_go_to_the_word_lines_of_tokens_and_of_conllu(tmp_path):
    # write_conllu finds the word lines by their IDs, not by Word.line: a token's Word.line is its
    # input line, and CoNLL-U has multiword-token and empty-node lines between its words.
    tokens = read_tokens(write(tmp_path, "in.txt", "\n\nDogs bark .\n"))
    conllu, _ = read_conllu(write(tmp_path, "in.conllu", SMALL_CONLLU + "\n\n"), require_trees=False)
    for sentences in (tokens, conllu):
        heads = [[-1] + [0] + [1] * (len(s.words) - 1) for s in sentences]
        deprels = [[""] + ["root"] + ["dep"] * (len(s.words) - 1) for s in sentences]
        out = tmp_path / "out.conllu"
        write_conllu(out, sentences, heads, deprels)
        written, _ = read_conllu(out)
        assert [s.heads for s in written] == heads and [s.deprels for s in written] == deprels
        for before, after in zip(sentences, written):
            assert len(before.lines) == len(after.lines)
            for old, new in zip(before.lines, after.lines):
                a, b = old.split("\t"), new.split("\t")
                assert a[:6] + a[8:] == b[:6] + b[8:]      # comments, MWT and empty-node lines: all of it


# --- the command ---------------------------------------------------------------------------------------

RAW = ("The cat sat on the mat .\n"
       "\n"
       "  Dogs   bark\tloudly !  \n"
       "caf\u00e9 \u00ab au lait \u00bb , s'il vous pla\u00eet\n"
       "_ # 1-2 3.1 -- \u2014 \U0001F600\n")


def test_raw_lines_give_valid_conllu(model, tmp_path):
    result = cli_run("parse", model, write(tmp_path, "raw.txt", RAW), "--format", "tokens",
                     "-o", tmp_path / "out.conllu", "--quiet")
    assert result.exit_code == 0, result.output
    assert "parsed 4 sentences, 27 words" in result.stderr
    text = (tmp_path / "out.conllu").read_text(encoding="utf-8")
    assert format_errors(text) == []
    sentences, _ = read_conllu(tmp_path / "out.conllu")       # and it reads back as trees
    assert [s.lines[0] for s in sentences] == [f"# sent_id = {n}" for n in (1, 3, 4, 5)]
    assert sentences[1].lines[1] == "# text = Dogs bark loudly !"
    assert sentences[3].forms == ["_", "#", "1-2", "3.1", "--", "\u2014", "\U0001F600"]


def test_standard_input_and_output(model, tmp_path):
    piped = cli_run("parse", model, "-", "--format", "tokens", "-o", "-", "--quiet", input=RAW.encode())
    assert piped.exit_code == 0, piped.output
    cli_run("parse", model, write(tmp_path, "raw.txt", RAW), "--format", "tokens", "-o", tmp_path / "f.conllu")
    assert piped.stdout == (tmp_path / "f.conllu").read_text(encoding="utf-8")
    assert "-> standard output" in piped.stderr and "Traceback" not in piped.output
    # CoNLL-U, the default format, reads standard input too (and is named <stdin> in its errors).
    again = cli_run("parse", model, "-", "-o", "-", "--quiet", input=piped.stdout.encode())
    assert again.exit_code == 0 and again.stdout == piped.stdout
    bad = cli_run("parse", model, "-", "-o", "-", input=b"1\tx\n")
    assert (bad.exit_code, bad.stderr) == (2, "error: <stdin>:1: expected 10 tab-separated columns, found 2\n")


def test_a_line_of_2000_tokens_is_one_sentence(model, tmp_path):
    tokens = " ".join(f"w{i % 50}" for i in range(2000))
    result = cli_run("parse", model, "-", "--format", "tokens", "-o", tmp_path / "long.conllu", "--quiet",
                     input=f"short one\n{tokens}\n".encode())
    assert result.exit_code == 0, result.output
    assert format_errors((tmp_path / "long.conllu").read_text()) == []
    sentences, _ = read_conllu(tmp_path / "long.conllu")
    assert [len(s.words) for s in sentences] == [2, 2000]


@pytest.mark.parametrize("content, message", [
    (b"fine\nbad \xff byte\n",
     "error: <stdin>:2: invalid UTF-8 (byte 0xff at column 5); convert the input to UTF-8 first\n"),
    (b"\n \n", "error: <stdin>: no sentence: the input is empty or every line is blank\n"),
    (b"a\x07b\n", "error: <stdin>:1: control character U+0007 at column 2; a token must be printable text\n"),
])
def test_bad_input_is_one_line_and_exit_status_2(model, content, message):
    result = cli_run("parse", model, "-", "--format", "tokens", "-o", "-", input=content)
    assert (result.exit_code, result.stderr, result.stdout) == (2, message, "")
    assert "Traceback" not in result.output


def test_bad_files_name_the_file(model, tmp_path):
    bad = write(tmp_path, "latin1.txt", "r\u00e9sum\u00e9\n".encode("latin-1"))
    result = cli_run("parse", model, bad, "--format", "tokens", "-o", tmp_path / "o.conllu")
    assert result.exit_code == 2 and result.stderr.startswith(f"error: {bad}:1: invalid UTF-8 (byte 0xe9 at column 2)")
    assert not (tmp_path / "o.conllu").exists()
    missing = cli_run("parse", model, tmp_path / "nope.txt", "--format", "tokens", "-o", tmp_path / "o.conllu")
    assert (missing.exit_code, missing.stderr) == (2, f"error: {tmp_path / 'nope.txt'}: no such file\n")
    no_dir = cli_run("parse", model, write(tmp_path, "ok.txt", "ok\n"), "--format", "tokens",
                     "-o", tmp_path / "no" / "o.conllu")
    assert no_dir.exit_code == 2 and "no such directory" in no_dir.stderr


def test_help_documents_the_format():
    help_text = " ".join(cli_run("parse", "--help").output.split())
    for phrase in ("--format [conllu|tokens]", "one sentence per line", "runs of whitespace",
                   "Blank lines are skipped", "its line number", "joined by single spaces", "NFC",
                   "standard input", "- for standard output"):
        assert phrase in help_text, phrase


def test_a_model_without_a_tagger_refuses_text_in_one_line(tmp_path):
    treebank = write(tmp_path, "t.conllu", SMALL_CONLLU + "\n\n")
    trained = cli_run("train-parser", treebank, "--dev", treebank, "--out", tmp_path / "run", "--no-tagger",
                      "--context-layers", "0", *TINY_PARSER)
    assert trained.exit_code == 0, trained.output
    result = cli_run("parse", tmp_path / "run", "-", "--format", "tokens", "-o", "-", input=b"Dogs bark .\n")
    assert result.exit_code == 2 and result.stdout == "" and "Traceback" not in result.output
    assert result.stderr.startswith("error: <stdin>:1: ") and "no tagger" in result.stderr
