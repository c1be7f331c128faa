"""A part-of-speech (UPOS) tagger on a CoNLL-U treebank, with any of stackparse's encoders.

An example of stackparse as a user meets it: the model is written here with DyNet and the public
encoders (`stackparse.NeuralStackEncoder`, ...), trained by the shared trainer
(`stackparse.training.Trainer`), and the treebank read by `parsers.conllu_io`.

The model. A word is the concatenation of three embeddings: its lowercased form, its last three
letters (most of English inflection: -ing, -ed, -ly, -ion), and its shape (lowercase, capitalised,
all capitals, digits, punctuation, mixed), which keeps proper nouns and numbers apart once forms are
lowercased and costs nothing. A BiLSTM reads the sentence. Then `--encoder` picks what the softmax
layer tags:

- `bilstm`: the BiLSTM's outputs.
- any other name: the outputs of that stack encoder, which reads the BiLSTM's outputs left to right.
  The softmax layer sees the encoder's outputs only, so it cannot bypass the encoder, and the
  benchmark's rows differ in the encoder alone.
- `stack-lstm` (StackLSTMEncoder) pushes every token and pops none. A stack-LSTM has no controller:
  a parser pushes and pops as its transitions say, and a tagger has no transitions (deriving them
  would need a tree and an oracle at test time). Pushed only, it is an LSTM over the BiLSTM's
  outputs that starts from a learned guard vector, so this row is the control for the next five:
  the same depth and widths, no memory.
- `stack-rnn`, `list-rnn`: Joulin & Mikolov's controller with 10 stacks / 5 lists, k = 2 (their
  paper's settings and the encoders' defaults).
- `neural-stack`, `neural-queue`, `neural-deque`: Grefenstette et al.'s LSTM controller; the values
  pushed are as wide as its hidden state (the encoders' default).

Training: Adam (lr 0.001), minibatches of up to 32 sentences of one length (no padding, so a
sentence is computed as it would be alone), word dropout, dropout 0.2 on the BiLSTM's outputs,
gradient clipping at 5; the rate is halved when dev accuracy stops improving, training stops after 3
epochs without improvement, and the best epoch's model is kept in OUT/best.

Time: on the full UD English EWT training set (12,544 sentences), each encoder's run takes at most
about 10 minutes on one core. Measured from full batches of EWT (CPU time of one core), an epoch
with its dev tagging takes about 10 s with `bilstm`, 15 s with `stack-rnn` or `list-rnn`, 16-22 s
with `neural-stack` or `neural-queue` and 27 s with `neural-deque`. The trainer starts no epoch
that would end past 8 minutes (`--max-minutes`), and reading the files and tagging dev and test at
the end take a few seconds. On a slower or shared core the budget stops the slower encoders first;
the table gives the epochs each ran.

Output (`stackparse.experiments.run` drives the training and the test): OUT/best (the model: DyNet
parameters, vocab.json, and config.json, its TaggerConfig), OUT/config.json (every setting of the
run), OUT/log.jsonl (one line per epoch), OUT/metrics.json (the driver's), OUT/result.json (dev and
test accuracy, speeds, settings) and OUT/report.md (the markdown table row).

Usage, from the repository root with stackparse installed (`pip install -e .`):
    python examples/pos_tagger.py --encoder neural-stack --out runs/pos-neural-stack
    python examples/pos_tagger.py --encoder all --out runs/pos     # each encoder in turn, one table
The treebank defaults to corpora/en*.conllu (`python cli.py corpus get en` obtains it).
"""
from __future__ import annotations

import dataclasses
import functools
import json
import platform
import time
from collections import defaultdict
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Callable

import click
import numpy as np

import stackparse  # before dynet: it configures DyNet
import dynet as dy
from parsers.conllu_io import read_conllu
from stackparse.config import check, setting, to_dict, write_json
from stackparse.errors import UserError
from stackparse.experiments import run
from stackparse.training import TrainConfig

# A sentence: its word forms and their UPOS tags.
Tagged = tuple[list[str], list[str]]

