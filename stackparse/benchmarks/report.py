"""Aggregate a suite's results into a markdown table beside the paper's numbers (and JSON); for
suites with curves, accuracy against n as a table of ranges and a PNG plot (matplotlib, optional)."""
from __future__ import annotations

import textwrap
from collections import defaultdict
from pathlib import Path

import numpy as np

from stackparse.benchmarks.suites import Suite
from stackparse.config import write_json


def _label(result: dict) -> str:
    return result["job"].get("label") or result["job"]["model"]


def metric_value(result: dict, metric: str) -> float:
    """A run's metric by name, or by a dotted path into its metrics ("validation.val_accuracy")."""
    value = result["metrics"]
    for key in metric.split("."):
        value = value[key]
    return value


def aggregate(suite: Suite, results: list[dict], metric: str | None = None, published: dict | None = None) -> dict:
    """task -> column label -> {mean, std, runs, values, published}, for `metric` (default: the
    suite's) beside `published` (default: the suite's)."""
    metric, published = metric or suite.metric, suite.published if published is None else published
    values = defaultdict(lambda: defaultdict(list))
    for r in results:
        values[r["job"]["task"]][_label(r)].append(metric_value(r, metric))
    table = {}
    for task in suite.tasks:
        table[task] = {}
        for label in suite.labels:
            v = values[task][label]
            table[task][label] = {"mean": float(np.mean(v)) if v else None,
                                  "std": float(np.std(v)) if v else None, "max": max(v) if v else None,
                                  "min": min(v) if v else None, "runs": len(v), "values": v,
                                  "published": published.get(task, {}).get(label)}
    return table


def markdown(suite: Suite, table: dict, metric: str | None = None) -> str:
    """One row per task; per column: ours (mean ± std, best over seeds) and the paper's number."""
    header = ["task"] + [c for m in suite.labels for c in (f"{m} (ours)", f"{m} ({suite.paper or 'paper'})")]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    best = min if any(word in (metric or suite.metric) for word in ("perplexity", "error")) else max   # lower is better
    d = suite.decimals
    for task, row in table.items():
        cells = [task]
        for label in suite.labels:
            c = row[label]
            ours = "—" if c["mean"] is None else \
                f"{c['mean']:.{d}f} ± {c['std']:.{d}f} (best {best(c['values']):.{d}f}, {c['runs']} seeds)"
            cells += [ours, "—" if c["published"] is None else f"{c['published']:.{d}f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


RANGES = ((1, 10), (11, 19), (20, 29), (30, 39), (40, 49), (50, 60))


def curves(suite: Suite, results: list[dict]) -> dict:
    """task -> label -> n -> accuracy at n (fraction of its test sequences correct), mean over seeds."""
    by_n = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    for r in results:
        for n, accuracy in r["metrics"]["accuracy_by_n"].items():
            by_n[r["job"]["task"]][_label(r)][int(n)].append(accuracy)
    return {task: {label: {n: float(np.mean(v)) for n, v in sorted(by_n[task][label].items())}
                   for label in suite.labels if by_n[task][label]} for task in suite.tasks}


def curves_markdown(curve_table: dict) -> str:
    """Mean accuracy (%) over ranges of n, per task and column."""
    header = ["task", "model"] + [f"n {lo}-{hi}" for lo, hi in RANGES]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for task, columns in curve_table.items():
        for label, curve in columns.items():
            cells = [f"{100 * np.mean([a for n, a in curve.items() if lo <= n <= hi]):.1f}"
                     if any(lo <= n <= hi for n in curve) else "—" for lo, hi in RANGES]
            lines.append("| " + " | ".join([task, label, *cells]) + " |")
    return "\n".join(lines) + "\n"


def plot_curves(curve_table: dict, path: Path, title: str) -> None:
    """Accuracy against n, one line per column, the training range shaded (needs matplotlib)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tasks = list(curve_table)
    fig, axes = plt.subplots(1, len(tasks), figsize=(5.5 * len(tasks), 3.8), squeeze=False)
    for ax, task in zip(axes[0], tasks):
        for label, curve in curve_table[task].items():
            ax.plot(list(curve), [100 * a for a in curve.values()], marker=".", label=label)
        ax.axvspan(1, 19, color="0.9", label="training sizes")
        ax.set(title=f"{task}", xlabel="n", ylabel="sequences correct (%)", ylim=(-3, 103))
        ax.legend(fontsize=8)
    fig.suptitle(textwrap.fill(title, 60 * len(tasks)), fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write_report(suite: Suite, results: list[dict], out: Path) -> str:
    """report.md and report.json in `out` (and curves.png for suites with curves); returns the text."""
    table, extra = aggregate(suite, results), {}
    text = f"{suite.description}; metric: {suite.metric}\n\n" + markdown(suite, table)
    for metric, published in suite.more_metrics:
        extra[metric] = aggregate(suite, results, metric, published)
        text += f"\nmetric: {metric}\n\n" + markdown(suite, extra[metric], metric)
    if suite.curves:
        curve_table = extra["curves"] = curves(suite, results)
        text += "\nAccuracy against n (mean over seeds):\n\n" + curves_markdown(curve_table)
        try:
            plot_curves(curve_table, Path(out) / "curves.png", suite.description)
            text += f"\nPlot: {Path(out) / 'curves.png'}\n"
        except ImportError:
            text += "\n(no plot: matplotlib is not installed; pip install '.[plot]')\n"
    (Path(out) / "report.md").write_text(text)
    write_json(Path(out) / "report.json", {"summary": table, **extra} if extra else table)
    return text
