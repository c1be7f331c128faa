"""Aggregate a suite's results into a markdown table beside the paper's numbers (and JSON)."""
from __future__ import annotations

from collections import defaultdict

import numpy as np

from stackparse.benchmarks.suites import Suite


def aggregate(suite: Suite, results: list[dict]) -> dict:
    """task -> model -> {mean, std, runs, values, published}."""
    values = defaultdict(lambda: defaultdict(list))
    for r in results:
        values[r["job"]["task"]][r["job"]["model"]].append(r["metrics"][suite.metric])
    table = {}
    for task in suite.tasks:
        table[task] = {}
        for model in suite.models:
            v = values[task][model]
            table[task][model] = {"mean": float(np.mean(v)) if v else None,
                                  "std": float(np.std(v)) if v else None, "max": max(v) if v else None,
                                  "runs": len(v), "values": v,
                                  "published": suite.published.get(task, {}).get(model)}
    return table


def markdown(suite: Suite, table: dict) -> str:
    """One row per task; per model: ours (mean ± std, best) and the paper's number."""
    header = ["task"] + [c for m in suite.models for c in (f"{m} (ours)", f"{m} ({suite.paper or 'paper'})")]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for task, row in table.items():
        cells = [task]
        for model in suite.models:
            c = row[model]
            ours = "—" if c["mean"] is None else f"{c['mean']:.1f} ± {c['std']:.1f} (best {c['max']:.1f}, {c['runs']} seeds)"
            cells += [ours, "—" if c["published"] is None else f"{c['published']:.1f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
