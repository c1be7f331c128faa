"""A suite's results as markdown tables (and JSON) beside the paper's numbers, with our difference; for
suites with curves, accuracy against n (a grammar string's length) over ranges and plotted (matplotlib,
optional). A composite's report is its parts'; `replace_block` puts one into BENCHMARKS.md.

A suite with a selection rule (`Suite.select`) is reported as its paper reports: per task and column, the one run
of lowest `select` over the grid's points and the seeds is "ours", and Δ is its difference from the paper; beside it
the mean ± std over the seeds of each seed's kept run (the lowest `select` among its points)."""
from __future__ import annotations

import json
import re
import shutil
import textwrap
from collections import defaultdict
from pathlib import Path

import numpy as np

from stackparse.benchmarks.suites import COMPOSITES, Suite, get_suite
from stackparse.config import atomic_write, write_json
from stackparse.errors import UserError


def _label(result: dict) -> str:
    return result["job"].get("label") or result["job"]["model"]


def load_results(out: Path | str) -> list[dict]:
    """The records of the runs finished in `out` (their `result.json`, `stackparse.benchmarks.runner`)."""
    return [json.loads(p.read_text()) for p in sorted(Path(out).glob("*/result.json"))]


def metric_value(result: dict, metric: str) -> float:
    """A run's metric by name, or by a dotted path into its metrics ("validation.val_accuracy")."""
    value = result["metrics"]
    for key in metric.split("."):
        value = value[key]
    return value


def kept(results: list[dict], select: str, by: tuple[str, ...] = ("task", "label", "seed")) -> list[dict]:
    """Of the runs that agree on `by` (job fields; "label" is the column), the one of lowest `select`: a grid's
    points become one run per (task, column, seed), or with by=("task", "label") one per task and column."""
    best = {}
    for r in results:
        group = tuple(_label(r) if name == "label" else r["job"][name] for name in by)
        if group not in best or metric_value(r, select) < metric_value(best[group], select):
            best[group] = r
    return list(best.values())


def aggregate(suite: Suite, results: list[dict], metric: str | None = None, published: dict | None = None) -> dict:
    """task -> column label -> {mean, std, runs, values, published}, for `metric` (default: the
    suite's) beside `published` (default: the suite's). With a selection rule, over each seed's kept run, and
    with `selected`: the metric of the run kept over the seeds too, and `run`, its grid point and seed."""
    metric, published = metric or suite.metric, suite.published if published is None else published
    values, selected = defaultdict(lambda: defaultdict(list)), {}
    bounds = defaultdict(lambda: defaultdict(list))          # a convergence never reached: what the run trained
    for r in kept(results, suite.select) if suite.select else results:
        value = metric_value(r, metric)
        values[r["job"]["task"]][_label(r)].append(value)
        bound = r["metrics"].get(metric.replace("converged_", "trained_")) if metric.startswith("converged_") else None
        if value is None and bound is not None:
            bounds[r["job"]["task"]][_label(r)].append(bound)
    for r in kept(results, suite.select, ("task", "label")) if suite.select else ():
        run = ", ".join([*(f"{k} {v}" for k, v in r["job"].get("point", {}).items()), f"seed {r['job']['seed']}"])
        selected[r["job"]["task"], _label(r)] = {"selected": metric_value(r, metric), "run": run}
    return {task: {label: {**_summary(values[task][label], published.get(task, {}).get(label)),
                           **selected.get((task, label), {}), "trained": bounds[task][label]}
                   for label in suite.labels} for task in tasks_of(suite, results)}


def tasks_of(suite: Suite, results: list[dict]) -> list[str]:
    """The suite's tasks, then any other task its results hold (a results folder of an earlier version of the suite,
    whose tasks have changed since, still reports all it measured)."""
    found = dict.fromkeys(r["job"]["task"] for r in results)
    return [*suite.tasks, *(task for task in found if task not in suite.tasks)]


def _summary(all_values: list, published) -> dict:
    """Over the runs that have the metric (a run that never converged has no convergence epoch: None)."""
    v = [x for x in all_values if x is not None]
    return {"mean": float(np.mean(v)) if v else None, "std": float(np.std(v)) if v else None,
            "max": max(v) if v else None, "min": min(v) if v else None, "runs": len(v), "values": v,
            "published": published, "without": len(all_values) - len(v)}


