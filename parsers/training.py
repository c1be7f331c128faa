"""The parser's objective for the shared trainer: treebank minibatches, oracle losses, dev LAS."""
from __future__ import annotations

import json
import multiprocessing
import signal
import time
import weakref
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path

import dynet as dy
import numpy as np

from parsers.conllu_io import Sentence
from parsers.decoding import with_tree
from parsers.distillation import Lesson
from parsers.evaluate import evaluate
from parsers import trees
from parsers.inference import Exploration, NumpyParser, draw_explorations, parse_greedy
from parsers.model import ParserModelConfig, ParserTrainingConfig, StackLSTMParser
from parsers.transitions import TransitionSystem, get_system
from parsers.vocab import Vocab
from stackparse.config import atomic_write, from_dict, to_dict, write_json
from stackparse.errors import UserError
from stackparse.training.trainer import hard_link, published

PRETRAINED = "pretrained.npy"


class ParserObjective:
    """Connects the parser to `stackparse.training.Trainer` (criterion: dev LAS); exploration starts
    at epoch `explore_after` (-1 = never)."""
    criterion = "dev_las"
    maximize = True
    unit = "sents"

    def __init__(self, model: StackLSTMParser, pc: dy.ParameterCollection, train: list[Sentence],
                 oracles: list[list[int]], dev: list[Sentence], batch_size: int, explore_after: int,
                 lessons: list[Lesson] | None = None):
        """`lessons`: what teachers say of each training sentence (`parsers.distillation`): each epoch, each
        sentence follows one of its lesson's paths, drawn with equal chances, and learns from it."""
        self.model, self.pc, self.train, self.oracles, self.dev = model, pc, train, oracles, dev
        self.batch_size, self.explore_after, self.lessons = batch_size, explore_after, lessons
        self._routes: np.ndarray | None = None      # the path each sentence follows this epoch (with lessons)
        self._rng = np.random.default_rng(0)
        self._explore = False
        self._batches: list = []
        self._drawn: dict[int, Exploration] = {}    # sentence -> its exploration drawn ahead (`explore_every`)
        self._ahead: Future | None = None           # the next chunk's, drawn by the second process
        self._executor: ProcessPoolExecutor | None = None
        self._updates = 0
        self._saved: Path | None = None             # the model directory saved last: its fixed vectors are these

    def param_collection(self) -> dy.ParameterCollection:
        return self.pc

    def batches(self, epoch: int, rng: np.random.Generator) -> list[list[int]]:
        self._rng = rng        # word dropout, dropout masks and explored actions of this epoch come from it
        self._explore = 0 <= self.explore_after <= epoch
        if self.lessons is not None:
            self._routes = rng.integers(0, np.array([len(lesson.paths) for lesson in self.lessons]))
        order = rng.permutation(len(self.train))
        self._batches = [order[i:i + self.batch_size] for i in range(0, len(order), self.batch_size)]
        self._drawn, self._updates = {}, 0
        if self._ahead is not None:     # the last epoch stopped early (the time budget): its chunk is not wanted
            self._ahead.cancel()
            self._ahead = None
        return self._batches

    def losses(self, batch: list[int]):
        sentences = [self.train[i] for i in batch]
        drawn = self._draw_ahead(batch) if self._explore and self.model.training.explore_every else None
        dy.renew_cg(autobatching=True)
        taught = None if self.lessons is None else \
            [(self.lessons[i].paths[self._routes[i]], self.lessons[i]) for i in batch]
        loss = self.model.loss(sentences, [self.oracles[i] for i in batch], self._rng, self._explore, drawn, taught)
        self._updates += 1
        yield loss / len(batch), len(batch)

    def _draw_ahead(self, batch: list[int]) -> list[Exploration | None]:
        """The explorations of `batch`'s projective sentences, drawn by the numpy engine for a chunk of
        `explore_every` batches at a time (reading the weights costs as much as a few batches' training:
        amortised, at the price of roll-outs up to that many updates old). With `explore_process`, the next
        chunk's are drawn by a second process while this one trains on the current chunk: the roll-outs
        cost this process nothing but the weights' copy, and are up to one chunk older."""
        training = self.model.training
        every = training.explore_every
        if self._updates % every == 0:
            chunk, engine = self._updates // every, None
            if self._ahead is not None:
                self._drawn, self._ahead = self._ahead.result(), None
            else:
                engine = NumpyParser(self.model)
                self._drawn = draw_chunk(engine, self.train, self._chunk(chunk), training.explore_alpha, self._rng)
            if training.explore_process and (chunk + 1) * every < len(self._batches):
                seed = int(self._rng.integers(2 ** 63))      # drawn here, in order: the run stays reproducible
                self._ahead = self._worker().submit(draw_chunk, engine or NumpyParser(self.model), None,
                                                    self._chunk(chunk + 1), training.explore_alpha, seed)
        return [self._drawn.get(i) for i in batch]

    def _chunk(self, chunk: int) -> list[int]:
        """The projective training sentences of the `chunk`-th `explore_every` batches of the epoch."""
        every = self.model.training.explore_every
        return [i for b in self._batches[chunk * every:(chunk + 1) * every] for i in b
                if trees.is_projective(self.train[i].heads)]

    def _worker(self) -> ProcessPoolExecutor:
        """The second process, started at its first use with the training sentences (forked where the
        platform can: nothing to import again; it ignores Ctrl-C, which the training process handles)."""
        if self._executor is None:
            method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
            self._executor = ProcessPoolExecutor(1, multiprocessing.get_context(method), _start_worker, (self.train,))
            weakref.finalize(self, self._executor.shutdown, wait=False, cancel_futures=True)
        return self._executor

    def validate(self) -> dict[str, float]:
        """Dev scores; with the tagger, dev_las is parsing on its own tags (text as users have it) and
        dev_las_gold_tags on the treebank's."""
        start = time.perf_counter()
        tagger = self.model.config.tagger
        engine = NumpyParser(self.model)          # the weights validated now; no dropout
        parsed = parse_greedy(engine, self.dev, predict_tags=tagger)
        seconds = time.perf_counter() - start
        scores = evaluate(self.dev, [with_tree(s, p) for s, p in zip(self.dev, parsed)])
        metrics = {"dev_las": scores.las, "dev_uas": scores.uas, "dev_las_universal": scores.las_universal,
                   "dev_words_per_s": scores.words / seconds}
        if tagger:
            gold = evaluate(self.dev, [with_tree(s, p) for s, p in zip(self.dev, parse_greedy(engine, self.dev))])
            metrics.update(dev_upos=scores.upos, dev_xpos=scores.xpos, dev_las_gold_tags=gold.las,
                           dev_uas_gold_tags=gold.uas)
        return metrics

    def save(self, directory: Path) -> None:
        save_parser(self.model, self.pc, directory, self._saved)
        self._saved = published(directory)

    def restore(self, directory: Path) -> None:
        self.pc.populate(str(Path(directory) / "params"))