# What reads the BiLSTM's outputs, by name (None: nothing). Every encoder is built as
# `Encoder(pc, input_dim, hidden_dim)` with its own defaults, which are its paper's settings.
ENCODERS: dict[str, Callable | None] = {
    "bilstm": None,
    "stack-lstm": stackparse.StackLSTMEncoder,
    "stack-rnn": stackparse.StackRNNEncoder,
    "list-rnn": stackparse.ListRNNEncoder,
    "neural-stack": stackparse.NeuralStackEncoder,
    "neural-queue": stackparse.NeuralQueueEncoder,
    "neural-deque": stackparse.NeuralDequeEncoder,
    # The 3rd-order default has N * N * I * (I + 2) state weights: 68 million for these widths.
    "nspda": functools.partial(stackparse.NSPDAEncoder, order=2),
}

SHAPES = ("lower", "capitalised", "capitals", "digits", "punctuation", "mixed")
SUFFIX_LENGTH = 3
UNKNOWN = "<unk>"


def shape(form: str) -> int:
    """The index in SHAPES of a word's spelling class ("I" and "A" count as capitalised)."""
    if any(c.isdigit() for c in form):
        return SHAPES.index("digits")
    if not any(c.isalpha() for c in form):
        return SHAPES.index("punctuation")
    if form.isupper():
        return SHAPES.index("capitals" if len(form) > 1 else "capitalised")
    if form[0].isupper():
        return SHAPES.index("capitalised")
    return SHAPES.index("lower" if form.islower() else "mixed")


def suffix(form: str) -> str:
    return form.lower()[-SUFFIX_LENGTH:]


@dataclass(frozen=True)
class TaggerConfig:
    """The tagger's settings, saved as config.json beside its parameters."""
    encoder: str = setting("bilstm", "what reads the BiLSTM's outputs, a name of ENCODERS", choices=ENCODERS)
    word_dim: int = setting(64, "width of the word embedding", min=1)
    suffix_dim: int = setting(16, "width of the suffix embedding", min=1)
    shape_dim: int = setting(4, "width of the shape embedding", min=1)
    lstm_dim: int = setting(64, "the BiLSTM's width in each direction", min=1)
    encoder_dim: int = setting(64, "the encoder's output width", min=1)
    word_dropout: float = setting(0.25, "alpha of word dropout (Kiperwasser & Goldberg 2016): in training, a "
                                  "word seen c times becomes the unknown word with probability alpha / "
                                  "(alpha + c), so that its embedding learns what rare words look like; 0 = off",
                                  min=0)
    dropout: float = setting(0.2, "dropout rate on the BiLSTM's outputs in training", min=0, max=1, max_open=True)

    def validate(self) -> None:
        check(self)


@dataclass(frozen=True)
class Vocabulary:
    """The symbols of the training sentences. Index 0 of `words` and `suffixes` is the unknown symbol.

    words: lowercased forms, most frequent first. counts: how often each occurs (0 for the unknown
    word), for word dropout. suffixes: the last SUFFIX_LENGTH letters of the forms, lowercased.
    tags: the UPOS tags.
    """
    words: tuple[str, ...]
    counts: tuple[int, ...]
    suffixes: tuple[str, ...]
    tags: tuple[str, ...]

    @classmethod
    def build(cls, sentences: list[Tagged]) -> "Vocabulary":
        """The vocabulary of training sentences.

        Args:
          sentences: (forms, tags) pairs.
        Returns:
          Their words with counts, suffixes and tags.
        """
        counts: dict[str, int] = defaultdict(int)
        for forms, _ in sentences:
            for form in forms:
                counts[form.lower()] += 1
        words = sorted(counts, key=lambda w: (-counts[w], w))
        suffixes = sorted({suffix(form) for forms, _ in sentences for form in forms})
        tags = sorted({tag for _, tags in sentences for tag in tags})
        return cls((UNKNOWN, *words), (0, *(counts[w] for w in words)), (UNKNOWN, *suffixes), tuple(tags))

    @functools.cached_property
    def _index(self) -> dict[str, dict[str, int]]:
        return {kind: {s: i for i, s in enumerate(getattr(self, kind))} for kind in ("words", "suffixes", "tags")}

    def word(self, form: str) -> int:
        return self._index["words"].get(form.lower(), 0)

    def suffix(self, form: str) -> int:
        return self._index["suffixes"].get(suffix(form), 0)

    def tag(self, tag: str) -> int:
        """The index of a training tag (a KeyError for one the training set lacks)."""
        return self._index["tags"][tag]

    def save(self, path: Path) -> None:
        Path(path).write_text(json.dumps(dataclasses.asdict(self)), encoding="utf-8")

    @classmethod
    def load(cls, path: Path) -> "Vocabulary":
        return cls(**{k: tuple(v) for k, v in json.loads(Path(path).read_text(encoding="utf-8")).items()})


