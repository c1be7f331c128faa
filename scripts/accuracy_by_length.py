"""Coarse and fine accuracy, and the mean number of target symbols right before the first error, of trained
sequence models by source length, on a task of the same vocabulary: where
between the shortest training lengths and the test range a model stops being right. For the ITG tasks of
Grefenstette et al., whose lengths follow the grammar (mostly short), give the `-uniform` variant, which draws each
length alike. Lengths in bands of --band, --samples sequences a length, each model on the same sequences.

    python scripts/accuracy_by_length.py svo-sov-uniform 8 128 RUN_DIR [RUN_DIR ...] [--band 8] [--samples 16]
"""
import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from stackparse.evaluation.sequence import score_examples  # noqa: E402
from stackparse.experiments.sequence import load  # noqa: E402
from stackparse.tasks.base import get_task  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("task")
    parser.add_argument("lo", type=int)
    parser.add_argument("hi", type=int)
    parser.add_argument("runs", nargs="+")
    parser.add_argument("--band", type=int, default=8)
    parser.add_argument("--samples", type=int, default=16)
    args = parser.parse_args()
    task, rng = get_task(args.task), np.random.default_rng(0)
    ns = [n for n in range(max(args.lo, task.min_n()), args.hi + 1) for _ in range(args.samples)]
    examples = [task.sample(rng, n) for n in ns]
    lengths = np.array(ns)
    bands = [lengths // args.band == b for b in np.unique(lengths // args.band)]       # a mask per band
    columns = []
    for run in args.runs:
        results = score_examples(load(run)[1].model, examples)
        measures = np.array([(r.correct, r.fine, r.prefix) for r in results], float)
        columns.append([measures[band].mean(axis=0) for band in bands])
    print("coarse / fine accuracy / target symbols right before the first error (mean)\n")
    print("| source length | " + " | ".join(Path(run).name for run in args.runs) + " |")
    print("|---|" + "---|" * len(args.runs))
    for i, band in enumerate(bands):
        print(f"| {lengths[band].min()}-{lengths[band].max()} | "
              + " | ".join("{:.2f} / {:.2f} / {:.1f}".format(*column[i]) for column in columns) + " |")


if __name__ == "__main__":
    main()
