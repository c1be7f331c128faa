"""The parser benchmark: test-set accuracy and parsing speed of a trained model, with the training
figures of its run, written as JSON and as a markdown table (for BENCHMARKS.md)."""
from __future__ import annotations

import json
import platform
import time
from datetime import date
from pathlib import Path

from parsers.api import Parser
from parsers.conllu_io import read_conllu
from parsers.evaluate import evaluate
from stackparse.config import write_json
from stackparse.errors import UserError


def benchmark_parser(run_dir: Path, test_path: Path, out: Path, batch_size: int = 32, beam: int = 1) -> dict:
    """Parse `test_path` once with the run's best model (one process, one core) and score it."""
    run_dir, out = Path(run_dir), Path(out)
    if not (run_dir / "metrics.json").is_file():
        raise UserError(f"{run_dir}: not a finished train-parser run (no metrics.json)")
    parser = Parser.load(run_dir)
    gold, _ = read_conllu(test_path)
    start = time.perf_counter()
    parsed = parser.parse(gold, batch_size=batch_size, beam=beam)
    seconds = time.perf_counter() - start
    scores = evaluate(gold, parsed)
    run = json.loads((run_dir / "metrics.json").read_text())
    log = [json.loads(line) for line in (run_dir / "log.jsonl").read_text().splitlines()]
    result = {
        "test_file": str(test_path), "words": scores.words, "sentences": len(gold),
        "test_uas": scores.uas, "test_las": scores.las, "test_las_universal": scores.las_universal,
        "parse_seconds": seconds, "parse_words_per_s": scores.words / seconds,
        "parse_sentences_per_s": len(gold) / seconds, "parse_batch_size": batch_size, "beam": beam,
        "dev_las": run["dev_las"], "dev_uas": run["dev_uas"], "best_epoch": run["epoch"],
        "epochs_run": len(log), "train_minutes": run["train_minutes"],
        "train_sentences_per_s": sum(e["train_sents_per_s"] for e in log) / len(log),
        "config": json.loads((run_dir / "config.json").read_text()),
        "machine": platform.platform(), "date": date.today().isoformat(),
    }
    out.mkdir(parents=True, exist_ok=True)
    write_json(out / "result.json", result)
    (out / "report.md").write_text(markdown(result))
    return result


def markdown(r: dict) -> str:
    return (
        "| test UAS | test LAS | test LAS (universal) | dev UAS | dev LAS | best epoch / run | "
        "train min | train sents/s | parse words/s |\n|---|---|---|---|---|---|---|---|---|\n"
        f"| {r['test_uas']:.2f} | {r['test_las']:.2f} | {r['test_las_universal']:.2f} | {r['dev_uas']:.2f} | "
        f"{r['dev_las']:.2f} | {r['best_epoch']} / {r['epochs_run']} | {r['train_minutes']:.1f} | "
        f"{r['train_sentences_per_s']:.0f} | {r['parse_words_per_s']:.0f} |\n")
