"""The transduction benchmark: the suite against the paper's Table 3, and reports with more than one
metric (coarse and fine, test and training lengths) from the same runs."""
import pytest
from click.testing import CliRunner

import cli
from stackparse.benchmarks import suites
from stackparse.benchmarks.published import GREFENSTETTE_TABLE3, grefenstette_table3
from stackparse.training.trainer import TrainConfig


def test_every_column_and_task_of_the_suite_has_the_papers_numbers():
    suite = suites.get_suite("transduction")
    assert set(suite.tasks) == set(GREFENSTETTE_TABLE3)
    for published in [suite.published, *(p for m, p in suite.more_metrics if p)]:
        assert all(set(published[task]) == set(suite.labels) for task in suite.tasks)
    assert grefenstette_table3("test fine")["bigram-flip"]["neural-queue"] == 0.98


def test_bench_reports_every_metric_beside_the_paper(tmp_path, monkeypatch):
    tiny = suites.Suite("tiny-transduction", "a smoke suite", ("copy",),
                        (suites.Column("neural-queue", "neural-queue", {"hidden": 4, "memory_size": 3},
                                       data_settings={"epoch_size": 4, "validation_size": 2}),),
                        grefenstette_table3("test coarse"), metric="coarse_accuracy", decimals=2,
                        more_metrics=(("fine_accuracy", grefenstette_table3("test fine")),
                                      ("validation.val_fine_accuracy", {})),
                        overrides={"train": TrainConfig(epochs=1, batch_size=2, bptt=0), "test_n": (65, 65)})
    monkeypatch.setitem(suites.SUITES, tiny.name, tiny)
    result = CliRunner().invoke(cli.main, ["bench", tiny.name, "--seeds", "1", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    report = (tmp_path / "report.md").read_text()
    assert "metric: fine_accuracy" in report and "metric: validation.val_fine_accuracy" in report
    assert report.count("| copy |") == 3 and "| 1.00 |" in report      # the paper's queue on copy: 1.00


@pytest.mark.parametrize("name", sorted(n for n, s in suites.SUITES.items() if s.kind == "sequence"))
def test_every_suite_job_is_a_valid_experiment(name):
    from stackparse.benchmarks.runner import job_settings as experiment_config
    for job in suites.get_suite(name).jobs(1):
        experiment_config(job).validate()
