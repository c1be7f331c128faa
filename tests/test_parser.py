"""The stack-LSTM parser: it learns, it round-trips through disk, and it only writes HEAD/DEPREL."""
import dataclasses
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from parsers.api import Parser, evaluate_parser, train_parser
from parsers.conllu_io import read_conllu, write_conllu
from parsers.evaluate import evaluate
from parsers.experiment import PARSER_TRAINING
from parsers.model import ParserModelConfig, ParserTrainingConfig
from stackparse.errors import UserError
from tests.parsers_fixtures import SMALL_CONLLU, ewt, write

TINY = ParserModelConfig(word_dim=32, upos_dim=16, char_dim=8, char_hidden=8, token_dim=32, context_layers=1,
                    context_dim=16, lstm_dim=32,
                    lstm_layers=1, state_dim=32, action_dim=8, rel_dim=8)
TINY_TRAINING = dataclasses.replace(PARSER_TRAINING, epochs=5, batch_size=8, lr=0.003)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A tiny parser trained on 300 EWT sentences (a few seconds), and its dev file."""
    d = tmp_path_factory.mktemp("parser")
    write_conllu(d / "train.conllu", list(ewt("train")[:300]))
    write_conllu(d / "dev.conllu", list(ewt("dev")[:100]))
    parser, metrics = train_parser(d / "train.conllu", d / "dev.conllu", d / "run", TINY, TINY_TRAINING,
                                   progress=False)
    return parser, metrics, d


def chain_baseline(gold, train):
    """Each word headed by the previous one (the first by ROOT), the most frequent label."""
    label = Counter(w.deprel for s in train for w in s.words).most_common(1)[0][0]
    return [dataclasses.replace(s, words=[dataclasses.replace(w, head=w.id - 1, deprel=label if w.id > 1 else "root")
                                          for w in s.words]) for s in gold]


def test_tiny_training_beats_a_trivial_baseline(trained):
    parser, metrics, d = trained
    gold, _ = read_conllu(d / "dev.conllu")
    baseline = evaluate(gold, chain_baseline(gold, read_conllu(d / "train.conllu")[0]))
    ours = evaluate_parser(parser, d / "dev.conllu")      # reading the gold tags: dev_las reads the tagger's
    assert ours.las == pytest.approx(metrics["dev_las_gold_tags"])
    assert ours.las > baseline.las + 10 and ours.uas > baseline.uas + 10


def test_save_load_gives_identical_predictions(trained, tmp_path):
    parser, _, d = trained
    gold, _ = read_conllu(d / "dev.conllu")
    parser.save(tmp_path / "model")
    again = Parser.load(tmp_path / "model")
    assert [s.heads for s in again.parse(gold)] == [s.heads for s in parser.parse(gold)]
    assert [s.deprels for s in again.parse(gold)] == [s.deprels for s in parser.parse(gold)]


def test_parse_writes_only_head_and_deprel(trained, tmp_path):
    parser, _, _ = trained
    source = write(tmp_path, "in.conllu", SMALL_CONLLU + "\n\n")
    parser.parse_file(source, tmp_path / "out.conllu")
    before = source.read_text().splitlines()
    after = (tmp_path / "out.conllu").read_text().splitlines()
    assert len(before) == len(after)
    for old, new in zip(before, after):
        if "\t" not in old or not old.split("\t")[0].isdigit():
            assert new == old           # comments, multiword tokens, empty nodes, blank lines
        else:
            a, b = old.split("\t"), new.split("\t")
            assert a[:6] + a[8:] == b[:6] + b[8:]


def test_predicted_trees_are_well_formed(trained):
    parser, _, d = trained
    gold, _ = read_conllu(d / "dev.conllu")
    for s in parser.parse(gold):
        assert [w.head for w in s.words].count(0) == 1
        assert all((w.head == 0) == (w.deprel == "root") for w in s.words)


def test_pretrained_vectors_are_used_saved_and_checked(tmp_path):
    train = list(ewt("train")[:40])
    write_conllu(tmp_path / "train.conllu", train)
    words = sorted({w.form for s in train for w in s.words})[:50]
    rows = [f"{w} " + " ".join(f"{(hash(w) >> k) % 7 / 7:.3f}" for k in range(6)) for w in words]
    (tmp_path / "vec.txt").write_text(f"{len(rows)} 6\n" + "\n".join(rows) + "\n")
    config = dataclasses.replace(TINY, vectors=str(tmp_path / "vec.txt"))
    parser, _ = train_parser(tmp_path / "train.conllu", tmp_path / "train.conllu", tmp_path / "run", config,
                             dataclasses.replace(TINY_TRAINING, epochs=1, average=0), progress=False)
    assert len(parser.model.pretrained_index) == 50
    given = [[float(x) for x in row.split()[1:]] for row in rows]
    assert parser.model.pretrained_matrix[1:] == pytest.approx(np.array(given), abs=1e-6)    # fixed: not tuned
    assert not parser.model.pretrained_matrix[0].any()                                         # no vector: zeros
    again = Parser.load(tmp_path / "run")
    assert [s.heads for s in again.parse(train)] == [s.heads for s in parser.parse(train)]
    # kept apart from the trained weights: in their own binary file, not in DyNet's text `params`
    assert np.load(tmp_path / "run" / "best" / "pretrained.npy") == pytest.approx(np.array(given), abs=1e-6)
    assert "pretrained" not in (tmp_path / "run" / "best" / "params").read_text()
    np.save(tmp_path / "run" / "best" / "pretrained.npy", np.zeros((49, 6)))      # one word's row missing
    with pytest.raises(UserError, match=r"corrupt parser model \(50 pretrained words for a matrix of shape \(49, 6\)"):
        Parser.load(tmp_path / "run")
    (tmp_path / "run" / "best" / "pretrained.npy").unlink()
    with pytest.raises(UserError, match=r"its pretrained vectors are not in pretrained.npy"):
        Parser.load(tmp_path / "run")
    (tmp_path / "bad.txt").write_text("the 0.1 0.2\nof 0.3\n")
    with pytest.raises(UserError, match=r"bad.txt:2: expected 2 numbers, found 1"):
        train_parser(tmp_path / "train.conllu", tmp_path / "train.conllu", tmp_path / "run2",
                     dataclasses.replace(TINY, vectors=str(tmp_path / "bad.txt")), TINY_TRAINING, progress=False)
    from parsers.model import read_vectors
    (tmp_path / "nan.txt").write_text("2 2\nthe 0.1 0.2\nof 0.3 x\n")
    with pytest.raises(UserError, match=r"nan.txt:3: not a number in the vector of 'of'"):
        read_vectors(str(tmp_path / "nan.txt"), 10)


def test_vector_files_joined_by_commas_are_read_side_by_side(tmp_path):
    """The union of the words in the order they come; each file's vector for a word as the parser looks a form up
    (as spelled, then lower-cased), zeros where a file has neither; each file cut at the limit."""
    from parsers.model import read_vectors
    (tmp_path / "glove.vec").write_text("3 2\nthe 1 2\nparis 3 4\nrare 9 9\n")
    (tmp_path / "lex.vec").write_text("Paris 0.5\nthe 0.25\ncat 0.75\ndog 1\n")
    words, matrix = read_vectors(f"{tmp_path / 'glove.vec'},{tmp_path / 'lex.vec'}", 3)
    assert words == ["the", "paris", "rare", "Paris", "cat"]
    assert matrix.tolist() == [[1, 2, 0.25], [3, 4, 0], [9, 9, 0], [3, 4, 0.5], [0, 0, 0.75]]
    assert read_vectors(str(tmp_path / "lex.vec"), 5)[0] == ["Paris", "the", "cat", "dog"]


def test_beam_one_is_greedy_and_wider_beams_give_trees(trained):
    parser, _, d = trained
    gold, _ = read_conllu(d / "dev.conllu")
    greedy = parser.parse(gold)
    assert [s.heads for s in parser.parse(gold, beam=1)] == [s.heads for s in greedy]
    wide = parser.parse(gold, beam=4)
    for s in wide:
        assert [w.head for w in s.words].count(0) == 1
    assert evaluate(gold, wide).las >= evaluate(gold, greedy).las - 5
    with pytest.raises(UserError, match="--beam must be at least 1"):
        parser.parse(gold, beam=0)


TRAIN_IN_A_FRESH_PROCESS = """
import dataclasses, json, sys
import stackparse
from parsers.api import train_parser
from parsers.experiment import PARSER_TRAINING
from parsers.model import ParserModelConfig
config = ParserModelConfig(word_dim=16, upos_dim=8, char_dim=8, char_hidden=8, token_dim=16, context_dim=8,
                      lstm_dim=16, lstm_layers=1, state_dim=16, action_dim=4, rel_dim=4)
