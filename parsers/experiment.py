"""The parser as an experiment kind ("parser"): a treebank, the transition system's oracles, the
shared trainer with dev LAS, then (given a test treebank) test accuracy and parsing speed.

Importing this module registers the kind; the benchmark runner imports it by name
(`stackparse.experiments.MODULES`), so the library never imports `parsers`.
"""
from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np
from tqdm import tqdm

from parsers.conllu_io import Sentence, read_conllu
from parsers.corpus import CORPORA, get_corpus
from parsers.evaluate import evaluate
from parsers.model import ParserModelConfig, ParserTrainingConfig, read_vectors
from parsers.distillation import teach
from parsers.inference import DEFAULT_BATCH, NumpyParser, decode, engine_for, mismatch
from parsers.decoding import with_tree
from parsers.training import ParserObjective, build_parser, load_parser
from parsers.transitions import TransitionSystem, get_system
from parsers.vocab import Vocab
from stackparse.config import setting
from stackparse.errors import UserError
from stackparse.experiments import KINDS, Kind
from stackparse.training import TrainConfig

# The trainer's settings for the parser: Adam with minibatches of sentences, its rate halved when dev
# LAS stops improving, early stopping, and a time budget of 40 minutes of training, which the bare
# `train-parser` on EWT reaches before its 30 epochs here (the runs of BENCHMARKS.md measure this
# command; a faster machine trains more epochs in it). Adam's rate 0.002, not its usual 0.001: in 40 minutes of training
# it reached a better dev LAS at every epoch (BENCHMARKS.md, runs G1 and G1-lr2).
# A moving average of the parameters (0.999, folded in every 8 updates) is what is validated and
# saved: with exploration it gave the best dev LAS of our runs (BENCHMARKS.md, runs D-J).
PARSER_TRAINING = TrainConfig(epochs=30, batch_size=32, bptt=0, optimizer="adam", lr=0.002,
                              lr_schedule="plateau", clip=5.0, patience=5, seed=1, max_minutes=40.0,
                              average=0.999, average_every=8)


@dataclass(frozen=True)
class ParserSettings:
    """Everything that defines a parser run; saved as the run's config.json."""
    model_config: ParserModelConfig = ParserModelConfig()
    training: ParserTrainingConfig = ParserTrainingConfig()
    train: TrainConfig = PARSER_TRAINING
    train_file: str = setting("corpora/en.conllu", "training treebank (CoNLL-U); a missing corpora/en*.conllu "
                              "is obtained first")
    dev_file: str = setting("", "dev treebank, for early stopping and model selection; \"\" = the file beside "
                            "the training file (en.conllu -> en-dev.conllu), else its last 5% of sentences")
    test_file: str = setting("", "test treebank, parsed and scored once after training; \"\" = none")
    skip_invalid: bool = setting(False, "skip malformed sentences (reported) instead of stopping at the first")

    def validate(self) -> None:
        self.model_config.validate()
        self.training.validate(self.model_config)
        self.train.validate()


