"""The parser benchmark: test-set accuracy and parsing speed of a trained model, with the training
figures of its run, written as JSON and as a markdown table (for BENCHMARKS.md); optionally UDPipe 1
parsing the same file in the same process, so that both speeds come from one run on one machine."""
from __future__ import annotations

import json
import platform
import tempfile
import time
from datetime import date
from pathlib import Path
from typing import Sequence

from parsers.api import Parser
from parsers.conllu_io import Sentence, read_conllu
from parsers.evaluate import evaluate
from parsers.experiment import test_scores, timed_parse
from parsers.inference import refuse_ensemble
from stackparse.config import write_json
from stackparse.errors import UserError


def benchmark_parser(run_dir: Path, test_path: Path, out: Path, batch_size: int | None = None, beam: int = 1,
                     engine: str = "numpy", udpipe_model: Path | None = None, rounds: int = 1,
                     ensemble: Sequence[Path] = ()) -> dict:
    """Parse `test_path` with a finished run's best model (one process, one core) and score it, beside the
    run's training figures. Greedy decoding runs on `engine` (`parsers.inference.ENGINES`). With
    `udpipe_model`, UDPipe 1 parses the same file right after (`udpipe_scores`).

    With `rounds` > 1 the parse is timed that many times, alternating with UDPipe 1's when it is given, and the
    speeds reported are the best round of each (every round is kept, in `*_rounds`): on a machine whose speed
    drifts with load beyond our control, alternating rounds put both parsers through the same drift, and the best
    round is the least disturbed one.

    `ensemble`: more models (run or model directories) that parse beside the run's, as one
    (`parsers.inference.Ensemble`: greedy, numpy engine); the training figures stay the run's."""
    run_dir, out = Path(run_dir), Path(out)
    if not (run_dir / "metrics.json").is_file():
        raise UserError(f"{run_dir}: not a finished train-parser run (no metrics.json)")
    if rounds < 1:
        raise UserError(f"--rounds must be at least 1 (got {rounds})")
    run = json.loads((run_dir / "metrics.json").read_text())
    log = [json.loads(line) for line in (run_dir / "log.jsonl").read_text().splitlines()]
    if ensemble:
        refuse_ensemble(beam, engine)
    model, *more = Parser.load_ensemble([run_dir, *ensemble]).models()
    result = {
        **test_scores(model, Path(test_path), batch_size, beam, engine, more),
        "dev_las": run["validation"]["dev_las"], "dev_uas": run["validation"]["dev_uas"],
        "best_epoch": run["best_epoch"], "epochs_run": len(log), "train_minutes": run["train_seconds"] / 60,
        "train_sentences_per_s": sum(e["train_sents_per_s"] for e in log) / len(log),
        "config": json.loads((run_dir / "config.json").read_text()),
        "machine": platform.platform(), "date": date.today().isoformat(),
    }
    if ensemble:
        result["ensemble"] = [str(d) for d in ensemble]
    udpipe = None
    if udpipe_model is not None:
        udpipe = _UDPipe(Path(udpipe_model), Path(test_path))
        result["udpipe1"] = udpipe.scores()
    if rounds > 1:
        gold, _ = read_conllu(Path(test_path))
        ours = [(result["parse_seconds"], result["parse_cpu_seconds"])]
        theirs = [(result["udpipe1"]["parse_seconds"], result["udpipe1"]["parse_cpu_seconds"])] if udpipe else []
        for _ in range(rounds - 1):
            seconds, cpu, _ = timed_parse(model, gold, batch_size, beam, engine, more)
            ours.append((seconds, cpu))
            if udpipe:
                theirs.append(udpipe.timed_parse())
        _best(result, ours, result["words"])
        if udpipe:
            _best(result["udpipe1"], theirs, result["words"])
    out.mkdir(parents=True, exist_ok=True)
    write_json(out / "result.json", result)
    (out / "report.md").write_text(markdown(result))
    return result


def udpipe_scores(model_path: Path, test_path: Path) -> dict:
    """UDPipe 1's accuracy and speed on a gold treebank (`_UDPipe.scores`)."""
    return _UDPipe(model_path, test_path).scores()


