"""The numpy engine (`parsers.inference`) against the DyNet model it mirrors: every step's action
scores to 1e-5, the same trees and tags, and the engine option on the command line."""
import dataclasses
import subprocess
import sys
from pathlib import Path

import dynet as dy
import numpy as np
import pytest

import cli
from parsers import inference
from parsers.api import Parser
from parsers.benchmark import _UDPipe, udpipe_scores
from parsers.conllu_io import read_conllu
from parsers import experiment
from parsers.inference import NumpyParser, choose_tags, decode
from parsers.model import ParserModelConfig, to_tag
from parsers.training import build_parser
from parsers.transitions import get_system
from parsers.vocab import Vocab
from stackparse.errors import UserError
from tests.cli_runner import run
from tests.parsers_fixtures import HEARING_DEPRELS, HEARING_HEADS, SMALL_CONLLU, per_sentence, write

TINY = ParserModelConfig(word_dim=12, upos_dim=6, char_dim=6, char_hidden=5, token_dim=12, context_dim=7,
                         lstm_dim=10, lstm_layers=2, action_dim=5, rel_dim=4, state_dim=9, tagger_dim=6)

HEARING_WORDS = [("A", "DET", "DT"), ("hearing", "NOUN", "NN"), ("is", "AUX", "VBZ"), ("scheduled", "VERB", "VBN"),
                 ("on", "ADP", "IN"), ("the", "DET", "DT"), ("issue", "NOUN", "NN"), ("today", "NOUN", "NN"),
                 (".", "PUNCT", ".")]
# Words, characters and a UPOS that the vocabularies built from the other sentences lack.
UNKNOWN = [("Zyzzyva", "PROPN", "NNP"), ("ǂqxʘ", "X", "FW"), ("blorfed", "VERB", "VBD"), ("it", "PRON", "PRP"),
           (".", "PUNCT", ".")]


def conllu(words, heads, deprels, sent_id):
    lines = [f"# sent_id = {sent_id}"]
    for i, ((form, upos, xpos), head, deprel) in enumerate(zip(words, heads[1:], deprels[1:]), 1):
        lines.append(f"{i}\t{form}\t_\t{upos}\t{xpos}\t_\t{head}\t{deprel}\t_\t_")
    return "\n".join(lines) + "\n\n"


@pytest.fixture(scope="module")
def sentences(tmp_path_factory):
    """(vocabulary sentences, test sentences): the test ones add a sentence of unknown words."""
    text = SMALL_CONLLU + "\n\n" + conllu(HEARING_WORDS, HEARING_HEADS, HEARING_DEPRELS, "hearing") + \
        conllu(UNKNOWN, [-1, 3, 3, 0, 3, 3], ["", "nsubj", "obj", "root", "obj", "punct"], "unknown")
    path = write(tmp_path_factory.mktemp("inference"), "s.conllu", text)
    found, _ = read_conllu(path)
    return found[:3], found


def tiny_model(vocab_sentences, seed=3, **changes):
    """A tiny parser whose every weight is drawn (biases too, so that each one matters), from `seed`."""
    config = dataclasses.replace(TINY, **changes)
    vocab = Vocab.build(vocab_sentences)
    model, pc = build_parser(config, vocab, get_system(config.system, vocab.labels))
    rng = np.random.default_rng(seed)
    for p in pc.parameters_list():
        p.set_value(rng.normal(0, 0.3, p.shape()).astype(np.float32))
    for p in pc.lookup_parameters_list():
        p.init_from_array(rng.normal(0, 0.3, p.shape()).astype(np.float32))
    return model, pc


def numpy_steps(model, sentences, predict_tags, follow=None):
    """Every decision of the numpy engine: (sentence, configuration, scores or None, action), taking
    the best legal action, or the actions of `follow[sentence]` where given."""
    steps, taken = [], {}

    def choose(i, config, legal, scores):
        if follow and i in follow:
            action = follow[i][taken.get(i, 0)]
            taken[i] = taken.get(i, 0) + 1
        else:
            action = legal[0] if scores is None else legal[int(np.argmax(scores[legal]))]
        steps.append((i, config, scores, action))
        return action

    NumpyParser(model).parse(sentences, predict_tags, per_sentence(choose))
    return steps


def dynet_scores(model, sentences, predict_tags, steps):
    """DyNet's scores at the same decisions, replayed on the model's own structures."""
    dy.renew_cg()
    encoded, _ = model._encode(sentences, None, to_tag(sentences, model.config.tagger, predict_tags))
    parses = {i: model._start(items) for i, items in enumerate(encoded)}
    out = []
    for i, config, scores, action in steps:
        assert parses[i].config == config
        out.append(None if scores is None else model._scores(parses[i], False).npvalue())
        parses[i] = model._advance(parses[i], action)
    return out


@pytest.mark.parametrize("tagger, predict_tags, layers, reading", [
    (False, False, 2, "best"), (True, False, 2, "best"), (True, True, 2, "best"), (True, True, 1, "best"),
    (True, True, 2, "expected"), (True, False, 2, "expected"), (True, True, 2, "none")])
