"""How far Algorithm 1 (two-stage incremental learning, `stackparse.training.sequence.algorithm1`) got in each run of a
benchmark directory: the stage, phase and longest training length N_l of the last epoch trained, from each run's
log (a run's `converged` record is its epochs' validation accuracy of 1). Runs logged since `stage` and `longest`
were added give the same from their log; this also reads the runs logged before.

    python scripts/algorithm1_reach.py runs/bench-mali-table4-sitting [more directories]

Prints a markdown table: per task and column, the runs' (stage, phase, N_l) reached, counted.
"""
import collections
import functools
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from stackparse.tasks import get_task  # noqa: E402
from stackparse.training.sequence import algorithm1  # noqa: E402


@functools.lru_cache(maxsize=None)
def training_lengths(task: str) -> tuple[int, int]:
    """The shortest and longest training length of a task with fixed splits (Algorithm 1's n_min and N_max)."""
    sizes = [e.n for e in get_task(task).split("train")]
    return min(sizes), max(sizes)


def reach(run: Path) -> tuple | None:
    """(stage, phase, N_l) of the last epoch a run trained, None where it did not use Algorithm 1."""
    config = json.loads((run / "config.json").read_text())
    data = config.get("data", {})
    if data.get("incremental") != "two-stage":
        return None
    rows = [json.loads(line) for line in (run / "log.jsonl").read_text().splitlines() if line.strip()]
    rows = [r for r in rows if "val_accuracy" in r]
    n_min, n_max = training_lengths(config["task"])
    converged = [r["val_accuracy"] == 1.0 for r in rows]
    step = algorithm1(len(rows) - 1, converged, data.get("incremental_midpoint", 14), n_max,
                      (data.get("incremental_stage1", 200), data.get("incremental_stage2", 350)), n_min)
    return ("returned",) if step is None else (step.stage, step.phase, step.n_l)


def main(directories: list[str]) -> None:
    counts: dict[tuple[str, str], collections.Counter] = collections.defaultdict(collections.Counter)
    for directory in directories:
        for run in sorted(Path(directory).glob("*/log.jsonl")):
            task, label, _ = run.parent.name.split("--")
            reached = reach(run.parent)
            if reached is not None:
                counts[task, label][reached] += 1
    print("| task | column | runs: (stage, phase, longest length N_l) of the last epoch |")
    print("|---|---|---|")
    for (task, label), counter in sorted(counts.items()):
        cells = ", ".join(f"{n} x {r}" for r, n in sorted(counter.items(), key=str))
        print(f"| {task} | {label} | {cells} |")


if __name__ == "__main__":
    main(sys.argv[1:])
