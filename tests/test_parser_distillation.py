"""Distillation (`parsers.distillation`): the teachers' paths and distributions, the student's loss on them, and
`train-parser --teachers` end to end."""
import dataclasses

import dynet as dy
import numpy as np
import pytest

from parsers.api import Parser
from parsers.conllu_io import write_conllu
from parsers.distillation import TOP, Lesson, Path, teach
from parsers.experiment import derivable
from parsers.inference import NumpyParser
from parsers.model import ParserTrainingConfig
from parsers.transitions import perform
from tests.cli_runner import run
from tests.parsers_fixtures import ewt
from tests.test_cli import TINY_PARSER
from tests.test_parser_ensemble import replayed
from tests.test_parser_inference import sentences, tiny_model  # noqa: F401  (a fixture)


def configurations(system, n: int, actions: list[int]):
    """The configurations before each action of a derivation of an n-word sentence, and the last one."""
    config, out = system.initial(n), []
    for action in actions:
        out.append(config)
        config = perform(config, system.ops(config, action))
    return out, config


def test_the_reference_path_is_the_oracles_with_the_ensembles_distribution(sentences):
    a, b = (NumpyParser(tiny_model(sentences[0], seed=seed)[0]) for seed in (3, 4))
    system = a.system
    kept, oracles = derivable(system, sentences[1])
    lessons = teach([a, b], kept, oracles, 2, np.random.default_rng(0))
    scored = 0
    for sentence, oracle, lesson in zip(kept, oracles, lessons):
        reference = lesson.paths[0]
        assert reference.reference and reference.actions == oracle and len(lesson.paths) == 3
        derivation = [(0, action) for action in oracle]
        seen = zip(replayed(a, [sentence], derivation), replayed(b, [sentence], derivation))
        configs, _ = configurations(system, len(sentence.words), oracle)
        for step, (config, (sa, sb)) in enumerate(zip(configs, seen)):
            legal = system.legal(config)
            ids, probs = reference.ids[step], reference.probs[step]
            assert set(ids.tolist()) <= set(legal)
            if sa is None:
                assert probs.sum() == 0          # a forced move teaches nothing
                continue
            # the ensemble's mean distribution (as it decodes), restricted to the legal actions, its TOP likeliest
            pa, pb = (np.exp(s - s.max()) / np.exp(s - s.max()).sum() for s in (sa.astype(float), sb.astype(float)))
            mean = ((pa + pb) / 2)[legal] / ((pa + pb) / 2)[legal].sum()
            top = np.sort(mean)[::-1][:TOP]
            np.testing.assert_allclose(probs[:len(top)], top / top.sum(), rtol=1e-4, atol=1e-6)
            np.testing.assert_allclose([mean[legal.index(i)] for i in ids[:len(top)]], top, rtol=1e-5)
            scored += 1
        for path in lesson.paths[1:]:                   # sampled: complete derivations of the sentence
            assert not path.reference
            _, last = configurations(system, len(sentence.words), path.actions)
            assert system.is_terminal(last) and len(path.ids) == len(path.actions)
    assert scored >= 15


def test_the_teachers_tags_and_samples(sentences):
    a, b = (NumpyParser(tiny_model(sentences[0], seed=seed)[0]) for seed in (3, 4))
    kept, oracles = derivable(a.system, sentences[1])
    first, again = (teach([a, b], kept, oracles, 3, np.random.default_rng(7)) for _ in range(2))
    assert [[p.actions for p in lesson.paths] for lesson in first] == \
        [[p.actions for p in lesson.paths] for lesson in again]           # the paths are the seed's
    assert any(p.actions != lesson.paths[0].actions for lesson in first for p in lesson.paths[1:])
    every = [True] * len(kept)
    for lesson, ta, tb in zip(first, a.tag_scores(kept, every).scores, b.tag_scores(kept, every).scores):
        for got, column in ((lesson.upos, 0), (lesson.xpos, 1)):
            expected = [np.exp(s[1:] - s[1:].max(axis=0)) / np.exp(s[1:] - s[1:].max(axis=0)).sum(axis=0)
                        for s in (ta[column].astype(float), tb[column].astype(float))]
            np.testing.assert_allclose(got, ((expected[0] + expected[1]) / 2).T, rtol=1e-5, atol=1e-7)


def test_a_temperature_softens_what_is_taught_not_the_paths(sentences):
    a, b = (NumpyParser(tiny_model(sentences[0], seed=seed)[0]) for seed in (3, 4))
    kept, oracles = derivable(a.system, sentences[1])
    plain, soft = (teach([a, b], kept, oracles, 1, np.random.default_rng(7), temperature=t) for t in (1.0, 2.0))
    for p_lesson, s_lesson in zip(plain, soft):
        assert [p.actions for p in p_lesson.paths] == [p.actions for p in s_lesson.paths]
        for p_path, s_path in zip(p_lesson.paths, s_lesson.paths):
            for ids, probs, soft_ids, soft_probs in zip(p_path.ids, p_path.probs, s_path.ids, s_path.probs):
                if probs.sum() and len(set(ids.tolist())) == TOP == len(set(soft_ids.tolist())):
                    continue        # more than TOP legal actions: the kept ones may differ
                if probs.sum():
                    expected = {i: np.sqrt(q) for i, q in zip(ids.tolist(), probs) if q > 0}
                    total = sum(expected.values())
                    got = {i: q for i, q in zip(soft_ids.tolist(), soft_probs) if q > 0}
                    assert got.keys() == expected.keys()
                    np.testing.assert_allclose([got[i] for i in expected], [v / total for v in expected.values()],
                                               rtol=1e-4)
        rooted = np.sqrt(p_lesson.upos)
        np.testing.assert_allclose(s_lesson.upos, rooted / rooted.sum(axis=1, keepdims=True), rtol=1e-5)


