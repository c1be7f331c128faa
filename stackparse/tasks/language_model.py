"""Word-level language modelling on the treebank's words (Joulin & Mikolov 2015, §5.2 and Table 4).

The paper compares RNN, LSTM and Stack RNN (100 hidden units, 60 stacks, recurrent matrix on) by
perplexity on the Penn Treebank. The PTB is not available here, so we use the words (FORM column of
the word lines; multiword-token ranges and empty nodes are skipped) of the UD English EWT treebank in
`../shared/corpora`, with its own train / dev / test split. Numbers are therefore not comparable to
Table 4's, only the models among themselves.

Choices, PTB-like where the paper's data had them, and why:
- Words are lowercased, and a word seen fewer than `min_count` times in training is <unk> (the PTB
  of Mikolov et al. is lowercased with a 10k vocabulary; EWT is 5 times smaller, so a count cutoff
  rather than a fixed size).
- Each sentence is followed by <eos>, and the text of a split is one stream, cut into `batch_size`
  contiguous streams trained in lockstep with truncated BPTT, the state carried across cuts (the usual
  LM batching; the paper trains online). Perplexity is exp of the mean -log p over every word and
  <eos> of the split, evaluated on `eval_streams` contiguous streams, each from the initial state.

Training is the shared trainer's: `LanguageModelObjective` only changes what a batch and the
validation are; its losses are `SequenceObjective`'s truncated-BPTT segments.
"""
from __future__ import annotations

import math
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import dynet as dy
import numpy as np

from stackparse.config import to_dict, write_json
from stackparse.errors import UserError
from stackparse.models import get_model_class
from stackparse.tasks.base import Example
from stackparse.training import TrainConfig, Trainer
from stackparse.training.sequence import SequenceDataConfig, SequenceObjective, segment_losses

UNK, EOS = "<unk>", "<eos>"
SPLITS = ("train", "dev", "test")


@dataclass(frozen=True)
class CorpusConfig:
    """Where the treebank is and how its words become a vocabulary (see the module docstring)."""
    directory: str = "../shared/corpora"
    pattern: str = "en_ewt-ud-{split}.conllu"
    min_count: int = 3
    lowercase: bool = True
    eval_streams: int = 10


def read_words(path: Path, lowercase: bool) -> list[list[str]]:
    """The sentences of a CoNLL-U file as lists of FORM values of its word lines."""
    sentences, words = [], []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                if words:
                    sentences.append(words)
                words = []
            elif not line.startswith("#"):
                cols = line.split("\t")
                if cols[0].isdigit():                    # not a multiword range "3-4" nor an empty node "3.1"
                    words.append(cols[1].lower() if lowercase else cols[1])
    if words:
        sentences.append(words)
    return sentences


class TreebankCorpus:
    """The three splits as arrays of word ids, and the vocabulary (built on train)."""

    def __init__(self, config: CorpusConfig):
        self.config = config
        text = {}
        for split in SPLITS:
            path = Path(config.directory) / config.pattern.format(split=split)
            if not path.is_file():
                raise UserError(f"{path}: treebank file not found (set --corpus-dir)")
            text[split] = [w for sentence in read_words(path, config.lowercase) for w in (*sentence, EOS)]
        counts = Counter(text["train"])
        self.symbols = (UNK, EOS, *sorted(w for w, c in counts.items() if c >= config.min_count and w != EOS))
        index = {w: i for i, w in enumerate(self.symbols)}
        self.ids = {split: np.array([index.get(w, 0) for w in words]) for split, words in text.items()}

    def streams(self, split: str, count: int) -> list[Example]:
        """The split cut into `count` contiguous streams (the remainder is dropped), every target scored."""
        ids = self.ids[split]
        length = (len(ids) - 1) // count
        return [Example(tuple(ids[i * length:(i + 1) * length]), tuple(ids[i * length + 1:(i + 1) * length + 1]),
                        (True,) * length, length) for i in range(count)]


class LanguageModelObjective(SequenceObjective):
    """The whole training text each epoch, `batch_size` streams in lockstep; validation on dev."""
    unit = "words"

    def __init__(self, corpus: TreebankCorpus, model, pc: dy.ParameterCollection, train: TrainConfig):
        self.corpus, self.model, self.pc, self.train = corpus, model, pc, train
        self.data = SequenceDataConfig()      # the plain path: truncated BPTT, no noise, no refinement

    def batches(self, epoch: int, rng: np.random.Generator) -> list[list[Example]]:
        self.model.start_epoch(epoch)
        return [self.corpus.streams("train", self.train.batch_size)]

    def perplexity(self, split: str) -> float:
        self.model.training = False
        nll = count = 0
        streams = self.corpus.streams(split, self.corpus.config.eval_streams)
        for loss, units in segment_losses(self.model, streams, self.train.bptt):
            nll, count = nll + loss.value() * len(streams), count + units
        return math.exp(nll / count)

    def validate(self) -> dict[str, float]:
        ppl = self.perplexity("dev")
        return {"val_entropy": math.log2(ppl), "val_perplexity": ppl}


def run_language_model(model: str, model_config: dict, train: TrainConfig, out: Path | str,
                       corpus: CorpusConfig = CorpusConfig(), progress: bool = True) -> dict:
    """Train `model` with the shared trainer on the treebank's words; dev and test perplexity.

    Writes config.json, the trainer's files and metrics.json into `out`; returns the metrics.
    """
    out = Path(out)
    data = TreebankCorpus(corpus)
    settings = get_model_class(model).Config(**model_config)
    write_json(out / "config.json", {"task": "treebank-lm", "model": model, "model_config": to_dict(settings),
                                     "train": to_dict(train), "corpus": to_dict(corpus)})

    def build(seed):
        pc = dy.ParameterCollection()
        m = get_model_class(model)(pc, settings, len(data.symbols), len(data.symbols))
        return LanguageModelObjective(data, m, pc, train)

    start = time.perf_counter()
    result = Trainer(train, build, progress).fit(out)
    seconds = time.perf_counter() - start
    objective = build(train.seed)
    objective.restore(out / "best")
    metrics = {"task": "treebank-lm", "model": model, "seed": train.seed, "vocabulary": len(data.symbols),
               "train_words": len(data.ids["train"]), "dev_perplexity": objective.perplexity("dev"),
               "test_perplexity": objective.perplexity("test"), "best_epoch": result.epoch,
               "validation": result.metrics, "train_seconds": seconds}
    write_json(out / "metrics.json", metrics)
    return metrics