class PosTagger:
    """Embeddings, a BiLSTM, optionally a stack encoder, and a softmax layer over the tags.

    Args:
      config: the settings.
      vocab: the training vocabulary.
    """

    def __init__(self, config: TaggerConfig, vocab: Vocabulary):
        config.validate()
        self.config, self.vocab = config, vocab
        self.pc = pc = dy.ParameterCollection()
        c = config
        self.words = pc.add_lookup_parameters((len(vocab.words), c.word_dim))
        self.suffixes = pc.add_lookup_parameters((len(vocab.suffixes), c.suffix_dim))
        self.shapes = pc.add_lookup_parameters((len(SHAPES), c.shape_dim))
        input_dim = c.word_dim + c.suffix_dim + c.shape_dim
        self.forward = dy.VanillaLSTMBuilder(1, input_dim, c.lstm_dim, pc)
        self.backward = dy.VanillaLSTMBuilder(1, input_dim, c.lstm_dim, pc)
        encoder = ENCODERS[c.encoder]
        self.encoder = None if encoder is None else encoder(pc, 2 * c.lstm_dim, c.encoder_dim)
        top_dim = 2 * c.lstm_dim if self.encoder is None else c.encoder_dim
        self.W = pc.add_parameters((len(vocab.tags), top_dim))
        self.b = pc.add_parameters((len(vocab.tags),), init=0.0)

    def scores(self, batch: list[list[str]], rng: np.random.Generator | None = None) -> list[dy.Expression]:
        """Tag scores of sentences of one length n, in the current computation graph.

        Args:
          batch: B sentences' forms, all of length n.
          rng: in training, the source of word dropout (DyNet's own seed drives dropout); None to predict.
        Returns:
          n expressions of (n_tags,) x B.
        """
        xs = [self._embed(forms, rng) for forms in zip(*batch)]          # n x (input_dim,) x B
        forward = self.forward.initial_state().transduce(xs)
        backward = self.backward.initial_state().transduce(xs[::-1])[::-1]
        hs = [dy.concatenate([f, b]) for f, b in zip(forward, backward)]   # n x (2 lstm_dim,) x B
        if rng is not None:
            hs = [dy.dropout(h, self.config.dropout) for h in hs]
        if self.encoder is not None:
            hs = self.encoder.initial_state(len(batch)).transduce(hs)    # n x (encoder_dim,) x B
        return [dy.affine_transform([self.b, self.W, h]) for h in hs]

    def _embed(self, forms: tuple[str, ...], rng: np.random.Generator | None) -> dy.Expression:
        """The input vectors of one position of a batch: (input_dim,) x B."""
        words = np.array([self.vocab.word(f) for f in forms])
        alpha = self.config.word_dropout
        if rng is not None and alpha > 0:
            counts = np.array(self.vocab.counts)[words]
            words[rng.random(len(words)) < alpha / (alpha + counts)] = 0
        return dy.concatenate([dy.lookup_batch(self.words, words.tolist()),
                               dy.lookup_batch(self.suffixes, [self.vocab.suffix(f) for f in forms]),
                               dy.lookup_batch(self.shapes, [shape(f) for f in forms])])

    def loss(self, batch: list[Tagged], rng: np.random.Generator) -> dy.Expression:
        """The summed cross-entropy of the gold tags, with word dropout and dropout.

        Args:
          batch: (forms, tags) of sentences of one length.
          rng: the source of word dropout.
        Returns:
          A scalar expression.
        """
        scores = self.scores([forms for forms, _ in batch], rng)
        gold = zip(*([self.vocab.tag(t) for t in tags] for _, tags in batch))   # n x B tag ids
        return dy.sum_batches(dy.esum([dy.pickneglogsoftmax_batch(s, list(g)) for s, g in zip(scores, gold)]))

    def tag(self, sentences: list[list[str]], batch_size: int = 32) -> list[list[str]]:
        """Predict the tags of sentences (each batch of one length in a graph of its own).

        Args:
          sentences: the forms of each sentence.
          batch_size: sentences per batch.
        Returns:
          The tags of each sentence, in the order given.
        """
        tags: list[list[str]] = [[] for _ in sentences]
        for batch in batches_by_length([len(s) for s in sentences], batch_size):
            dy.renew_cg()
            scores = [s.npvalue().reshape(len(self.vocab.tags), -1) for s in self.scores([sentences[i] for i in batch])]
            best = np.stack(scores).argmax(axis=1)                     # (n, B) tag ids
            for column, i in enumerate(batch):
                tags[i] = [self.vocab.tags[t] for t in best[:, column]]
        return tags

    def parameter_count(self) -> int:
        """The number of trained values."""
        return sum(p.as_array().size for p in self.pc.parameters_list() + self.pc.lookup_parameters_list())

    def save(self, directory: Path) -> None:
        """Write `params` (DyNet), `vocab.json` and `config.json` (the TaggerConfig) into `directory`.

        Rebuilding from config.json and then populating the parameters, rather than dy.save's pickled
        spec, keeps a model loadable from any program: this class may live in `__main__`.
        """
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        self.pc.save(str(directory / "params"))
        self.vocab.save(directory / "vocab.json")
        write_json(directory / "config.json", dataclasses.asdict(self.config))

    @classmethod
    def load(cls, directory: Path) -> "PosTagger":
        """A tagger saved by `save`.

        Args:
          directory: the model directory (OUT/best of a run).
        Returns:
          The tagger, its parameters those saved.
        """
        directory = Path(directory)
        missing = [f for f in ("params", "vocab.json", "config.json") if not (directory / f).is_file()]
        if missing:
            raise UserError(f"{directory}: not a tagger model directory (missing {', '.join(missing)})")
        config = TaggerConfig(**json.loads((directory / "config.json").read_text(encoding="utf-8")))
        tagger = cls(config, Vocabulary.load(directory / "vocab.json"))
        tagger.pc.populate(str(directory / "params"))
        return tagger