def markdown(suite: Suite, table: dict, metric: str | None = None) -> str:
    """A row per task and a column group per model (`suite.rows == "models"`: the other way round, as
    Joulin & Mikolov's Table 2): ours, and where the paper has numbers, its number and ours minus it (Δ)."""
    cells = {(task, label): c for task, row in table.items() for label, c in row.items()}
    rows, columns = list(table), list(suite.labels)
    if suite.rows == "models":
        rows, columns = columns, rows
    cell = (lambda r, c: cells[c, r]) if suite.rows == "models" else (lambda r, c: cells[r, c])
    with_paper = [c for c in columns if any(cell(r, c)["published"] is not None for r in rows)]
    header = [suite.rows[:-1]] + [h for c in columns
                                  for h in ([f"{c} (ours)", f"{c} (paper)", "Δ"] if c in with_paper else [f"{c} (ours)"])]
    lower_is_better = ("perplexity", "error", "loss", "entropy", "converged")      # converged_*: epochs, characters
    best = min if any(word in (metric or suite.metric) for word in lower_is_better) else max
    d = suite.metric_decimals.get(metric or suite.metric, suite.decimals)
    return _table(header, [[r, *(x for c in columns for x in _cells(cell(r, c), best, d, c in with_paper))]
                           for r in rows])


def _table(header: list[str], rows: list[list[str]]) -> str:
    """A markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows]) + "\n"


def _cells(c: dict, best, d: int, with_paper: bool) -> list[str]:
    """Ours (mean ± std, and the best seed where there are several; with a selection rule, the kept run first),
    then the paper's number and Δ (from the kept run, or the mean)."""
    if c["mean"] is None:
        ours = "—"
    elif c["runs"] == 1:
        ours = f"{c['mean']:.{d}f} (1 seed)"
    else:
        ours = f"{c['mean']:.{d}f} ± {c['std']:.{d}f} (best {best(c['values']):.{d}f}, {c['runs']} seeds)"
    if c.get("selected") is not None:
        ours = f"{c['selected']:.{d}f} ({c['run']})" + (f"; seeds {ours}" if c["runs"] > 1 else "")
    if c.get("without"):
        ours += f"; {c['without']} run{'s' if c['without'] > 1 else ''} never reached it"
        if c.get("trained"):                       # each trained this much without: a lower bound, as the paper's ">"
            ours += f" (> {min(c['trained']):.{d}f})"
    if not with_paper:
        return [ours]
    ours_value = _ours(c)
    both = ours_value is not None and c["published"] is not None
    return [ours, "—" if c["published"] is None else f"{c['published']:.{d}f}",
            f"{ours_value - c['published']:+.{d}f}" if both else "—"]


def _ours(c: dict) -> float | None:
    """The number a cell sets beside the paper's: the kept run's under a selection rule, else the mean."""
    return c["selected"] if c.get("selected") is not None else c["mean"]


def matches(suite: Suite, tables: dict, results: list[dict], profile: str) -> str:
    """A paragraph counting the cells within `suite.tolerance` of the paper's number, by table and by column, and
    how many of them rest on fewer runs than the profile's grid and the seeds held make (provisional: a run not
    finished yet may change the kept one); "" for a suite without a tolerance. `tables`: metric -> `aggregate`'s."""
    if suite.tolerance is None:
        return ""
    runs = defaultdict(int)
    for r in results:
        runs[r["job"]["task"], _label(r)] += 1
    seeds = len({r["job"]["seed"] for r in results})
    points = len(suite.points(profile)) if profile in suite.profiles else 1
    wanted = {c.label: points * len(c.points) * seeds for c in suite.columns}
    by_table, by_column, provisional = {}, defaultdict(lambda: [0, 0]), 0
    for metric, table in tables.items():
        compared = [(label, abs(_ours(c) - c["published"]) <= suite.tolerance + 1e-9, runs[task, label] < wanted[label])
                    for task, row in table.items() for label, c in row.items()
                    if _ours(c) is not None and c["published"] is not None]
        if not compared:
            continue
        by_table[metric] = (sum(match for _, match, _ in compared), len(compared))
        for label, match, short in compared:
            by_column[label][0] += match
            by_column[label][1] += 1
            provisional += short
    if not by_table:
        return f"\nWithin {suite.tolerance:g} of the paper: no cell has both numbers yet.\n"
    matched, measured = (sum(n for n, _ in by_table.values()), sum(m for _, m in by_table.values()))
    counted = ""   # the cells of the columns an issue counts, out of all the paper prints for them
    if suite.counted:
        n, m = (sum(by_column[label][i] for label in suite.counted if label in by_column) for i in (0, 1))
        cells = sum(published.get(task, {}).get(label) is not None for published in suite.all_published
                    for task in suite.tasks for label in suite.counted)
        rows = f"{len(suite.counted)} rows" if len(suite.counted) > 1 else "row"
        counted = (f"; of the {rows} counted ({', '.join(suite.counted)}): **{n} of the {m} "
                   f"measured** of their {cells} cells ({cells - m} not measured yet)")
    metrics = "; ".join(f"{metric} {n} of {m}" for metric, (n, m) in by_table.items())
    columns = "; ".join(f"{label} {n} of {m}" for label, (n, m) in by_column.items())
    return (f"\nWithin {suite.tolerance:g} of the paper: **{matched} of the {measured} cells** that have both "
            f"numbers{counted} (by metric: {metrics}; by column: {columns}); {provisional} of the {measured} rest on "
            f"fewer runs than the grid and the seeds make (provisional).\n")


