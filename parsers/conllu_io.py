"""Reading and writing CoNLL-U (universaldependencies.org/format.html), keeping every byte.

A parser only ever changes the HEAD and DEPREL of syntactic words, so a `Sentence` keeps its raw
lines (comments, multiword token lines `1-2`, empty nodes `3.1` and all other columns) and
`write_conllu` rewrites columns 7 and 8 of the word lines only: reading a file and writing it back
gives the same bytes, and a parsed file differs from its input in exactly those two columns. (Text
read by `parsers.text_io`, which has no tags, is also written with the UPOS and XPOS of a tagger.)

Malformed input raises `ConlluError` naming the file and line, e.g. `dev.conllu:17: HEAD 9 out of
range 0..8`. The `conllu` package parses the ID and HEAD fields (its grammar of `1`, `1-2`, `3.1`);
the line bookkeeping it does not offer is done here. Only what is used is validated: input to be
parsed (`require_trees=False`) may have anything in HEAD, DEPREL and DEPS (a tagger's output has `_`).

Windows line endings and a UTF-8 byte-order mark are accepted, with a `ConlluWarning` (the CLI
prints it as one line); the lines are read without them, so what is written back ends in LF.

The path "-" is standard input when reading (named `<stdin>` in messages) and standard output when
writing, as in most command-line tools; a file named "-" is `./-`.
"""
from __future__ import annotations

import functools
import os
import sys
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from conllu.parser import ParseException, parse_id_value, parse_int_value

from parsers import trees
from stackparse.config import atomic_write
from stackparse.errors import UserError

N_COLUMNS = 10
STDIO = "-"
"""The path that means standard input (reading) or standard output (writing)."""
UPOS_COLUMN, XPOS_COLUMN, HEAD_COLUMN, DEPREL_COLUMN = 3, 4, 6, 7   # 0-based: columns 4, 5, 7 and 8

# The same few hundred ID and HEAD strings recur on every line of a treebank; caching the conllu
# parsers' results halves the time to read EWT train (their regex calls dominate it).
_parse_id = functools.lru_cache(maxsize=4096)(parse_id_value)
_parse_head = functools.lru_cache(maxsize=4096)(parse_int_value)


class ConlluWarning(UserWarning):
    """Input that was read, but not as written (line endings, a byte-order mark)."""


class ConlluError(UserError):
    """Malformed CoNLL-U input; the message is `path:line: what is wrong` (or `path: ...`)."""

    def __init__(self, path: str | os.PathLike, line: int | None, what: str):
        self.path, self.line, self.what = str(path), line, what
        super().__init__(f"{path}: {what}" if line is None else f"{path}:{line}: {what}")


@dataclass(frozen=True)
class Word:
    """A syntactic word (a line with an integer ID); `line` is its 1-based line in the input file
    (for pre-tokenized text, `parsers.text_io`, the line of its sentence)."""
    id: int
    form: str
    lemma: str
    upos: str
    xpos: str
    feats: str
    head: int
    deprel: str
    deps: str
    misc: str
    line: int


NO_HEAD = -1
"""`Word.head` of input read without trees, whose HEAD column is not used (`_`, say)."""


@dataclass
class Sentence:
    """One sentence: its raw lines (no newline) from line `line` of `path`, and its words.

    Word i (1-based, as in HEAD) is `words[i - 1]`; the lists `heads` and `deprels` follow the
    head-list convention of `parsers.trees` (index 0 is ROOT), `forms` and `upos` do not.
    """
    path: str
    line: int
    lines: list[str]
    words: list[Word]

    @property
    def heads(self) -> list[int]:
        """Gold heads, length n + 1, `heads[0] == -1`."""
        return [-1] + [word.head for word in self.words]

    @property
    def deprels(self) -> list[str]:
        """Gold dependency relations, length n + 1, `deprels[0] == ""`."""
        return [""] + [word.deprel for word in self.words]

    @property
    def forms(self) -> list[str]:
        """Word forms, length n (word i is `forms[i - 1]`)."""
        return [word.form for word in self.words]

    @property
    def upos(self) -> list[str]:
        """Universal part-of-speech tags, length n (word i is `upos[i - 1]`)."""
        return [word.upos for word in self.words]


