"""Grefenstette et al.'s transduction tasks: the joint-sequence format and what is scored, each
transformation, the ITG grammars sampled as by rejection to a length range (and at exact lengths), the paper's
training recipe, and coarse and fine accuracy."""
from collections import Counter

import numpy as np
import pytest

from stackparse.evaluation.sequence import ExampleResult, evaluate_sizes
from stackparse.tasks import get_task
from stackparse.tasks.transduction import END, SEPARATOR, START, Grammar, Rule

TASKS = ["copy", "reversal", "bigram-flip", "svo-sov", "gender", "svo-sov-uniform", "gender-uniform"]


def split(task, example):
    """(source, target) symbol names of an example, and the scored output names."""
    names = [task.symbols[i] for i in example.inputs]
    cut = names.index(SEPARATOR)
    scored = [task.outputs[t] for t, s in zip(example.targets, example.scored) if s]
    return names[1:cut], names[cut + 1:], scored


@pytest.mark.parametrize("name", TASKS)
def test_joint_sequence_is_start_source_separator_target_and_only_the_target_is_scored(rng, name):
    task = get_task(name)
    for n in (task.protocol.train_n[0], task.protocol.test_n[1]):
        example = task.sample(rng, n)
        assert task.symbols[example.inputs[0]] == START
        source, target, scored = split(task, example)
        assert scored == target + [END]                      # every target symbol, then </s>
        assert example.scored.index(True) == len(source) + 1   # the first prediction follows |||
        if name in ("svo-sov", "gender"):                     # n names the range
            assert example.n == len(source) and n in task.length_range(n) and _within(len(source), task.length_range(n))
        else:
            assert len(source) == (2 * n if name == "bigram-flip" else n)
        assert all(s in task.source_vocabulary for s in source)
        assert all(t in task.target_vocabulary for t in target)


def _within(n, bounds):
    return bounds[0] <= n <= bounds[1]


def test_synthetic_transformations(rng):
    def ids(symbols):
        return [int(s[1:]) for s in symbols]

    copy, reversal, flip = (split(get_task(n), get_task(n).sample(rng, 10)) for n in ("copy", "reversal", "bigram-flip"))
    assert ids(copy[1]) == ids(copy[0])
    assert ids(reversal[1]) == ids(reversal[0])[::-1]
    source = ids(flip[0])
    assert ids(flip[1]) == [source[i + 1 - 2 * (i % 2)] for i in range(len(source))]


def test_vocabularies_and_protocol_follow_the_paper():
    copy = get_task("copy")
    assert len(copy.source_vocabulary) == len(copy.target_vocabulary) == 128
    assert len(copy.outputs) == 129 and len(copy.symbols) == 258
    assert copy.protocol.train_n == (8, 64) and copy.protocol.test_n == (65, 128)
    assert copy.protocol.test_samples * 64 >= 1000 and not copy.protocol.stream
    assert get_task("bigram-flip").protocol.train_n == (4, 32)


def test_svo_to_sov_moves_the_main_verb_after_the_object(rng):
    def word(w):
        """si12 and so12 are the same word, rpi and rpo too."""
        return "rp" if w.startswith("rp") else w[0] + w[2:]

    task = get_task("svo-sov")
    for n in range(8, 40):
        source, target, _ = split(task, task.sample(rng, n))
        assert sorted(map(word, source)) == sorted(map(word, target))      # the same words, reordered
        assert target[-1].startswith("vo")
    # A -> S1 VT2 O3 | S1 O3 VT2 with one-word subject and object: s v o -> s o v.
    grammar = task.grammar
    source, target = grammar.sample(np.random.default_rng(1), 3)
    assert [w[:2] for w in source] == ["si", "vi", "oi"] and [w[:2] for w in target] == ["so", "oo", "vo"]


def test_gender_articles_agree_with_the_noun_class(rng):
    task = get_task("gender")
    agree = {("the", "m"): "der", ("the", "f"): "die", ("the", "n"): "das",
             ("a", "m"): "ein", ("a", "f"): "eine", ("a", "n"): "ein"}
    for n in range(8, 30):
        source, target, _ = split(task, task.sample(rng, n))
        assert len(source) == len(target)
        for i, word in enumerate(source):
            if word in ("the", "a"):
                assert target[i] == agree[word, source[i + 1][0]]
                assert target[i + 1] == source[i + 1][0] + "g" + source[i + 1][2:]


