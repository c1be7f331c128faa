"""Training the higher-order models with other gradient algorithms (--grad) and iterative refinement
(--refine): RTRL trains exactly as BPTT does, UORO lowers the loss, the gradient cell is the model's
own step, refinement's K = 1 is the plain loss and its passes backpropagate."""
import stackparse  # noqa: F401  (configures DyNet before its first import)

import dataclasses
import itertools
import warnings

import dynet as dy
import numpy as np
import pytest

from stackparse.errors import UserError
from stackparse.grammars import Split, shipped_pda
from stackparse.models import get_model_class
from stackparse.sequences import Example
from stackparse.tasks import get_task
from stackparse.tasks.grammar import GrammarTask
from stackparse.training import TrainConfig, Trainer
from stackparse.training.gradients import bptt, rtrl, uoro
from stackparse.training.methods import GradientSettings, gradient_method, segment_losses
from stackparse.training.refinement import refined_losses
from stackparse.training.rules import insert_rules
from stackparse.training.sequence import SequenceObjective, SequenceTraining
from tests.cli_runner import run as cli_run

TINY = {"train": Split(12, 12, (1, 9)), "validation": Split(4, 4, (1, 9)), "test": Split(4, 4, (1, 9))}


def tiny_task() -> GrammarTask:
    return GrammarTask(shipped_pda("anbn"), TINY)


def build(model_name: str, data: SequenceTraining, train: TrainConfig, hidden: int = 3):
    """An objective factory for the trainer: a tiny model on a tiny a^n b^n (an NSPDA with one-hot reads: the
    paper's read values are drawn anew in every graph, so two gradient methods would train on other draws)."""
    options = {"read_values": "onehot"} if model_name.startswith("nspda") else {}
    task = tiny_task()

    def make(seed):
        pc = dy.ParameterCollection()
        cls = get_model_class(model_name)
        model = cls(pc, cls.Config(hidden=hidden, **options), len(task.symbols), len(task.outputs))
        return SequenceObjective(task, model, pc, train, data, gradient_method(data, model, train.bptt),
                                 validation_seed=seed)
    return make


def trained(tmp_path, model_name, grad, epochs=1, **data):
    train = TrainConfig(epochs=epochs, batch_size=4, lr=0.5, lr_schedule="constant", seed=3)
    config = SequenceTraining(epoch_size=12, grad=grad, **data)
    trainer = Trainer(train, build(model_name, config, train), progress=False)
    result = trainer.fit(tmp_path / grad)
    objective = build(model_name, config, train)(0)
    objective.restore(result.model_dir)
    return objective


@pytest.mark.parametrize("model_name", ["rnn2", "nspda2"])
def test_an_epoch_of_rtrl_gives_the_parameters_of_bptt(tmp_path, model_name):
    by_bptt = trained(tmp_path, model_name, "bptt")
    by_rtrl = trained(tmp_path, model_name, "rtrl")
    a, b = by_bptt.model.trained_parameters(), by_rtrl.model.trained_parameters()
    assert all(np.allclose(p.as_array(), q.as_array(), atol=1e-5) for p, q in zip(a, b))
    start = build(model_name, SequenceTraining(), TrainConfig(seed=3))(0).model.trained_parameters()
    assert any(not np.allclose(p.as_array(), q.as_array()) for p, q in zip(a, start))   # it did train


def mean_training_loss(objective, examples):
    objective.model.training = True
    return np.mean([loss.value() for e in examples for loss, _ in segment_losses(objective.model, [e], 0)])


def test_uoro_lowers_the_loss_over_a_few_epochs(tmp_path):
    examples = tiny_task().split("train")
    before = mean_training_loss(build("rnn2", SequenceTraining(), TrainConfig(seed=3))(0), examples)
    after = mean_training_loss(trained(tmp_path, "rnn2", "uoro", epochs=6), examples)
    assert after < before