def read_conllu(path: str | os.PathLike, skip_invalid: bool = False, require_trees: bool = True
                ) -> tuple[list[Sentence], list[ConlluError]]:
    """Read and validate a CoNLL-U file.

    Every sentence must have words with IDs 1..n in order and ten columns; with `require_trees`, integer
    HEADs in 0..n that form a tree with exactly one word attached to ROOT, as UD requires. Sentences
    end at a blank line or at the end of the file.

    Args:
        path: the file, or "-" for standard input.
        skip_invalid: leave out invalid sentences and return their errors instead of raising the
            first. Errors about the whole file (unreadable, invalid UTF-8, empty) always raise.
        require_trees: read and check the trees; False for input to be parsed, whose HEAD and DEPREL are not
            used (their words' `head` is NO_HEAD).

    Returns:
        The valid sentences in file order, and the errors of the skipped sentences (empty unless
        `skip_invalid`).

    Raises:
        ConlluError: the file is missing, unreadable, not UTF-8, has no sentence, or (unless
            `skip_invalid`) has an invalid sentence.
    """
    text = _read_text(path)
    path = input_name(path)
    sentences: list[Sentence] = []
    errors: list[ConlluError] = []
    for first_line, lines in _blocks(text):
        try:
            sentences.append(_parse_sentence(path, first_line, lines, require_trees))
        except ConlluError as error:
            if not skip_invalid:
                raise
            errors.append(error)
    if not sentences and not errors:
        raise ConlluError(path, 1, "empty file, no sentence")
    return sentences, errors


def input_name(path: str | os.PathLike) -> str:
    """How messages name an input: its path, or `<stdin>` for "-"."""
    return "<stdin>" if str(path) == STDIO else str(path)


def read_bytes(path: str | os.PathLike) -> bytes:
    """The bytes of a file, or of standard input for "-"; ConlluError if it cannot be read."""
    try:
        return sys.stdin.buffer.read() if str(path) == STDIO else Path(path).read_bytes()
    except FileNotFoundError:
        raise ConlluError(path, None, "no such file") from None
    except OSError as error:
        raise ConlluError(input_name(path), None, f"cannot read: {error.strerror}") from None


