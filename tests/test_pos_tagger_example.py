"""The POS tagger example (examples/pos_tagger.py) on a tiny generated treebank: every encoder trains,
saves, reloads and predicts identically; the BiLSTM learns; the command line runs them all into one
table and reports bad input in one line."""
import dataclasses
import json

import dynet as dy
import numpy as np
import pytest
from click.testing import CliRunner

from examples.pos_tagger import (ENCODERS, TRAINING, PosTagger, TaggerConfig, TaggingObjective, Vocabulary,
                                 batches_by_length, evaluate, main, read_tagged, train_tagger)

# Small widths and one epoch, so that the seven encoders train in a few seconds.
TINY = TaggerConfig(word_dim=8, suffix_dim=4, shape_dim=2, lstm_dim=8, encoder_dim=8)
ONE_EPOCH = dataclasses.replace(TRAINING, epochs=1, batch_size=4, max_minutes=0.0)

# A toy grammar: DET (ADJ) NOUN VERB DET (ADJ) NOUN PUNCT, with "fish" a NOUN or a VERB by position.
WORDS = {"DET": ["the", "a", "The"], "ADJ": ["big", "red"], "NOUN": ["dog", "cat", "fish"],
         "VERB": ["sees", "likes", "fish"], "PUNCT": ["."]}


def sentence(rng: np.random.Generator, number: int) -> str:
    """One CoNLL-U sentence of the toy grammar: every word attached to the verb's side of the tree."""
    subject = ["DET"] + ["ADJ"] * rng.integers(2) + ["NOUN"]
    obj = ["DET"] + ["ADJ"] * rng.integers(2) + ["NOUN"]
    tags = subject + ["VERB"] + obj + ["PUNCT"]
    verb, end = len(subject) + 1, len(tags)
    heads = [len(subject)] * (len(subject) - 1) + [verb, 0] + [end - 1] * (len(obj) - 1) + [verb, verb]
    lines = [f"# sent_id = {number}"]
    for i, (tag, head) in enumerate(zip(tags, heads), start=1):
        form = rng.choice(WORDS[tag])
        lines.append(f"{i}\t{form}\t{form.lower()}\t{tag}\t_\t_\t{head}\t{'root' if head == 0 else 'dep'}\t_\t_")
    return "\n".join(lines) + "\n\n"


@pytest.fixture(scope="module")
def treebank(tmp_path_factory):
    """train (40 sentences), dev and test (10 each) files of the toy grammar."""
    directory = tmp_path_factory.mktemp("treebank")
    rng = np.random.default_rng(0)
    paths = {}
    for split, n in (("train", 40), ("dev", 10), ("test", 10)):
        paths[split] = directory / f"toy-{split}.conllu"
        paths[split].write_text("".join(sentence(rng, i) for i in range(n)), encoding="utf-8")
    return paths


@pytest.mark.parametrize("encoder", ENCODERS)
def test_trains_saves_and_reloads_identically(treebank, tmp_path, encoder):
    """A few updates, then save and load: the same scores, bit for bit, and the same tags."""
    train = read_tagged(treebank["train"])
    objective = TaggingObjective(PosTagger(dataclasses.replace(TINY, encoder=encoder), Vocabulary.build(train)),
                                 train, train, batch_size=8)
    optimizer = dy.AdamTrainer(objective.param_collection(), 0.01)
    for batch in objective.batches(0, np.random.default_rng(0))[:3]:
        for loss, _ in objective.losses(batch):
            loss.backward()
            optimizer.update()
    objective.save(tmp_path / "model")
    loaded = PosTagger.load(tmp_path / "model")
    forms = [forms for forms, _ in train if len(forms) == 7]
    dy.renew_cg()
    before = [s.npvalue() for s in objective.tagger.scores(forms)]
    dy.renew_cg()
    after = [s.npvalue() for s in loaded.scores(forms)]
    assert all(np.array_equal(a, b) for a, b in zip(before, after))
    assert loaded.tag([f for f, _ in train]) == objective.tagger.tag([f for f, _ in train])
    saved = json.loads((tmp_path / "model" / "config.json").read_text())
    assert saved == dataclasses.asdict(TINY) | {"encoder": encoder}


def test_bilstm_learns_the_toy_grammar(treebank, tmp_path):
    """Six epochs: the training loss falls, and training accuracy beats tagging every word NOUN."""
    training = dataclasses.replace(ONE_EPOCH, epochs=6, lr=0.01, patience=0)
    train_tagger(TINY, training, treebank["train"], treebank["dev"], treebank["test"], tmp_path, progress=False)
    losses = [json.loads(line)["train_loss"] for line in (tmp_path / "log.jsonl").read_text().splitlines()]
    assert len(losses) == 6 and losses[-1] < losses[0] / 2
    train = read_tagged(treebank["train"])
    majority = 100 * max(np.unique([t for _, tags in train for t in tags], return_counts=True)[1]) / sum(
        len(tags) for _, tags in train)
    assert evaluate(PosTagger.load(tmp_path / "best"), train)["accuracy"] > majority + 30


def test_command_line_runs_every_encoder_into_one_table(treebank, tmp_path):
    """`--encoder all`: a run per encoder, each with its result and a model that reproduces its dev accuracy."""
    out = tmp_path / "all"
    result = CliRunner().invoke(main, ["--encoder", "all", "--train", str(treebank["train"]), "--dev",
                                       str(treebank["dev"]), "--test", str(treebank["test"]), "--out", str(out),
                                       "--epochs", "1", "--batch-size", "8", "--quiet"])
    assert result.exit_code == 0, result.output
    table = (out / "report.md").read_text()
    assert result.output == table
    assert [line.split(" | ")[0] for line in table.splitlines()[2:]] == [f"| {name}" for name in ENCODERS]
    results = json.loads((out / "results.json").read_text())["results"]
    dev = read_tagged(treebank["dev"])
    for name, run in zip(ENCODERS, results):
        assert run["encoder"] == name and run["epochs_run"] == 1 and 0 <= run["test_accuracy"] <= 100
        assert json.loads((out / name / "result.json").read_text()) == run
        assert json.loads((out / name / "best" / "config.json").read_text())["encoder"] == name
        assert evaluate(PosTagger.load(out / name / "best"), dev)["accuracy"] == run["dev_accuracy"]


def test_command_line_reports_bad_input_in_one_line(treebank, tmp_path):
    missing = tmp_path / "missing.conllu"
    result = CliRunner().invoke(main, ["--train", str(missing), "--dev", str(treebank["dev"]),
                                       "--test", str(treebank["test"]), "--out", str(tmp_path / "run")])
    assert result.exit_code == 1
    assert result.output == f"Error: {missing}: no such file\n"
    help_text = CliRunner().invoke(main, ["--help"]).output
    assert all(name in help_text for name in [*ENCODERS, "--max-minutes", "--max-sentences"])


def test_batches_hold_one_length_and_every_sentence_once():
    lengths = [3, 5, 3, 3, 5, 1, 3]
    for rng in (None, np.random.default_rng(0)):
        batches = batches_by_length(lengths, 2, rng)
        assert sorted(i for batch in batches for i in batch) == list(range(len(lengths)))
        assert all(len(batch) <= 2 and len({lengths[i] for i in batch}) == 1 for batch in batches)
