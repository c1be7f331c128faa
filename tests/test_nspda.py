"""NSPDA, NNPDA and second-order RNN (Mali, Ororbia & Giles; Sun et al.; Giles et al. 1992): the discrete
stack's values, quantized activations and their straight-through gradients, shapes and backward of
every higher-order model, the programmed NSPDA on all five languages, the noise regularizer, the
grammar tasks and a short training run with rule insertion."""
import stackparse  # noqa: F401  (configures DyNet before its first import)

import dynet as dy
import numpy as np
import pytest

from stackparse.config import from_dict
from stackparse.errors import UserError
from stackparse.evaluation.sequence import evaluate_splits, score_examples
from stackparse.grammars import Split, accepts, parse_pda, prefixes_accepted, shipped_names, shipped_pda, split_of
from stackparse.grammars.realtime import realtime
from stackparse.memories.discrete_stack import EMPTY, Action, DiscreteStack, Signals, update
from stackparse.models import get_model_class
from stackparse.encoders.tensors import quantized
from stackparse.models.nspda import ALPHAS, EARLIER, NSPDA3
from stackparse.models.programming import programmed_nspda
from stackparse.encoders.nspda import NSPDAController
from stackparse.encoders.tensors import outer
from stackparse.tasks import get_task
from stackparse.tasks.grammar import GrammarTask
from stackparse.training import TrainConfig, Trainer
from stackparse.training.noise import perturb, submatrices
from stackparse.training.noise import hooks_for
from stackparse.training.rules import insert_rules
from stackparse.training.sequence import SequenceObjective, SequenceTraining

SMALL = {"train": Split(150, 150, (1, 21)), "test": Split(60, 60, (1, 60)), "test-480": Split(3, 3, (480, 481)),
         "test-960": Split(2, 2, (960, 961)), "validation": Split(30, 30, (1, 21))}
"""Splits small enough for tests (the full ones are measured by `python cli.py program`)."""


def small_task(grammar: str) -> GrammarTask:
    return GrammarTask(shipped_pda(grammar), SMALL)


# ---- the discrete stack ------------------------------------------------------------------------------

def test_discrete_stack_is_a_value_with_push_pop_noop():
    stack = DiscreteStack.empty(3, bottom=(9,))
    after = stack.next(Signals([Action.PUSH, Action.POP, Action.NO_OP], [4, 5, 6]))
    assert stack.stacks == ((9,), (9,), (9,))                      # unchanged
    assert after.stacks == ((9, 4), (), (9,))
    assert after.read() == [4, EMPTY, 9]
    assert after.next(Signals([Action.POP] * 3, [0, 0, 0])).stacks == ((9,), (), ())   # popping empty stays empty
    assert update((1, 2), Action.PUSH, 3) == (1, 2, 3) and update((1, 2), Action.POP, 3) == (1,)


def test_candidates_are_the_tops_each_action_leaves():
    stack = DiscreteStack(((1, 2), (), (7,)))
    c = stack.candidates([5, 6, 8])
    assert c[Action.PUSH] == [5, 6, 8]
    assert c[Action.POP] == [1, EMPTY, EMPTY]
    assert c[Action.NO_OP] == [2, EMPTY, 7]
    for action in Action:
        assert stack.next(Signals([action] * 3, [5, 6, 8])).read() == c[action]


# ---- quantized activations ---------------------------------------------------------------------------

def test_quantized_activations_round_and_pass_the_gradient_straight_through():
    z = dy.inputTensor(np.array([-3.0, -0.2, 0.3, 2.0]))
    g = quantized(dy.logistic(z))
    f = quantized(dy.tanh(z))
    assert g.npvalue().tolist() == [0, 0, 1, 1]
    assert f.npvalue().tolist() == [-1, 0, 0, 1]
    dy.sum_elems(f).backward(full=True)
    expected = 1 - np.tanh(z.npvalue()) ** 2                                   # tanh's own derivative
    np.testing.assert_allclose(z.gradient(), expected, rtol=1e-5)


def test_outer_product_order_is_first_factor_fastest():
    a, b, c = (dy.inputTensor(np.arange(1.0, k + 1)) for k in (2, 3, 2))
    flat = outer([a, b, c]).npvalue()
    for i, j, k in np.ndindex(2, 3, 2):
        assert flat[i + 2 * (j + 3 * k)] == (i + 1) * (j + 1) * (k + 1)


