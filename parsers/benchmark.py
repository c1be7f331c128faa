"""The parser benchmark: test-set accuracy and parsing speed of a trained model, with the training
figures of its run, written as JSON and as a markdown table (for BENCHMARKS.md)."""
from __future__ import annotations

import json
import platform
from datetime import date
from pathlib import Path

from parsers.api import Parser
from parsers.experiment import test_scores
from stackparse.config import write_json
from stackparse.errors import UserError


def benchmark_parser(run_dir: Path, test_path: Path, out: Path, batch_size: int = 32, beam: int = 1) -> dict:
    """Parse `test_path` once with a finished run's best model (one process, one core) and score it,
    beside the run's training figures."""
    run_dir, out = Path(run_dir), Path(out)
    if not (run_dir / "metrics.json").is_file():
        raise UserError(f"{run_dir}: not a finished train-parser run (no metrics.json)")
    run = json.loads((run_dir / "metrics.json").read_text())
    log = [json.loads(line) for line in (run_dir / "log.jsonl").read_text().splitlines()]
    result = {
        **test_scores(Parser.load(run_dir).model, Path(test_path), batch_size, beam),
        "dev_las": run["validation"]["dev_las"], "dev_uas": run["validation"]["dev_uas"],
        "best_epoch": run["best_epoch"], "epochs_run": len(log), "train_minutes": run["train_seconds"] / 60,
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