def batches_by_length(lengths: list[int], batch_size: int, rng: np.random.Generator | None = None) -> list[list[int]]:
    """Sentence indices in batches whose sentences all have one length, so a batch needs no padding.

    Args:
      lengths: each sentence's length.
      batch_size: the most sentences in a batch.
      rng: to shuffle (training): the sentences within each length, then the order of the batches.
        None: batches by increasing length, in the sentences' order.
    Returns:
      The batches, lists of indices.
    """
    by_length: dict[int, list[int]] = defaultdict(list)
    for i in (range(len(lengths)) if rng is None else rng.permutation(len(lengths))):
        by_length[lengths[i]].append(int(i))
    batches = [group[start:start + batch_size] for _, group in sorted(by_length.items())
               for start in range(0, len(group), batch_size)]
    return batches if rng is None else [batches[i] for i in rng.permutation(len(batches))]


def evaluate(tagger: PosTagger, sentences: list[Tagged]) -> dict[str, float]:
    """Tag sentences and score the tags.

    Args:
      tagger: the model. sentences: (forms, gold tags) pairs.
    Returns:
      accuracy (percent of words tagged right) and words_per_s.
    """
    start = time.perf_counter()
    predicted = tagger.tag([forms for forms, _ in sentences])
    seconds = time.perf_counter() - start
    words = sum(len(forms) for forms, _ in sentences)
    right = sum(p == g for (_, gold), tags in zip(sentences, predicted) for p, g in zip(tags, gold))
    return {"accuracy": 100 * right / words, "words_per_s": words / seconds}


class TaggingObjective:
    """The tagger as `stackparse.training.Trainer` drives it: training batches, losses, dev accuracy.

    Args:
      tagger: the model to train. train, dev: (forms, tags) pairs. batch_size: sentences per batch.
    """
    criterion = "dev_accuracy"
    maximize = True
    unit = "sents"

    def __init__(self, tagger: PosTagger, train: list[Tagged], dev: list[Tagged], batch_size: int):
        self.tagger, self.train, self.dev, self.batch_size = tagger, train, dev, batch_size
        self._rng = np.random.default_rng(0)

    def param_collection(self) -> dy.ParameterCollection:
        return self.tagger.pc

    def batches(self, epoch: int, rng: np.random.Generator) -> list[list[int]]:
        self._rng = rng         # this epoch's word dropout draws from it too
        return batches_by_length([len(forms) for forms, _ in self.train], self.batch_size, rng)

    def losses(self, batch: list[int]):
        dy.renew_cg()
        # Per sentence, as the parser's objective: the trainer's train_loss is then a sentence's loss.
        yield self.tagger.loss([self.train[i] for i in batch], self._rng) / len(batch), len(batch)

    def validate(self) -> dict[str, float]:
        scores = evaluate(self.tagger, self.dev)
        return {"dev_accuracy": scores["accuracy"], "dev_words_per_s": scores["words_per_s"]}

    def save(self, directory: Path) -> None:
        self.tagger.save(directory)

    def restore(self, directory: Path) -> None:
        self.tagger.pc.populate(str(Path(directory) / "params"))