# ---- models: shapes and backward ---------------------------------------------------------------------

@pytest.mark.parametrize("name", ["rnn2", "nspda2", "nspda3", "nnpda"])
def test_higher_order_models_shapes_and_backward(name):
    pc = dy.ParameterCollection()
    cls = get_model_class(name)
    model = cls(pc, cls.Config(hidden=4), 3, 2)
    model.training = True
    state = model.initial_state(5)
    for ids in ([0, 1, 2, 1, 0], [1, 1, 0, 2, 2], [2, 0, 1, 0, 1]):
        state = model.step(state, np.array(ids))
    scores = model.scores(state)
    assert scores.dim() == ((2,), 5)
    loss = dy.sum_batches(dy.pickneglogsoftmax_batch(scores, [0, 1, 1, 0, 1]))
    loss.value()
    loss.backward()
    for p in model.weight_tensors():
        assert np.abs(p[0].grad_as_array()).sum() > 0, p[0].name()     # the action tensor too (eq. 6)


@pytest.mark.parametrize("read_values", ["onehot", "alpha"])
@pytest.mark.parametrize("training", [False, True])
def test_nspda_read_is_the_discrete_top_and_actions_are_discrete(read_values, training):
    """onehot: e(top) exactly. alpha (eq. 6's values): the top's neuron in alpha_2's interval, a symbol the step
    popped (not the new top) in alpha_3's, every other in alpha_1's; the midpoints at evaluation."""
    pc = dy.ParameterCollection()
    model = get_model_class("nspda3")(pc, get_model_class("nspda3").Config(hidden=3, read_values=read_values), 2, 2)
    model.training = training
    state = model.initial_state(3)
    for ids in ([0, 1, 1], [1, 1, 0], [0, 0, 1], [1, 0, 0]):
        before = state.stack.read()
        state = model.step(state, np.array(ids))
        actions = state.action.npvalue().reshape(-1)
        assert set(np.unique(actions)) <= {-1.0, 0.0, 1.0}
        assert set(np.unique(state.state.npvalue())) <= {0.0, 1.0}
        read = state.read.npvalue().reshape(model.read_neurons, -1)
        tops = model.read_ids(state.stack.read())
        assert np.array_equal(read.argmax(axis=0), tops)
        if read_values == "onehot":
            assert np.all(read.sum(0) == 1)
            continue
        for b, top in enumerate(tops):
            popped = model.read_ids([before[b]])[0] if actions[b] == -1 and before[b] != -1 else None
            for neuron, value in enumerate(read[:, b]):
                which = Action.PUSH if neuron == top else Action.POP if neuron == popped else Action.NO_OP
                lo, hi = ALPHAS[which]
                assert (lo <= value <= hi) if training else value == pytest.approx((lo + hi) / 2, abs=1e-6)


@pytest.mark.parametrize("value, action", [(-0.5, -1), (-0.0901, -1), (-0.0899, 0), (0.0, 0), (0.1299, 0),
                                           (0.1301, 1), (0.9, 1)])
def test_the_action_quantizer_cuts_at_the_papers_thresholds(value, action):
    """Eq. 14: f = 1 above 0.13, 0 in [-0.09, 0.13], -1 below, on f^ = 2 sigmoid(A) - 1; the gradient of f^
    passes straight through."""
    controller = NSPDAController(dy.ParameterCollection(), 3, 2, 2, 4, lambda name, rows, factors:
                                 dy.ParameterCollection().add_parameters((rows, int(np.prod(factors)))))
    dy.renew_cg()
    A = dy.inputVector([float(np.log((1 + value) / (1 - value)))])      # f^(A) = value
    a = controller.action(A)
    assert a.value() == action
    a.backward(full=True)
    assert A.gradient()[0] == pytest.approx((1 - value ** 2) / 2, rel=1e-4)   # d f^ / dA = 2 g (1 - g)


