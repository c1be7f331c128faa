"""Attachment scores of a parsed file against the gold one.

Scores are over syntactic words (integer IDs; multiword token lines and empty nodes do not count),
punctuation included, as in the CoNLL 2018 shared task (Zeman et al. 2018). Unlike that task's
script, which aligns different tokenizations, this requires the gold tokenization in both files:
the parser here does not tokenize.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

from parsers.conllu_io import ConlluError, Sentence, read_conllu


@dataclass(frozen=True)
class Scores:
    """Attachment scores in percent over `words` syntactic words.

    uas: correct heads.
    las: correct heads with the exact DEPREL, subtypes included ("obl:tmod").
    las_universal: correct heads with the universal part of DEPREL ("obl"): the CoNLL 2018 shared
        task's LAS, which ignores subtypes.
    upos, xpos: correct tags (100 where a parser kept the gold file's).
    """
    words: int
    uas: float
    las: float
    las_universal: float
    upos: float = 100.0
    xpos: float = 100.0


def evaluate(gold: list[Sentence], pred: list[Sentence]) -> Scores:
    """Score predicted trees against gold ones, sentence by sentence.

    Args:
        gold: the gold sentences.
        pred: the predicted sentences: the same sentences and words, in the same order.

    Returns:
        The scores.

    Raises:
        ConlluError: the files differ in sentences or words; the message names the first place.
        ValueError: there is no word to score.
    """
    check_same_words(gold, pred)
    words = heads = labels = universal = upos = xpos = 0
    for gold_sentence, pred_sentence in zip(gold, pred):
        for gold_word, pred_word in zip(gold_sentence.words, pred_sentence.words):
            words += 1
            upos += gold_word.upos == pred_word.upos
            xpos += gold_word.xpos == pred_word.xpos
            if gold_word.head == pred_word.head:
                heads += 1
                labels += gold_word.deprel == pred_word.deprel
                universal += universal_relation(gold_word.deprel) == universal_relation(pred_word.deprel)
    if words == 0:
        raise ValueError("no words to evaluate")
    return Scores(words, *(100.0 * count / words for count in (heads, labels, universal, upos, xpos)))


def evaluate_files(gold_path: str | os.PathLike, pred_path: str | os.PathLike) -> Scores:
    """Read both files (see `parsers.conllu_io.read_conllu`) and `evaluate` them."""
    return evaluate(read_conllu(gold_path)[0], read_conllu(pred_path)[0])


def universal_relation(deprel: str) -> str:
    """The universal relation without its language-specific subtype: "obl:tmod" -> "obl"."""
    return deprel.split(":", 1)[0]


def check_same_words(gold: list[Sentence], pred: list[Sentence]) -> None:
    """Raise ConlluError at the first sentence or word where `pred` does not follow `gold`."""
    for gold_sentence, pred_sentence in zip(gold, pred):
        where = f"gold {gold_sentence.path}:{gold_sentence.line}"
        if len(pred_sentence.words) != len(gold_sentence.words):
            raise ConlluError(pred_sentence.path, pred_sentence.line,
                              f"sentence has {len(pred_sentence.words)} words, "
                              f"{where} has {len(gold_sentence.words)}")
        for gold_word, pred_word in zip(gold_sentence.words, pred_sentence.words):
            if gold_word.form != pred_word.form:
                raise ConlluError(pred_sentence.path, pred_word.line,
                                  f"word {pred_word.id} is {pred_word.form!r}, gold "
                                  f"{gold_sentence.path}:{gold_word.line} has {gold_word.form!r}")
    if len(pred) < len(gold):
        missing = gold[len(pred)]
        prediction = pred[0].path if pred else "the prediction"
        raise ConlluError(missing.path, missing.line,
                          f"sentence {len(pred) + 1} is missing from {prediction} "
                          f"({len(pred)} of {len(gold)} sentences)")
    if len(pred) > len(gold):
        extra = pred[len(gold)]
        raise ConlluError(extra.path, extra.line,
                          f"sentence {len(gold) + 1} is not in the gold file ({len(gold)} sentences)")