def test_grammar_length_distributions_are_exact_for_a_tiny_grammar():
    # X -> X X (1/2) | x (1/2): p(length l) = Catalan(l - 1) / 2^(2l - 1).
    grammar = Grammar([Rule.parse(0.5, "A -> A1 A2 | A2 A1"), Rule.parse(0.5, "A -> W1 | W1")],
                      {"W": ("a", "b", 1)}, max_length=6)
    catalan = [1, 1, 2, 5, 14, 42]
    assert np.allclose(grammar.length_p["A"][1:], [c / 2 ** (2 * l - 1) for l, c in zip(range(1, 7), catalan)])
    source, target = grammar.sample(np.random.default_rng(0), 5)
    assert source == ["a1"] * 5 and target == ["b1"] * 5


def test_grammar_draws_rules_by_their_probabilities():
    grammar = Grammar([Rule.parse(0.25, "A -> B1 | B1"), Rule.parse(0.75, "A -> C1 | C1")],
                      {"B": ("b", "B", 1), "C": ("c", "C", 1)}, max_length=2)
    rng = np.random.default_rng(0)
    draws = [grammar.sample(rng, 1)[0][0] for _ in range(4000)]
    assert draws.count("b1") / len(draws) == pytest.approx(0.25, abs=0.03)


@pytest.mark.parametrize("name", ["svo-sov", "gender"])
def test_every_length_of_the_protocol_can_be_sampled(name):
    task = get_task(name)
    assert all(task.grammar.feasible(n) for n in range(8, 129))
    with pytest.raises(ValueError):
        task.sample(np.random.default_rng(0), task.min_n() - 1)


def test_sampling_is_deterministic_given_the_seed():
    for name in TASKS:
        task = get_task(name)
        assert task.sample(np.random.default_rng(5), 20) == task.sample(np.random.default_rng(5), 20)


@pytest.mark.parametrize("name", ["svo-sov", "gender"])
def test_itg_sources_always_fall_in_the_range_a_size_names(name):
    task, rng = get_task(name), np.random.default_rng(3)
    assert task.length_range(8) == task.length_range(64) == (8, 64)
    assert task.length_range(65) == task.length_range(128) == (65, 128) and task.length_range(5) == (5, 5)
    for n, bounds in ((8, (8, 64)), (40, (8, 64)), (100, (65, 128)), (5, (5, 5))):
        assert all(_within(task.sample(rng, n).n, bounds) for _ in range(100))
    lengths = [task.sample(rng, 64).n for _ in range(300)]
    assert len(set(lengths)) > 10 and np.mean(lengths) < 36      # the grammar's law: short sources are the likelier


@pytest.mark.parametrize("name", ["svo-sov-uniform", "gender-uniform"])
def test_the_uniform_variants_sample_the_exact_length(name):
    task, rng = get_task(name), np.random.default_rng(3)
    assert all(len(split(task, task.sample(rng, n))[0]) == n for n in (8, 30, 64, 65, 128))


def _rejection_sample(grammar, rng, lo, hi):
    """The reference: derivations from the root by the rules' probabilities until one has lo..hi source symbols."""
    def derive(symbol):
        if symbol in grammar.lexicon:
            return grammar._word(rng, symbol)
        rules = grammar.expansions[symbol]
        rule = rules[rng.choice(len(rules), p=[r.p for r in rules])]
        expanded = {reference: derive(nt) for reference, nt in rule.children}
        return tuple([w for r in words for w in (expanded[r][k] if r in expanded else [r])]
                     for k, words in ((0, rule.source), (1, rule.target)))
    while True:
        source, target = derive("A")
        if lo <= len(source) <= hi:
            return " ".join(source), " ".join(target)