# The trainer's settings: see the module docstring (max_minutes keeps a run on EWT within ~10 minutes).
TRAINING = TrainConfig(epochs=20, batch_size=32, bptt=0, optimizer="adam", lr=0.001, lr_schedule="plateau",
                       clip=5.0, patience=3, seed=1, max_minutes=8.0)


def read_tagged(path: Path, max_sentences: int = 0) -> list[Tagged]:
    """The (forms, UPOS tags) of a CoNLL-U file's sentences; the first `max_sentences` (0 = all)."""
    sentences, _ = read_conllu(path)
    return [(s.forms, s.upos) for s in sentences[:max_sentences or None]]


@dataclass(frozen=True)
class TaggerSettings:
    """Everything that defines a tagger run; saved as OUT/config.json."""
    tagger: TaggerConfig = TaggerConfig()
    training: TrainConfig = TRAINING
    train_file: str = setting("corpora/en.conllu", "training treebank (CoNLL-U)")
    dev_file: str = setting("corpora/en-dev.conllu", "development treebank: early stopping, the best epoch")
    test_file: str = setting("corpora/en-test.conllu", "test treebank, scored once at the end")
    max_sentences: int = setting(0, "use only the first N sentences of each file, 0 = all (a quick trial)", min=0)


class TaggerExperiment:
    """A tagger trained on a treebank, its best epoch on dev tested (`stackparse.experiments.run` drives it)."""

    def __init__(self, settings: TaggerSettings):
        settings.tagger.validate()
        self.settings, self.train_config = settings, settings.training
        self.train, self.dev, self.test_set = (read_tagged(Path(p), settings.max_sentences)
                                               for p in (settings.train_file, settings.dev_file, settings.test_file))
        self.vocab = Vocabulary.build(self.train)

    def build(self, seed: int) -> TaggingObjective:
        return TaggingObjective(PosTagger(self.settings.tagger, self.vocab), self.train, self.dev,
                                self.train_config.batch_size)

    def test(self, objective: TaggingObjective) -> dict:
        tested = evaluate(objective.tagger, self.test_set)
        return {"encoder": self.settings.tagger.encoder, "test_accuracy": tested["accuracy"],
                "tag_words_per_s": tested["words_per_s"], "parameters": objective.tagger.parameter_count()}


def train_tagger(config: TaggerConfig, training: TrainConfig, train_path: Path, dev_path: Path, test_path: Path,
                 out: Path, max_sentences: int = 0, progress: bool = True) -> dict:
    """Train a tagger, keep its best epoch on dev, and score that model on dev and test.

    Args:
      config, training: the tagger's and the trainer's settings.
      train_path, dev_path, test_path: CoNLL-U treebank files.
      out: the run directory (what it holds: see the module docstring). A run there before is replaced.
      max_sentences: use only the first N sentences of each file (0 = all), for a quick trial.
      progress: show the trainer's progress bar and a line per epoch.
    Returns:
      The result, as written to OUT/result.json.
    """
    experiment = TaggerExperiment(TaggerSettings(config, training, str(train_path), str(dev_path), str(test_path),
                                                 max_sentences))
    metrics = run(experiment, out, progress=progress, force=True)
    log = [json.loads(line) for line in (Path(out) / "log.jsonl").read_text().splitlines()]
    result = {
        "encoder": config.encoder, "dev_accuracy": metrics["validation"]["dev_accuracy"],
        "test_accuracy": metrics["test_accuracy"], "parameters": metrics["parameters"],
        "best_epoch": metrics["best_epoch"], "epochs_run": len(log), "train_minutes": metrics["train_seconds"] / 60,
        "train_sentences": len(experiment.train), "train_sents_per_s": float(np.mean([e["train_sents_per_s"] for e in log])),
        "tag_words_per_s": metrics["tag_words_per_s"], "settings": to_dict(experiment.settings),
        "machine": platform.platform(), "date": date.today().isoformat(),
    }
    write_json(Path(out) / "result.json", result)
    (Path(out) / "report.md").write_text(markdown([result]), encoding="utf-8")
    return result


