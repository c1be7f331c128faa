"""Run a benchmark's jobs on Dask distributed, resumably: a finished job's result is never redone.

The (task, column, grid point, seed) jobs are independent. They run on a local Dask cluster of `workers` processes with
one thread each (a DyNet process trains one model at a time), or on the existing cluster at `scheduler`. A finished job
writes `DIR/KEY/result.json` (config, seed, metrics, wall time, package versions) by an atomic rename, so a killed
worker never leaves half a result, and is never run again; a failing one writes `DIR/KEY/error.json`, the others go on,
and it runs again next time. A kept run continued under a profile's longer budget keeps its record aside until the
continued run writes its own: a bench stopped meanwhile loses neither. The workers write into DIR themselves: on a
cluster, every worker must see it (a shared filesystem).
"""
from __future__ import annotations

import dataclasses
import json
import logging
import os
import pickle
import platform
import subprocess
import sys
import threading
import time
import traceback
import uuid
from collections import defaultdict, deque
from contextlib import contextmanager
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from tqdm import tqdm

from stackparse._native import processor_summary
from stackparse.benchmarks.report import kept
from stackparse.benchmarks.suites import Job, suite_parts
from stackparse.config import SettingError, to_dict, write_json
from stackparse.errors import UserError
from stackparse.experiments import MODULES, get_kind, run, with_changes

VERSIONED = ("dyNET38", "numpy", "stackparse", "distributed")
SHORTER = "result-before-continuation.json"     # a kept run's record while its continuation runs


def run_job(job: Job, out: Path) -> dict:
    """Train and test one job in a fresh Python process (what a Dask worker runs); returns its record.

    A process per job, because DyNet never gives memory back: a job that grows its pools (an analog
    stack's graph over a batch of long test strings took 14 GB) would keep them for every later job of
    the worker. Its output goes to DIR/KEY/output.txt; if it dies without a record (killed, a crash in
    DyNet), the job is recorded as failed with its exit status. It imports the job's kind's module
    first, which may configure DyNet (the parser's autobatching needs pre-allocated memory)."""
    run_dir = Path(out) / job.key
    run_dir.mkdir(parents=True, exist_ok=True)
    code = (f"import {MODULES.get(job.kind, 'stackparse')}, pickle, sys; from stackparse.benchmarks.runner "
            "import run_job_here; run_job_here(*pickle.load(sys.stdin.buffer))")
    with open(run_dir / "output.txt", "wb") as log:
        done = subprocess.run([sys.executable, "-c", code],
                              input=pickle.dumps((job, Path(out))), stdout=log, stderr=subprocess.STDOUT)
    if (run_dir / "result.json").is_file():
        return json.loads((run_dir / "result.json").read_text())
    if done.returncode == 0:                # the job failed, and said why in error.json
        return json.loads((run_dir / "error.json").read_text())
    return record_error(job, out, f"the job's process ended with exit status {done.returncode}",
                        (run_dir / "output.txt").read_text(errors="replace")[-4000:])


def run_job_here(job: Job, out: Path) -> dict:
    """Train and test one job in this process; returns its result record. The process ends with the worker that
    started it (`exit_with_parent`)."""
    exit_with_parent()
    run_dir = Path(out) / job.key
    start = time.perf_counter()
    try:
        experiment = get_kind(job.kind)(job_settings(job))
        config, metrics = to_dict(experiment.settings), run(experiment, run_dir, resume=True, progress=False)
    except Exception as e:           # recorded, so one broken job does not stop the suite
        return record_error(job, out, _described(e), traceback.format_exc())
    result = {"job": dataclasses.asdict(job), "config": config, "metrics": metrics,
              "wall_seconds": time.perf_counter() - start, "machine": platform.platform(),
              "processor": processor_summary(),
              "python": platform.python_version(), "versions": {p: _version(p) for p in VERSIONED}}
    write_json(run_dir / "result.json", result)
    (run_dir / "error.json").unlink(missing_ok=True)      # of an earlier, failed attempt
    (run_dir / SHORTER).unlink(missing_ok=True)           # of the run this one continued
    return result


def exit_with_parent(every: float = 2.0, parent=os.getppid, leave=os._exit) -> threading.Thread:
    """Watch, every `every` seconds, that the process that started this one is still there, and end this one
    (`leave(1)`) when it is not: a `bench` stopped by a signal (not a terminal's Ctrl-C, which reaches the whole
    process group) takes its Dask workers down, and their jobs would otherwise train on, orphaned. The job's run
    resumes from its last checkpoint next time, as after any kill."""
    first = parent()

    def watch():
        while parent() == first:
            time.sleep(every)
        leave(1)
    thread = threading.Thread(target=watch, daemon=True, name="exit-with-parent")
    thread.start()
    return thread