class _UDPipe:
    """UDPipe 1 (`ufal.udpipe`, the optional extra `udpipe`) parsing a gold treebank's words on their gold UPOS, as
    our parser does in `test_scores`: its parser alone, the file read and written outside the timed part.

    On gold UPOS, the other columns the parser reads (lemma, XPOS, features) are its own tagger's, as in its
    training: UDPipe trains its parser on the tags its tagger predicts, and a tagger trained without lemmas
    or features leaves them empty, so the treebank's gold lemmas and features would be input it never saw."""

    def __init__(self, model_path: Path, test_path: Path):
        try:
            from ufal import udpipe
        except ImportError:
            raise UserError("--udpipe-model needs UDPipe 1's Python binding: pip install -e \".[udpipe]\"") from None
        self.udpipe, self.model_path = udpipe, model_path
        self.model = udpipe.Model.load(str(model_path))
        if self.model is None:
            raise UserError(f"{model_path}: not a UDPipe 1 model")
        self.gold, _ = read_conllu(test_path)
        self.sentences = _udpipe_sentences(udpipe, test_path)
        for sentence in self.sentences:                # its own lemmas, XPOS, features and UPOS (untimed)
            self.model.tag(sentence, udpipe.Model.DEFAULT)
        self.predicted = [[s.words[k].upostag for k in range(1, len(s.words))] for s in self.sentences]
        _set_upos(self.sentences, [sent.upos for sent in self.gold])

    def timed_parse(self) -> tuple[float, float]:
        """(wall seconds, CPU seconds) of parsing every sentence on the gold UPOS."""
        start, cpu = time.perf_counter(), time.process_time()
        for sentence in self.sentences:
            self.model.parse(sentence, self.udpipe.Model.DEFAULT)
        return time.perf_counter() - start, time.process_time() - cpu

    def scores(self) -> dict:
        """Accuracy and speed on the gold UPOS (one timed parse; CPU seconds too, which a busy machine inflates
        less than wall seconds); then, untimed, its own tagger's tags and the parses on them
        (`test_*_predicted_tags`)."""
        seconds, cpu = self.timed_parse()
        scores = evaluate(self.gold, _udpipe_parsed(self.udpipe, self.sentences))
        _set_upos(self.sentences, self.predicted)
        for sentence in self.sentences:
            self.model.parse(sentence, self.udpipe.Model.DEFAULT)
        own = evaluate(self.gold, _udpipe_parsed(self.udpipe, self.sentences))
        _set_upos(self.sentences, [sent.upos for sent in self.gold])
        return {"model": str(self.model_path), "test_uas": scores.uas, "test_las": scores.las,
                "parse_seconds": seconds, "parse_words_per_s": scores.words / seconds, "parse_cpu_seconds": cpu,
                "parse_words_per_cpu_s": scores.words / cpu, "test_upos": own.upos, "test_xpos": own.xpos,
                "test_las_predicted_tags": own.las, "test_uas_predicted_tags": own.uas}


def _best(result: dict, rounds: list[tuple[float, float]], words: int) -> None:
    """The speed figures of `result` from the fastest of `rounds` ((wall, CPU) seconds each), every round kept."""
    seconds, cpu = min(rounds)
    result.update(parse_seconds=seconds, parse_cpu_seconds=cpu, parse_words_per_s=words / seconds,
                  parse_words_per_cpu_s=words / cpu, rounds=len(rounds),
                  parse_words_per_s_rounds=[round(words / s) for s, _ in rounds])


def _udpipe_sentences(udpipe, path: Path) -> list:
    reader, error = udpipe.InputFormat.newConlluInputFormat(), udpipe.ProcessingError()
    reader.setText(Path(path).read_text(encoding="utf-8"))
    sentences, sentence = [], udpipe.Sentence()
    while reader.nextSentence(sentence, error):
        sentences.append(sentence)
        sentence = udpipe.Sentence()
    return sentences


def _set_upos(sentences: list, upos: list[list[str]]) -> None:
    for sentence, tags in zip(sentences, upos):
        for k, tag in enumerate(tags, 1):
            sentence.words[k].upostag = tag             # indexed: iterating SWIG's vector yields copies


def _udpipe_parsed(udpipe, sentences: list) -> list[Sentence]:
    writer = udpipe.OutputFormat.newConlluOutputFormat()
    with tempfile.TemporaryDirectory() as tmp:         # read_conllu reads files
        parsed_path = Path(tmp) / "udpipe1.conllu"
        parsed_path.write_text("".join(writer.writeSentence(s) for s in sentences), encoding="utf-8")
        return read_conllu(parsed_path)[0]


def markdown(r: dict) -> str:
    return (
        "| test UAS | test LAS | test LAS (universal) | dev UAS | dev LAS | best epoch / run | "
        "train min | train sents/s | parse words/s |\n|---|---|---|---|---|---|---|---|---|\n"
        f"| {r['test_uas']:.2f} | {r['test_las']:.2f} | {r['test_las_universal']:.2f} | {r['dev_uas']:.2f} | "
        f"{r['dev_las']:.2f} | {r['best_epoch']} / {r['epochs_run']} | {r['train_minutes']:.1f} | "
        f"{r['train_sentences_per_s']:.0f} | {r['parse_words_per_s']:.0f} |\n"
        f"\nParsing: {r['parse_words_per_s']:.0f} words/s ({r['parse_words_per_cpu_s']:.0f} words per CPU second), "
        f"{r.get('engine', 'dynet')} engine, beam {r['beam']}, batches of {r['parse_batch_size']} sentences"
        + (f", with {', '.join(r['ensemble'])} parsing beside it as one" if r.get("ensemble") else "")
        + (f"; the best of {r['rounds']} rounds ({', '.join(map(str, r['parse_words_per_s_rounds']))} words/s)"
           if r.get("rounds", 1) > 1 else "") + ".\n"
        + ("" if "test_upos" not in r else
           f"On the tagger's tags (nothing gold but the words): UPOS {r['test_upos']:.2f}, XPOS {r['test_xpos']:.2f}, "
           f"test LAS {r['test_las_predicted_tags']:.2f}, UAS {r['test_uas_predicted_tags']:.2f}.\n")
        + ("" if "udpipe1" not in r else
           f"UDPipe 1 in the same run: {r['udpipe1']['parse_words_per_s']:.0f} words/s "
           + (f"(rounds: {', '.join(map(str, r['udpipe1']['parse_words_per_s_rounds']))}) "
              if r['udpipe1'].get("rounds", 1) > 1 else "") +
           f"({r['udpipe1']['parse_words_per_cpu_s']:.0f} words per CPU second), test LAS "
           f"{r['udpipe1']['test_las']:.2f}, UAS {r['udpipe1']['test_uas']:.2f}; on its own tags UPOS "
           f"{r['udpipe1']['test_upos']:.2f}, LAS {r['udpipe1']['test_las_predicted_tags']:.2f}, UAS "
           f"{r['udpipe1']['test_uas_predicted_tags']:.2f}.\n"))
