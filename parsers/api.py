"""The parser's three verbs as a Python API: train, parse, evaluate.

    from parsers.api import Parser, train_parser, evaluate_files
    parser, metrics = train_parser("corpora/en.conllu", dev="corpora/en-dev.conllu", out="runs/parser")
    parser = Parser.load("runs/parser")
    parser.parse_file("in.conllu", "out.conllu")
    ensemble = Parser.load_ensemble(["runs/parser", "runs/parser-seed2"])    # decoding as one, greedily
    print(evaluate_files("gold.conllu", "out.conllu"))
"""
from __future__ import annotations

import time
from pathlib import Path

import dynet as dy
from tqdm import tqdm

from parsers.conllu_io import Sentence, read_conllu, write_conllu
from parsers.evaluate import Scores, evaluate, evaluate_files
from parsers.experiment import PARSER_TRAINING, ParserExperiment, ParserSettings
from parsers.inference import Ensemble, NumpyParser, decode, engine_for, mismatch, refuse_ensemble
from parsers.model import ParserModelConfig, ParserTrainingConfig, StackLSTMParser
from parsers.decoding import with_tree
from parsers.text_io import read_tokens
from parsers.training import load_parser, save_parser
from stackparse.errors import UserError
from stackparse.experiments import run
from stackparse.training import TrainConfig

__all__ = ["Parser", "train_parser", "evaluate_files", "Scores"]


class Parser:
    """A trained parser: the model and its vocabularies, loaded from or saved to a directory."""

    def __init__(self, model: StackLSTMParser, pc: dy.ParameterCollection, ensemble: tuple["Parser", ...] = ()):
        """`ensemble`: more parsers that decode beside this one, as one (`parsers.inference.Ensemble`: their tag
        and action probabilities averaged; greedy, on the numpy engine)."""
        self.model, self.pc, self.ensemble = model, pc, tuple(ensemble)
        self._numpy_parser: NumpyParser | Ensemble | None = None     # made at the first greedy parse, then kept

    def models(self) -> list[StackLSTMParser]:
        """This parser's model, then its ensemble's."""
        return [self.model, *(p.model for p in self.ensemble)]

    @classmethod
    def load_ensemble(cls, directories: list[str | Path]) -> "Parser":
        """The parsers in `directories` (as `load`) decoding as one: models of one treebank and transition
        system, trained apart. One directory: that parser alone."""
        first, *more = [cls.load(d) for d in directories]
        for directory, other in zip(directories[1:], more):
            why = mismatch(first.model, other.model)
            if why:
                raise UserError(f"{directory}: cannot parse beside {directories[0]} in an ensemble: {why}")
        return cls(first.model, first.pc, tuple(more))

    @classmethod
    def load(cls, directory: str | Path) -> "Parser":
        """Restore a parser saved by `save` (or the best model of a training run directory)."""
        return cls(*load_parser(directory))

    def save(self, directory: str | Path) -> None:
        Path(directory).mkdir(parents=True, exist_ok=True)
        save_parser(self.model, self.pc, Path(directory))

    def parse(self, sentences: list[Sentence], batch_size: int | None = None, progress: bool = False,
              beam: int = 1, engine: str = "numpy", predict_tags: bool = False) -> list[Sentence]:
        """Copies of `sentences` with predicted heads and labels (greedy; beam search if beam > 1), and
        predicted UPOS and XPOS where the model's tagger tagged them: sentences without UPOS, and all
        with `predict_tags` (a model without a tagger refuses sentences without UPOS).

        Greedy decoding runs on `engine`: "numpy" (`parsers.inference`, the default) or "dynet" (the
        model's own graphs; beam search always does). `batch_size` None: the engine's default."""
        if self.ensemble:
            refuse_ensemble(beam, engine)
        total = sum(len(s.words) for s in sentences)
        with tqdm(total=total, unit="word", desc="parsing", disable=None if progress else True) as bar:
            if engine == "numpy" and self._numpy_parser is None:
                self._numpy_parser = engine_for(self.models())
            parsed = decode(self.model, sentences, engine, batch_size, bar.update, beam, predict_tags,
                            numpy_parser=self._numpy_parser)
        return [with_tree(s, p) for s, p in zip(sentences, parsed)]

    def parse_file(self, input_path: str | Path, output_path: str | Path, progress: bool = False,
                   beam: int = 1, engine: str = "numpy", predict_tags: bool = False,
                   input_format: str = "conllu") -> dict:
        """Parse a CoNLL-U file (or, `input_format` "tokens", one sentence of tokens per line:
        `parsers.text_io`); only HEAD and DEPREL change in the output, and UPOS and XPOS of the
        sentences the tagger tagged (see `parse`; text has no tags: all). Returns timing figures.

        Only what parsing reads is checked (IDs, ten columns, FORM and UPOS): HEAD, DEPREL and DEPS
        may hold anything, `_` say, as a tagger's output does. A missing output directory is refused
        before any work is done.
        """
        if not Path(output_path).parent.is_dir():
            raise UserError(f"{output_path}: cannot write, no such directory {Path(output_path).parent}")
        if input_format == "tokens":
            sentences = read_tokens(input_path)
        else:
            sentences, _ = read_conllu(input_path, require_trees=False)
        start = time.perf_counter()
        parsed = self.parse(sentences, progress=progress, beam=beam, engine=engine, predict_tags=predict_tags)
        seconds = time.perf_counter() - start
        # tags kept are written back as they were read: only the tagged sentences' lines change there
        write_conllu(output_path, sentences, [s.heads for s in parsed], [s.deprels for s in parsed],
                     [s.upos for s in parsed], [[w.xpos for w in s.words] for s in parsed])
        words = sum(len(s.words) for s in sentences)
        return {"sentences": len(sentences), "words": words, "seconds": seconds, "words_per_s": words / seconds}


def train_parser(train: str | Path, dev: str | Path | None = None, out: str | Path = "runs/parser",
                 config: ParserModelConfig = ParserModelConfig(), training: TrainConfig = PARSER_TRAINING,
                 parser_training: ParserTrainingConfig = ParserTrainingConfig(), skip_invalid: bool = False,
                 resume: bool = False, progress: bool = True, force: bool = False) -> tuple[Parser, dict]:
    """Train a parser on a CoNLL-U treebank with the shared trainer; the best model on dev is kept.

    Args:
        train: training treebank. A missing corpora/en*.conllu is obtained first.
        dev: development treebank for early stopping and model selection; default: the file beside
          `train` (en.conllu -> en-dev.conllu), else the last 5% of the training sentences.
        out: run directory; the best model goes to `out/best`.
        config, training, parser_training: the model's, the trainer's and the parser's training settings.
        skip_invalid: skip malformed sentences (reported) instead of stopping at the first.
        resume / force: continue the interrupted run in `out` / replace the run there (else one there
          is an error).

    Returns:
        The best parser and the run's metrics (`out/metrics.json`), with the best epoch's training and
        dev figures (its `validation`: dev_las, train_loss, ...) also at the top level.
    """
    settings = ParserSettings(config, parser_training, training, str(train), str(dev or ""), skip_invalid=skip_invalid)
    metrics = run(ParserExperiment(settings), out, resume, progress, force)
    return Parser.load(out), {**metrics["validation"], **metrics}


def evaluate_parser(parser: Parser, gold_path: str | Path, engine: str = "numpy", predict_tags: bool = False) -> Scores:
    """Parse a gold file's words (on its tags, or the tagger's with `predict_tags`) and score the result."""
    gold, _ = read_conllu(gold_path)
    return evaluate(gold, parser.parse(gold, engine=engine, predict_tags=predict_tags))
