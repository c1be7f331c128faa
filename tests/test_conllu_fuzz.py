"""A thousand malformed or odd CoNLL-U files (seeded): every command that reads one either works or
says `file:line: what is wrong` in one line; none ends in a traceback (issue 17)."""
from __future__ import annotations

import re

import numpy as np
import pytest

from tests.cli_runner import invoke
from tests.parsers_fixtures import SMALL_CONLLU, TINY_PARSER

FILES = 1000
TRAINED = 10         # train-parser, the slowest command, reads one file in TRAINED: prime to the 9 mutations, so
                     # that it still reads every kind
REJECTION = re.compile(r"^error: [^\n]+?:(\d+:)? [^\n]+\n$")


def _sentence(n: int, rng: np.random.Generator, projective: bool = False) -> str:
    """A valid sentence of n words: a random tree, each word attached to one before it; with `projective`, to one
    on the path from the first word to the last so far, so that no arc crosses another."""
    heads, path = [0], [1]
    for i in range(2, n + 1):
        if projective:
            del path[int(rng.integers(1, len(path) + 1)):]
            heads.append(path[-1])
            path.append(i)
        else:
            heads.append(int(rng.integers(1, i)))
    return "".join(f"{i + 1}\tw{i}\t_\tNOUN\t_\t_\t{h}\t{'root' if h == 0 else 'dep'}\t_\t_\n"
                   for i, h in enumerate(heads)) + "\n"


def _mutations(rng: np.random.Generator):
    """Each draws one odd or broken file from the valid sample text."""
    text = SMALL_CONLLU + "\n\n" + _sentence(int(rng.integers(1, 8)), rng)

    def flip(t):
        data = bytearray(t.encode())
        data[int(rng.integers(len(data)))] = int(rng.integers(256))
        return bytes(data)

    def shuffle_columns(t):
        lines = t.split("\n")
        i = int(rng.integers(len(lines)))
        columns = lines[i].split("\t")
        lines[i] = "\t".join(columns[k] for k in rng.permutation(len(columns)))
        return "\n".join(lines)

    def drop_line(t):
        lines = t.split("\n")
        del lines[int(rng.integers(len(lines)))]
        return "\n".join(lines)

    def edit_field(t):
        lines = [line for line in t.split("\n")]
        words = [i for i, line in enumerate(lines) if line and line[0].isdigit()]
        i = words[int(rng.integers(len(words)))]
        columns = lines[i].split("\t")
        columns[int(rng.choice([0, 6, 7, 1, 3]))] = str(rng.choice(["_", "0", "-1", "99", "1.5", "x", "", "3-2"]))
        lines[i] = "\t".join(columns)
        return "\n".join(lines)

    return [
        lambda: text[:int(rng.integers(len(text)))],                        # truncated
        lambda: flip(text),                                                   # a byte changed
        lambda: shuffle_columns(text),
        lambda: drop_line(text),
        lambda: edit_field(text),
        lambda: text.replace("\n", "\r\n"),                                   # Windows line endings
        lambda: b"\xef\xbb\xbf" + text.encode(),                              # a byte-order mark
        # a huge sentence, projective: the swap system's oracle orders a random tree of 400 words in tens of
        # thousands of transitions, seconds of training that test nothing of reading the file
        lambda: _sentence(int(rng.integers(200, 400)), rng, projective=True),
        lambda: rng.choice(["", "\n\n\n", "# only a comment\n", "\t\t\n"]),   # empty
    ]


def _files(tmp_path):
    rng = np.random.default_rng(17)
    mutations = _mutations(rng)
    for k in range(FILES):
        content = mutations[k % len(mutations)]()
        path = tmp_path / f"f{k}.conllu"
        path.write_bytes(content if isinstance(content, bytes) else str(content).encode("utf-8", "surrogateescape"))
        yield path


def _outcome(args, path) -> str:
    """'ok' or 'rejected'; a failure of the test for a traceback or a rejection not naming the file."""
    result = invoke(*args)
    assert "Traceback" not in result.output and (result.exception is None or isinstance(result.exception, SystemExit)), \
        f"{args}: {result.output}"
    if result.exit_code == 0:
        return "ok"
    errors = [line for line in result.output.splitlines(keepends=True) if line.startswith("error: ")]
    assert result.exit_code == 2 and len(errors) == 1 and REJECTION.match(errors[0]) and str(path) in errors[0], \
        f"{args}: {result.output}"
    return "rejected"


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    directory = tmp_path_factory.mktemp("model")
    (directory / "train.conllu").write_text(SMALL_CONLLU + "\n\n")
    assert invoke("train-parser", directory / "train.conllu", "--dev", directory / "train.conllu",
                  "--out", directory / "run", *TINY_PARSER).exit_code == 0
    return directory / "run"


def test_a_thousand_odd_files_never_end_in_a_traceback(tmp_path, tiny_model):
    seen = {"evaluate": set(), "parse": set(), "train-parser": set()}
    for k, path in enumerate(_files(tmp_path)):
        seen["evaluate"].add(_outcome(["evaluate", path, path], path))
        seen["parse"].add(_outcome(["parse", tiny_model, path, "--out", tmp_path / "out.conllu", "--quiet"], path))
        if k % TRAINED == 0:
            seen["train-parser"].add(_outcome(["train-parser", path, "--dev", path, "--out", tmp_path / f"r{k}",
                                               *TINY_PARSER], path))
    assert all(outcomes == {"ok", "rejected"} for outcomes in seen.values()), seen
