"""The parser's three verbs as a Python API: train, parse, evaluate.

    from parsers.api import Parser, train_parser, evaluate_files
    parser, metrics = train_parser("corpora/en.conllu", dev="corpora/en-dev.conllu", out="runs/parser")
    parser = Parser.load("runs/parser")
    parser.parse_file("in.conllu", "out.conllu")
    print(evaluate_files("gold.conllu", "out.conllu"))
"""
from __future__ import annotations

import json
import time
from pathlib import Path

import dynet as dy
import numpy as np
from tqdm import tqdm

from parsers.conllu_io import Sentence, read_conllu, write_conllu
from parsers.corpus import CORPORA, get_corpus
from parsers.evaluate import Scores, evaluate, evaluate_files
from parsers.model import ParserConfig, StackLSTMParser, read_vectors
from parsers.transitions import get_system
from parsers.training import ParserObjective, build_parser, parse_sentences, save_parser, with_tree
from parsers.vocab import Vocab
from stackparse.config import from_dict, to_dict, write_json, write_run_config
from stackparse.errors import UserError
from stackparse.training import TrainConfig, Trainer

__all__ = ["Parser", "train_parser", "evaluate_files", "Scores", "PARSER_TRAINING", "ParserConfig"]

# The trainer's settings for the parser: Adam with minibatches of sentences, its rate halved when dev
# LAS stops improving, early stopping, and a time budget that keeps the bare `train-parser` on EWT within 90 minutes on 2 cores.
# A moving average of the parameters (0.999, folded in every 8 updates) is what is validated and
# saved: with exploration it gave the best dev LAS of our runs (BENCHMARKS.md, runs D-J).
PARSER_TRAINING = TrainConfig(epochs=30, batch_size=32, bptt=0, optimizer="adam", lr=0.001,
                              lr_schedule="plateau", clip=5.0, patience=5, seed=1, max_minutes=85.0,
                              average=0.999, average_every=8)


class Parser:
    """A trained parser: the model and its vocabularies, loaded from or saved to a directory."""

    def __init__(self, model: StackLSTMParser, pc: dy.ParameterCollection):
        self.model, self.pc = model, pc

    @classmethod
    def load(cls, directory: str | Path) -> "Parser":
        """Restore a parser saved by `save` (or the best model of a training run directory)."""
        directory = Path(directory)
        if (directory / "best" / "params").is_file():
            directory = directory / "best"
        missing = [f for f in ("params", "vocab.json", "config.json") if not (directory / f).is_file()]
        if missing:
            raise UserError(f"{directory}: not a parser model directory (missing {', '.join(missing)})")
        try:
            config = from_dict(ParserConfig, json.loads((directory / "config.json").read_text()))
            vocab = Vocab.load(directory / "vocab.json")
            pretrained = None
            if (directory / "pretrained.json").is_file():
                saved = json.loads((directory / "pretrained.json").read_text())
                pretrained = (saved["words"], np.zeros((len(saved["words"]), saved["dim"]), dtype=np.float32))
            model, pc = build_parser(config, vocab, pretrained)
            pc.populate(str(directory / "params"))
        except (ValueError, KeyError, TypeError, RuntimeError) as e:
            raise UserError(f"{directory}: corrupt parser model ({e})") from None
        return cls(model, pc)

    def save(self, directory: str | Path) -> None:
        Path(directory).mkdir(parents=True, exist_ok=True)
        save_parser(self.model, self.pc, Path(directory))

    def parse(self, sentences: list[Sentence], batch_size: int = 32, progress: bool = False,
              beam: int = 1) -> list[Sentence]:
        """Copies of `sentences` with predicted heads and labels (greedy; beam search if beam > 1)."""
        if beam < 1:
            raise UserError(f"--beam must be at least 1 (got {beam})")
        total = sum(len(s.words) for s in sentences)
        with tqdm(total=total, unit="word", desc="parsing", disable=None if progress else True) as bar:
            configs = parse_sentences(self.model, sentences, batch_size, bar.update, beam)
        return [with_tree(s, c) for s, c in zip(sentences, configs)]

    def parse_file(self, input_path: str | Path, output_path: str | Path, progress: bool = False,
                   beam: int = 1) -> dict:
        """Parse a CoNLL-U file; only HEAD and DEPREL change in the output. Returns timing figures."""
        sentences, _ = read_conllu(input_path)
        start = time.perf_counter()
        parsed = self.parse(sentences, progress=progress, beam=beam)
        seconds = time.perf_counter() - start
        write_conllu(output_path, sentences, [s.heads for s in parsed], [s.deprels for s in parsed])
        words = sum(len(s.words) for s in sentences)
        return {"sentences": len(sentences), "words": words, "seconds": seconds, "words_per_s": words / seconds}