@pytest.mark.parametrize("discretize", [False, True])
@pytest.mark.parametrize("model_name", ["rnn2", "nspda2", "nspda3"])
def test_the_gradient_cell_is_the_models_step(model_name, discretize):
    """The cell's loss and RTRL gradient equal the model's own graph's, for one string (one-hot reads: the
    paper's are drawn anew in each graph), with the weights discretized in training too (`discretize_training`:
    the cell uses the weights as the step does)."""
    pc = dy.ParameterCollection()
    cls = get_model_class(model_name)
    options = {"discretize_training": discretize, "init_scale": 1.5 if discretize else 0.5}
    model = cls(pc, cls.Config(hidden=3, **options, **({"read_values": "onehot"} if model_name != "rnn2" else {})),
                2, 2)
    model.training = True
    ids, targets = [0, 0, 1, 0, 1, 1, 1], [1, 0, 0, 1, 0, 0, 1]
    cell, params = model.gradient_cell()
    example = Example(tuple(ids), tuple(targets), (True,) * len(ids), len(ids))
    exact = bptt(cell, params, [example], np.random.default_rng(0))
    forward = rtrl(cell, params, [example], np.random.default_rng(0))
    dy.renew_cg()
    state, losses = model.initial_state(1), []
    for i, y in zip(ids, targets):
        state = model.step(state, [i])
        losses.append(dy.pickneglogsoftmax(model.scores(state), y))
    total = dy.esum(losses)
    assert total.value() == pytest.approx(exact.loss, rel=1e-5) == pytest.approx(forward.loss, rel=1e-5)
    total.backward()
    for p, g, h in zip(params, exact.grads, forward.grads):
        assert np.allclose(p.grad_as_array(), g, atol=1e-5) and np.allclose(g, h, atol=1e-5)


def test_online_gradients_refuse_the_nnpda_in_one_line():
    task = tiny_task()
    pc = dy.ParameterCollection()
    cls = get_model_class("nnpda")
    model = cls(pc, cls.Config(hidden=2), len(task.symbols), len(task.outputs))
    with pytest.raises(UserError, match="rnn2, nspda2 and nspda3"):
        gradient_method(GradientSettings(grad="rtrl"), model, TrainConfig().bptt)
    with pytest.raises(UserError, match="grad must be one of"):
        GradientSettings(grad="rprop").validate()
    with pytest.raises(UserError, match="runs with grad bptt, rtrl or uoro"):
        GradientSettings(refine=4, grad="tbptt").validate()


def refinement_loss(model_name, passes, hints=None, batch=None):
    pc = dy.ParameterCollection()
    cls = get_model_class(model_name)
    model = cls(pc, cls.Config(hidden=3, **({"read_values": "onehot"} if model_name.startswith("nspda") else {})),
                2, 2)
    model.training = True
    batch = batch or tiny_task().split("train")[:5]
    return model, batch, [(loss, n) for loss, n in refined_losses(model, batch, passes, hints)]


@pytest.mark.parametrize("model_name", ["rnn2", "nspda3", "lstm"])
def test_one_refinement_pass_is_the_plain_loss(model_name):
    model, batch, [(loss, n)] = refinement_loss(model_name, 1)
    value = loss.value()
    [(plain, m)] = list(segment_losses(model, batch, 0))
    assert value == pytest.approx(plain.value(), rel=1e-6) and n == m == sum(e.scored.count(True) for e in batch)


@pytest.mark.parametrize("model_name", ["rnn2", "nspda2", "nnpda", "gru"])
def test_refinement_sums_k_predictions_per_step_and_backpropagates(model_name):
    model, batch, [(loss, n)] = refinement_loss(model_name, 4)
    assert n == 4 * sum(e.scored.count(True) for e in batch)
    assert loss.dim() == ((1,), 1) and np.isfinite(loss.value())
    loss.backward()
    assert any(np.abs(p.grad_as_array()).sum() > 0 for p in model.param_collection().parameters_list())


def test_refinement_by_hand_on_two_steps():
    """Eq. 17 worked by hand on rnn2 (2 state neurons, 2 symbols) over the string "ab", both steps scored, K = 2,
    the second step hinted (S = (2, 1)): three predictions, each -log softmax(V s + c)[label], where s is refined
    once at step 1 (s' = sigmoid(W (s (x) x) + b) twice on x = a), stepped on a, then stepped on b."""
    pc = dy.ParameterCollection()
    cls = get_model_class("rnn2")
    model = cls(pc, cls.Config(hidden=2), 2, 2)
    rng = np.random.default_rng(0)
    W, b, V, c = (rng.normal(size=shape) for shape in ((2, 4), (2,), (2, 2), (2,)))
    for p, value in zip((model.W, model.b, model.V, model.c), (W, b, V, c)):
        p.set_value(value)
    model.training = True
    example = Example((0, 1), (1, 1), (True, True), 2)
    [(loss, n)] = refined_losses(model, [example], 2, lambda e: (False, True))

    def step(s, x):
        return 1 / (1 + np.exp(-(W @ np.outer(s, np.eye(2)[x]).reshape(-1, order="F") + b)))

    def nll(s, y):
        z = V @ s + c
        return -(z[y] - np.log(np.exp(z).sum()))
    s0 = np.array([1.0, 0.0])
    s1 = step(s0, 0)                   # refinement pass at step 1 (a memoryless model: the step again)
    s2 = step(s1, 0)                   # the step itself
    s3 = step(s2, 1)                   # step 2, hinted: one prediction
    assert n == 3
    assert loss.value() == pytest.approx(nll(s1, 1) + nll(s2, 1) + nll(s3, 1), rel=1e-5)