def record_error(job: Job, out: Path, error: str, trace: str = "") -> dict:
    """Write a job's error.json; returns the record the runner counts as failed."""
    write_json(Path(out) / job.key / "error.json", {"job": dataclasses.asdict(job), "error": error,
                                                    "traceback": trace})
    return {"job": dataclasses.asdict(job), "error": error}


def job_settings(job: Job):
    """A job's settings: its kind's defaults for its task and model, then the suite's overrides, the
    column's model settings, the column's and the profile's training and data settings, its point of the
    suite's grid, and the seed, each layer applied by `with_changes`."""
    settings = get_kind(job.kind).defaults(job.task, job.model)
    for changes in (job.overrides, {"model_config": job.model_settings}, job.train_settings, job.data_settings,
                    job.point, {"seed": job.seed}):
        settings = with_changes(settings, changes)
    return settings


def _described(error: Exception) -> str:
    """A job's error as recorded: a setting's names the flag that `train` gives it."""
    if isinstance(error, SettingError):
        return f"SettingError('--{error.setting.replace('_', '-')} {error.problem}')"
    return repr(error)


def _version(package: str) -> str:
    try:
        return version(package)
    except PackageNotFoundError:
        return "not installed"


@dataclass(frozen=True)
class Outcome:
    """What one `run_benchmark` did: jobs in all, already finished before, run now, failed now, and kept runs
    continued now (`continuations`)."""
    jobs: int
    skipped: int
    ran: int
    failed: int
    continued: int = 0


def run_benchmark(name: str, out: Path | str, profile: str = "full", seeds: int | None = None,
                  workers: int = 1, scheduler: str | None = None, progress: bool = True, columns: str = "",
                  tasks: str = "", only_seeds: tuple[int, ...] = ()) -> Outcome:
    """Run every job of suite `name` (a composite: of each part, into OUT/PART) not yet finished in `out`,
    with the suites' `profile` and `seeds` per experiment (default: the profile's), on a local Dask
    cluster of `workers` processes or the existing one at `scheduler` (host:port). A job interrupted
    before continues from its last checkpoint. `progress`: a bar of the runs, with each running job's
    last finished epoch. `columns`: only the columns whose label contains it, `tasks`: only the tasks whose name
    contains it, `only_seeds`: only those seeds (a choice that leaves no job is refused)."""
    jobs, cells = _suite_jobs(name, Path(out), profile, seeds, columns, tasks, claim=True, only_seeds=only_seeds)
    for job, d in jobs:     # a continuation stopped before its end: the shorter run's record counts again
        if (d / job.key / SHORTER).is_file() and not (d / job.key / "result.json").is_file():
            (d / job.key / SHORTER).replace(d / job.key / "result.json")
    todo = [(job, d) for job, d in jobs if not (d / job.key / "result.json").is_file()]

    def follow(job: Job, d: Path) -> list[tuple[Job, Path]]:
        """The continuation due once `job` has finished, if its cell is then complete (none while it is not)."""
        suite, cell = cells[d, job.task, job.label]
        return continuations(suite, suite.profile(profile), cell)

    # cells complete before this invocation whose kept run is not yet a continued one (an earlier one was stopped)
    due = [c for suite, cell in cells.values() for c in continuations(suite, suite.profile(profile), cell)]
    failed, continued = _execute(todo, due, len(jobs), name, workers, scheduler, progress, follow) \
        if todo or due else (0, 0)
    return Outcome(len(jobs), len(jobs) - len(todo), len(todo), failed, continued)


@dataclass(frozen=True)
class Plan:
    """What `run_benchmark` has left to do in a results directory, run nothing: runs finished, begun (a checkpoint
    they continue from), not begun, and the kept runs' continuations still to come (one per task and column whose
    kept run is not a continued one yet); `minutes`: the training time all of that takes at most, one run at a
    time, from each run's time budget (its restarts' `max_minutes`, less what its log says it has trained; a kept run
    under continuation, past its budget, counts the excess off its cell's continuation), `unbudgeted` the runs
    without a budget, which it leaves out."""
    finished: int
    begun: int
    waiting: int
    continuations: int
    minutes: float
    unbudgeted: int