_, metrics = train_parser(sys.argv[1], sys.argv[1], sys.argv[2], config,
                          dataclasses.replace(PARSER_TRAINING, epochs=2, batch_size=8), progress=False)
print(json.dumps([metrics["dev_las"], metrics["train_loss"]]))
"""


def test_same_seed_same_parser_in_processes_with_different_string_hashes(tmp_path):
    """Python salts string hashes per process; nothing the graph's order depends on may follow them."""
    write_conllu(tmp_path / "train.conllu", list(ewt("train")[:60]))
    results = []
    for salt in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": salt}
        out = subprocess.run([sys.executable, "-c", TRAIN_IN_A_FRESH_PROCESS, str(tmp_path / "train.conllu"),
                              str(tmp_path / f"run{salt}")], env=env, capture_output=True, text=True, check=True,
                             cwd=Path(__file__).resolve().parents[1])
        results.append(json.loads(out.stdout.strip().splitlines()[-1]))
    assert results[0] == results[1]


def test_exploration_follows_the_model_and_learns_the_dynamic_oracle(trained):
    """With exploration, a projective sentence's derivation is drawn from the model (so two draws
    can differ, and each is reproducible from its seed), every state's loss is finite, and a
    non-projective sentence keeps its static oracle."""
    import dynet as dy
    import numpy as np
    from parsers import trees
    parser, _, _ = trained
    model, system = parser.model, parser.model.system
    sentences = [s for s in ewt("train")[:300] if len(s.words) > 12][:8]
    oracles = [system.oracle_sequence(s.heads, s.deprels) for s in sentences]

    def loss(seed, explore):
        dy.renew_cg(autobatching=True)
        dy.reset_random_seed(seed + 1)      # dropout masks; the numpy generator draws the actions
        return model.loss(sentences, oracles, np.random.default_rng(seed), explore).value()

    assert np.isfinite(loss(1, True)) and loss(1, True) == loss(1, True)
    assert len({loss(seed, True) for seed in range(4)}) > 1
    assert len({loss(seed, False) for seed in range(4)}) > 1        # dropout differs, the oracle does not
    non_projective = [s for s in ewt("train") if not trees.is_projective(s.heads)][:1]
    with pytest.raises(ValueError, match="needs a projective gold tree"):
        system.optimal(system.initial(len(non_projective[0].words)), non_projective[0].heads, non_projective[0].deprels)
    dy.renew_cg(autobatching=True)
    assert np.isfinite(model.loss(non_projective, [system.oracle_sequence(s.heads, s.deprels) for s in non_projective],
                                  np.random.default_rng(0), True).value())


