"""`bench` on Dask distributed: a real scheduler and workers on localhost give the local run's
results; a suite whose worker is killed midway is completed by a re-run without redoing or losing a
finished result; the same suite and seeds give the same metrics; profiles, composites and reports."""
import dataclasses
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from stackparse.benchmarks import published, runner, suites
from stackparse.benchmarks.runner import job_settings
from stackparse.benchmarks.report import aggregate, markdown, replace_block
from stackparse.errors import UserError
from stackparse.grammars.realtime import realtime
from stackparse.models.programming import neurons_needed
from stackparse.tasks import get_task
from tests.cli_runner import run
from tests.parsers_fixtures import SMALL_CONLLU, write

# A parser small enough to train in a second (ParserConfig fields).
TINY_PARSER = {"word_dim": 8, "upos_dim": 4, "char_hidden": 0, "token_dim": 8, "context_layers": 1,
               "context_dim": 4, "lstm_dim": 8, "lstm_layers": 1, "state_dim": 8}

ROOT = Path(__file__).resolve().parent.parent
SMOKE_RUNS = 8                                     # the smoke suite: 2 tasks x 2 models x 2 seeds


@pytest.fixture(autouse=True)
def small_dynet(monkeypatch):
    """Small DyNet pools for every process these tests start (the smoke suite's models are tiny): a
    process touches all of its pools at start, 1.4 GB by default."""
    monkeypatch.setenv("STACKPARSE_DYNET_MEM", "32,32,32,32")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def cluster():
    """Start a `dask scheduler` and return (its address, a function that starts a `dask worker`
    process); every process is stopped afterwards, with the processes it started (its process group:
    a worker runs each job in a child process)."""
    address, processes = f"tcp://127.0.0.1:{free_port()}", []

    def start(*args):
        processes.append(subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_" + args[0], *args[1:]],
                                          cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                          start_new_session=True))
        return processes[-1]

    start("scheduler", "--host", "127.0.0.1", "--port", address.rsplit(":", 1)[1], "--no-dashboard")
    yield address, lambda: start("worker", address, "--nthreads", "1", "--no-nanny", "--no-dashboard")
    for p in processes:
        kill(p)


def kill(process: subprocess.Popen) -> None:
    """SIGKILL a process and every process of its group, as when its machine goes down."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def wait_for_workers(address: str, n: int) -> None:
    from distributed import Client
    with Client(address, timeout="30s") as client:
        client.wait_for_workers(n, timeout=60)


def metrics(out: Path) -> dict:
    """Each run's metrics, without the times (which no two runs share)."""
    def untimed(d):
        return {k: untimed(v) if isinstance(v, dict) else v for k, v in d.items()
                if "seconds" not in k and "per_s" not in k}
    return {p.parent.name: untimed(json.loads(p.read_text())["metrics"]) for p in sorted(out.glob("*/result.json"))}


def test_a_cluster_of_two_workers_gives_the_local_runs_results(cluster, tmp_path):
    address, start_worker = cluster
    start_worker(), start_worker()
    wait_for_workers(address, 2)
    remote = run("bench", "smoke", "--seeds", "1", "--scheduler", address, "--out", tmp_path / "remote")
    assert "4 runs: 0 finished before, 4 run now (0 failed)" in remote
    run("bench", "smoke", "--seeds", "1", "--workers", "1", "--out", tmp_path / "local")
    assert len(metrics(tmp_path / "remote")) == 4
    assert metrics(tmp_path / "remote") == metrics(tmp_path / "local")          # reproducible, wherever run