@KINDS.register
class ParserExperiment(Kind):
    """The stack-LSTM parser trained on a treebank (see the module docstring)."""
    name = "parser"
    Settings = ParserSettings

    def __init__(self, settings: ParserSettings):
        super().__init__(settings)
        train = Path(settings.train_file)
        sentences = read_treebank(train, settings.skip_invalid)
        dev_path = Path(settings.dev_file) if settings.dev_file else default_split(train, "dev")
        if dev_path is not None:
            self.dev = read_treebank(dev_path, settings.skip_invalid)
        elif len(sentences) < 2:
            self.dev = sentences
            print(f"no dev file given or found beside {train}, and too few sentences to hold some out: "
                  f"validating on the training sentences")
        else:
            cut = max(1, len(sentences) // 20)
            sentences, self.dev = sentences[:-cut], sentences[-cut:]
            print(f"no dev file given or found beside {train}: holding out its last {cut} sentences")
        self.settings = dataclasses.replace(settings, dev_file=str(dev_path or ""))
        self.vocab = Vocab.build(sentences)
        self.system = get_system(settings.model_config.system, self.vocab.labels)    # the only one built
        config = settings.model_config
        for vectors in filter(None, config.vectors.split(",")):
            obtain_if_known(Path(vectors))
        self.pretrained = read_vectors(config.vectors, config.vectors_limit) if config.vectors else None
        self.sentences, self.oracles = derivable(self.system, sentences)
        if not self.sentences:
            raise UserError(f"{train}: the {config.system} system can derive none of its trees (non-projective); "
                            f"arc-hybrid-swap or arc-swap derive any tree")
        if len(self.sentences) < len(sentences):
            print(f"{train}: {len(sentences) - len(self.sentences)} sentence(s) the {config.system} system "
                  f"cannot derive (non-projective) are left out of training")
        self.skipped = len(sentences) - len(self.sentences)

    @classmethod
    def defaults(cls, task: str, model: str) -> ParserSettings:
        """The bare `train-parser` settings (the task names a corpus, given by the suite's files)."""
        return ParserSettings()

    def build(self, seed: int) -> ParserObjective:
        training = self.settings.training
        model, pc = build_parser(self.settings.model_config, self.vocab, self.system, self.pretrained, training)
        lessons = self._lessons(model, seed) if training.teachers else None
        return ParserObjective(model, pc, self.sentences, self.oracles, self.dev, self.settings.train.batch_size,
                               training.explore_after, lessons)

    def _lessons(self, model, seed: int) -> list:
        """What the teachers (`teachers`) say of each training sentence (`parsers.distillation.teach`); their
        sampled paths are drawn from the run's seed."""
        training, engines = self.settings.training, []
        for directory in training.teachers.split(","):
            teacher, _ = load_parser(directory.strip())
            why = mismatch(model, teacher)
            if why:
                raise UserError(f"{directory}: cannot teach a parser of {self.settings.train_file}: {why}")
            engines.append(NumpyParser(teacher))
        words = sum(len(s.words) for s in self.sentences)
        with tqdm(total=words, unit="word", desc=f"teachers ({len(engines)})", leave=False, mininterval=1) as bar:
            return teach(engines, self.sentences, self.oracles, training.teacher_samples, np.random.default_rng(seed),
                         training.teacher_temperature, progress=bar.update)

    def test(self, objective: ParserObjective) -> dict:
        metrics = {"train_sentences": len(self.sentences), "skipped_sentences": self.skipped}
        if self.settings.test_file:
            metrics.update(test_scores(objective.model, Path(self.settings.test_file)))
        return metrics


def test_scores(model, path: Path, batch_size: int | None = None, beam: int = 1, engine: str = "numpy",
                ensemble: Sequence = ()) -> dict:
    """Parse a gold treebank's words once (one process) on its tags and score the parses: accuracy and
    speed; with a tagger, also parse them on the tagger's tags and score those parses and tags.

    Greedy decoding runs on `engine` ("numpy" or "dynet", `parsers.inference.decode`; beam search on
    DyNet); `batch_size` None: the engine's default. The time includes the numpy engine's reading of
    the weights. CPU seconds are given too: a busy machine inflates them less than wall seconds.
    `ensemble`: more models that decode beside `model`, as one (`parsers.inference.Ensemble`; greedy, numpy)."""
    obtain_if_known(path, progress=False)
    gold, _ = read_conllu(path)
    seconds, cpu, parses = timed_parse(model, gold, batch_size, beam, engine, ensemble)
    scores = evaluate(gold, [with_tree(s, p) for s, p in zip(gold, parses)])
    result = {"test_file": str(path), "words": scores.words, "sentences": len(gold), "test_uas": scores.uas,
              "test_las": scores.las, "test_las_universal": scores.las_universal, "parse_seconds": seconds,
              "parse_words_per_s": scores.words / seconds, "parse_sentences_per_s": len(gold) / seconds,
              "parse_cpu_seconds": cpu, "parse_words_per_cpu_s": scores.words / cpu,
              "parse_batch_size": batch_size or DEFAULT_BATCH["dynet" if beam > 1 else engine], "beam": beam,
              "engine": "dynet" if beam > 1 else engine}
    if model.config.tagger:      # again on the tagger's tags: nothing gold but the words (untimed)
        parsed = decode(model, gold, engine, batch_size, beam=beam, predict_tags=True,
                        numpy_parser=_ensemble_engine(model, ensemble))
        tagged = evaluate(gold, [with_tree(s, p) for s, p in zip(gold, parsed)])
        result.update(test_upos=tagged.upos, test_xpos=tagged.xpos, test_las_predicted_tags=tagged.las,
                      test_uas_predicted_tags=tagged.uas)
    return result


def timed_parse(model, sentences, batch_size: int | None = None, beam: int = 1, engine: str = "numpy",
                ensemble: Sequence = ()):
    """(wall seconds, CPU seconds, parses) of one decoding of `sentences` as `test_scores` times it."""
    start, cpu = time.perf_counter(), time.process_time()
    parses = decode(model, sentences, engine, batch_size, beam=beam, numpy_parser=_ensemble_engine(model, ensemble))
    return time.perf_counter() - start, time.process_time() - cpu, parses


def _ensemble_engine(model, ensemble: Sequence):
    """The engine of `model` and `ensemble` decoding as one; None for `model` alone (`decode` makes its engine)."""
    return engine_for([model, *ensemble]) if ensemble else None


def default_split(train: Path, split: str) -> Path | None:
    """The dev or test file beside a training file: en.conllu -> en-dev.conllu, *-train* -> *-dev*."""
    name = train.name.replace("train", split) if "train" in train.name else f"{train.stem}-{split}{train.suffix}"
    candidate = train.with_name(name)
    return candidate if candidate != train and candidate.is_file() else None


def obtain_if_known(path: Path, progress: bool = True) -> None:
    """A missing file that is one of a known corpus's files (or the file built from them) is fetched first."""
    if path.exists():
        return
    for name, corpus in CORPORA.items():
        if path.name in {f.target for f in corpus.files} | ({corpus.built} - {""}):
            if progress:
                print(f"{path} is missing: obtaining {corpus.description} (python cli.py corpus get {name})")
            get_corpus(name, dest=path.parent, progress=progress)
            return


def read_treebank(path: Path, skip_invalid: bool) -> list[Sentence]:
    """A training or dev treebank's sentences (obtained first if it is a known corpus's file)."""
    obtain_if_known(path)
    sentences, errors = read_conllu(path, skip_invalid=skip_invalid)
    if errors:
        print(f"{path}: skipped {len(errors)} invalid sentence(s), e.g. {errors[0]}")
    if not sentences:
        raise UserError(f"{path}: no usable sentence")
    return sentences


def derivable(system: TransitionSystem, sentences: list[Sentence]) -> tuple[list[Sentence], list[list[int]]]:
    """The sentences the system can derive, and the oracle action sequence of each."""
    kept, oracles = [], []
    for s in sentences:
        try:
            oracles.append(system.oracle_sequence(s.heads, s.deprels))
        except ValueError:
            continue
        kept.append(s)
    return kept, oracles