def test_weights_are_discretized_at_evaluation_only():
    pc = dy.ParameterCollection()
    model = get_model_class("rnn2")(pc, get_model_class("rnn2").Config(hidden=3, weight_step=0.5), 2, 2)
    model.training = False
    assert np.all(np.mod(model.weight(model.W).npvalue(), 0.5) == 0)
    model.training = True
    np.testing.assert_array_equal(model.weight(model.W).npvalue(), model.W.as_array())


def test_discretize_training_trains_the_rounded_weights_with_straight_through_gradients():
    pc = dy.ParameterCollection()
    config = get_model_class("nspda2").Config(hidden=3, weight_step=0.5, discretize_training=True)
    model = get_model_class("nspda2")(pc, config, 2, 2)
    model.training = True
    w = model.weight(model.Ws)
    assert np.all(np.mod(w.npvalue(), 0.5) == 0)
    dy.sum_elems(w * 3.0).backward()
    np.testing.assert_allclose(model.Ws.grad_as_array(), 3.0)      # round's gradient passes straight through


# ---- programming ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("grammar", shipped_names())
def test_realtime_table_agrees_with_the_runner(grammar, rng):
    from stackparse.grammars import accepts
    pda = shipped_pda(grammar)
    table = realtime(pda)
    for _ in range(300):
        s = "".join(rng.choice(pda.input_symbols, int(rng.integers(0, 12))))
        assert table.run(s) == accepts(pda, s), s


@pytest.mark.parametrize("order", [2, 3])
@pytest.mark.parametrize("grammar", shipped_names())
def test_programmed_nspda_classifies_every_string(grammar, order):
    task = small_task(grammar)
    report = evaluate_splits(programmed_nspda(task.pda, order), task)
    assert report.error == {"test": 0.0, "test-480": 0.0, "test-960": 0.0, "train": 0.0}


@pytest.mark.parametrize("order", [2, 3])
def test_the_papers_binary_weights_hold_a_programmed_automaton_at_its_size_only(order):
    """The paper's binary/ternary weights (`binary_scale` s, the default) keep the rules programmed at H exactly
    when s = H: at the printed values' size 1 the state neurons' biases, programmed for H, switch them all off."""
    task = small_task("anbncbmam")
    assert NSPDA3.Config().binary_scale == 8.0
    assert from_dict(NSPDA3.Config, {"hidden": 4}).binary_scale == 1.0     # saved before the setting: as trained
    at = {s: evaluate_splits(programmed_nspda(task.pda, order, binary_scale=s), task, ("test",)).error["test"]
          for s in (8.0, 1.0)}
    assert at[8.0] == 0.0 and at[1.0] >= 40.0
    for binary_scale in (1.0, None):            # None: as programmed, the rules' biases of +-0.5 not rounded
        assert evaluate_splits(programmed_nspda(task.pda, order, 1.0, binary_scale=binary_scale), task,
                               ("test",)).error == {"test": 0.0}


@pytest.mark.parametrize("grammar", shipped_names())
def test_end_marked_tasks_read_the_same_strings_with_a_marker_and_program_exactly(grammar):
    plain = small_task(grammar)
    marked = type(get_task(f"pda-{grammar}-end"))(shipped_pda(grammar), SMALL)
    assert marked.name == f"pda-{grammar}-end" and marked.symbols == plain.symbols + ("$",)
    for a, b in zip(plain.split("validation"), marked.split("validation")):
        assert b.inputs == a.inputs + (marked.symbols.index("$"),) and b.n == a.n
        # each step's target is its prefix's acceptance: the marked PDA accepts nothing before "$"
        assert b.targets == (0,) * len(a.inputs) + a.targets[-1:] and b.scored == (False,) * len(a.inputs) + (True,)
    for s, _ in split_of(plain.pda, 0, "validation", SMALL)[:20]:
        assert accepts(marked.pda, s + "$") == accepts(plain.pda, s)
        assert not accepts(marked.pda, s) and not accepts(marked.pda, "$" + s + "$")
    report = evaluate_splits(programmed_nspda(marked.pda, 2), marked)
    assert report.error == {"test": 0.0, "test-480": 0.0, "test-960": 0.0, "train": 0.0}