def test_refinement_holds_the_nspda_stack_and_hinted_states():
    """A refinement pass leaves the stack and the read alone; a hinted sequence keeps its state."""
    pc = dy.ParameterCollection()
    cls = get_model_class("nspda3")
    model = cls(pc, cls.Config(hidden=3), 2, 2)
    model.training = False
    dy.renew_cg()
    state = model.step(model.initial_state(2), np.array([0, 1]))
    refined = model.refine(state, np.array([1, 0]))
    assert refined.stack == state.stack and np.array_equal(refined.read.npvalue(), state.read.npvalue())
    held = model.refine(state, np.array([1, 0]), np.array([True, False]))
    assert np.array_equal(held.state.npvalue()[:, 0], state.state.npvalue()[:, 0])
    assert np.array_equal(held.state.npvalue()[:, 1], refined.state.npvalue()[:, 1])


def test_rule_hints_mark_the_steps_of_inserted_moves():
    task = get_task("pda-anbn")
    pc = dy.ParameterCollection()
    cls = get_model_class("nspda3")
    model = cls(pc, cls.Config(hidden=6), len(task.symbols), len(task.outputs))
    hints = insert_rules(model, task.pda, SequenceTraining(insert_rules=1.0), seed=1)
    assert hints(task.example("aabb", True)) == (True,) * 4
    assert hints(task.example("abb", False)) == (True, True, False)         # no move at the third step
    assert insert_rules(model, task.pda, SequenceTraining(insert_rules=0.0), seed=1) is None