RANGES = ((1, 10), (11, 19), (20, 29), (30, 39), (40, 49), (50, 60))


def curves(suite: Suite, results: list[dict]) -> dict:
    """task -> label -> n -> accuracy at n (fraction of its test sequences correct), mean over seeds."""
    by_n = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    for r in results:
        for n, accuracy in r["metrics"]["accuracy_by_n"].items():
            by_n[r["job"]["task"]][_label(r)][int(n)].append(accuracy)
    return {task: {label: {n: float(np.mean(v)) for n, v in sorted(by_n[task][label].items())}
                   for label in suite.labels if by_n[task][label]} for task in tasks_of(suite, results)}


def curves_markdown(curve_table: dict) -> str:
    """Mean accuracy (%) over ranges of n, per task and column."""
    return _table(["task", "model"] + [f"n {lo}-{hi}" for lo, hi in RANGES],
                  [[task, label, *(f"{100 * np.mean([a for n, a in curve.items() if lo <= n <= hi]):.1f}"
                                   if any(lo <= n <= hi for n in curve) else "—" for lo, hi in RANGES)]
                   for task, columns in curve_table.items() for label, curve in columns.items()])


def plot_curves(curve_table: dict, path: Path, title: str) -> None:
    """Accuracy against n, one line per column, the task's training sizes shaded (needs matplotlib)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from stackparse.tasks import get_task
    tasks = list(curve_table)
    fig, axes = plt.subplots(1, len(tasks), figsize=(4.2 * len(tasks), 3.6), squeeze=False)
    for ax, task in zip(axes[0], tasks):
        for label, curve in curve_table[task].items():
            ax.plot(list(curve), [100 * a for a in curve.values()], marker=".", label=label)
        task_obj = get_task(task)
        ax.axvspan(*task_obj.protocol.train_n, color="0.9", label="training sizes")
        ax.set(title=f"{task}", xlabel="string length" if task_obj.kind == "grammar" else "n",
               ylabel="test sequences correct (%)", ylim=(-3, 103))
        ax.legend(fontsize=7)
    fig.suptitle(textwrap.fill(title, 50 * len(tasks)), fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def write_report(suite: Suite, results: list[dict], out: Path, profile: str = "full") -> str:
    """report.md and report.json in `out` (and curves.png for suites with curves); returns the text."""
    table, extra = aggregate(suite, results), {}
    note = suite.profile(profile).note if profile in suite.profiles else ""
    held = sorted({r["job"]["seed"] for r in results})
    if profile in suite.profiles and held != list(range(1, suite.profile(profile).seeds + 1)):
        note += f"; these results: seed{'s' * (len(held) != 1)} {', '.join(map(str, held)) or 'none'}"
    text = (f"{suite.description}; profile {profile} ({note}); paper: {suite.paper or 'none'}; "
            f"metric: {suite.metric}{_selection(suite, profile)}\n\n" + markdown(suite, table) + _diverged(results))
    for metric, published in suite.more_metrics:
        extra[metric] = aggregate(suite, results, metric, published)
        text += f"\nmetric: {metric}\n\n" + markdown(suite, extra[metric], metric)
    text += matches(suite, {suite.metric: table, **extra}, results, profile)
    if suite.curves:
        curve_table = extra["curves"] = curves(suite, results)
        text += "\nAccuracy against n (mean over seeds):\n\n" + curves_markdown(curve_table)
        try:
            plot_curves(curve_table, Path(out) / "curves.png", suite.description)
            text += f"\n![{suite.name}: accuracy against n]({Path(out) / 'curves.png'})\n"
        except ImportError:
            text += "\n(no plot: matplotlib is not installed; pip install '.[plot]')\n"
    (Path(out) / "report.md").write_text(text)
    write_json(Path(out) / "report.json", {"summary": table, **extra} if extra else table)
    return text


def _diverged(results: list[dict]) -> str:
    """A line naming the runs that diverged and stopped early (`Trainer`: each counts by its best epoch)."""
    runs = sorted(f"{r['job']['task']}, {_label(r)}, seed {r['job']['seed']} ({r['metrics']['diverged']})"
                  for r in results if r["metrics"].get("diverged"))
    return f"\nRuns that diverged, stopped there and count by their best epoch: {'; '.join(runs)}.\n" if runs else ""


def _selection(suite: Suite, profile: str) -> str:
    """How the report chose its runs, for its header ("" without a selection rule)."""
    if not suite.select:
        return ""
    grid = suite.grid_of(profile) if profile in suite.profiles else suite.grid
    points = "; ".join(f"{name} {', '.join(map(str, values))}" for name, values in grid.items()) or "one point"
    points += "".join(f"; {c.label} also at " + " and at ".join(
        ", ".join(f"{k} {v}" for k, v in own.items()) or "its defaults" for own in c.points)
        for c in suite.columns if len(c.points) > 1)
    return (f"; runs: each model at every point of the grid ({points}) and every seed; selection: per task and "
            f"model, the run of lowest {suite.select} is ours, with its point and seed, and Δ is its difference from "
            f"the paper; over several seeds, the mean ± std (best) of each seed's run of lowest {suite.select} "
            f"follows")


def write_benchmark_report(out: Path, columns: str = "", tasks: str = "") -> str:
    """The report of the benchmark directory `out` (see `write_report`); a composite's parts are
    reported into their directories and joined into out/report.md. `columns`, `tasks`: only the columns whose label
    contains it and the tasks whose name does (as `run_benchmark`'s)."""
    if not (Path(out) / "suite.json").is_file():
        raise UserError(f"{out}: not a benchmark directory (no suite.json)")
    held = json.loads((Path(out) / "suite.json").read_text())
    profile = held.get("profile", "full")
    parts = [(get_suite(held["suite"]), Path(out))] if held["suite"] not in COMPOSITES else \
        [(get_suite(part), Path(out) / part) for part in COMPOSITES[held["suite"]].parts]
    chosen = [(suite, d) for suite, d in ((s.only(columns, tasks), d) for s, d in parts)
              if suite.models and suite.tasks]
    if not chosen:
        raise UserError(f"{held['suite']}: no column has {columns!r} in its label with a task that has {tasks!r} "
                        f"in its name")
    reports = {suite.name: write_report(suite, [r for r in load_results(d) if _label(r) in suite.labels
                                                and r["job"]["task"] in suite.tasks], d, profile)
               for suite, d in chosen}
    if held["suite"] not in COMPOSITES:
        return reports[held["suite"]]
    composite = COMPOSITES[held["suite"]]
    text = f"{composite.description}\n" + "".join(f"\n#### {part}\n\n{report}" for part, report in reports.items())
    (Path(out) / "report.md").write_text(text)
    return text


def replace_block(path: Path, name: str, text: str) -> None:
    """Put `text` into the markdown file `path` between its lines `<!-- report: NAME -->` and
    `<!-- /report -->`; its plots are copied to docs/figures (NAME.png, or NAME-PART.png for a
    composite's) and linked from there, since run directories are not committed."""
    path = Path(path)
    start, end = f"<!-- report: {name} -->", "<!-- /report -->"
    source = path.read_text()
    pattern = re.compile(re.escape(start) + r"\n.*?" + re.escape(end), re.S)
    if not pattern.search(source):
        raise UserError(f"{path}: no block '{start}' ... '{end}' to put the report into")
    image = re.compile(r"!\[([^\]]*)\]\(([^)]+\.png)\)")
    several = len(image.findall(text)) > 1

    def copy_plot(match: re.Match) -> str:
        plot = Path(match.group(2))
        target = path.parent / "docs" / "figures" / (f"{name}-{plot.parent.name}.png" if several else f"{name}.png")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(plot, target)
        return f"![{match.group(1)}]({target.relative_to(path.parent).as_posix()})"

    text = image.sub(copy_plot, text)
    atomic_write(path, lambda tmp: Path(tmp).write_text(
        pattern.sub(lambda _: f"{start}\n{text.rstrip()}\n{end}", source)))