_TRAIN: list[Sentence] = []
"""The training sentences, in the second process of `explore_process`."""


def _start_worker(train: list[Sentence]) -> None:
    global _TRAIN
    _TRAIN = train
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def draw_chunk(engine: NumpyParser, train: list[Sentence] | None, ahead: list[int], alpha: float,
               rng: np.random.Generator | int) -> dict[int, Exploration]:
    """Training sentence -> its exploration, for the sentences `ahead` of `train` (None: the
    second process's copy), drawn by `engine` from `rng` (or a generator seeded with it)."""
    train = _TRAIN if train is None else train
    rng = np.random.default_rng(rng) if isinstance(rng, int) else rng
    return dict(zip(ahead, draw_explorations(engine, [train[i] for i in ahead], alpha, rng)))


def save_parser(model: StackLSTMParser, pc: dy.ParameterCollection, directory: Path,
                same_vectors: Path | None = None) -> None:
    """A model directory: `params` (DyNet), `vocab.json`, `config.json` (the ParserModelConfig); with fixed pretrained
    vectors, their words (`pretrained.json`) and matrix (`pretrained.npy`: binary, where DyNet's text format would
    make `params` several times larger and slower to load). `same_vectors`: a model directory saved from this model
    before, whose matrix is linked rather than written again (training saves the same fixed vectors, hundreds of
    megabytes, twice an epoch; files of a saved model are never changed in place, so a link is safe)."""
    directory = Path(directory)
    pc.save(str(directory / "params"))
    model.vocab.save(directory / "vocab.json")
    write_json(directory / "config.json", to_dict(model.config))
    if model.pretrained_index:
        words = list(model.pretrained_index)             # in row order: the index was built from the words
        matrix = model.pretrained_matrix[1:]            # row 0: the zeros of words without one
        if not (same_vectors is not None and hard_link(Path(same_vectors) / PRETRAINED, directory / PRETRAINED)):
            atomic_write(directory / PRETRAINED, lambda tmp: _save_array(tmp, matrix))
        write_json(directory / "pretrained.json", {"words": words})       # the dimension: the matrix's


def _save_array(path, array: np.ndarray) -> None:
    with open(path, "wb") as f:
        np.save(f, array)


def load_parser(directory: str | Path) -> tuple[StackLSTMParser, dy.ParameterCollection]:
    """The model saved by `save_parser` in `directory` (or in its `best/`, a training run's best model)."""
    directory = Path(directory)
    if (directory / "best" / "params").is_file():
        directory = directory / "best"
    missing = [f for f in ("params", "vocab.json", "config.json") if not (directory / f).is_file()]
    if missing:
        raise UserError(f"{directory}: not a parser model directory (missing {', '.join(missing)})")
    try:
        config = from_dict(ParserModelConfig, json.loads((directory / "config.json").read_text()))
        vocab = Vocab.load(directory / "vocab.json")
        pretrained = None
        if (directory / "pretrained.json").is_file():
            if not (directory / PRETRAINED).is_file():
                raise UserError(f"{directory}: its pretrained vectors are not in {PRETRAINED} (a model saved before "
                                "they moved out of `params`, 2026-11-29): train it again")
            words = json.loads((directory / "pretrained.json").read_text())["words"]
            pretrained = (words, np.load(directory / PRETRAINED).astype(np.float32, copy=False))
            if pretrained[1].ndim != 2 or len(words) != len(pretrained[1]):
                raise ValueError(f"{len(words)} pretrained words for a matrix of shape {pretrained[1].shape}")
        model, pc = build_parser(config, vocab, get_system(config.system, vocab.labels), pretrained)
        pc.populate(str(directory / "params"))
    except (ValueError, KeyError, TypeError, RuntimeError, EOFError) as e:
        raise UserError(f"{directory}: corrupt parser model ({e})") from None
    return model, pc


def build_parser(config: ParserModelConfig, vocab: Vocab, system: TransitionSystem, pretrained=None,
                 training: ParserTrainingConfig = ParserTrainingConfig()):
    pc = dy.ParameterCollection()
    return StackLSTMParser(pc, config, vocab, system, pretrained, training), pc