def plan_benchmark(name: str, out: Path | str, profile: str = "full", seeds: int | None = None, columns: str = "",
                   tasks: str = "", only_seeds: tuple[int, ...] = ()) -> Plan:
    """`run_benchmark`'s work left in `out` (its arguments' meaning), for a suite that resumes across sittings."""
    jobs, cells = _suite_jobs(name, Path(out), profile, seeds, columns, tasks, claim=False, only_seeds=only_seeds)
    counts, minutes, unbudgeted = {"finished": 0, "begun": 0, "waiting": 0}, 0.0, 0
    beyond = defaultdict(float)     # cell -> minutes a begun run trained past its budget: a continuation under way
    for job, d in jobs:
        run_dir = d / job.key
        if (run_dir / "result.json").is_file():
            counts["finished"] += 1
            continue
        begun = (run_dir / "log.jsonl").is_file()
        counts["begun" if begun else "waiting"] += 1
        budget, trained = _budget(job), _trained_seconds(run_dir / "log.jsonl") / 60 if begun else 0.0
        if budget is None:
            unbudgeted += 1
        else:
            minutes += max(budget - trained, 0.0)
            beyond[d, job.task, job.label] += max(trained - budget, 0.0)
    again = 0
    for (d, task, label), (suite, cell) in cells.items():
        continued = suite.profile(profile).continued
        if not continued or not suite.select:
            continue
        finished = all((d / job.key / "result.json").is_file() for job, d in cell)
        if finished and not continuations(suite, suite.profile(profile), cell):
            continue                                            # its kept run is a continued one already
        again += 1
        longer, shorter = _budget(cell[0][0], continued), _budget(cell[0][0])
        if longer is None or shorter is None:
            unbudgeted += 1
        else:
            minutes += max(longer - shorter - beyond[d, task, label], 0.0)
    return Plan(**counts, continuations=again, minutes=minutes, unbudgeted=unbudgeted)


def _budget(job: Job, changes: dict | None = None) -> float | None:
    """A job's time budget in minutes (its `max_minutes` for each restart), under `changes` of its train settings;
    None where it has none."""
    if changes:
        job = dataclasses.replace(job, train_settings={**job.train_settings, **changes})
    train = getattr(job_settings(job), "train", None)
    if train is None or not getattr(train, "max_minutes", 0):
        return None
    return train.max_minutes * max(getattr(train, "restarts", 1), 1)


def _trained_seconds(log: Path) -> float:
    """The seconds of training a run's log.jsonl records (its epochs' durations)."""
    return sum(json.loads(line).get("epoch_seconds", 0.0) for line in log.read_text().splitlines() if line.strip())


def _suite_jobs(name: str, out: Path, profile: str, seeds: int | None, columns: str, tasks: str,
                claim: bool, only_seeds: tuple[int, ...] = ()) -> tuple[list[tuple[Job, Path]], dict]:
    """Suite `name`'s jobs, each with its results directory (a composite's part has its own under `out`), and its
    cells: (directory, task, column label) -> (suite part, its jobs), over which the continuations are chosen.
    `claim`: write each directory's suite.json (`_claim`); else only refuse a directory of another suite's.
    `only_seeds`: of the seeds 1..`seeds`, only these run (the cells still count every seed: a continuation waits
    for all of them)."""
    parts = suite_parts(name)
    _claim(out, name, profile, seeds or parts[0].profile(profile).seeds, claim)
    jobs, cells = [], {}
    for suite in parts:
        part_out = out if len(parts) == 1 else out / suite.name
        n = seeds or suite.profile(profile).seeds
        _claim(part_out, suite.name, profile, n, claim)
        d = part_out.resolve()                          # absolute: workers may start elsewhere
        for job in suite.only(columns, tasks).jobs(n, profile):
            if not only_seeds or job.seed in only_seeds:
                jobs.append((job, d))
            cells.setdefault((d, job.task, job.label), (suite, []))[1].append((job, d))
    if not jobs:
        seeds_named = f" and one of the seeds {', '.join(map(str, only_seeds))}" if only_seeds else ""
        raise UserError(f"no job of {name} has {columns!r} in its column's label and {tasks!r} in its "
                        f"task{seeds_named}")
    return jobs, cells


def continuations(suite, profile, jobs: list[tuple[Job, Path]]) -> list[tuple[Job, Path]]:
    """The profile's `continued` jobs: of each task and column whose runs have all finished, the run that the suite's
    selection keeps, with the profile's `continued` train settings over its own (the same key: it resumes from its
    checkpoint), unless its record is of those settings already (a run is continued once). The selection is the
    report's (`kept`)."""
    if not profile.continued or not suite.select:
        return []
    cells = {}
    for job, d in jobs:
        cells.setdefault((job.task, job.label), []).append((job, d))
    again = []
    for cell in cells.values():
        paths = [d / job.key / "result.json" for job, d in cell]
        if not all(path.is_file() for path in paths):
            continue
        records = [json.loads(path.read_text()) for path in paths]
        best = kept(records, suite.select, ("task", "label"))[0]
        job, d = cell[records.index(best)]
        longer = dataclasses.replace(job, train_settings={**job.train_settings, **profile.continued})
        if best["job"]["train_settings"] != json.loads(json.dumps(longer.train_settings)):     # as recorded
            again.append((longer, d))
    return again


