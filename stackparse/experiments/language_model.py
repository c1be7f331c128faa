"""Word-level language modelling on the treebank's words (Joulin & Mikolov 2015, §5.2 and Table 4).

The paper compares RNN, LSTM and Stack RNN (100 hidden units, 60 stacks, recurrent matrix on) by
perplexity on the Penn Treebank. The PTB is not available here, so we use the words (FORM of the word
lines, not multiword-token ranges nor empty nodes) of the UD English EWT treebank in
`../shared/corpora`, with its own split: the numbers compare the models, not with Table 4's.

Choices, PTB-like where the paper's data had them, and why:
- Words are lowercased, and a word seen fewer than `min_count` times in training is <unk> (the PTB of Mikolov et al. is
  lowercased with a 10k vocabulary; EWT is 5 times smaller, so a count cutoff rather than a fixed size).
- Each sentence is followed by <eos>, and the text of a split is one stream, cut into `batch_size`
  contiguous streams trained in lockstep with truncated BPTT, the state carried across cuts (the usual
  LM batching; the paper trains online). Perplexity is exp of the mean -log p over every word and
  <eos> of the split, evaluated on `eval_streams` contiguous streams, each from the initial state.

The experiment kind "language-model". The CoNLL-U reading is a few lines of its own, not
`parsers.conllu_io`: the library never imports the parser wing, and the LM needs only the FORMs.
"""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import dynet as dy
import numpy as np

from stackparse.config import check, setting
from stackparse.errors import UserError
from stackparse.experiments import KINDS, Kind
from stackparse.experiments.sequence import ModelSettings
from stackparse.models import get_model_class
from stackparse.models.capabilities import Scheduled
from stackparse.sequences import Example
from stackparse.training.methods import segment_losses
from stackparse.training.trainer import TrainConfig

UNK, EOS = "<unk>", "<eos>"
SPLITS = ("train", "dev", "test")


@dataclass(frozen=True)
class CorpusConfig:
    """Where the treebank is and how its words become a vocabulary (see the module docstring)."""
    directory: str = setting("../shared/corpora", "the directory of the treebank's files")
    pattern: str = setting("en_ewt-ud-{split}.conllu", "the files' names, {split} = train, dev or test")
    min_count: int = setting(3, "a word seen fewer times in training is <unk>", min=1)
    lowercase: bool = setting(True, "lowercase the words")
    eval_streams: int = setting(10, "contiguous streams a split is evaluated on", min=1)

    def validate(self) -> None:
        check(self)


def read_words(path: Path, lowercase: bool) -> list[list[str]]:
    """The sentences of a CoNLL-U file as lists of the FORMs of their word lines (neither a multiword
    range "3-4" nor an empty node "3.1" is a word line)."""
    sentences, words = [], []
    for line in Path(path).read_text(encoding="utf-8").splitlines() + [""]:
        columns = line.split("\t")
        if columns[0].isdigit():
            words.append(columns[1].lower() if lowercase else columns[1])
        elif not line and words:
            sentences.append(words)
            words = []
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


class LanguageModelObjective:
    """The whole training text each epoch, `batch_size` streams in lockstep; validation on dev."""
    criterion = "val_entropy"
    maximize = False
    unit = "words"

    def __init__(self, corpus: TreebankCorpus, model, pc: dy.ParameterCollection, train: TrainConfig):
        self.corpus, self.model, self.pc, self.train = corpus, model, pc, train

    def param_collection(self) -> dy.ParameterCollection:
        return self.pc

    def batches(self, epoch: int, rng: np.random.Generator) -> list[list[Example]]:
        if isinstance(self.model, Scheduled):
            self.model.start_epoch(epoch)
        return [self.corpus.streams("train", self.train.batch_size)]

    def losses(self, batch: list[Example]):
        self.model.training = True
        return segment_losses(self.model, batch, self.train.bptt)

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

    def save(self, directory: Path) -> None:
        self.pc.save(str(Path(directory) / "params"))

    def restore(self, directory: Path) -> None:
        self.pc.populate(str(Path(directory) / "params"))


@dataclass(frozen=True)
class LanguageModelSettings(ModelSettings):
    """Everything that defines a language-model run; saved as its config.json."""
    model: str = setting(help="model name (see `models`)")
    model_config: object = None
    train: TrainConfig = TrainConfig()
    corpus: CorpusConfig = CorpusConfig()


@KINDS.register
class LanguageModel(Kind):
    """`model` trained on the treebank's words; dev and test perplexity."""
    name = "language-model"
    Settings = LanguageModelSettings

    def __init__(self, settings: LanguageModelSettings):
        super().__init__(settings)
        self.corpus = TreebankCorpus(settings.corpus)

    @classmethod
    def defaults(cls, task: str, model: str) -> LanguageModelSettings:
        return LanguageModelSettings(model)

    def build(self, seed: int) -> LanguageModelObjective:
        pc, size = dy.ParameterCollection(), len(self.corpus.symbols)
        model = get_model_class(self.settings.model)(pc, self.settings.model_config, size, size)
        return LanguageModelObjective(self.corpus, model, pc, self.settings.train)

    def test(self, objective: LanguageModelObjective) -> dict:
        return {"task": "treebank-lm", "model": self.settings.model, "seed": self.settings.train.seed,
                "vocabulary": len(self.corpus.symbols), "train_words": len(self.corpus.ids["train"]),
                "dev_perplexity": objective.perplexity("dev"), "test_perplexity": objective.perplexity("test")}
