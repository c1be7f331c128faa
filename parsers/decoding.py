"""Decoding with the model's DyNet graphs, in length batches, and the parses as sentences.

Greedy or beam search (`StackLSTMParser.parse`); `parsers.inference` evaluates the same model in numpy
for greedy decoding and chooses between the two (`decode`).
"""
from __future__ import annotations

import dataclasses

import dynet as dy

from parsers.conllu_io import Sentence
from parsers.model import Parsed, StackLSTMParser
from stackparse.errors import UserError


def parse_sentences(model: StackLSTMParser, sentences: list[Sentence], batch_size: int = 32,
                    progress=None, beam: int = 1, words_per_batch: int = 1000,
                    predict_tags: bool = False) -> list[Parsed]:
    """The parses (greedy, or beam search with `beam` > 1; tags as `StackLSTMParser.parse` says): batches
    of similar length (at most `batch_size` sentences and `words_per_batch` words) decoded in lockstep,
    each step's scores autobatched.

    A sentence longer than `words_per_batch` is decoded alone and without autobatching: DyNet's
    autobatching engine walks the whole graph at every incremental forward, which makes one long
    sentence's decoding quadratic in its length (BENCHMARKS.md), and a sentence alone has nothing to
    batch with.
    """
    if beam < 1:
        raise UserError(f"--beam must be at least 1 (got {beam})")
    result: list[Parsed | None] = [None] * len(sentences)
    for chunk in length_batches([len(s.words) for s in sentences], batch_size, words_per_batch):
        dy.renew_cg(autobatching=len(chunk) > 1)
        for i, parsed in zip(chunk, model.parse([sentences[i] for i in chunk], beam, predict_tags)):
            result[i] = parsed
        if progress is not None:
            progress(sum(len(sentences[i].words) for i in chunk))
    return result


def length_batches(lengths: list[int], batch_size: int, words_per_batch: int) -> list[list[int]]:
    """Indices in order of length, cut into batches of at most `batch_size` items and
    `words_per_batch` words (an item longer than that alone)."""
    batches, words = [[]], 0
    for i in sorted(range(len(lengths)), key=lengths.__getitem__):
        if batches[-1] and (len(batches[-1]) == batch_size or words + lengths[i] > words_per_batch):
            batches.append([])
            words = 0
        batches[-1].append(i)
        words += lengths[i]
    return [b for b in batches if b]


def with_tree(sentence: Sentence, parsed: Parsed) -> Sentence:
    """A copy of `sentence` whose words carry the heads and labels of a parse, and its tags if it has any."""
    config = parsed.config
    words = [dataclasses.replace(w, head=config.heads[w.id], deprel=config.deprels[w.id],
                                 upos=w.upos if parsed.upos is None else parsed.upos[w.id - 1],
                                 xpos=w.xpos if parsed.xpos is None else parsed.xpos[w.id - 1])
             for w in sentence.words]
    return dataclasses.replace(sentence, words=words)
