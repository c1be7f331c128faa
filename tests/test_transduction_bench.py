"""The transduction benchmark: the suite against the paper's Table 3, reports with more than one
metric (coarse and fine, test and training lengths) from the same runs, the grid of learning rates and the paper's
selection rule (the run of lowest training perplexity), and the profiles."""
import dataclasses
import json

import pytest
from click.testing import CliRunner

import cli
from stackparse.benchmarks import suites
from stackparse.benchmarks.published import GREFENSTETTE_TABLE3, grefenstette_table3
from stackparse.benchmarks.report import aggregate, kept, markdown
from stackparse.benchmarks.runner import SHORTER, job_settings
from stackparse.models import get_model_class
from stackparse.training.trainer import TrainConfig


def test_every_column_and_task_of_the_suite_has_the_papers_numbers():
    suite = suites.get_suite("transduction")
    assert set(suite.tasks) == set(GREFENSTETTE_TABLE3)
    printed = [published for published in suite.all_published if published]     # not the unpublished metrics'
    assert len(printed) == 4                                # test and validation (train), coarse and fine
    for published in printed:
        assert all(set(published[task]) == set(suite.labels) for task in suite.tasks)
    assert grefenstette_table3("test fine")["bigram-flip"]["neural-queue"] == 0.98
    assert grefenstette_table3("train coarse")["copy"]["deep-lstm-4"] == 0.98       # the best LSTM on copy (Fig. 2a)
    assert set(suite.labels) == {"deep-lstm-1", "deep-lstm-2", "deep-lstm-4", "deep-lstm-8", "neural-stack",
                                 "neural-queue", "neural-deque"}


