"""The treebank language model (Table 4's setting) and the benchmark additions of issue 4, on tiny data."""
import json

import numpy as np
import pytest

from stackparse.benchmarks import suites
from stackparse.benchmarks.report import load_results, write_report
from stackparse.benchmarks.runner import run_benchmark
from stackparse.experiments import run
from stackparse.experiments.language_model import (EOS, UNK, CorpusConfig, LanguageModel, LanguageModelSettings,
                                                   TreebankCorpus)
from stackparse.training import TrainConfig
from stackparse.training.sequence import SequenceDataConfig

def run_language_model(model, model_config, train, out, corpus, progress):
    return run(LanguageModel(LanguageModelSettings(model, model_config, train, corpus)), out, progress=progress)


SENTENCES = ["The cat sat .", "A dog sat on the cat .", "The dog ran .", "Cats ran on ."]


def write_treebank(directory):
    for split in ("train", "dev", "test"):
        lines = []
        for i, sentence in enumerate(SENTENCES):
            lines.append(f"# sent_id = {split}-{i}")
            words = sentence.split()
            if i == 1:                                       # a multiword range and an empty node are skipped
                lines.append("1-2\tAdog\t_\t_\t_\t_\t_\t_\t_\t_")
            for j, w in enumerate(words, 1):
                lines.append(f"{j}\t{w}\t_\t_\t_\t_\t0\troot\t_\t_")
            if i == 2:
                lines.append("3.1\tghost\t_\t_\t_\t_\t_\t_\t_\t_")
            lines.append("")
        (directory / f"en_ewt-ud-{split}.conllu").write_text("\n".join(lines) + "\n")
    return CorpusConfig(directory=str(directory), min_count=2)


def test_corpus_words_vocabulary_and_streams(tmp_path):
    corpus = TreebankCorpus(write_treebank(tmp_path))
    # lowercased; train counts >= 2: the, cat, sat, ., dog, ran, on  (a, cats: once -> <unk>)
    assert corpus.symbols[:2] == (UNK, EOS) and set(corpus.symbols[2:]) == {"the", "cat", "sat", ".", "dog",
                                                                            "ran", "on"}
    words = [corpus.symbols[i] for i in corpus.ids["train"]]
    assert words[:5] == ["the", "cat", "sat", ".", EOS] and words[5] == UNK and "ghost" not in words
    streams = corpus.streams("dev", 3)
    assert len(streams) == 3 and all(s.targets[:-1] == s.inputs[1:] and all(s.scored) for s in streams)
    assert streams[0].targets[-1] == streams[1].inputs[0]                # contiguous pieces of one text


@pytest.mark.parametrize("model,settings", [("lstm", {"hidden": 5}),
                                            ("stack-rnn", {"hidden": 5, "stacks": 3, "recurrent": True})])
def test_language_model_trains_with_the_shared_trainer(tmp_path, model, settings):
    corpus = write_treebank(tmp_path)
    metrics = run_language_model(model, settings, TrainConfig(epochs=2, batch_size=2, bptt=4), tmp_path / "run",
                                 corpus, progress=False)
    assert 1 < metrics["test_perplexity"] < 2 * metrics["vocabulary"]
    assert json.loads((tmp_path / "run" / "config.json").read_text())["model_config"]["hidden"] == 5
    log = [json.loads(line) for line in (tmp_path / "run" / "log.jsonl").read_text().splitlines()]
    assert len(log) == 2 and all(np.isclose(2 ** e["val_entropy"], e["val_perplexity"]) for e in log)


def test_suite_columns_settings_and_curves(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    tiny = suites.Suite("tiny-memory", "a smoke suite", ("memorization",),
                        (suites.Column("stack-rnn+rounding", "stack-rnn", {"hidden": 4, "stacks": 2, "rounding": True},
                                       {"batch_size": 2}),),
                        {}, overrides={"train": TrainConfig(epochs=1),
                                       "data": SequenceDataConfig(epoch_size=8, validation_size=4)},
                        curves=True)
    monkeypatch.setitem(suites.SUITES, "tiny-memory", tiny)
    run_benchmark(tiny.name, tmp_path, seeds=1)
    results = load_results(tmp_path)
    assert [r["job"]["label"] for r in results] == ["stack-rnn+rounding"]
    config = results[0]["config"]
    assert config["model_config"]["rounding"] and config["train"]["batch_size"] == 2 and config["train"]["epochs"] == 1
    text = write_report(tiny, load_results(tmp_path), tmp_path)
    assert "| memorization | stack-rnn+rounding |" in text and (tmp_path / "curves.png").stat().st_size > 1000