def test_exploration_needs_a_dynamic_oracle():
    with pytest.raises(UserError, match="explore.after needs a system with a dynamic oracle"):
        ParserTrainingConfig(explore_after=1).validate(ParserModelConfig(system="arc-swap"))
    ParserTrainingConfig(explore_after=-1).validate(ParserModelConfig(system="arc-swap"))


# ---- the tagger ----------------------------------------------------------------------------------
def untagged(sentences):
    """The sentences as text gives them: UPOS and XPOS `_`."""
    return [dataclasses.replace(s, words=[dataclasses.replace(w, upos="_", xpos="_") for w in s.words])
            for s in sentences]


def test_the_tagger_tags_text_without_tags_and_the_parser_reads_its_tags(trained):
    from parsers.decoding import parse_sentences, with_tree
    parser, metrics, d = trained
    gold, _ = read_conllu(d / "dev.conllu")
    train, _ = read_conllu(d / "train.conllu")
    majority = Counter(w.upos for s in train for w in s.words).most_common(1)[0][0]
    baseline = 100 * sum(w.upos == majority for s in gold for w in s.words) / sum(len(s.words) for s in gold)
    text = parse_sentences(parser.model, untagged(gold))
    assert all(p.upos is not None and p.xpos is not None for p in text)
    tagged = evaluate(gold, [with_tree(s, p) for s, p in zip(gold, text)])
    assert tagged.upos > baseline + 20 and tagged.xpos > baseline + 10
    assert tagged.upos == pytest.approx(metrics["dev_upos"]) and tagged.las == pytest.approx(metrics["dev_las"])
    # the same sentences with their tags: read unless told to predict, and then the same as from text
    kept = parse_sentences(parser.model, gold)
    assert all(p.upos is None and p.xpos is None for p in kept)
    forced = parse_sentences(parser.model, gold, predict_tags=True)
    assert [(p.config.heads, p.upos, p.xpos) for p in forced] == [(p.config.heads, p.upos, p.xpos) for p in text]


