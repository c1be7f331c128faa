"""Run a suite's jobs, each in its own process, resumably: a finished job's result is never redone.

Each job writes `DIR/KEY/result.json` (config, seed, metrics, wall time, package versions); a
failing job writes `DIR/KEY/error.json` instead and the others go on.
"""
from __future__ import annotations

import dataclasses
import json
import platform
import time
import traceback
from concurrent.futures import ProcessPoolExecutor, as_completed
from importlib.metadata import PackageNotFoundError, version
from multiprocessing import get_context
from pathlib import Path

from tqdm import tqdm

from stackparse.benchmarks.suites import Job, Suite
from stackparse.config import to_dict, write_json


def run_job(job: Job, out: Path) -> dict:
    """Train and test one job in this process; returns its result record."""
    run_dir = Path(out) / job.key
    start = time.perf_counter()
    try:
        config, metrics = _run(job, run_dir)
    except Exception as e:           # recorded, so one broken job does not stop the suite
        write_json(run_dir / "error.json", {"job": dataclasses.asdict(job), "error": repr(e),
                                            "traceback": traceback.format_exc()})
        return {"job": dataclasses.asdict(job), "error": repr(e)}
    result = {"job": dataclasses.asdict(job), "config": config, "metrics": metrics,
              "wall_seconds": time.perf_counter() - start, "machine": platform.platform(),
              "versions": {p: _version(p) for p in ("dyNET38", "numpy", "stackparse")}}
    write_json(run_dir / "result.json", result)
    return result


def _run(job: Job, run_dir: Path) -> tuple[dict, dict]:
    """(settings, metrics) of one job, by its kind."""
    if job.kind == "language-model":
        from stackparse.tasks.language_model import run_language_model
        model_config, train, _, _ = job_settings(job)
        metrics = run_language_model(job.model, model_config, train, run_dir, progress=False)
        return json.loads((run_dir / "config.json").read_text()), metrics
    from stackparse.experiments import run_experiment
    config = experiment_config(job)
    return to_dict(config), run_experiment(config, run_dir, progress=False)


def job_settings(job: Job) -> tuple[dict, "TrainConfig", "SequenceDataConfig", dict]:
    """(model settings, trainer settings, data settings, other ExperimentConfig fields) of a job: the
    task's default training, then the suite's overrides, then the column's settings."""
    from stackparse.experiments import default_settings
    from stackparse.models import get_model_class
    from stackparse.training import TrainConfig
    from stackparse.training.sequence import SequenceDataConfig

    settings = dict(job.overrides)
    model_config = {**to_dict(get_model_class(job.model).Config()), **settings.pop("model_config", {}),
                    **job.model_settings}
    language_model = job.kind == "language-model"
    base_train, base_data = (TrainConfig(), SequenceDataConfig()) if language_model else default_settings(job.task)
    train = dataclasses.replace(settings.pop("train", base_train), seed=job.seed, **job.train_settings)
    data = dataclasses.replace(settings.pop("data", base_data), **job.data_settings)
    return model_config, train, data, settings


def experiment_config(job: Job):
    """The ExperimentConfig a sequence job runs (see `job_settings`)."""
    from stackparse.experiments import ExperimentConfig
    model_config, train, data, settings = job_settings(job)
    return ExperimentConfig(job.task, job.model, model_config, train, data, **settings)


def _version(package: str) -> str:
    try:
        return version(package)
    except PackageNotFoundError:
        return "not installed"


def run_suite(suite: Suite, seeds: int, out: Path | str, workers: int = 1) -> list[dict]:
    """Run every job of `suite` not yet finished in `out`; returns all result records."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    write_json(out / "suite.json", {"suite": suite.name, "seeds": seeds})
    jobs = suite.jobs(seeds)
    todo = [j for j in jobs if not (out / j.key / "result.json").is_file()]
    failed = 0
    with ProcessPoolExecutor(workers, mp_context=get_context("spawn")) as pool, \
            tqdm(total=len(jobs), initial=len(jobs) - len(todo), desc=suite.name, unit="run") as bar:
        futures = [pool.submit(run_job, j, out) for j in todo]
        for f in as_completed(futures):
            failed += "error" in f.result()
            bar.update()
            bar.set_postfix(failed=failed)
    return load_results(out)


def load_results(out: Path | str) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted(Path(out).glob("*/result.json"))]
