"""Reading pre-tokenized text: one sentence per line, tokens separated by whitespace.

`parse --format tokens` reads this; what it writes is CoNLL-U. Each sentence becomes the `Sentence`
that `read_conllu` would give for

    # sent_id = 7
    # text = The cat sat .
    1	The	_	_	_	_	_	_	_	_
    2	cat	_	_	_	_	_	_	_	_
    ...

so `write_conllu` fills in HEAD and DEPREL as for any other input (and `parse` the UPOS and XPOS
its tagger predicts: UD requires a UPOS). The choices, and why:

* Tokens are separated by runs of whitespace as Python's `str.split()` sees it: spaces, tabs and the
  other Unicode spaces (no-break space, U+3000, ...). The UD validator accepts a space inside a FORM
  only for the words its language lists (level 4), so no token keeps one.
* Blank and whitespace-only lines are skipped: plain text often separates paragraphs that way, and a
  sentence cannot be empty. `sent_id` is the input's line number, not a count, so an output sentence
  leads straight back to its input line (`sed -n 7p`); sent_ids need only be unique.
* `# text` is the tokens joined by single spaces: where the original had no space (`cat.`), or
  several, is not known from tokens, so MISC has no SpaceAfter=No and the text matches the forms as
  the validator checks them.
* Tokens are normalised to Unicode NFC, which the validator requires of every line (and which the
  treebanks a model learns its words from use); NFC changes no character's meaning.
* A control character (category Cc, other than the whitespace above; a NUL, say) is an error at its
  line and column: it is not text, and a FORM that carries one breaks the tools downstream.
* The input must be UTF-8; a byte that is not is an error at its line and column (convert the file
  first, e.g. `iconv -f latin1 -t utf-8`). A byte-order mark is dropped and CRLF line ends are
  read as LF, silently: the output is a new file in another format, so nothing of the input's bytes
  is kept that could differ (unlike `read_conllu`, which warns).
* There is no length limit: a line of thousands of tokens is one sentence (the parser decodes a
  sentence longer than 1,000 words on its own; BENCHMARKS.md, "Long sentences").
"""
from __future__ import annotations

import os
import re
import unicodedata

from parsers.conllu_io import NO_HEAD, ConlluError, Sentence, Word, input_name, read_bytes

EMPTY = "_"
"""The value of every column the input does not give (LEMMA, UPOS, ..., MISC)."""

# Control characters that `str.split()` leaves inside tokens: C0 and C1 controls less whitespace.
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1b\x7f-\x84\x86-\x9f]")


def read_tokens(path: str | os.PathLike) -> list[Sentence]:
    """Read pre-tokenized text, one sentence per non-blank line, as sentences to parse.

    Args:
        path: the file, or "-" for standard input (named `<stdin>` in messages).

    Returns:
        One sentence per non-blank line, in order: words with ID and FORM (every other column `_`,
        `head` NO_HEAD), lines `# sent_id = LINE`, `# text = ...` and the word lines.

    Raises:
        ConlluError: the file is missing or unreadable, a byte is not UTF-8, a token has a control
            character, or no line has a token (`path:line: what`, or `path: what`).
    """
    name = input_name(path)
    text = _decode(read_bytes(path), name)
    sentences = [_sentence(name, number, tokens)
                 for number, line in enumerate(text.split("\n"), start=1)
                 if (tokens := _tokens(name, number, line))]
    if not sentences:
        raise ConlluError(name, None, "no sentence: the input is empty or every line is blank")
    return sentences


def _decode(data: bytes, name: str) -> str:
    """The text of `data`, without a byte-order mark and with LF line ends; bad UTF-8 is reported
    at its line and column (in characters, 1-based), which a text-mode read cannot do."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        start = data.rfind(b"\n", 0, error.start) + 1
        column = len(data[start:error.start].decode("utf-8")) + 1   # the bytes before the bad one are valid
        raise ConlluError(name, data.count(b"\n", 0, error.start) + 1,
                          f"invalid UTF-8 (byte {data[error.start]:#04x} at column {column}); "
                          f"convert the input to UTF-8 first") from None
    return text.removeprefix("\ufeff").replace("\r\n", "\n")


def _tokens(name: str, number: int, line: str) -> list[str]:
    """The line's tokens in NFC; a control character is a ConlluError at its column."""
    bad = _CONTROL.search(line)
    if bad:
        raise ConlluError(name, number, f"control character U+{ord(bad.group()):04X} at column {bad.start() + 1}; "
                          f"a token must be printable text")
    return [unicodedata.normalize("NFC", token) for token in line.split()]


def _sentence(name: str, number: int, tokens: list[str]) -> Sentence:
    """The sentence of input line `number`: every word is on that line of the input."""
    lines = [f"# sent_id = {number}", f"# text = {' '.join(tokens)}"]
    lines += ["\t".join([str(i), form] + [EMPTY] * 8) for i, form in enumerate(tokens, start=1)]
    words = [Word(i, form, EMPTY, EMPTY, EMPTY, EMPTY, NO_HEAD, EMPTY, EMPTY, EMPTY, number)
             for i, form in enumerate(tokens, start=1)]
    return Sentence(name, number, lines, words)