def test_bench_runs_the_grid_and_reports_every_metric_of_the_run_it_keeps_beside_the_paper(tmp_path, monkeypatch):
    tiny = suites.Suite("tiny-transduction", "a smoke suite", ("copy",),
                        (suites.Column("neural-queue", "neural-queue", {"hidden": 4, "memory_size": 3},
                                       data_settings={"epoch_size": 4, "validation_size": 2}),),
                        grefenstette_table3("test coarse"), metric="coarse_accuracy", decimals=2,
                        more_metrics=(("fine_accuracy", grefenstette_table3("test fine")),
                                      ("validation.val_fine_accuracy", {})),
                        overrides={"train": TrainConfig(epochs=1, batch_size=2, bptt=0), "test_n": (65, 65)},
                        grid={"lr": (0.01, 0.001)}, select="validation.train_loss")
    monkeypatch.setitem(suites.SUITES, tiny.name, tiny)
    result = CliRunner().invoke(cli.main, ["bench", tiny.name, "--seeds", "1", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    runs = {p.parent.name: json.loads(p.read_text()) for p in tmp_path.glob("*/result.json")}
    assert set(runs) == {"copy--neural-queue--lr=0.01--s1", "copy--neural-queue--lr=0.001--s1"}
    assert {r["config"]["train"]["lr"] for r in runs.values()} == {0.01, 0.001}
    best = min(runs.values(), key=lambda r: r["metrics"]["validation"]["train_loss"])
    report = (tmp_path / "report.md").read_text()
    assert "metric: fine_accuracy" in report and "metric: validation.val_fine_accuracy" in report
    assert report.count("| copy |") == 3 and "| 1.00 |" in report      # the paper's queue on copy: 1.00
    assert f"(lr {best['config']['train']['lr']}, seed 1)" in report and "lowest validation.train_loss" in report


def test_the_kept_run_of_each_cell_is_continued_under_the_profiles_settings_as_soon_as_its_grid_has_finished(
        tmp_path, monkeypatch):
    tiny = suites.Suite("tiny-continued", "a smoke suite", ("copy", "reversal"),
                        (suites.Column("neural-queue", "neural-queue", {"hidden": 4, "memory_size": 3},
                                       data_settings={"epoch_size": 4, "validation_size": 2}),),
                        grefenstette_table3("test coarse"), metric="coarse_accuracy",
                        # a budget that one epoch spends; continued, a budget that three epochs do not
                        overrides={"train": TrainConfig(epochs=3, batch_size=2, bptt=0, max_minutes=1e-6),
                                   "test_n": (65, 65)},
                        grid={"lr": (0.01, 0.001)}, select="validation.train_loss",
                        profiles={"full": suites.Profile(1, continued={"max_minutes": 60.0})})
    monkeypatch.setitem(suites.SUITES, tiny.name, tiny)

    def bench():
        done = CliRunner().invoke(cli.main, ["bench", tiny.name, "--out", str(tmp_path)])
        assert done.exit_code == 0, done.output
        return done.output, {p.parent.name: json.loads(p.read_text()) for p in tmp_path.glob("*/result.json")}

    output, runs = bench()
    # a continued run may lose the selection to the other run of its cell, which is then continued too
    assert "4 runs: 0 finished before, 4 run now, " in output and "kept runs continued (0 failed)" in output
    logs = {key: [json.loads(line) for line in (tmp_path / key / "log.jsonl").read_text().splitlines()]
            for key in runs}
    for key, r in runs.items():     # continued: resumed from its first epoch to its third, not redone
        assert len(logs[key]) == (3 if r["config"]["train"]["max_minutes"] == 60.0 else 1)
    for kept_run in kept(list(runs.values()), tiny.select, ("task", "label")):
        assert kept_run["config"]["train"]["max_minutes"] == 60.0         # the run the report keeps was continued
    # one worker: copy's cell, complete first, is continued before reversal's runs, not after every cell
    continued = min(logs[key][1]["ended"] for key in runs if key.startswith("copy") and len(logs[key]) == 3)
    assert continued <= min(logs[key][0]["ended"] for key in runs if key.startswith("reversal"))
    again, _ = bench()
    assert "4 runs: 4 finished before, 0 run now (0 failed)" in again     # nothing is continued twice
    # a bench stopped during a continuation, after it set the shorter run's record aside: the record counts again
    # when the bench resumes, and the continued run replaces it
    key = next(key for key, r in runs.items() if r["config"]["train"]["max_minutes"] == 60.0)
    settings = {k: v for k, v in runs[key]["job"]["train_settings"].items() if k != "max_minutes"}
    shorter = dict(runs[key], job={**runs[key]["job"], "train_settings": settings})
    (tmp_path / key / "result.json").unlink()
    (tmp_path / key / SHORTER).write_text(json.dumps(shorter))
    resumed, after = bench()
    assert "kept runs continued" in resumed and not (tmp_path / key / SHORTER).exists()
    assert after[key]["config"]["train"]["max_minutes"] == 60.0


def result(task, label, seed, lr, loss, accuracy):
    """A run's record, as the runner writes it, with only what the report reads."""
    return {"job": {"task": task, "label": label, "model": label, "seed": seed, "point": {"lr": lr}},
            "metrics": {"coarse_accuracy": accuracy, "validation": {"train_loss": loss}}}


def test_the_run_kept_is_the_one_of_lowest_training_loss_over_the_grid_and_the_seeds():
    suite = suites.Suite("s", "", ("copy",), ("neural-stack",), {"copy": {"neural-stack": 1.0}},
                         metric="coarse_accuracy", decimals=2, grid={"lr": (0.1, 0.2)}, select="validation.train_loss")
    results = [result("copy", "neural-stack", 1, 0.1, 0.5, 0.9), result("copy", "neural-stack", 1, 0.2, 0.3, 0.2),
               result("copy", "neural-stack", 2, 0.1, 0.4, 0.6), result("copy", "neural-stack", 2, 0.2, 0.7, 1.0)]
    assert sorted(r["metrics"]["coarse_accuracy"] for r in kept(results, suite.select)) == [0.2, 0.6]   # per seed
    cell = aggregate(suite, results)["copy"]["neural-stack"]
    assert cell["selected"] == 0.2 and cell["run"] == "lr 0.2, seed 1"       # not the best by test accuracy (1.0)
    assert cell["mean"] == pytest.approx(0.4) and cell["runs"] == 2
    assert "| copy | 0.20 (lr 0.2, seed 1); seeds 0.40 ± 0.20 (best 0.60, 2 seeds) | 1.00 | -0.80 |" in markdown(
        suite, aggregate(suite, results))


def test_the_grid_expands_into_a_job_per_point_and_a_profile_may_change_it():
    suite = suites.get_suite("transduction")
    full = suite.jobs(1, "full")     # 5 tasks, 7 columns (the deque's at its 2 starts), 5 rates
    assert len(full) == 5 * 8 * 5 and {j.point["lr"] for j in full} == {5e-3, 1e-3, 5e-4, 1e-4, 5e-5}
    assert len({j.key for j in full}) == len(full)
    job = next(j for j in full if j.label == "deep-lstm-8" and j.point == {"lr": 5e-5})
    settings = job_settings(job)
    assert settings.train.lr == 5e-5 and settings.train.optimizer == "rmsprop" and settings.model_config.layers == 8
    assert settings.train.max_minutes == 10.0
    both = suite.jobs(1, "full-512")
    assert len(both) == 2 * len(full) and job_settings(both[-1]).model_config.hidden == 512
    quick = suite.jobs(1, "quick")
    assert all(j.point == {} for j in quick if j.label != "neural-deque") and len(quick) == 40


def test_the_deque_runs_at_both_starts_and_the_selection_keeps_one():
    suite = suites.get_suite("transduction")
    deque = [j for j in suite.jobs(1, "quick") if j.task == "copy" and j.label == "neural-deque"]
    starts = [(m.top_pop_offset, m.bottom_push_offset, m.bottom_pop_offset)
              for m in (job_settings(j).model_config for j in deque)]
    assert starts == [(-2.0, -4.0, 0.0), (0.0, -4.0, -6.0)] and len({j.key for j in deque}) == 2
    results = [{"job": dataclasses.asdict(j), "metrics": {"coarse_accuracy": accuracy,
                                                          "validation": {"train_loss": loss}}}
               for j, loss, accuracy in zip(deque, (0.3, 0.1), (0.2, 1.0))]
    cell = aggregate(suite, results)["copy"]["neural-deque"]
    assert cell["selected"] == 1.0 and cell["run"] == "top_pop_offset 0.0, bottom_pop_offset -6.0, seed 1"


def test_the_today_profile_is_the_earlier_recipe_on_the_same_tasks_and_models():
    suite = suites.get_suite("transduction")
    today = {j.label: job_settings(j) for j in suite.jobs(1, "today") if j.task == "svo-sov"}
    assert set(today) == set(suite.labels)
    stack, lstm = today["neural-stack"], today["deep-lstm-4"]
    assert (stack.train.optimizer, stack.train.lr, stack.train.average) == ("adam", 0.003, 0.995)
    assert stack.data.curriculum_start == 16 and stack.data.epoch_size == 2000
    assert (stack.model_config.hidden, stack.model_config.memory_size, stack.model_config.learned_h0) == (64, 64, False)
    assert (lstm.model_config.hidden, lstm.model_config.learned_h0, lstm.model_config.layers) == (64, False, 4)


def test_every_profile_model_setting_is_a_setting_of_some_model_of_its_suite():
    for suite in (s for s in suites.SUITES.values() if s.kind == "sequence"):
        names = {f for c in suite.columns for f in get_model_class(c.model).Config.__dataclass_fields__}
        for profile in suite.profiles.values():
            assert set(profile.model_settings) <= names, (suite.name, profile)


@pytest.mark.parametrize("name", sorted(n for n, s in suites.SUITES.items() if s.kind == "sequence"))
def test_every_suite_job_is_a_valid_experiment(name):
    from stackparse.benchmarks.runner import job_settings as experiment_config
    for job in suites.get_suite(name).jobs(1):
        experiment_config(job).validate()


def test_the_plan_counts_the_runs_left_and_their_training_time_at_most(tmp_path):
    """`bench --plan`, for a suite that resumes across sittings: what is left, from each run's budget (10 minutes a
    run of the full profile, 30 for the kept one), less what a begun run's log says it has trained."""
    from stackparse.benchmarks.runner import plan_benchmark
    jobs = suites.get_suite("transduction").only("neural-stack", "copy").jobs(1, "full")
    (tmp_path / jobs[0].key).mkdir(parents=True)
    (tmp_path / jobs[0].key / "result.json").write_text("{}")
    (tmp_path / jobs[1].key).mkdir()
    (tmp_path / jobs[1].key / "log.jsonl").write_text('{"epoch": 1, "epoch_seconds": 90}\n'
                                                      '{"epoch": 2, "epoch_seconds": 30}\n')
    plan = plan_benchmark("transduction", tmp_path, "full", columns="neural-stack", tasks="copy")
    assert (plan.finished, plan.begun, plan.waiting, plan.continuations) == (1, 1, 3, 1)
    assert plan.minutes == pytest.approx(8 + 3 * 10 + 20)
    output = CliRunner().invoke(cli.main, ["bench", "transduction", "--out", str(tmp_path), "--plan", "--columns",
                                           "neural-stack", "--tasks", "copy", "--workers", "2"]).output
    assert "1 runs finished, 1 begun" in output and "at most 58m00s of training left, 29m00s on 2 workers" in output
    assert not (tmp_path / jobs[2].key).exists()                            # nothing run
    # a begun run past its 10 minutes is a kept run being continued: what it trained beyond counts off the 20 more
    (tmp_path / jobs[1].key / "log.jsonl").write_text('{"epoch": 1, "epoch_seconds": 900}\n')
    assert plan_benchmark("transduction", tmp_path, "full", columns="neural-stack", tasks="copy").minutes == \
        pytest.approx(3 * 10 + 15)
    # every run finished and the kept one continued already: nothing left
    for job, loss in zip(jobs, (0.3, 0.1, 0.2, 0.4, 0.5)):
        settings = {**job.train_settings, "max_minutes": 30.0} if loss == 0.1 else job.train_settings
        (tmp_path / job.key).mkdir(exist_ok=True)
        record = {"job": {**dataclasses.asdict(job), "train_settings": settings},
                  "metrics": {"validation": {"train_loss": loss}}}
        (tmp_path / job.key / "result.json").write_text(json.dumps(record))
    plan = plan_benchmark("transduction", tmp_path, "full", columns="neural-stack", tasks="copy")
    assert (plan.finished, plan.begun, plan.waiting, plan.continuations, plan.minutes) == (5, 0, 0, 0, 0.0)