def test_a_rerun_completes_a_suite_whose_worker_was_killed(cluster, tmp_path):
    address, start_worker = cluster
    worker = start_worker()
    wait_for_workers(address, 1)
    out = tmp_path / "bench"
    client = subprocess.Popen([sys.executable, "cli.py", "bench", "smoke", "--scheduler", address, "--out", out],
                              cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 120
    while not list(out.glob("*/result.json")) and time.monotonic() < deadline:
        time.sleep(0.02)
    kill(worker)                                   # mid-suite: at least one run finished, not all
    kill(client)
    finished = {p: p.stat().st_mtime_ns for p in out.glob("*/result.json")}
    assert 1 <= len(finished) < SMOKE_RUNS
    assert all(json.loads(p.read_text())["metrics"] for p in finished)      # whole files only

    rerun = run("bench", "smoke", "--out", out)
    assert f"{len(finished)} finished before, {SMOKE_RUNS - len(finished)} run now (0 failed)" in rerun
    assert {p: p.stat().st_mtime_ns for p in finished} == finished           # none redone
    assert len(list(out.glob("*/result.json"))) == SMOKE_RUNS


def test_a_failing_run_is_recorded_and_run_again_next_time(tmp_path, monkeypatch):
    broken = suites.Suite("broken", "one good column, one broken", ("anbn",),
                          (suites.Column("rnn", "rnn", {"hidden": 4}),
                           suites.Column("bad", "lstm", {"hidden": 4}, {"lr_schedule": "nope"})), {},
                          overrides=suites.get_suite("smoke").overrides)
    monkeypatch.setitem(suites.SUITES, broken.name, broken)
    out = run("bench", "broken", "--seeds", "1", "--out", tmp_path)
    assert "2 runs: 0 finished before, 2 run now (1 failed)" in out
    assert (tmp_path / "anbn--rnn--s1" / "result.json").is_file()
    assert "--lr-schedule" in json.loads((tmp_path / "anbn--bad--s1" / "error.json").read_text())["error"]
    assert "1 finished before, 1 run now (1 failed)" in run("bench", "broken", "--seeds", "1", "--out", tmp_path)


def test_a_job_ends_when_the_worker_that_started_it_is_gone():
    # the parent's pid seen by the job: its worker's, then init's once the worker is gone
    parents, left = iter([10, 10, 10, 1]), []
    thread = runner.exit_with_parent(0.001, parent=lambda: next(parents), leave=left.append)
    thread.join(5)
    assert left == [1] and not thread.is_alive()


def test_columns_and_tasks_run_only_the_jobs_named(tmp_path, monkeypatch):
    two = suites.Suite("two", "two columns", ("anbn", "anbncn"),
                       (suites.Column("rnn", "rnn", {"hidden": 4}), suites.Column("lstm", "lstm", {"hidden": 4})), {},
                       overrides=suites.get_suite("smoke").overrides)
    monkeypatch.setitem(suites.SUITES, two.name, two)
    assert "1 runs: 0 finished before, 1 run now (0 failed)" in run("bench", "two", "--seeds", "1", "--columns",
                                                                    "lst", "--tasks", "cn", "--out", tmp_path)
    assert [p.parent.name for p in tmp_path.glob("*/result.json")] == ["anbncn--lstm--s1"]
    assert "no job of two has 'gru' in its column's label and '' in its task" in run(
        "bench", "two", "--columns", "gru", "--out", tmp_path, ok=False)
    everything = run("report", tmp_path)                            # every column and task, run or not
    assert "| rnn (ours) |" in everything and "| anbn |" in everything
    chosen = run("report", tmp_path, "--columns", "lst", "--tasks", "cn")       # those run only
    assert "| lstm (ours) |" in chosen and "rnn (ours)" not in chosen and "| anbn |" not in chosen
    assert "two: no column has 'gru' in its label" in run("report", tmp_path, "--columns", "gru", ok=False)


def test_only_seeds_run_only_those_seeds(tmp_path, monkeypatch):
    one = suites.Suite("one", "one column", ("anbn",), (suites.Column("rnn", "rnn", {"hidden": 4}),), {},
                       overrides=suites.get_suite("smoke").overrides)
    monkeypatch.setitem(suites.SUITES, one.name, one)
    assert "1 runs: 0 finished before, 1 run now (0 failed)" in run("bench", "one", "--seeds", "3", "--only-seeds",
                                                                    "2", "--out", tmp_path)
    assert [p.parent.name for p in tmp_path.glob("*/result.json")] == ["anbn--rnn--s2"]
    assert "no job of one has '' in its column's label and '' in its task and one of the seeds 4" in run(
        "bench", "one", "--seeds", "3", "--only-seeds", "4", "--out", tmp_path, ok=False)
    assert "seeds count from 1" in run("bench", "one", "--only-seeds", "0", "--out", tmp_path, ok=False)
    assert "give seeds as numbers" in run("bench", "one", "--only-seeds", "x", "--out", tmp_path, ok=False)


def test_profiles_set_seeds_and_training(tmp_path):
    counting = suites.get_suite("counting")
    quick, full = counting.jobs(counting.profile("quick").seeds, "quick"), counting.jobs(3, "full")
    assert len(quick) == 25 and len(full) == 75
    stack = next(j for j in quick if j.label == "stack-rnn")
    assert stack.train_settings == {"epochs": 20} and stack.data_settings == {"epoch_size": 1000}
    assert next(j for j in full if j.label == "stack-rnn").data_settings == {}
    transduction = suites.get_suite("transduction")
    medium = transduction.jobs(transduction.profile("medium").seeds, "medium")
    assert len(medium) == 80 and all(j.train_settings == {**(suites.ONE_START if j.label == "neural-deque" else {}),
                                                          "max_minutes": 3.0} for j in medium)
    assert {j.point["lr"] for j in medium} == {5e-3, 1e-3}
    from stackparse.benchmarks.runner import job_settings          # the deque's column: the task's recipe, one start
    deque, stack = (job_settings(next(j for j in medium if j.label == label)).train
                    for label in ("neural-deque", "neural-stack"))
    assert (deque.restarts, deque.patience, deque.lr) == (1, stack.patience, stack.lr)
    with pytest.raises(UserError, match="no profile 'medium'"):
        suites.get_suite("mali-table3").profile("medium")


def test_a_composite_runs_its_parts_into_one_report_and_a_markdown_block(tmp_path, monkeypatch):
    curved = dataclasses.replace(suites.get_suite("smoke"), name="smoke-curves", curves=True)
    monkeypatch.setitem(suites.SUITES, curved.name, curved)
    monkeypatch.setitem(suites.COMPOSITES, "both", suites.Composite("both", "two smoke suites", ("smoke", curved.name)))
    out, doc = tmp_path / "bench", tmp_path / "BENCH.md"
    assert "8 runs: 0 finished before, 8 run now" in run("bench", "both", "--profile", "quick", "--seeds", "1", "--out", out)
    assert len(list(out.glob("smoke*/*/result.json"))) == 8
    assert "holds the runs of suite 'both', profile 'quick'" in run("bench", "both", "--out", out, ok=False)
    doc.write_text("text\n<!-- report: both -->\n<!-- /report -->\n")
    monkeypatch.chdir(tmp_path)
    run("report", "bench", "--into", doc, "--name", "both")
    block = doc.read_text()
    assert "#### smoke\n" in block and "#### smoke-curves\n" in block and "profile quick (2 seeds; these results: seed 1)" in block
    assert "| anbn | 0.0 (1 seed) | 25.0 | -25.0 |" in block
    try:
        import matplotlib  # noqa: F401  (optional: pip install '.[plot]')
    except ImportError:
        assert "(no plot: matplotlib is not installed" in block
        return
    assert "![smoke-curves: accuracy against n](docs/figures/both.png)" in block
    assert (tmp_path / "docs" / "figures" / "both.png").stat().st_size > 1000


def test_the_nspda_papers_tables_are_suites_with_its_rows_and_sizes():
    table4 = suites.get_suite("mali-table4")
    assert table4.labels == tuple(published.MALI_TABLE4_TEST["pda-dyck2"])     # every row of the paper's Table 4
    assert {j.task for j in table4.jobs(1)} == {f"{t}-random" for t in published.MALI_LANGUAGES}    # the paper's
    assert table4.published["pda-anbn-random"] == published.MALI_TABLE4_TEST["pda-anbn"]           # negatives' reading
    for j in table4.jobs(3):
        if j.model in ("nspda2", "nspda3"):
            lo, hi = suites.STATES[j.model]
            pda, hidden = get_task(j.task).pda, j.model_settings["hidden"]
            needed = neurons_needed(realtime(pda), 2 if j.model == "nspda2" else 3)     # the inserted rules'
            assert lo <= hidden - len(pda.states) <= hi or hidden == needed > len(pda.states) + lo
            assert hidden >= needed
            settings = job_settings(j)
            assert (settings.data.insert_rules, settings.data.noise_kind, settings.data.noise) == (0.5, "algorithm2",
                                                                                                 1.0)
        if j.label in ("2nd Order RNN", "NNPDA"):
            assert job_settings(j).data.noise == 0.0
    assert table4.jobs(2) == table4.jobs(2)                                     # the draws are the seed's
    for name, table in (("mali-table1", published.MALI_TABLE1), ("mali-table2", published.MALI_TABLE2),
                        ("mali-table3", published.MALI_TABLE3), ("mali-table6", published.MALI_TABLE6)):
        suite = suites.get_suite(name)
        assert set(suite.tasks) == {f"{t}-random" for t in published.MALI_LANGUAGES4}
        assert set(table["pda-anbn"]) - set(suite.labels) <= {"NNPDA w/o hints M1", "NNPDA w/ dead neuron hints M1",
                                                               "NNPDA w/ dead neuron hints M2", "TBPTT M1",
                                                               "TBPTT M2"}
    assert [p.name for p in suites.suite_parts("mali")] == ["mali-table1", "mali-table2", "mali-table3",
                                                            "mali-table4", "mali-table6", "mali-table7"]
    table7 = suites.get_suite("mali-table7")               # Table 7's rows beyond Table 4's, each measured
    assert set(table7.labels) == {k for k in published.MALI_TABLE7_TEST["pda-anbn"] if k.startswith("MI-")}
    assert [p.name for p in suites.suite_parts("algorithmic")] == ["counting", "memorization", "addition"]


def test_report_into_a_marked_block_of_a_markdown_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    doc = tmp_path / "BENCH.md"
    doc.write_text("# Title\n\n<!-- report: smoke -->\nold table\n<!-- /report -->\n\nafter\n")
    plot = tmp_path / "runs" / "part" / "curves.png"
    plot.parent.mkdir(parents=True)
    plot.write_bytes(b"png")
    replace_block(doc, "smoke", f"| a | b |\n\n![curves]({plot.relative_to(tmp_path)})\n")
    assert doc.read_text() == ("# Title\n\n<!-- report: smoke -->\n| a | b |\n\n"
                               "![curves](docs/figures/smoke.png)\n<!-- /report -->\n\nafter\n")
    assert (tmp_path / "docs" / "figures" / "smoke.png").read_bytes() == b"png"
    with pytest.raises(UserError, match="no block"):
        replace_block(doc, "other", "x")


def test_the_parser_suite_trains_then_reports_accuracy_and_speed(tmp_path, monkeypatch):
    for split in ("train", "dev", "test"):
        write(tmp_path, f"{split}.conllu", SMALL_CONLLU)
    tiny = dataclasses.replace(
        suites.get_suite("parser"), name="tiny-parser", tasks=("small",),
        overrides={"train_file": str(tmp_path / "train.conllu"), "test_file": str(tmp_path / "test.conllu")},
        models=(suites.Column("stack-lstm", "stack-lstm", TINY_PARSER, {"batch_size": 2}),))
    monkeypatch.setitem(suites.SUITES, tiny.name, tiny)
    out = run("bench", tiny.name, "--profile", "quick", "--out", tmp_path / "bench")
    assert "1 runs: 0 finished before, 1 run now (0 failed)" in out and "metric: parse_words_per_s" in out
    result = json.loads((tmp_path / "bench" / "small--stack-lstm--s1" / "result.json").read_text())
    assert result["config"]["train"]["epochs"] == 1 and 0 <= result["metrics"]["test_las"] <= 100


def test_table_2_has_a_row_per_model_and_beside_each_task_the_paper_and_the_difference():
    counting = suites.get_suite("counting")
    results = [{"job": {"task": task, "model": "stack-rnn", "label": label}, "metrics": {"percent_n_correct": value}}
               for task in suites.COUNTING for label in counting.labels for value in (90.0, 100.0)]
    text = markdown(counting, aggregate(counting, results))
    assert text.startswith("| model | anbn (ours) | anbn (paper) | Δ | anbncn (ours) |")
    assert "| rnn | 95.0 ± 5.0 (best 100.0, 2 seeds) | 25.0 | +70.0 |" in text
    assert "| stack-rnn+rounding | 95.0 ± 5.0 (best 100.0, 2 seeds) | 100.0 | -5.0 |" in text


def test_the_report_names_the_runs_that_diverged(tmp_path):
    from stackparse.benchmarks.report import write_report
    suite = suites.Suite("tiny", "a smoke suite", ("anbn",), ("rnn",), {}, metric="error_by_split.test")
    results = [{"job": {"task": "anbn", "label": "rnn", "model": "rnn", "seed": seed},
                "metrics": {"error_by_split": {"test": 10.0 * seed},
                            **({"diverged": "epoch 3: the gradient's norm is inf"} if seed == 2 else {})}}
               for seed in (1, 2)]
    text = write_report(suite, results, tmp_path)
    assert "diverged, stopped there and count by their best epoch: anbn, rnn, seed 2 (epoch 3: the gradient's" in text
    assert "diverged" not in write_report(suite, results[:1], tmp_path)


def test_the_report_says_which_seeds_its_results_hold(tmp_path):
    """A profile's note states its seeds; a folder run with fewer (`--seeds`) says so beside it."""
    from stackparse.benchmarks.report import write_report
    suite = suites.Suite("tiny", "a smoke suite", ("anbn",), ("rnn",), {}, metric="error_by_split.test",
                         profiles={"short": suites.Profile(2, note="2 seeds, cut short")})
    results = [{"job": {"task": "anbn", "label": "rnn", "model": "rnn", "seed": seed},
                "metrics": {"error_by_split": {"test": 10.0 * seed}}} for seed in (1, 2)]
    assert "profile short (2 seeds, cut short); paper" in write_report(suite, results, tmp_path, "short")
    assert "profile short (2 seeds, cut short; these results: seed 1); paper" in \
        write_report(suite, results[:1], tmp_path, "short")


def test_the_report_counts_the_cells_within_the_suites_tolerance_and_the_provisional_ones(tmp_path):
    """Issue 19's and 18's criteria (cells within 0.05 or 2 points of the paper) counted by the report itself; a cell
    whose grid has not every run finished is provisional."""
    from stackparse.benchmarks.report import write_report
    suite = suites.Suite("tiny", "a smoke suite", ("anbn", "anbncn"), ("rnn", "lstm"),
                         {"anbn": {"rnn": 10.0, "lstm": 0.0}, "anbncn": {"rnn": 50.0}}, metric="error_by_split.test",
                         grid={"lr": (0.1, 0.01)}, select="error_by_split.test", profiles={"full": suites.Profile(1)},
                         tolerance=2.0)
    results = [{"job": {"task": task, "label": label, "model": label, "seed": 1, "point": {"lr": lr}},
                "metrics": {"error_by_split": {"test": value}}}
               for task, label, lr, value in (("anbn", "rnn", 0.1, 11.5), ("anbn", "rnn", 0.01, 30.0),
                                              ("anbn", "lstm", 0.1, 2.5), ("anbncn", "rnn", 0.1, 49.0))]
    text = write_report(suite, results, tmp_path)
    assert ("Within 2 of the paper: **2 of the 3 cells** that have both numbers (by metric: error_by_split.test 2 of "
            "3; by column: rnn 2 of 2; lstm 0 of 1); 2 of the 3 rest on fewer runs") in text
    assert "Within" not in write_report(dataclasses.replace(suite, tolerance=None), results, tmp_path)
    # The columns a criterion counts (Table 3's four rows) apart, out of all the cells the paper prints for them.
    assert ("**2 of the 3 cells** that have both numbers; of the row counted (rnn): **2 of the 2 measured** of "
            "their 2 cells (0 not measured yet) (by metric") in \
        write_report(dataclasses.replace(suite, counted=("rnn",)), results, tmp_path)


def test_a_label_with_a_slash_names_one_directory():
    """Table 1's and Table 3's columns ("w/o reg") once made nested directories the report never found."""
    job = suites.Job("pda-anbn", "nspda2", 3, label="w/o reg M1")
    assert job.key == "pda-anbn--w_o reg M1--s3"
    assert all("/" not in j.key for name in ("mali-table1", "mali-table3") for j in suites.SUITES[name].jobs(1))


def test_the_best_seed_of_a_convergence_metric_is_the_fastest():
    table1 = suites.get_suite("mali-table1")
    label = table1.labels[0]
    results = [{"job": {"task": "pda-anbn", "model": "nspda2", "label": label}, "metrics": {"converged_epoch": v}}
               for v in (1, 4)]
    text = markdown(table1, aggregate(table1, results, "converged_epoch"), "converged_epoch")
    assert "2 ± 2 (best 1, 2 seeds)" in text
    assert "| pda-anbn |" in text and "| pda-anbn-random |" in text   # the suite's tasks, and the others measured


def test_tables_1_and_2_report_the_test_error_beside_with_its_own_decimals(tmp_path):
    from stackparse.benchmarks.report import write_report
    table1 = suites.get_suite("mali-table1")
    results = [{"job": {"task": "pda-anbn-random", "model": "nspda2", "label": table1.labels[0], "seed": 1},
                "metrics": {"converged_epoch": 12, "error_by_split": {"test": 0.125}}}]
    text = write_report(table1, results, tmp_path, "sitting")
    assert "| 12 (1 seed) |" in text and "metric: error_by_split.test" in text and "| 0.12 (1 seed) |" in text


def test_a_convergence_never_reached_is_bounded_by_what_the_run_trained():
    table2 = suites.get_suite("mali-table2")
    label = table2.labels[0]
    results = [{"job": {"task": "pda-anbn-random", "model": "nspda2", "label": label},
                "metrics": {"converged_chars": None, "trained_chars": trained}} for trained in (24000, 31000)]
    text = markdown(table2, aggregate(table2, results, "converged_chars"), "converged_chars")
    assert "—; 2 runs never reached it (> 24000)" in text


def test_convergence_counts_to_the_first_epoch_at_the_stopping_rule_and_the_whole_run_beside(tmp_path):
    from stackparse.experiments.driver import convergence
    from stackparse.training.trainer import TrainConfig
    rows = [{"epoch": e, "val_accuracy": a, "train_chars_per_s": 100.0, "train_seconds": 2.0}
            for e, a in ((1, 0.5), (2, 1.0), (3, 1.0))]
    log = tmp_path / "log.jsonl"
    log.write_text("\n".join(json.dumps(r) for r in rows))
    train = TrainConfig(stop_metric="val_accuracy", stop_at=1.0)
    assert convergence(log, train, 1, "chars") == {"converged_epoch": 2, "converged_chars": 400,
                                                   "trained_epoch": 3, "trained_chars": 600}
    log.write_text(json.dumps(rows[0]))
    assert convergence(log, train, 1, "chars") == {"converged_epoch": None, "converged_chars": None,
                                                   "trained_epoch": 1, "trained_chars": 200}