def test_every_step_scores_as_dynet(sentences, tagger, predict_tags, layers, reading):
    model, _ = tiny_model(sentences[0], tagger=tagger, lstm_layers=layers, tag_reading=reading)
    steps = numpy_steps(model, sentences[1], predict_tags)
    scored = 0
    for (_, _, scores, _), reference in zip(steps, dynet_scores(model, sentences[1], predict_tags, steps)):
        assert (scores is None) == (reference is None)
        if scores is not None:
            np.testing.assert_allclose(scores, reference, rtol=0, atol=1e-5)
            scored += 1
    assert scored >= 15


def test_scores_as_dynet_along_a_derivation_with_swaps(sentences):
    model, _ = tiny_model(sentences[0])
    hearing = sentences[1][2]
    oracle = model.system.oracle_sequence(hearing.heads, hearing.deprels)
    assert any(model.system.actions[a].transition == "SWAP" for a in oracle)
    steps = numpy_steps(model, sentences[1], False, follow={2: oracle})
    assert [a for i, _, _, a in steps if i == 2] == oracle
    for (_, _, scores, _), reference in zip(steps, dynet_scores(model, sentences[1], False, steps)):
        if scores is not None:
            np.testing.assert_allclose(scores, reference, rtol=0, atol=1e-5)


@pytest.mark.parametrize("tagger", [False, True])
def test_same_trees_and_tags_as_dynet(sentences, tagger):
    model, _ = tiny_model(sentences[0], tagger=tagger, system="arc-swap")
    for predict_tags in ((False, True) if tagger else (False,)):
        dy.renew_cg(autobatching=True)
        assert NumpyParser(model).parse(sentences[1], predict_tags) == model.parse(sentences[1], 1, predict_tags)


def test_decode_batches_and_engines(sentences):
    model, _ = tiny_model(sentences[0])
    greedy = decode(model, sentences[1] * 5, "dynet")
    assert decode(model, sentences[1] * 5, "numpy", batch_size=2) == greedy
    assert len(decode(model, sentences[1], "numpy", beam=2)) == len(sentences[1])      # beam: on DyNet
    with pytest.raises(UserError, match="unknown engine"):
        decode(model, sentences[1], "torch")


def test_command_line_engines(sentences, tmp_path):
    assert cli.ENGINES == inference.ENGINES
    model, pc = tiny_model(sentences[0])
    Parser(model, pc).save(tmp_path / "model")
    text = write(tmp_path, "in.conllu", SMALL_CONLLU)
    for engine in inference.ENGINES:
        assert "words/s" in run("parse", tmp_path / "model", text, "--out", tmp_path / f"{engine}.conllu",
                                "--engine", engine, "--quiet")
    assert (tmp_path / "numpy.conllu").read_text() == (tmp_path / "dynet.conllu").read_text()
    scores = {engine: experiment.test_scores(Parser.load(tmp_path / "model").model, text, engine=engine)
              for engine in inference.ENGINES}
    assert scores["numpy"]["test_las"] == scores["dynet"]["test_las"]
    assert scores["numpy"]["engine"] == "numpy"


def test_udpipe1_trains_and_is_timed_on_the_same_file(tmp_path):
    pytest.importorskip("ufal.udpipe")
    data = write(tmp_path, "small.conllu", SMALL_CONLLU + "\n\n" + conllu(HEARING_WORDS, HEARING_HEADS,
                                                                          HEARING_DEPRELS, "hearing"))
    script = Path(__file__).resolve().parents[1] / "scripts" / "train_udpipe1.py"
    subprocess.run([sys.executable, str(script), str(data), str(data), str(tmp_path / "m.udpipe"), "--tagger", "none",
                    "--parser", "iterations=1"], check=True, capture_output=True)
    scores = udpipe_scores(tmp_path / "m.udpipe", data)
    assert scores["parse_words_per_s"] > 0 and 0 <= scores["test_las"] <= 100
    again = _UDPipe(tmp_path / "m.udpipe", data)          # the rounds of `test-parser --rounds`: gold UPOS kept
    assert again.scores()["test_las"] == scores["test_las"] and min(again.timed_parse()) > 0
    assert again.scores()["test_las"] == scores["test_las"]
    with pytest.raises(UserError, match="not a UDPipe 1 model"):
        udpipe_scores(data, data)


def items_of(engine, sentences, predict):
    """The items the engine's parser reads, the tags its own tagger chooses."""
    tagging = engine.tag_scores(sentences, predict)
    tags = [None if s is None else choose_tags([s], engine.config.tag_reading == "expected") for s in tagging.scores]
    return engine.encode(sentences, tagging, tags)


def test_expected_tag_reading_changes_what_is_read_of_predicted_tags_only(sentences):
    # The parser reads the embedding expected under the tagger's distribution where the tagger tags, and the
    # input's own tags as they are.
    expected, _ = tiny_model(sentences[0], tag_reading="expected")
    best, _ = tiny_model(sentences[0], tag_reading="best")          # the same weights: the same draws
    every = [True] * len(sentences[1])
    for predict, same in ((every, False), ([False] * len(sentences[1]), True)):
        items = [items_of(NumpyParser(m), sentences[1], predict) for m in (expected, best)]
        assert np.array_equal(*items) == same
    one_word = dataclasses.replace(sentences[1][0], words=sentences[1][0].words[:1])   # DyNet's 1-column case
    dy.renew_cg(autobatching=True)
    assert NumpyParser(expected).parse([one_word], True) == expected.parse([one_word], 1, True)