def test_sampling_between_two_lengths_has_the_law_of_rejection_sampling():
    # A -> A A (straight or inverted on the target side) | b | c: subcritical, many trees of each length.
    grammar = Grammar([Rule.parse(0.2, "A -> A1 A2 | A1 A2"), Rule.parse(0.2, "A -> A1 A2 | A2 A1"),
                       Rule.parse(0.3, "A -> B1 | B1"), Rule.parse(0.3, "A -> C1 | C1")],
                      {"B": ("b", "B", 1), "C": ("c", "C", 1)}, max_length=8)
    rng, draws = np.random.default_rng(0), 5000

    def law(pairs):
        """The share of each (length, b's, target = source, target = its mirror image): the tree shows in the
        target."""
        counts = Counter((len(s.split()), s.count("b"), t.lower() == s, t.lower() == " ".join(s.split()[::-1]))
                         for s, t in pairs)
        return {k: v / draws for k, v in counts.items()}

    ours = law(tuple(" ".join(side) for side in grammar.sample_between(rng, 2, 4)) for _ in range(draws))
    reference = law(_rejection_sample(grammar, rng, 2, 4) for _ in range(draws))
    assert len(ours) > 15 and set(ours) == set(reference)
    assert sum(abs(ours[k] - reference[k]) for k in ours) / 2 < 0.05             # total variation
    length_p = grammar.length_p["A"][2:5] / grammar.length_p["A"][2:5].sum()
    assert np.allclose([sum(v for k, v in ours.items() if k[0] == n) for n in (2, 3, 4)], length_p, atol=0.02)


def test_the_default_training_is_the_papers_recipe():
    from stackparse.experiments.sequence import SequenceExperiment
    settings = SequenceExperiment.defaults("reversal", "neural-stack")
    train, data = settings.train, settings.data
    assert (train.optimizer, train.lr, train.batch_size, train.clip, train.bptt) == ("rmsprop", 1e-3, 10, 1.0, 0)
    assert train.average == 0.0 and train.lr_schedule == "constant" and train.max_minutes == 0.0
    assert data.curriculum_every == 0 and data.protocol(get_task("reversal")).curriculum_every == 0   # 8..64 at once
    model = settings.model_config
    assert (model.hidden, model.memory_size, model.embedding) == (256, 256, 64)
    assert model.learned_h0 and SequenceExperiment.defaults("copy", "deep-lstm").model_config.learned_h0


# ---- coarse and fine accuracy ----------------------------------------------------------------------
def test_fine_accuracy_counts_the_scored_symbols_right_before_the_first_error():
    assert ExampleResult(False, 0.0, 4, (), prefix=3).fine == 0.75
    assert ExampleResult(True, 0.0, 4, (), prefix=4).fine == 1.0


class Echo:
    """A 'model' that predicts output id `answer[step]` at every step, whatever it reads."""
    evaluation_batch = 256

    def __init__(self, n_outputs, answer):
        self.n_outputs, self.answer = n_outputs, answer

    def initial_state(self, batch_size):
        return 0

    def step(self, state, ids):
        return state + 1

    def scores(self, state):
        import dynet as dy
        return dy.inputTensor(np.eye(self.n_outputs)[self.answer[min(state - 1, len(self.answer) - 1)]])


def test_size_report_gives_coarse_and_fine_accuracy(rng):
    task = get_task("copy")
    example = task.sample(np.random.default_rng(0), 65)
    # Right on the first 10 target symbols of this very example, then wrong: fine = 10 / 66 for it.
    answer = list(example.targets)
    first = example.scored.index(True)
    answer[first + 10] = (answer[first + 10] + 1) % len(task.outputs)
    report = evaluate_sizes(Echo(len(task.outputs), answer), task, np.random.default_rng(0), (65, 65), samples=1)
    metrics = report.to_dict()
    assert metrics["coarse_accuracy"] == 0.0
    assert metrics["fine_accuracy"] == pytest.approx(10 / 66)


def test_curriculum_overrides_grow_the_largest_size_by_steps():
    from stackparse.training.sequence import SequenceDataConfig, curriculum_max_n
    task = get_task("reversal")
    assert [curriculum_max_n(SequenceDataConfig().protocol(task), e) for e in (0, 5)] == [64, 64]
    grown = SequenceDataConfig(curriculum_start=16, curriculum_step=8, curriculum_every=2).protocol(task)
    assert [curriculum_max_n(grown, e) for e in range(0, 16, 2)] == [16, 24, 32, 40, 48, 56, 64, 64]
    counting = get_task("anbn")          # the task's own curriculum unless overridden
    assert curriculum_max_n(SequenceDataConfig().protocol(counting), 4) == 7