def test_the_tag_loss_is_the_words_negative_log_likelihood(trained):
    import dynet as dy
    import numpy as np
    parser, _, d = trained
    model = parser.model
    sentences = read_conllu(d / "dev.conllu")[0][:3]
    dy.renew_cg()
    _, tagged = model._encode(sentences, None, [False] * 3)
    loss = model._tag_loss(sentences, tagged).value()
    expected = 0.0
    for scores, vocab, tags in ((tagged.upos, model.vocab.upos, [u for s in sentences for u in s.upos]),
                                (tagged.xpos, model.vocab.xpos, [w.xpos for s in sentences for w in s.words])):
        s = scores.npvalue().reshape(len(vocab), -1)
        log_p = s - np.logaddexp.reduce(s, axis=0)
        expected -= sum(log_p[vocab.index(t), i] for i, t in enumerate(tags) if t in vocab)
    assert loss == pytest.approx(expected, rel=1e-5)


def test_every_parameter_of_the_parser_is_trained(trained):
    """A training loss reaches every parameter, ROOT's vector too (this DyNet's `Parameters.expr()` is a constant:
    ROOT's was, until 2026-11-29)."""
    import dynet as dy
    import numpy as np
    parser, _, d = trained
    model = parser.model
    sentence = read_conllu(d / "dev.conllu")[0][0]
    dy.renew_cg(autobatching=True)
    model.loss([sentence], [model.system.oracle_sequence(sentence.heads, sentence.deprels)],
               np.random.default_rng(0)).backward()
    assert np.abs(model.root.grad_as_array()).max() > 0


def test_the_batched_bilstm_is_each_sequence_s_bilstm_alone():
    """`bilstm` runs sequences laid end to end in one DyNet batch, the batch shrinking as they end: each
    position's vector and gradient are those of its sequence run alone (a two-layer LSTM's too)."""
    import dynet as dy
    from parsers.model import bilstm
    pc = dy.ParameterCollection()
    fwd, bwd = dy.VanillaLSTMBuilder(2, 3, 4, pc), dy.VanillaLSTMBuilder(1, 3, 4, pc)
    x = pc.add_lookup_parameters((9, 3))
    lengths = [3, 1, 5]           # (the batch shrinks twice)

    def alone():
        out, start = [], 0
        for n in lengths:
            xs = [x[k] for k in range(start, start + n)]
            ahead = fwd.initial_state().transduce(xs)
            behind = bwd.initial_state().transduce(xs[::-1])[::-1]
            out += [dy.concatenate([a, b]) for a, b in zip(ahead, behind)]
            start += n
        return out

    results = []
    for together in (False, True):
        dy.renew_cg()
        if together:
            vectors = bilstm(fwd, bwd, dy.lookup_batch(x, list(range(9))), lengths)
            value = vectors.npvalue().T
            loss = dy.sum_batches(dy.dot_product(vectors, dy.inputTensor(np.arange(72.).reshape(9, 8).T,
                                                                         batched=True)))
        else:
            vectors = alone()
            value = np.array([v.npvalue() for v in vectors])
            loss = dy.esum([dy.dot_product(v, dy.inputVector(np.arange(8.) + 8 * k)) for k, v in enumerate(vectors)])
        loss.backward()
        grads = [x.grad_as_array().copy(), fwd.get_parameters()[0][0].grad_as_array().copy()]
        if results:                  # (gradients add up until an update: the second run's are the difference)
            grads = [g - g0 for g, g0 in zip(grads, results[0][1:])]
        results.append((value, *grads))
    for alone_, together_ in zip(*results):
        assert together_ == pytest.approx(alone_, abs=1e-5)
        assert np.abs(alone_).max() > 0