def _claim(out: Path, suite: str, profile: str, seeds: int, write: bool = True) -> None:
    """Write out/suite.json (unless not `write`), refusing a directory that holds another suite's or profile's runs
    (their result files would count as this one's)."""
    path = out / "suite.json"
    if path.is_file():
        held = json.loads(path.read_text())
        if (held["suite"], held.get("profile", "full")) != (suite, profile):
            raise UserError(f"{out} holds the runs of suite {held['suite']!r}, profile "
                            f"{held.get('profile', 'full')!r}: give another --out")
    if write:
        write_json(path, {"suite": suite, "profile": profile, "seeds": seeds})


def _execute(todo: list[tuple[Job, Path]], due: list[tuple[Job, Path]], total: int, desc: str, workers: int,
             scheduler: str | None, progress: bool, follow) -> tuple[int, int]:
    """Run `todo` on Dask with a progress bar (done / running / failed, the epochs of the runs under way), and the
    continuations `due` first; as each job finishes, the continuations `follow(job, d)` gives it go ahead of the
    jobs waiting, so that a cell's kept run continues as soon as its cell is complete, not after every cell. Jobs go
    to Dask only as its workers' threads free up (Dask runs the jobs it holds in an order of its own). A continued run
    may lose the selection to another of its cell, which is then continued in turn, until every cell's kept run is
    a continued one. Returns the failed and the continued counts."""
    from distributed import as_completed

    failed, continued, token = 0, 0, uuid.uuid4().hex[:8]
    waiting, futures = deque(todo), {}
    with _client(workers, scheduler) as client, \
            tqdm(total=total, initial=total - len(todo), desc=desc, unit="run", disable=not progress) as bar:
        finished = as_completed()

        def go_on(job: Job, d: Path) -> None:
            """Queue a kept run's continuation ahead of the jobs waiting."""
            nonlocal continued
            # the record of the shorter run, set aside until the continued run writes its own (kept if it is stopped)
            (d / job.key / "result.json").replace(d / job.key / SHORTER)
            continued += 1
            bar.total += 1
            waiting.appendleft((job, d))

        for job, d in reversed(due):
            go_on(job, d)
        shown = None
        while waiting or not finished.is_empty():
            while waiting and finished.count() < max(sum(client.nthreads().values()), 1):
                job, d = waiting.popleft()
                # a key per job: two parts of a composite may hold jobs of the same name; a continued job, its own
                future = client.submit(run_job, job, d, key=f"{d.name}/{job.key}-{token}-{len(futures)}", pure=False)
                futures[future] = job, d
                finished.add(future)
            for future in finished.next_batch(block=False):
                job, d = futures[future]
                failed += "error" in _outcome(future, job, d)
                bar.update()
                for again in reversed(follow(job, d)):
                    go_on(*again)
            running = [(job, d) for f, (job, d) in futures.items() if not f.done()]
            counts = {"running": _running(client, futures), "failed": failed, **_epochs(running)}
            if counts != shown:          # not every poll: the bar also goes to log files
                bar.set_postfix(counts)
                shown = counts
            time.sleep(0.5)
    return failed, continued


def _epochs(todo: list[tuple[Job, Path]]) -> dict[str, str]:
    """Each unfinished job's last finished epoch, from its log.jsonl: progress inside the runs."""
    logs = [(job.key, d / job.key / "log.jsonl") for job, d in todo if not (d / job.key / "result.json").is_file()]
    return {key: f"epoch {len(log.read_text().splitlines())}" for key, log in logs if log.is_file()}


def _outcome(future, job: Job, out: Path) -> dict:
    """A finished future's record; a job Dask itself gave up on (its worker died every time it ran
    it, say) is recorded like any failing job."""
    if future.status == "finished":
        return future.result()
    return record_error(job, out, repr(future.exception()), "".join(traceback.format_tb(future.traceback())))


def _running(client, futures) -> int:
    """Jobs of ours executing now: on each worker, those it holds, at most one per thread."""
    ours = {f.key for f in futures}
    threads = client.nthreads()
    return sum(min(len(ours & set(keys)), threads.get(w, 1)) for w, keys in client.processing().items())


@contextmanager
def _client(workers: int, scheduler: str | None):
    """A Dask client of the cluster at `scheduler`, or of a local one with `workers` processes."""
    from distributed import Client, LocalCluster
    if scheduler:
        try:
            client = Client(scheduler, timeout="20s")
        except (OSError, TimeoutError) as e:
            raise UserError(f"cannot reach the Dask scheduler at {scheduler}: {e}") from None
        with client:
            yield client
        return
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0",
                      silence_logs=logging.ERROR) as cluster, Client(cluster) as client:
        yield client