@pytest.mark.parametrize("name", ["pda-anbn-random", "pda-dyck2-end-random"])
def test_random_negative_tasks_differ_in_their_negatives_only(name):
    near = get_task(name.removesuffix("-random"))
    task = type(get_task(name))(shipped_pda(name.split("-")[1]), SMALL)
    assert task.name == name and task.symbols == near.symbols and task.pda.name == near.pda.name
    examples = task.split("validation")
    assert {e.targets[-1] for e in examples} == {0, 1}
    for e in examples:   # labelled by the language's runner, the end marker (if any) not part of the string
        string = task.decode(e.inputs).removesuffix("$")
        assert accepts(task.language, string) == bool(e.targets[-1])
    report = evaluate_splits(programmed_nspda(task.pda, 2), task)
    assert report.error == {"test": 0.0, "test-480": 0.0, "test-960": 0.0, "train": 0.0}


def test_pdas_that_do_not_fit_get_one_line_reasons():
    guess = parse_pda("states: q p\ninput: a\nstack: A\nstart: q\naccept: q\nq a - -> q A\nq a - -> p -\n", "g.pda")
    with pytest.raises(UserError, match="not deterministic"):
        realtime(guess)
    multi = parse_pda("states: q\ninput: a\nstack: A\nstart: q\naccept: q\nq a - -> q AA\n", "m.pda")
    with pytest.raises(UserError, match="more than one symbol"):
        realtime(multi)
    eps = parse_pda("states: q p\ninput: a\nstack: A\nstart: q\naccept: q\nq - A -> p -\nq a - -> q A\n", "e.pda")
    with pytest.raises(UserError, match="ε-move"):
        realtime(eps)


# ---- the noise regularizer -----------------------------------------------------------------------------

@pytest.mark.parametrize("share", [0.25, 0.5, 1.0])
def test_noise_perturbs_the_stated_share_of_submatrices_and_is_removed(share, rng):
    pc = dy.ParameterCollection()
    model = get_model_class("nspda3")(pc, get_model_class("nspda3").Config(hidden=3), 2, 2)   # Ws: (3, 3, 2, 4)
    before = [p.as_array().copy() for p, _ in model.weight_tensors()]
    noise = perturb(model.weight_tensors(), 0.1, share, rng)
    for (p, shape), old in zip(model.weight_tensors(), before):
        blocks = np.abs(p.as_array() - old).reshape(shape[0], -1, shape[1]).sum(axis=(0, 2))
        assert (blocks > 0).sum() == int(np.ceil(share * submatrices(shape)))       # whole sub-matrices
    noise.remove()
    for (p, _), old in zip(model.weight_tensors(), before):
        np.testing.assert_allclose(p.as_array(), old, atol=1e-6)


# ---- tasks and training ------------------------------------------------------------------------------

def test_grammar_tasks_are_registered_and_score_the_last_symbol():
    task = get_task("pda-dyck2")
    assert task.kind == "grammar" and task.outputs == ("reject", "accept")
    anbn = small_task("anbn")
    example = anbn.split("validation")[0]
    assert example.scored[-1] and not any(example.scored[:-1])
    string = "".join(anbn.symbols[i] for i in example.inputs)      # each step's target: its prefix's acceptance
    assert example.targets == tuple(int(accepted) for accepted in prefixes_accepted(anbn.pda, string)[1:])


def test_training_nspda2_with_rule_insertion_beats_chance(tmp_path):
    task = small_task("anbn")
    data = SequenceTraining(epoch_size=100, insert_rules=0.5, noise=0.05, noise_kind="additive")   # the earlier noise
    cls = get_model_class("nspda2")

    def build(seed):
        pc = dy.ParameterCollection()
        model = cls(pc, cls.Config(hidden=8, **EARLIER), len(task.symbols), len(task.outputs))
        objective = SequenceObjective(task, model, pc, TrainConfig(epochs=3, lr=0.5), data, validation_seed=1)
        insert_rules(model, task.pda, data, seed=1)
        return objective

    result = Trainer(TrainConfig(epochs=3, lr=0.5), build, progress=False,
                     hooks=lambda objective: hooks_for(data, objective.model)).fit(tmp_path)
    objective = build(1)
    objective.restore(result.model_dir)
    objective.model.training = False
    error = 100 * np.mean([not r.correct for r in score_examples(objective.model, task.split("test"))])
    assert error < 30.0
