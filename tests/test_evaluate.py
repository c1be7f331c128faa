"""UAS / LAS on hand-made files with known scores (a multiword token and an empty node included)."""
from dataclasses import astuple

import pytest

from parsers.conllu_io import ConlluError, read_conllu, write_conllu
from parsers.evaluate import Scores, evaluate, evaluate_files
from tests.parsers_fixtures import SMALL_CONLLU, write

# SMALL_CONLLU has 3 + 6 = 9 syntactic words (the token 2-3 and the node 4.1 are not scored).
PRED_HEADS = [[-1, 2, 0, 1],                 # "." attached to "Dogs": wrong head
              [-1, 5, 4, 4, 0, 4, 4]]        # "I" attached to "today": wrong head
PRED_DEPRELS = [["", "nsubj", "root", "punct"],
                ["", "nsubj", "cop", "advmod", "root", "obl", "punct"]]
# 7 of 9 heads right; of those, "ca" has the wrong relation (cop for aux) and "today" the wrong
# subtype (obl for obl:tmod), right in its universal part.
EXPECTED = Scores(words=9, uas=100 * 7 / 9, las=100 * 5 / 9, las_universal=100 * 6 / 9)


@pytest.fixture
def gold_path(tmp_path):
    return write(tmp_path, "gold.conllu", SMALL_CONLLU)


@pytest.fixture
def pred_path(tmp_path, gold_path):
    path = tmp_path / "pred.conllu"
    write_conllu(path, read_conllu(gold_path)[0], PRED_HEADS, PRED_DEPRELS)
    return path


def test_scores(gold_path, pred_path):
    scores = evaluate_files(gold_path, pred_path)
    assert astuple(scores) == pytest.approx(astuple(EXPECTED))


def test_gold_against_itself_is_perfect(gold_path):
    assert evaluate_files(gold_path, gold_path) == Scores(9, 100.0, 100.0, 100.0)


def test_different_word_forms(tmp_path, gold_path):
    pred = write(tmp_path, "pred.conllu", SMALL_CONLLU.replace("\ttoday\ttoday", "\ttonight\ttoday"))
    with pytest.raises(ConlluError) as caught:
        evaluate_files(gold_path, pred)
    assert str(caught.value) == (f"{pred}:15: word 5 is 'tonight', gold {gold_path}:15 has 'today'")


def test_different_word_counts(tmp_path, gold_path):
    without_period = SMALL_CONLLU.replace("\n3\t.\t.\tPUNCT\t.\t_\t2\tpunct\t2:punct\t_\n", "\n")
    pred = write(tmp_path, "pred.conllu", without_period)
    with pytest.raises(ConlluError) as caught:
        evaluate_files(gold_path, pred)
    assert str(caught.value) == f"{pred}:1: sentence has 2 words, gold {gold_path}:1 has 3"


def test_missing_and_extra_sentences(tmp_path, gold_path):
    first_only = write(tmp_path, "first.conllu", SMALL_CONLLU.split("\n\n")[0])
    with pytest.raises(ConlluError) as caught:
        evaluate_files(gold_path, first_only)
    assert str(caught.value) == (f"{gold_path}:7: sentence 2 is missing from {first_only} "
                                 f"(1 of 2 sentences)")
    with pytest.raises(ConlluError) as caught:
        evaluate_files(first_only, gold_path)
    assert str(caught.value) == f"{gold_path}:7: sentence 2 is not in the gold file (1 sentences)"


def test_nothing_to_evaluate():
    with pytest.raises(ValueError, match="no words"):
        evaluate([], [])