def default_split(train: Path, split: str) -> Path | None:
    """The dev or test file beside a training file: en.conllu -> en-dev.conllu, *-train* -> *-dev*."""
    name = train.name.replace("train", split) if "train" in train.name else f"{train.stem}-{split}{train.suffix}"
    candidate = train.with_name(name)
    return candidate if candidate != train and candidate.is_file() else None


def obtain_if_known(path: Path, progress: bool = True) -> None:
    """A missing file that is one of a known corpus's files under corpora/ is fetched first."""
    if path.exists():
        return
    for name, corpus in CORPORA.items():
        if any(path.name == f.target for f in corpus.files):
            if progress:
                print(f"{path} is missing: obtaining {corpus.description} (python cli.py corpus get {name})")
            get_corpus(name, dest=path.parent, progress=progress)
            return


def _read_training(path: Path, skip_invalid: bool) -> list[Sentence]:
    sentences, errors = read_conllu(path, skip_invalid=skip_invalid)
    if errors:
        print(f"{path}: skipped {len(errors)} invalid sentence(s), e.g. {errors[0]}")
    if not sentences:
        raise UserError(f"{path}: no usable sentence")
    return sentences


def train_parser(train: str | Path, dev: str | Path | None = None, out: str | Path = "runs/parser",
                 config: ParserConfig = ParserConfig(), training: TrainConfig = PARSER_TRAINING,
                 skip_invalid: bool = False, resume: bool = False, progress: bool = True) -> tuple[Parser, dict]:
    """Train a parser on a CoNLL-U treebank with the shared trainer; the best model on dev is kept.

    Args:
        train: training treebank. A missing corpora/en*.conllu is obtained first.
        dev: development treebank for early stopping and model selection; default: the file beside
          `train` (en.conllu -> en-dev.conllu), else the last 5% of the training sentences.
        out: run directory; the best model goes to `out/best`.
        config, training: the model's and the trainer's settings.
        skip_invalid: skip malformed sentences (reported) instead of stopping at the first.

    Returns:
        The best parser and its metrics (also in `out/metrics.json`).
    """
    config.validate()
    train, out = Path(train), Path(out)
    obtain_if_known(train, progress)
    sentences = _read_training(train, skip_invalid)
    dev_path = Path(dev) if dev else default_split(train, "dev")
    if dev_path is not None:
        obtain_if_known(dev_path, progress)
        dev_sentences = _read_training(dev_path, skip_invalid)
    else:
        cut = max(1, len(sentences) // 20)
        sentences, dev_sentences = sentences[:-cut], sentences[-cut:]
        print(f"no dev file given or found beside {train}: holding out its last {cut} sentences")
    vocab = Vocab.build(sentences)
    pretrained = read_vectors(config.vectors, config.vectors_limit) if config.vectors else None
    sentences, oracles, skipped = _oracles(get_system(config.system, vocab.labels), sentences)
    if skipped:
        print(f"{train}: {skipped} sentence(s) the {config.system} system cannot derive "
              f"(non-projective) are left out of training")
    out.mkdir(parents=True, exist_ok=True)
    write_run_config(out / "config.json", {"parser": to_dict(config), "train": to_dict(training),
                                           "train_file": str(train), "dev_file": str(dev_path or train)}, resume)

    def build(seed):
        model, pc = build_parser(config, vocab, pretrained)
        return ParserObjective(model, pc, sentences, oracles, dev_sentences, training.batch_size)

    start = time.perf_counter()
    result = Trainer(training, build, progress).fit(out, resume)
    metrics = {**result.metrics, "train_minutes": (time.perf_counter() - start) / 60,
               "train_sentences": len(sentences), "skipped_sentences": skipped}
    write_json(out / "metrics.json", metrics)
    return Parser.load(out / "best"), metrics


def _oracles(system, sentences: list[Sentence]):
    """The oracle action sequence of every sentence the system can derive."""
    kept, oracles = [], []
    for s in sentences:
        try:
            oracles.append(system.oracle_sequence(s.heads, s.deprels))
        except ValueError:
            continue
        kept.append(s)
    return kept, oracles, len(sentences) - len(kept)


def evaluate_parser(parser: Parser, gold_path: str | Path) -> Scores:
    """Parse a gold file's words and score the result against it."""
    gold, _ = read_conllu(gold_path)
    return evaluate(gold, parser.parse(gold))