def _read_text(path: str | os.PathLike) -> str:
    """The file's text; a bad byte is reported at its line, which a text-mode read cannot do."""
    data = read_bytes(path)
    path = input_name(path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise ConlluError(path, line, f"invalid UTF-8 (byte {data[error.start]:#04x})") from None
    if text.startswith("\ufeff"):
        warnings.warn(ConlluWarning(f"{path}: a UTF-8 byte-order mark, ignored"), stacklevel=3)
        text = text[1:]
    if "\r\n" in text:
        warnings.warn(ConlluWarning(f"{path}: Windows line endings (CRLF), read as LF"), stacklevel=3)
        text = text.replace("\r\n", "\n")
    return text


def _blocks(text: str) -> Iterator[tuple[int, list[str]]]:
    """Yield (first line number, lines) for each run of non-empty lines."""
    lines = text.split("\n")
    start = None
    for number, line in enumerate(lines, start=1):
        if line and start is None:
            start = number
        elif not line and start is not None:
            yield start, lines[start - 1:number - 1]
            start = None
    if start is not None:   # the last sentence may lack its blank line
        yield start, lines[start - 1:]


def _parse_sentence(path: str, first_line: int, lines: list[str], require_trees: bool = True) -> Sentence:
    """One sentence from its raw lines, validated; raises ConlluError at the first problem."""
    words: list[Word] = []
    for number, line in enumerate(lines, start=first_line):
        if line.startswith("#"):
            continue
        columns = line.split("\t")
        if len(columns) != N_COLUMNS:
            raise ConlluError(path, number,
                              f"expected {N_COLUMNS} tab-separated columns, found {len(columns)}")
        word_id = _parse_field(path, number, "ID", columns[0], _parse_id)
        if not isinstance(word_id, int):   # a multiword token (1, "-", 2) or an empty node (3, ".", 1)
            continue
        if word_id != len(words) + 1:
            what = "duplicate" if 1 <= word_id <= len(words) else "out of order"
            raise ConlluError(path, number, f"word ID {word_id} {what}: expected {len(words) + 1}")
        head = _parse_field(path, number, "HEAD", columns[HEAD_COLUMN], _parse_head) if require_trees else NO_HEAD
        words.append(Word(word_id, *columns[1:HEAD_COLUMN], head, *columns[DEPREL_COLUMN:], number))
    if not words:
        raise ConlluError(path, first_line, "sentence has no words")
    if require_trees:
        _check_tree(path, first_line, words)
    return Sentence(path, first_line, lines, words)


def _parse_field(path: str, number: int, name: str, value: str, parse):
    """`parse(value)` from the conllu package, with its errors (and "_") as a ConlluError."""
    try:
        parsed = parse(value)
    except ParseException:
        parsed = None
    if parsed is None:
        raise ConlluError(path, number, f"invalid {name} {value!r}")
    return parsed


def _check_tree(path: str, first_line: int, words: list[Word]) -> None:
    """Raise ConlluError unless the HEADs form a tree with exactly one root."""
    n = len(words)
    for word in words:
        if not 0 <= word.head <= n:
            raise ConlluError(path, word.line, f"HEAD {word.head} out of range 0..{n}")
    heads = [-1] + [word.head for word in words]
    root_words = trees.roots(heads)
    if not root_words:
        raise ConlluError(path, first_line, "no root (no word has HEAD 0)")
    if len(root_words) > 1:
        raise ConlluError(path, words[root_words[1] - 1].line,
                          f"{len(root_words)} roots (words {', '.join(map(str, root_words))} have "
                          f"HEAD 0); UD requires exactly one")
    cycle = trees.find_cycle(heads)
    if cycle:
        loop = " -> ".join(map(str, cycle + cycle[:1]))
        raise ConlluError(path, words[cycle[0] - 1].line,
                          f"cycle {loop} (each word's HEAD is the next)")


def write_conllu(out: str | os.PathLike | TextIO, sentences: list[Sentence],
                 heads: list[list[int]] | None = None,
                 deprels: list[list[str]] | None = None, upos: list[list[str]] | None = None,
                 xpos: list[list[str]] | None = None) -> None:
    """Write sentences as CoNLL-U, optionally with new heads, relations and tags.

    Each sentence is written as its raw lines followed by one blank line; only the columns given
    (HEAD, DEPREL, UPOS, XPOS) of the syntactic word lines are replaced. A file with one blank line
    after every sentence (as UD releases are) is therefore written back byte for byte.

    Args:
        out: a path (written atomically; its directory must exist), "-" for standard output, or an
            open text stream.
        sentences: the sentences, as read by `read_conllu`.
        heads: one list per sentence, length n + 1 with index 0 for ROOT (ignored), or None to keep
            the HEADs read.
        deprels: likewise for DEPREL.
        upos: one list per sentence, length n (word i at index i - 1, as `Sentence.upos`), or None
            to keep the UPOS read; for pre-tokenized text, the tags a tagger gave.
        xpos: likewise for XPOS.

    Raises:
        ValueError: heads, deprels or tags do not match the sentences in number or length.
    """
    given = {"heads": heads, "deprels": deprels, "upos": upos, "xpos": xpos}
    for name, values in given.items():
        if values is not None and len(values) != len(sentences):
            raise ValueError(f"{len(sentences)} sentences but {len(values)} lists of {name}")
    text = "".join(
        _format_sentence(sentence, *(None if values is None else values[index] for values in given.values()))
        for index, sentence in enumerate(sentences))
    if str(out) == STDIO:     # as UTF-8 whatever the locale: CoNLL-U is UTF-8
        sys.stdout.flush()
        sys.stdout.buffer.write(text.encode("utf-8"))
        sys.stdout.buffer.flush()
    elif isinstance(out, (str, os.PathLike)):
        atomic_write(out, lambda tmp: Path(tmp).write_text(text, encoding="utf-8", newline="\n"), make_parents=False)
    else:
        out.write(text)


def _format_sentence(sentence: Sentence, heads: list[int] | None, deprels: list[str] | None,
                     upos: list[str] | None = None, xpos: list[str] | None = None) -> str:
    """The sentence's lines with the columns given replaced, and its closing blank line."""
    n = len(sentence.words)
    new = {}    # column -> its n new values, word i's at i - 1
    for column, values, root in ((HEAD_COLUMN, heads, 1), (DEPREL_COLUMN, deprels, 1), (UPOS_COLUMN, upos, 0),
                                 (XPOS_COLUMN, xpos, 0)):
        if values is None:
            continue
        if len(values) != n + root:
            raise ValueError(f"{sentence.path}:{sentence.line}: sentence has {n} words, got {len(values)} values "
                             f"({'n + 1' if root else 'n'} expected)")
        new[column] = values[root:]
    lines = sentence.lines
    if new:
        lines = list(lines)
        for k, row in enumerate(_word_rows(lines)):
            columns = lines[row].split("\t")
            for column, values in new.items():
                columns[column] = str(values[k])
            lines[row] = "\t".join(columns)
    return "\n".join(lines) + "\n\n"


def _word_rows(lines: list[str]) -> list[int]:
    """Indices of the syntactic word lines (integer IDs) among a sentence's lines, in order.

    Found from the lines rather than from `Word.line`: the words of pre-tokenized text all have the
    line of their sentence in the input, which is not their row in the CoNLL-U written.
    """
    return [row for row, line in enumerate(lines)
            if line[:1].isdigit() and isinstance(_parse_id(line.split("\t", 1)[0]), int)]