def one_hot_lesson(model, sentence, oracle, reference: bool) -> Lesson:
    """A lesson whose teacher is sure of the gold action at every step and of the gold tags."""
    ids = np.array([[a] * TOP for a in oracle], np.int32)
    probs = np.zeros((len(oracle), TOP), np.float32)
    probs[:, 0] = 1.0
    tags = []
    for names, index, table in ((sentence.upos, model.vocab.tag, model.vocab.upos),
                                ([w.xpos for w in sentence.words], model.vocab.xtag, model.vocab.xpos)):
        q = np.zeros((len(names), len(table) - 1), np.float32)
        q[np.arange(len(names)), [index(n) - 1 for n in names]] = 1.0
        tags.append(q)
    return Lesson([Path(list(oracle), ids, probs, reference)], *tags)


@pytest.mark.parametrize("distill", [0.0, 0.3, 1.0])
@pytest.mark.parametrize("reference", [True, False])
def test_a_teacher_sure_of_the_gold_teaches_the_gold_loss(sentences, distill, reference):
    model, _ = tiny_model(sentences[0])
    model.training = dataclasses.replace(ParserTrainingConfig(), dropout=0.0, word_dropout=0.0, distill=distill)
    one_word = dataclasses.replace(sentences[0][0], words=[dataclasses.replace(sentences[0][0].words[0], id=1, head=0,
                                                                                 deprel="root")])
    kept, oracles = derivable(model.system, [*sentences[0], one_word])
    assert len(kept) == 4
    dy.renew_cg()
    gold = model.loss(kept, oracles, np.random.default_rng(0)).value()
    taught = [(lesson.paths[0], lesson) for lesson in
              (one_hot_lesson(model, s, o, reference) for s, o in zip(kept, oracles))]
    dy.renew_cg()
    assert model.loss(kept, oracles, np.random.default_rng(0), taught=taught).value() == pytest.approx(gold, rel=1e-5)


def test_a_softer_teacher_changes_the_loss_as_its_cross_entropy(sentences):
    # one sentence, its first scored step taught 0.5 gold / 0.5 another legal action, distill 1: the loss rises by
    # 0.5 (log p(gold) - log p(other)) over the one-hot teacher's
    model, _ = tiny_model(sentences[0])
    model.training = dataclasses.replace(ParserTrainingConfig(), dropout=0.0, word_dropout=0.0, distill=1.0)
    kept, oracles = derivable(model.system, sentences[0][:1])
    lesson = one_hot_lesson(model, kept[0], oracles[0], True)
    configs, _ = configurations(model.system, len(kept[0].words), oracles[0])
    step = next(t for t, c in enumerate(configs) if len(model.system.legal(c)) > 1)
    legal = model.system.legal(configs[step])
    other = next(a for a in legal if a != oracles[0][step])
    dy.renew_cg()
    sure = model.loss(kept, oracles, np.random.default_rng(0), taught=[(lesson.paths[0], lesson)]).value()
    lesson.paths[0].ids[step, 1], lesson.paths[0].probs[step, :2] = other, 0.5
    dy.renew_cg()
    soft = model.loss(kept, oracles, np.random.default_rng(0), taught=[(lesson.paths[0], lesson)]).value()
    scores = replayed(NumpyParser(model), kept, [(0, a) for a in oracles[0]])[step].astype(float)
    assert soft - sure == pytest.approx(0.5 * (scores[oracles[0][step]] - scores[other]), rel=1e-3)


def test_train_parser_with_teachers(tmp_path):
    write_conllu(tmp_path / "train.conllu", list(ewt("train")[:60]))
    write_conllu(tmp_path / "dev.conllu", list(ewt("dev")[:20]))
    write_conllu(tmp_path / "other.conllu", list(ewt("train")[:5]))
    for name, data in (("t1", "train"), ("t2", "train"), ("other", "other")):
        run("train-parser", tmp_path / f"{data}.conllu", "--dev", tmp_path / "dev.conllu", "--out", tmp_path / name,
            "--seed", str(len(name)), *TINY_PARSER)
    out = run("train-parser", tmp_path / "train.conllu", "--dev", tmp_path / "dev.conllu", "--out", tmp_path / "s",
              "--teachers", f"{tmp_path / 't1'},{tmp_path / 't2'}", "--teacher-samples", "2", *TINY_PARSER)
    assert "replace the parser's own exploration" in out and "best dev LAS" in out
    assert Parser.load(tmp_path / "s").parse(list(ewt("dev")[:3]))
    refused = run("train-parser", tmp_path / "train.conllu", "--dev", tmp_path / "dev.conllu", "--out",
                  tmp_path / "s2", "--teachers", str(tmp_path / "other"), *TINY_PARSER, ok=False)
    assert f"{tmp_path / 'other'}: cannot teach a parser of" in refused
    refused = run("train-parser", tmp_path / "train.conllu", "--out", tmp_path / "s3", "--teachers",
                  str(tmp_path / "t1"), "--explore-after", "2", *TINY_PARSER, ok=False)
    assert "explore_after" in refused or "--explore-after" in refused
