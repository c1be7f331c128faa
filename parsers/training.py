"""The parser's objective for the shared trainer: treebank minibatches, oracle losses, dev LAS."""
from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import dynet as dy
import numpy as np

from parsers.conllu_io import Sentence
from parsers.evaluate import evaluate
from parsers.model import ParserModelConfig, ParserTrainingConfig, StackLSTMParser
from parsers.transitions import Configuration, TransitionSystem
from parsers.vocab import Vocab
from stackparse.config import to_dict, write_json
from stackparse.errors import UserError


def parse_sentences(model: StackLSTMParser, sentences: list[Sentence], batch_size: int = 32,
                    progress=None, beam: int = 1, words_per_batch: int = 1000) -> list[Configuration]:
    """Final configurations of the parses (greedy, or beam search with `beam` > 1): batches of
    similar length (at most `batch_size` sentences and `words_per_batch` words) decoded in lockstep,
    each step's scores autobatched.

    A sentence longer than `words_per_batch` is decoded alone and without autobatching: DyNet's
    autobatching engine walks the whole graph at every incremental forward, which makes one long
    sentence's decoding quadratic in its length (BENCHMARKS.md), and a sentence alone has nothing to
    batch with.
    """
    if beam < 1:
        raise UserError(f"--beam must be at least 1 (got {beam})")
    result: list[Configuration | None] = [None] * len(sentences)
    for chunk in length_batches([len(s.words) for s in sentences], batch_size, words_per_batch):
        dy.renew_cg(autobatching=len(chunk) > 1)
        for i, config in zip(chunk, model.parse([sentences[i] for i in chunk], beam)):
            result[i] = config
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


def with_tree(sentence: Sentence, config: Configuration) -> Sentence:
    """A copy of `sentence` whose words carry the heads and labels of a final configuration."""
    words = [dataclasses.replace(w, head=config.heads[w.id], deprel=config.deprels[w.id]) for w in sentence.words]
    return dataclasses.replace(sentence, words=words)


class ParserObjective:
    """Connects the parser to `stackparse.training.Trainer` (criterion: dev LAS); exploration starts
    at epoch `explore_after` (-1 = never)."""
    criterion = "dev_las"
    maximize = True
    unit = "sents"

    def __init__(self, model: StackLSTMParser, pc: dy.ParameterCollection, train: list[Sentence],
                 oracles: list[list[int]], dev: list[Sentence], batch_size: int, explore_after: int):
        self.model, self.pc, self.train, self.oracles, self.dev = model, pc, train, oracles, dev
        self.batch_size, self.explore_after = batch_size, explore_after
        self._rng = np.random.default_rng(0)
        self._explore = False

    def param_collection(self) -> dy.ParameterCollection:
        return self.pc

    def batches(self, epoch: int, rng: np.random.Generator) -> list[list[int]]:
        self._rng = rng        # word dropout, dropout masks and explored actions of this epoch come from it
        self._explore = 0 <= self.explore_after <= epoch
        order = rng.permutation(len(self.train))
        return [order[i:i + self.batch_size] for i in range(0, len(order), self.batch_size)]

    def losses(self, batch: list[int]):
        dy.renew_cg(autobatching=True)
        loss = self.model.loss([self.train[i] for i in batch], [self.oracles[i] for i in batch], self._rng,
                               self._explore)
        yield loss / len(batch), len(batch)

    def validate(self) -> dict[str, float]:
        start = time.perf_counter()
        configs = parse_sentences(self.model, self.dev)
        seconds = time.perf_counter() - start
        scores = evaluate(self.dev, [with_tree(s, c) for s, c in zip(self.dev, configs)])
        return {"dev_las": scores.las, "dev_uas": scores.uas, "dev_las_universal": scores.las_universal,
                "dev_words_per_s": scores.words / seconds}

    def save(self, directory: Path) -> None:
        save_parser(self.model, self.pc, directory)

    def restore(self, directory: Path) -> None:
        self.pc.populate(str(Path(directory) / "params"))


def save_parser(model: StackLSTMParser, pc: dy.ParameterCollection, directory: Path) -> None:
    """A model directory: `params` (DyNet), `vocab.json`, `config.json` (the ParserModelConfig)."""
    directory = Path(directory)
    pc.save(str(directory / "params"))
    model.vocab.save(directory / "vocab.json")
    write_json(directory / "config.json", to_dict(model.config))
    if model.pretrained_index:
        words = sorted(model.pretrained_index, key=model.pretrained_index.get)
        write_json(directory / "pretrained.json", {"words": words, "dim": model.pretrained.shape()[1]})


def build_parser(config: ParserModelConfig, vocab: Vocab, system: TransitionSystem, pretrained=None,
                 training: ParserTrainingConfig = ParserTrainingConfig()):
    pc = dy.ParameterCollection()
    return StackLSTMParser(pc, config, vocab, system, pretrained, training), pc
