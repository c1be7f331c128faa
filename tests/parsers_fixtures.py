"""Shared test data for the parsers package: head-list trees, small CoNLL-U files, the EWT mirror.

tests/conftest.py belongs to the models' tests; the parsers' tests import from here instead.
"""
from __future__ import annotations

import functools
import os
from pathlib import Path

import pytest
from hypothesis import strategies as st

from parsers.conllu_io import Sentence, read_conllu
from parsers.corpus import CORPORA

ROOT = Path(__file__).resolve().parents[1]
# The local mirror of the UD treebanks under their upstream names: the directory named by
# STACKPARSE_CORPUS_DIR, else the one beside the repository (absent on a fresh clone).
SHARED_CORPORA = Path(os.environ.get("STACKPARSE_CORPUS_DIR") or ROOT.parent / "shared" / "corpora")

# "The cat sat on the mat": a projective tree (UD analysis).
CAT_HEADS = [-1, 2, 3, 0, 6, 6, 3]
CAT_DEPRELS = ["", "det", "nsubj", "root", "case", "det", "obl"]

# "A hearing is scheduled on the issue today .": the non-projective example of Nivre (2009) and
# Nivre, Kuhlmann & Hall (2009): "on the issue" belongs to "hearing" across "is scheduled".
HEARING_HEADS = [-1, 2, 3, 0, 3, 2, 7, 5, 4, 3]
HEARING_DEPRELS = ["", "det", "nsubj", "root", "xcomp", "nmod", "det", "obj", "obl", "punct"]
HEARING_PROJECTIVE_ORDER = [1, 2, 5, 6, 7, 3, 4, 8, 9]

LABELS = ["det", "nsubj", "root", "xcomp", "nmod", "obj", "obl", "punct", "case"]

# Two sentences with what a parser must carry through untouched: comments, a multiword token
# (2-3 "can't" = "ca" + "n't") and an empty node (4.1); the last sentence has no blank line after it.
SMALL_CONLLU = """\
# sent_id = 1
# text = Dogs bark.
1\tDogs\tdog\tNOUN\tNNS\tNumber=Plur\t2\tnsubj\t2:nsubj\t_
2\tbark\tbark\tVERB\tVBP\tMood=Ind\t0\troot\t0:root\tSpaceAfter=No
3\t.\t.\tPUNCT\t.\t_\t2\tpunct\t2:punct\t_

# sent_id = 2
# text = I can't run today.
1\tI\tI\tPRON\tPRP\tCase=Nom\t4\tnsubj\t4:nsubj|4.1:nsubj\t_
2-3\tcan't\t_\t_\t_\t_\t_\t_\t_\t_
2\tca\tcan\tAUX\tMD\tVerbForm=Fin\t4\taux\t4:aux\t_
3\tn't\tnot\tPART\tRB\t_\t4\tadvmod\t4:advmod\t_
4\trun\trun\tVERB\tVB\tVerbForm=Inf\t0\troot\t0:root\t_
4.1\trun\trun\tVERB\tVB\t_\t_\t_\t4:conj\tCopyOf=4
5\ttoday\ttoday\tNOUN\tNN\t_\t4\tobl:tmod\t4:obl:tmod\tSpaceAfter=No
6\t.\t.\tPUNCT\t.\t_\t4\tpunct\t4:punct\t_"""

TINY_PARSER = ["--epochs", "1", "--batch-size", "4", "--word-dim", "4", "--upos-dim", "2", "--char-hidden", "0",
               "--token-dim", "4", "--context-layers", "0", "--tagger-dim", "4", "--lstm-dim", "4",
               "--lstm-layers", "1", "--state-dim", "4", "--action-dim", "2", "--rel-dim", "2", "--quiet"]
"""`train-parser`'s options for a parser of a few units a layer, its tagger included: the CLI's tests check what a
command does with its input, not what the model learns, and a tagger at its default size made most of their time
saving and loading its parameters."""


def write(directory: Path, name: str, content: str | bytes) -> Path:
    """Write `content` (bytes as they are, text as UTF-8) to directory/name and return the path."""
    path = directory / name
    if isinstance(content, str):
        content = content.encode("utf-8")
    path.write_bytes(content)
    return path


def shared_corpus(file_name: str) -> Path:
    """A treebank file by its upstream name: from the mirror (STACKPARSE_CORPUS_DIR, else
    ../shared/corpora), or from corpora/ where `corpus get` puts it under its own name. When none
    holds it the test is skipped, unless STACKPARSE_REQUIRE_CORPUS is set (CI sets it): then it fails.
    """
    targets = {f.source: f.target for corpus in CORPORA.values() for f in corpus.files}
    places = [SHARED_CORPORA / file_name, ROOT / "corpora" / targets.get(file_name, file_name)]
    found = next((path for path in places if path.is_file()), None)
    if found is None:
        message = f"{file_name} is in none of {', '.join(map(str, places))} (python cli.py corpus get en)"
        if os.environ.get("STACKPARSE_REQUIRE_CORPUS"):
            pytest.fail(message)
        pytest.skip(message)
    return found


@functools.lru_cache(maxsize=None)
def _read(path: Path) -> tuple[Sentence, ...]:
    return tuple(read_conllu(path)[0])


def ewt(split: str) -> tuple[Sentence, ...]:
    """The sentences of en_ewt-ud-`split`.conllu from the shared mirror, read once per session."""
    return _read(shared_corpus(f"en_ewt-ud-{split}.conllu"))


@st.composite
def random_trees(draw, max_words=12):
    """A random single-rooted tree: each word in a random order attaches to one placed before it."""
    n = draw(st.integers(1, max_words))
    order = draw(st.permutations(range(1, n + 1)))
    heads = [-1] * (n + 1)
    heads[order[0]] = 0
    for rank in range(1, n):
        heads[order[rank]] = order[draw(st.integers(0, rank - 1))]
    return heads


def per_sentence(choose_one):
    """A lockstep chooser (`parsers.inference.Chooser`: one call per step for the batch) from a function of one
    sentence's decision, choose_one(sentence, configuration, legal ids, scores or None) -> action, called in the
    batch's order: what tests that follow or record a derivation step by step read most easily."""
    def choose(active, configs, legal, scored, scores):
        rows = dict(zip(scored, range(len(scored))))
        return [choose_one(i, configs[i], legal[k], scores[rows[k]] if k in rows else None)
                for k, i in enumerate(active)]
    return choose
