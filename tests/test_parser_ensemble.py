"""Ensembles of parsers (`parsers.inference.Ensemble`): models of one treebank decoding as one, their tag and action
probabilities averaged; refused across treebanks or systems, and off the numpy engine's greedy decoding."""
import numpy as np
import pytest

from parsers.api import Parser
from parsers.conllu_io import read_conllu
from parsers.inference import Ensemble, NumpyParser, lockstep, mean_probabilities, mismatch
from parsers.model import tag_distribution
from stackparse.errors import UserError
from tests.cli_runner import run
from tests.parsers_fixtures import SMALL_CONLLU, per_sentence, write
from tests.test_parser_inference import sentences, tiny_model  # noqa: F401  (a fixture)


def replayed(engine, sentences, derivation):
    """The engine's scores along `derivation` [(sentence, action)], in order: None where one action was legal."""
    todo = {}
    for i, action in derivation:
        todo.setdefault(i, []).append(action)
    out = []

    def choose(i, config, legal, scores):
        out.append(scores)
        return todo[i].pop(0)
    lockstep([engine], sentences, False, per_sentence(choose))
    return out


def test_a_model_beside_itself_parses_as_the_model(sentences):
    model, _ = tiny_model(sentences[0])
    alone, twice = NumpyParser(model), Ensemble([NumpyParser(model), NumpyParser(model)])
    for predict_tags in (False, True):
        assert twice.parse(sentences[1], predict_tags) == alone.parse(sentences[1], predict_tags)


def test_each_action_is_the_best_under_the_mean_probabilities(sentences):
    # On the input's own tags (the items do not depend on the tagger), each model's scores replayed along the
    # ensemble's derivation give the ensemble's: the log of the mean of their softmaxes.
    a, b = (NumpyParser(tiny_model(sentences[0], seed=seed)[0]) for seed in (3, 4))
    derivation, seen = [], []

    def choose(i, config, legal, scores):
        action = legal[0] if scores is None else legal[int(np.argmax(scores[legal]))]
        derivation.append((i, action))
        seen.append(scores)
        return action
    lockstep([a, b], sentences[1], False, per_sentence(choose))
    scored = 0
    for ours, sa, sb in zip(seen, replayed(a, sentences[1], derivation), replayed(b, sentences[1], derivation)):
        assert (ours is None) == (sa is None) == (sb is None)
        if ours is not None:
            pa, pb = (np.exp(s - s.max()) / np.exp(s - s.max()).sum() for s in (sa.astype(float), sb.astype(float)))
            np.testing.assert_allclose(ours, np.log((pa + pb) / 2), rtol=0, atol=1e-5)
            scored += 1
    assert scored >= 15
    assert Ensemble([a, b]).parse(sentences[1]) != a.parse(sentences[1])       # the second model counts


def test_each_words_tags_are_the_best_under_the_mean_distribution(sentences):
    a, b = (NumpyParser(tiny_model(sentences[0], seed=seed)[0]) for seed in (3, 4))
    parsed = Ensemble([a, b]).parse(sentences[1], predict_tags=True)
    every = [True] * len(sentences[1])
    for k, (ta, tb) in enumerate(zip(a.tag_scores(sentences[1], every).scores, b.tag_scores(sentences[1], every).scores)):
        for column, vocab_tags, got in ((0, a.vocab.upos, parsed[k].upos), (1, a.vocab.xpos, parsed[k].xpos)):
            mean = (tag_distribution(ta[column]) + tag_distribution(tb[column])) / 2
            assert got == [vocab_tags[j + 1] for j in mean.argmax(axis=1)]


def test_mean_probabilities_stay_finite_where_both_models_rule_an_action_out():
    scores = [np.array([[0.0, -1e4, 5.0]], np.float32), np.array([[1.0, -2e4, 3.0]], np.float32)]
    mean = mean_probabilities(scores)
    assert np.isfinite(mean).all() and mean[0].argmax() == 2 and mean[0, 1] < -9000
    np.testing.assert_allclose(np.exp(mean).sum(), 1.0, rtol=1e-6)


def test_models_of_other_systems_or_treebanks_are_refused(sentences):
    base = NumpyParser(tiny_model(sentences[0])[0])
    assert mismatch(base, NumpyParser(tiny_model(sentences[0], seed=5)[0])) is None
    assert "transitions differ" in mismatch(base, NumpyParser(tiny_model(sentences[0], system="arc-standard")[0]))
    assert "tagger" in mismatch(base, NumpyParser(tiny_model(sentences[0], tagger=False)[0]))
    assert "transitions differ" in mismatch(base, NumpyParser(tiny_model(sentences[1][2:], seed=5)[0]))


def test_parse_with_an_ensemble_on_the_command_line(tmp_path, sentences):
    data = write(tmp_path, "small.conllu", SMALL_CONLLU + "\n\n")
    for seed in (3, 4):
        model, pc = tiny_model(sentences[0], seed=seed)
        Parser(model, pc).save(tmp_path / f"m{seed}")
    other, pc = tiny_model(sentences[0], system="arc-standard")
    Parser(other, pc).save(tmp_path / "other")
    out = tmp_path / "out.conllu"
    run("parse", tmp_path / "m3", data, "-o", out, "--ensemble", tmp_path / "m4", "--quiet")
    parsed = Parser.load_ensemble([tmp_path / "m3", tmp_path / "m4"]).parse(read_conllu(data)[0])
    assert [line.split("\t")[6] for line in out.read_text().splitlines() if line.split("\t")[0].isdigit()] == \
        [str(h) for s in parsed for h in s.heads[1:]]
    refused = run("parse", tmp_path / "m3", data, "-o", out, "--ensemble", tmp_path / "m4", "--beam", "2", ok=False)
    assert "an ensemble parses greedily" in refused
    refused = run("parse", tmp_path / "m3", data, "-o", out, "--ensemble", tmp_path / "other", ok=False)
    assert f"{tmp_path / 'other'}: cannot parse beside" in refused