def test_a_model_without_a_tagger_reads_the_input_tags_and_refuses_text_without(tmp_path):
    from parsers.decoding import parse_sentences
    train = list(ewt("train")[:30])
    write_conllu(tmp_path / "train.conllu", train)
    parser, metrics = train_parser(tmp_path / "train.conllu", tmp_path / "train.conllu", tmp_path / "run",
                                   dataclasses.replace(TINY, tagger=False),
                                   dataclasses.replace(TINY_TRAINING, epochs=1), progress=False)
    assert "dev_upos" not in metrics and not hasattr(parser.model, "A_upos")
    assert all(p.upos is None for p in parse_sentences(parser.model, train))
    with pytest.raises(UserError, match=r"train.conllu:\d+: the sentence has no UPOS tags .* no tagger"):
        parse_sentences(parser.model, untagged(train))


def test_the_vocabulary_keeps_xpos_and_reads_vocabularies_saved_without(tmp_path):
    from parsers.vocab import Vocab
    vocab = Vocab.build(list(ewt("train")[:30]))
    assert vocab.xpos[0] == "<unk>" and "NN" in vocab.xpos and vocab.xtag("NN") == vocab.xpos.index("NN")
    vocab.save(tmp_path / "vocab.json")
    assert Vocab.load(tmp_path / "vocab.json") == vocab
    saved = json.loads((tmp_path / "vocab.json").read_text())
    del saved["xpos"]
    (tmp_path / "old.json").write_text(json.dumps(saved))
    assert Vocab.load(tmp_path / "old.json").xpos == []
    assert Vocab.build(untagged(ewt("train")[:5])).xpos == []


def test_without_a_sentence_bilstm_the_stack_items_are_the_tagger_vectors_and_tags(tmp_path):
    write_conllu(tmp_path / "train.conllu", list(ewt("train")[:20]))
    parser, _ = train_parser(tmp_path / "train.conllu", tmp_path / "train.conllu", tmp_path / "run",
                             dataclasses.replace(TINY, context_layers=0),
                             dataclasses.replace(TINY_TRAINING, epochs=1), progress=False)
    assert parser.model.stack_lstm.spec[0] == 2 * TINY.tagger_dim + TINY.upos_dim


def test_parse_file_writes_the_tags_of_the_sentences_it_tagged(trained, tmp_path):
    parser, _, d = trained
    gold, _ = read_conllu(d / "dev.conllu")
    blank = [["_"] * len(s.words) if i < 5 else s.upos for i, s in enumerate(gold[:10])]
    write_conllu(tmp_path / "text.conllu", gold[:10], upos=blank, xpos=blank)
    parser.parse_file(tmp_path / "text.conllu", tmp_path / "out.conllu")
    out, _ = read_conllu(tmp_path / "out.conllu")
    assert all(w.upos != "_" and w.xpos != "_" for s in out[:5] for w in s.words)
    assert [s.upos for s in out[5:]] == [s.upos for s in gold[5:10]]           # read, not tagged
    parser.parse_file(d / "dev.conllu", tmp_path / "forced.conllu", predict_tags=True)
    forced, _ = read_conllu(tmp_path / "forced.conllu")
    assert [s.upos for s in forced[:5]] == [s.upos for s in out[:5]] != [s.upos for s in gold[:5]]
    assert evaluate(gold, forced).upos == pytest.approx(evaluate_parser(parser, d / "dev.conllu",
                                                                        predict_tags=True).upos)


def test_explorations_drawn_ahead_are_legal_derivations_the_loss_follows(trained):
    """`explore_every`: the numpy engine draws each projective sentence's actions; the loss replays
    them (no forward before drawing), and a draw's actions derive a complete tree."""
    import dynet as dy
    import numpy as np
    from parsers.inference import NumpyParser, draw_explorations
    parser, _, _ = trained
    model, system = parser.model, parser.model.system
    sentences = [s for s in ewt("train")[:300] if len(s.words) > 12][:6]
    drawn = draw_explorations(NumpyParser(model), sentences, 1.0, np.random.default_rng(3))
    for s, roll_out in zip(sentences, drawn):
        config = system.initial(len(s.words))
        for a, correct in zip(roll_out.actions, roll_out.correct, strict=True):
            legal = system.legal(config)
            assert a in legal
            assert correct == (system.optimal(config, s.heads, s.deprels) if len(legal) > 1 else None)
            config = system.apply(config, a)
        assert system.is_terminal(config)
    assert drawn != draw_explorations(NumpyParser(model), sentences, 1.0, np.random.default_rng(4))
    oracles = [system.oracle_sequence(s.heads, s.deprels) for s in sentences]
    dy.renew_cg(autobatching=True)
    replayed = model.loss(sentences, oracles, np.random.default_rng(0), True, drawn).value()
    assert np.isfinite(replayed) and replayed > 0


