"""Training the higher-order models with other gradient algorithms (--grad) and iterative refinement
(--refine): RTRL trains exactly as BPTT does, UORO lowers the loss, the gradient cell is the model's
own step, refinement's K = 1 is the plain loss and its passes backpropagate."""
import stackparse  # noqa: F401  (configures DyNet before its first import)

import dataclasses

import dynet as dy
import numpy as np
import pytest

from stackparse.errors import UserError
from stackparse.grammars import Split, shipped_pda
from stackparse.models import get_model_class
from stackparse.tasks.grammar import GrammarTask
from stackparse.training import TrainConfig, Trainer
from stackparse.training.gradients import bptt, rtrl
from stackparse.training.methods import GradientSettings, gradient_method, segment_losses
from stackparse.training.refinement import refined_losses
from stackparse.training.sequence import SequenceObjective, SequenceTraining
from tests.cli_runner import run as cli_run

TINY = {"train": Split(12, 12, (1, 9)), "validation": Split(4, 4, (1, 9)), "test": Split(4, 4, (1, 9))}


def tiny_task() -> GrammarTask:
    return GrammarTask(shipped_pda("anbn"), TINY)


def build(model_name: str, data: SequenceTraining, train: TrainConfig, hidden: int = 3):
    """An objective factory for the trainer: a tiny model on a tiny a^n b^n."""
    task = tiny_task()

    def make(seed):
        pc = dy.ParameterCollection()
        cls = get_model_class(model_name)
        model = cls(pc, cls.Config(hidden=hidden), len(task.symbols), len(task.outputs))
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


@pytest.mark.parametrize("model_name", ["rnn2", "nspda2", "nspda3"])
def test_the_gradient_cell_is_the_models_step(model_name):
    """The cell's loss and RTRL gradient equal the model's own graph's, for one string."""
    pc = dy.ParameterCollection()
    cls = get_model_class(model_name)
    model = cls(pc, cls.Config(hidden=3), 2, 2)
    model.training = True
    ids, targets = [0, 0, 1, 0, 1, 1, 1], [1, 0, 0, 1, 0, 0, 1]
    cell, params = model.gradient_cell()
    exact = bptt(cell, params, ids, targets)
    forward = rtrl(cell, params, ids, targets)
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
    with pytest.raises(UserError, match="needs grad bptt"):
        GradientSettings(refine=4).validate()


def refinement_loss(model_name, passes, hint, rate=1.0):
    pc = dy.ParameterCollection()
    cls = get_model_class(model_name)
    model = cls(pc, cls.Config(hidden=3), 2, 2)
    model.training = True
    batch = tiny_task().split("train")[:5]
    return model, batch, [(loss, n) for loss, n in refined_losses(model, batch, passes, hint, rate)]


@pytest.mark.parametrize("model_name", ["rnn2", "nspda3"])
@pytest.mark.parametrize("hint", ["error", "state"])
def test_one_refinement_pass_is_the_plain_loss(model_name, hint):
    model, batch, [(loss, n)] = refinement_loss(model_name, 1, hint)
    value = loss.value()
    [(plain, m)] = list(segment_losses(model, batch, 0))
    assert value == pytest.approx(plain.value(), rel=1e-6) and n == m == sum(e.scored.count(True) for e in batch)


@pytest.mark.parametrize("model_name", ["rnn2", "nspda2", "nnpda"])
@pytest.mark.parametrize("hint", ["error", "state"])
def test_refinement_sums_k_passes_and_backpropagates(model_name, hint):
    model, batch, [(loss, _)] = refinement_loss(model_name, 4, hint, rate=0.5)
    assert loss.dim() == ((1,), 1) and np.isfinite(loss.value())
    loss.backward()
    assert any(np.abs(p.grad_as_array()).sum() > 0 for p in model.trained_parameters())


def test_refinement_trains_through_the_trainer(tmp_path):
    objective = trained(tmp_path, "nspda2", "bptt", refine=2, refine_hint="error")
    assert dataclasses.asdict(objective.data)["refine"] == 2


# ---- the command line -------------------------------------------------------------------------------

def test_train_with_rtrl_from_the_command_line(tmp_path):
    import json
    tiny = ["--epochs", "1", "--epoch-size", "8", "--hidden", "2", "--quiet"]
    cli_run("train", "pda-anbn", "--model", "nspda2", "--grad", "rtrl", "--out", tmp_path / "r", *tiny)
    assert json.loads((tmp_path / "r" / "config.json").read_text())["data"]["grad"] == "rtrl"
    assert "needs grad bptt" in cli_run("train", "pda-anbn", "--model", "rnn2", "--refine", "2",
                                        "--out", tmp_path / "f", *tiny, ok=False)
    assert "--grad must be one of" in cli_run("train", "pda-anbn", "--model", "rnn2", "--grad", "x",
                                              "--out", tmp_path / "a", *tiny, ok=False)
    assert "nnpda's analog stack" in cli_run("train", "pda-anbn", "--model", "nnpda", "--grad", "uoro",
                                             "--out", tmp_path / "b", *tiny, ok=False)
    assert "needs a higher-order model" in cli_run("train", "pda-anbn", "--model", "lstm", "--grad", "rtrl",
                                                   "--out", tmp_path / "c", *tiny, ok=False)


def test_speed_by_gradient_algorithm():
    out = cli_run("speed", "pda-anbn", "--model", "nspda2", "--hidden", "2", "--batch-sizes", "1",
                  "--seconds", "1", "--grad", "bptt,uoro")
    assert "| bptt | 1 |" in out and "| uoro | 1 |" in out
    assert "--grad must be one of" in cli_run("speed", "--grad", "sgd", ok=False)


@pytest.mark.parametrize("hint", ["error", "state"])
def test_the_hint_changes_the_later_passes(hint):
    """A second pass from the corrected start has another loss than the first (a large rate: the
    gradient reaching s^0 of an untrained model through a string is small)."""
    _, _, [(one, _)] = refinement_loss("rnn2", 1, hint)
    single = one.value()
    _, _, [(two, _)] = refinement_loss("rnn2", 2, hint, rate=1e4 if hint == "error" else 1.0)
    assert abs(two.value() - 2 * single) > 1e-6