def markdown(results: list[dict]) -> str:
    """A markdown table with one row per result (of `train_tagger`)."""
    rows = [f"| {r['encoder']} | {r['dev_accuracy']:.2f} | {r['test_accuracy']:.2f} | {r['parameters']:,} | "
            f"{r['best_epoch']} / {r['epochs_run']} | {r['train_minutes']:.1f} | {r['train_sents_per_s']:.0f} | "
            f"{r['tag_words_per_s']:.0f} |\n" for r in results]
    return ("| encoder | dev acc | test acc | parameters | best epoch / run | train min | train sents/s | "
            "tag words/s |\n|---|---|---|---|---|---|---|---|\n" + "".join(rows))


@click.command(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.option("--encoder", type=click.Choice([*ENCODERS, "all"]), default="bilstm", show_default=True,
              help="what reads the BiLSTM's outputs (the models: this file's docstring); all: each in turn, "
              "into OUT/ENCODER, and one table of them in OUT/report.md")
@click.option("--train", "train_path", type=click.Path(dir_okay=False, path_type=Path),
              default=Path("corpora/en.conllu"), show_default=True, help="training treebank (CoNLL-U)")
@click.option("--dev", "dev_path", type=click.Path(dir_okay=False, path_type=Path),
              default=Path("corpora/en-dev.conllu"), show_default=True,
              help="development treebank: early stopping and the choice of the best epoch")
@click.option("--test", "test_path", type=click.Path(dir_okay=False, path_type=Path),
              default=Path("corpora/en-test.conllu"), show_default=True, help="test treebank, scored once at the end")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="run directory [default: runs/pos-ENCODER; runs/pos for all]")
@click.option("--epochs", type=click.IntRange(min=1), default=TRAINING.epochs, show_default=True,
              help="most epochs per encoder")
@click.option("--max-minutes", type=click.FloatRange(min=0), default=TRAINING.max_minutes, show_default=True,
              help="time budget per encoder: no epoch starts that would end past it, 0 = none")
@click.option("--max-sentences", type=click.IntRange(min=0), default=0, show_default=True,
              help="use only the first N sentences of each file, 0 = all (a quick trial)")
@click.option("--batch-size", type=click.IntRange(min=1), default=TRAINING.batch_size, show_default=True,
              help="sentences per minibatch")
@click.option("--seed", type=int, default=TRAINING.seed, show_default=True, help="random seed")
@click.option("--quiet", is_flag=True, help="no progress bar or per-epoch lines")
def main(encoder, train_path, dev_path, test_path, out, epochs, max_minutes, max_sentences, batch_size, seed, quiet):
    """Train a UPOS tagger on a CoNLL-U treebank: word embeddings and a BiLSTM, then the stack
    encoder ENCODER, trained with Adam and early stopping on dev accuracy. Prints dev and test accuracy as a
    markdown table row; writes OUT/best (the model), OUT/result.json and OUT/report.md. Each
    encoder's run on UD English EWT takes at most about 10 minutes on one core."""
    training = dataclasses.replace(TRAINING, epochs=epochs, max_minutes=max_minutes, batch_size=batch_size, seed=seed)
    names = list(ENCODERS) if encoder == "all" else [encoder]
    out = out or Path("runs/pos" if encoder == "all" else f"runs/pos-{encoder}")
    try:
        results = [train_tagger(TaggerConfig(encoder=name), training, train_path, dev_path, test_path,
                                out / name if encoder == "all" else out, max_sentences, not quiet)
                   for name in names]
    except UserError as error:
        raise click.ClickException(str(error)) from None
    if encoder == "all":
        write_json(out / "results.json", {"results": results})
        (out / "report.md").write_text(markdown(results), encoding="utf-8")
    click.echo(markdown(results), nl=False)


if __name__ == "__main__":
    main()