def test_roll_outs_analyse_each_gold_tree_once(trained):
    """Roll-outs ask the dynamic oracle of a step of every sentence in turn: its cache of gold trees
    must hold the whole lockstep batch, or each tree is analysed again at every step."""
    import numpy as np
    from parsers import transitions
    from parsers.inference import NumpyParser, draw_explorations
    from parsers.trees import is_projective
    parser, _, _ = trained
    sentences = [s for s in ewt("train")[:400] if is_projective(s.heads)][:300]
    transitions._gold_tree.cache_clear()
    draw_explorations(NumpyParser(parser.model), sentences, 1.0, np.random.default_rng(3))
    distinct = len({(tuple(s.heads), tuple(s.deprels)) for s in sentences})
    assert transitions._gold_tree.cache_info().misses <= distinct     # (a sentence of forced moves asks nothing)


@pytest.mark.parametrize("reading", ["best", "expected", "none"])
def test_training_with_explorations_drawn_ahead_and_predicted_tags(tmp_path, reading):
    import numpy as np
    write_conllu(tmp_path / "train.conllu", list(ewt("train")[:40]))
    _, metrics = train_parser(tmp_path / "train.conllu", tmp_path / "train.conllu", tmp_path / "run",
                              dataclasses.replace(TINY, tag_reading=reading),
                              dataclasses.replace(TINY_TRAINING, epochs=2),
                              ParserTrainingConfig(explore_after=1, explore_every=2, gold_tags=0.5, tag_noise=0.1),
                              progress=False)
    assert np.isfinite(metrics["train_loss"]) and metrics["dev_las"] > 0


def test_confuse_puts_the_best_other_tag_on_a_share_of_the_words():
    import numpy as np
    from parsers.model import confuse
    scores = np.array([[9, 9, 9, 9], [0, 3, 1, 0], [2, 0, 5, 4], [1, 2, 0, 5]], dtype=float)   # tags x words
    assert confuse([1, 1, 2, 3], scores, 0.0, np.random.default_rng(0)) == [1, 1, 2, 3]
    assert confuse([1, 1, 2, 3], scores, 1.0, np.random.default_rng(0)) == [2, 3, 1, 2]    # never 0, never its own
    words = 20000
    share = np.mean(np.array(confuse([1] * words, np.tile([[0], [5], [1], [0]], words), 0.05,
                                     np.random.default_rng(1))) != 1)
    assert share == pytest.approx(0.05, abs=0.01)


def test_draw_is_the_generators_own_choice():
    """`draw` repeats `Generator.choice`'s arithmetic without its checks, for a batch of rows at once: the same
    actions from the same stream as one `choice` per row in order, so that exploration does not depend on how
    many sentences draw together."""
    import numpy as np
    from parsers.model import draw
    g = np.random.default_rng(0)
    for trial in range(100):
        rows = int(g.integers(1, 6))
        scores = (g.standard_normal((rows, 40)) * g.uniform(0.1, 20)).astype(np.float32)
        legal = [sorted(g.choice(40, g.integers(2, 40), replace=False).tolist()) for _ in range(rows)]
        alpha = float(g.uniform(0.5, 2))
        ours, theirs = np.random.default_rng(trial), np.random.default_rng(trial)
        for _ in range(3):
            expected = []
            for row, lg in zip(scores, legal):
                logits = alpha * row[lg]
                p = np.exp(logits - logits.max())
                expected.append(lg[theirs.choice(len(lg), p=p / p.sum())])
            assert draw(scores, legal, alpha, ours) == expected


def test_explorations_drawn_by_a_second_process_are_reproducible(tmp_path):
    """`explore_process`: the roll-outs come from another process, seeded in order by the training's own
    stream, so that two runs give the same model whatever the processes' timing."""
    import numpy as np
    write_conllu(tmp_path / "train.conllu", list(ewt("train")[:40]))
    losses = []
    for run in ("a", "b"):
        _, metrics = train_parser(tmp_path / "train.conllu", tmp_path / "train.conllu", tmp_path / run, TINY,
                                  dataclasses.replace(TINY_TRAINING, epochs=2),
                                  ParserTrainingConfig(explore_after=0, explore_every=2, explore_process=True),
                                  progress=False)
        losses.append(metrics["train_loss"])
    assert np.isfinite(losses[0]) and losses[0] == losses[1]