def test_rules_inserted_at_another_strength_than_the_binary_weights_are_warned_of():
    task = get_task("pda-anbn")
    cls = get_model_class("nspda3")
    model = cls(dy.ParameterCollection(), cls.Config(hidden=6, binary_scale=1.0), len(task.symbols), len(task.outputs))
    with pytest.warns(UserWarning, match="binary_scale 1 differs from rule_strength 8"):
        insert_rules(model, task.pda, SequenceTraining(insert_rules=1.0), seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        insert_rules(model, task.pda, SequenceTraining(insert_rules=1.0, rule_strength=1.0), seed=1)


@pytest.mark.parametrize("model_name", ["rnn2", "nspda2", "nspda3"])
def test_online_refinement_is_the_refined_graphs_gradient(model_name):
    """RTRL with K = 3 and hints (the second sequence's middle step hinted) gives the loss and the gradient of eq.
    17's graph (`refined_losses`, BPTT through the model's own refinement), on a batch of unequal lengths."""
    model, batch, _ = refinement_loss(model_name, 1, batch=[Example((0, 0, 1, 1), (0, 0, 0, 1), (True,) * 4, 4),
                                                            Example((0, 1, 1), (1, 0, 0), (True,) * 3, 3)])
    hints = {batch[0]: (False,) * 4, batch[1]: (False, True, False)}.__getitem__
    cell, params = model.gradient_cell()
    forward = rtrl(cell, params, batch, np.random.default_rng(0), refine=3, hints=hints)
    [(loss, n)] = list(refined_losses(model, batch, 3, hints))
    assert n == 3 * 7 - 2
    assert loss.value() * len(batch) == pytest.approx(forward.loss, rel=1e-5)
    loss.backward()
    for p, g in zip(params, forward.grads):
        np.testing.assert_allclose(p.grad_as_array() * len(batch), g, atol=1e-5)


def test_online_refinement_averaged_over_every_sign_sequence_is_exact():
    """UORO with refinement (K = 2; rnn2 with 2 state neurons; a string of 2 steps: 4 passes) averaged over all 2^8
    sign sequences equals RTRL's exact gradient."""
    from tests.test_gradients import Signs, flat
    pc = dy.ParameterCollection()
    cls = get_model_class("rnn2")
    model = cls(pc, cls.Config(hidden=2), 2, 2)
    model.training = True
    batch = [Example((0, 1), (1, 0), (True, True), 2)]
    cell, params = model.gradient_cell()
    exact = rtrl(cell, params, batch, np.random.default_rng(0), refine=2)
    estimates = [flat(uoro(cell, params, batch, Signs(np.array(bits).reshape(4, 1, 2)), refine=2).grads)
                 for bits in itertools.product([-1.0, 1.0], repeat=8)]
    np.testing.assert_allclose(np.mean(estimates, axis=0), flat(exact.grads), rtol=0, atol=1e-6)


def test_refinement_trains_through_the_trainer(tmp_path):
    objective = trained(tmp_path, "nspda2", "bptt", refine=2)
    assert dataclasses.asdict(objective.data)["refine"] == 2


# ---- the command line -------------------------------------------------------------------------------

def test_train_with_rtrl_from_the_command_line(tmp_path):
    import json
    tiny = ["--epochs", "1", "--epoch-size", "8", "--hidden", "2", "--quiet"]
    online = ["--refine", "1"]
    cli_run("train", "pda-anbn", "--model", "nspda2", "--grad", "rtrl", *online, "--out", tmp_path / "r", *tiny)
    assert json.loads((tmp_path / "r" / "config.json").read_text())["data"]["grad"] == "rtrl"
    assert "runs with grad bptt, rtrl or uoro" in cli_run("train", "pda-anbn", "--model", "rnn2", "--grad", "tbptt",
                                                          "--out", tmp_path / "f", *tiny, ok=False)
    assert "--grad must be one of" in cli_run("train", "pda-anbn", "--model", "rnn2", "--grad", "x",
                                              "--out", tmp_path / "a", *tiny, ok=False)
    assert "nnpda's analog stack" in cli_run("train", "pda-anbn", "--model", "nnpda", "--grad", "uoro", *online,
                                             "--out", tmp_path / "b", *tiny, ok=False)
    assert "needs a higher-order model" in cli_run("train", "pda-anbn", "--model", "lstm", "--grad", "rtrl",
                                                   *online, "--out", tmp_path / "c", *tiny, ok=False)


def test_speed_by_gradient_algorithm():
    out = cli_run("speed", "pda-anbn", "--model", "nspda2", "--hidden", "2", "--batch-sizes", "1",
                  "--seconds", "1", "--grad", "bptt,uoro")
    assert "| bptt | 4 | 1 |" in out and "| uoro | 4 | 1 |" in out          # the task's refinement, K = 4
    assert "--grad must be one of" in cli_run("speed", "--grad", "sgd", ok=False)


def test_a_grammar_examples_step_targets_are_its_prefixes_acceptance_and_eq_15_reads_the_label_or_them():
    """Each step's target says whether the prefix read so far is in the language (the last: the string's label);
    `score_every_step` scores every step by the label (eq. 15 as printed) or by its own target (`step_targets`)."""
    from stackparse.training.sequence import every_step
    task = get_task("pda-anbn")
    example = task.example("abab", False)
    assert example.targets == (0, 1, 0, 0) and example.scored == (False, False, False, True)
    assert get_task("pda-anbn-end").example("ab", True).targets == (0, 0, 1)       # accepted once "$" is read
    assert every_step(example, "label") == Example(example.inputs, (0, 0, 0, 0), (True,) * 4, 4)
    assert every_step(example, "own") == Example(example.inputs, (0, 1, 0, 0), (True,) * 4, 4)
    with pytest.raises(ValueError, match="labelled True"):
        task.example("abab", True)


def test_the_test_evaluates_whatever_mode_training_left_the_model_in(monkeypatch):
    # a run that diverges stops inside an epoch, its model in training mode (eq. 6's read values drawn at random);
    # the test evaluates it as validation does (the intervals' midpoints)
    from stackparse.experiments import sequence
    seen = []

    class Report:
        def to_dict(self):
            return {}

    monkeypatch.setattr(sequence, "evaluate_sizes", lambda model, *args, **kwargs: seen.append(model.training) or Report())
    experiment = sequence.SequenceExperiment(sequence.SequenceExperiment.defaults("pda-anbn-random", "nspda2"))
    objective = experiment.build(1)
    objective.model.training = True
    experiment.test(objective)
    assert seen == [False]
