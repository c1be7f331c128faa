"""The shared trainer: clipping, learning-rate halving, exact resume, restarts, bad settings."""
import dataclasses
import json
import time

import dynet as dy
import numpy as np
import pytest

from stackparse.errors import UserError
from stackparse.models import MODELS, ModelConfig
from stackparse.tasks import get_task
from stackparse.training import TrainConfig, Trainer, trainer
from stackparse.training.clipping import ElementClip, NormRescue
from stackparse.training.sequence import SequenceDataConfig, SequenceObjective

DATA = SequenceDataConfig(epoch_size=40, stream_examples=1, validation_size=20)


def builder(task, train, model="lstm", hidden=6):
    def build(seed):
        pc = dy.ParameterCollection()
        m = MODELS[model](pc, ModelConfig(hidden=hidden), len(task.symbols), len(task.outputs))
        return SequenceObjective(task, m, pc, train, DATA, validation_seed=train.seed)
    return build


def log(out):
    return [json.loads(line) for line in (out / "log.jsonl").read_text().splitlines()]


@pytest.mark.parametrize("kind", ["norm", "value"])
def test_gradient_clipping_bounds_the_update(kind):
    # norm: the whole gradient rescaled to norm 15; value ("hard clipping"): each element to [-15, 15], the small one
    # unchanged, so that the direction does not survive
    pc = dy.ParameterCollection()
    p = pc.add_parameters((3,), init=0.0)
    opt = dy.SimpleSGDTrainer(pc, learning_rate=1.0)
    opt.set_clip_threshold(15.0 if kind == "norm" else 0)
    dy.renew_cg()
    loss = dy.dot_product(dy.parameter(p), dy.inputVector([1000.0, -2000.0, 5.0]))
    loss.forward()
    loss.backward()
    assert kind == "norm" or ElementClip(pc, 15.0)()
    opt.update()
    if kind == "norm":
        assert np.linalg.norm(p.as_array()) == pytest.approx(15.0, rel=1e-4)
    else:
        assert p.as_array() == pytest.approx([-15.0, 15.0, -5.0])


def test_norm_clipping_holds_where_dynets_single_precision_norm_overflows():
    # elements of 1e20 are finite in DyNet's floats, their squares are not: DyNet's clipping refuses the update, the
    # rescue rescales in double precision, and the step is the clipped one, as for a small gradient
    pc = dy.ParameterCollection()
    p = pc.add_parameters((3,), init=0.0)
    opt = dy.SimpleSGDTrainer(pc, learning_rate=1.0)
    opt.set_clip_threshold(15.0)
    dy.renew_cg()
    loss = dy.dot_product(dy.parameter(p), dy.inputVector([1e20, -2e20, 5.0]))
    loss.forward()
    loss.backward()
    with pytest.raises(trainer.Diverged, match="norm is inf"):
        trainer._update(opt, None, None)
    trainer._update(opt, None, NormRescue(pc, 15.0))
    assert p.as_array() == pytest.approx(-15.0 * np.array([1.0, -2.0, 0.0]) / np.sqrt(5.0), rel=1e-5)


def test_norm_clipping_takes_a_precomputed_gradient_past_single_precision_from_its_double_values():
    # an element of 1e40 is inf in DyNet's floats; the gradient UORO computed holds it in double precision
    from stackparse.training.gradients import PrecomputedLoss
    pc = dy.ParameterCollection()
    p = pc.add_parameters((3,), init=0.0)
    opt = dy.SimpleSGDTrainer(pc, learning_rate=1.0)
    opt.set_clip_threshold(15.0)
    loss = PrecomputedLoss(0.0, (p,), (np.array([1e40, -2e40, 5.0]),))
    with np.errstate(over="ignore"):
        loss.backward()
    assert not np.isfinite(p.grad_as_array()).all()
    trainer._update(opt, None, NormRescue(pc, 15.0), loss)
    assert p.as_array() == pytest.approx(-15.0 * np.array([1.0, -2.0, 0.0]) / np.sqrt(5.0), rel=1e-5)


def test_element_clipping_in_training_and_divergence(tmp_path, parity):
    # a run trains under it (the gradient elements are what SGD applies), and a gradient that is not finite still
    # stops the run as diverged
    train = TrainConfig(epochs=2, batch_size=4, seed=2, clip=0.01, clip_kind="value")
    Trainer(train, builder(parity, train), progress=False).fit(tmp_path / "a")
    norm = TrainConfig(epochs=2, batch_size=4, seed=2, clip=0.01)
    Trainer(norm, builder(parity, norm), progress=False).fit(tmp_path / "b")
    assert log(tmp_path / "a")[-1]["train_loss"] != log(tmp_path / "b")[-1]["train_loss"]
    train = TrainConfig(epochs=5, batch_size=4, seed=2, clip=5.0, clip_kind="value")
    with pytest.warns(UserWarning, match="diverged in epoch 3"):
        result = Trainer(train, exploding(parity, train, at=2), progress=False).fit(tmp_path / "c")
    assert result.diverged == "epoch 3: the gradient is not finite"


def test_learning_rate_halves_when_validation_stops_improving(tmp_path, parity):
    # lr so large the model cannot improve every epoch; each non-improving epoch halves it.
    train = TrainConfig(epochs=6, batch_size=4, lr=50.0, seed=3)
    Trainer(train, builder(parity, train), progress=False).fit(tmp_path)
    entries = log(tmp_path)
    for before, after in zip(entries, entries[1:]):
        improved = before["best"] == before["val_entropy"]
        assert after["lr"] == pytest.approx(before["lr"] if improved else before["lr"] / 2)
    assert any(e["lr"] < 50.0 for e in entries)


@pytest.mark.parametrize("optimizer", [dict(), dict(optimizer="adam", lr=0.01, optimizer_state="epoch")])
@pytest.mark.parametrize("average", [dict(), dict(average=0.9, average_every=2)])
def test_interrupted_then_resumed_run_equals_the_uninterrupted_one(tmp_path, parity, average, optimizer):
    average = {**average, **optimizer}
    full = TrainConfig(epochs=4, batch_size=4, bptt=3, seed=7, **average)
    Trainer(full, builder(parity, full), progress=False).fit(tmp_path / "a")
    first = TrainConfig(epochs=2, batch_size=4, bptt=3, seed=7, **average)
    Trainer(first, builder(parity, first), progress=False).fit(tmp_path / "b")
    # "Interrupt" after epoch 2: the checkpoint says epoch 2, not finished; continue with 4 epochs.
    state_file = tmp_path / "b" / "run-1" / "checkpoint" / "run_state.json"
    state = json.loads(state_file.read_text())
    assert state["epoch"] == 2
    state["finished"] = False
    state_file.write_text(json.dumps(state))
    Trainer(full, builder(parity, full), progress=False).fit(tmp_path / "b", resume=True)
    a, b = log(tmp_path / "a"), log(tmp_path / "b")
    keys = ("epoch", "lr", "train_loss", "val_entropy", "val_accuracy", "best")
    assert [[e[k] for k in keys] for e in a] == [[e[k] for k in keys] for e in b]
    assert (tmp_path / "a" / "best" / "params").read_bytes() == (tmp_path / "b" / "best" / "params").read_bytes()


def test_adam_keeps_its_moments_through_the_run_unless_asked_to_restart_them(tmp_path, parity):
    # "run" and "epoch" agree on the first epoch (same fresh optimizer) and part at the second, where only
    # "epoch" starts Adam's moments afresh.
    entries = {}
    for state in ("run", "epoch"):
        train = TrainConfig(epochs=2, batch_size=4, bptt=3, seed=7, optimizer="adam", lr=0.01, optimizer_state=state)
        Trainer(train, builder(parity, train), progress=False).fit(tmp_path / state)
        entries[state] = [e["train_loss"] for e in log(tmp_path / state)]
    assert entries["run"][0] == entries["epoch"][0]
    assert entries["run"][1] != entries["epoch"][1]


def test_a_resumed_adam_run_says_its_moments_start_afresh(tmp_path, parity):
    first = TrainConfig(epochs=1, batch_size=4, bptt=3, seed=7, optimizer="adam", lr=0.01)
    Trainer(first, builder(parity, first), progress=False).fit(tmp_path)
    full = TrainConfig(epochs=2, batch_size=4, bptt=3, seed=7, optimizer="adam", lr=0.01)
    state_file = tmp_path / "run-1" / "checkpoint" / "run_state.json"
    state_file.write_text(json.dumps({**json.loads(state_file.read_text()), "finished": False}))
    with pytest.warns(UserWarning, match="moment estimates started afresh"):
        Trainer(full, builder(parity, full), progress=False).fit(tmp_path, resume=True)
    assert [e["epoch"] for e in log(tmp_path)] == [1, 2]


def test_restarts_keep_the_best_run(tmp_path, parity):
    train = TrainConfig(epochs=2, batch_size=4, restarts=2, seed=1)
    result = Trainer(train, builder(parity, train), progress=False).fit(tmp_path)
    bests = {e["restart"]: e["best"] for e in log(tmp_path)}
    assert result.best == min(bests.values())
    assert json.loads((tmp_path / "best" / "metrics.json").read_text())["restart"] == result.restart


def test_restarts_probed_then_only_the_kept_one_goes_on_as_if_never_paused(tmp_path, parity):
    # three restarts through two starts in turn (the second at its own rate), one epoch each, then the one of lowest
    # training loss to the end; its epochs are those it has when every restart trains to the end (each epoch is
    # seeded by restart and epoch)
    built = []

    def starts(train):
        def counting(k):
            def build(seed):
                built.append(k)
                return builder(parity, train, model=("lstm", "rnn")[k])(seed)
            return build
        return [(train, counting(0)), (dataclasses.replace(train, lr=0.05), counting(1))]
    probed = TrainConfig(epochs=3, batch_size=4, restarts=3, keep="train_loss", probe_epochs=1, seed=1)
    result = Trainer(probed, starts(probed), progress=False).fit(tmp_path / "p")
    assert built == [0, 1, 0]
    entries = log(tmp_path / "p")
    assert [e["lr"] for e in entries[:3]] == pytest.approx([0.1, 0.05, 0.1])
    assert [(e["restart"], e["epoch"]) for e in entries[:3]] == [(1, 1), (2, 1), (3, 1)]
    first = {e["restart"]: e["train_loss"] for e in entries[:3]}
    assert result.restart == min(first, key=first.get)
    assert [(e["restart"], e["epoch"]) for e in entries[3:]] == [(result.restart, 2), (result.restart, 3)]
    assert json.loads((tmp_path / "p" / "best" / "metrics.json").read_text())["restart"] == result.restart
    full = TrainConfig(epochs=3, batch_size=4, restarts=3, keep="train_loss", seed=1)
    Trainer(full, starts(full), progress=False).fit(tmp_path / "f")
    keys = ("epoch", "train_loss", "val_entropy", "best")
    assert [[e[k] for k in keys] for e in entries if e["restart"] == result.restart] == [
        [e[k] for k in keys] for e in log(tmp_path / "f") if e["restart"] == result.restart]
    # "interrupted" after epoch 3, resumed with 4: the probes stay paused, the kept restart goes on
    state_file = tmp_path / "p" / f"run-{result.restart}" / "checkpoint" / "run_state.json"
    state_file.write_text(json.dumps({**json.loads(state_file.read_text()), "finished": False}))
    more = TrainConfig(epochs=4, batch_size=4, restarts=3, keep="train_loss", probe_epochs=1, seed=1)
    Trainer(more, starts(more), progress=False).fit(tmp_path / "p", resume=True)
    assert [(e["restart"], e["epoch"]) for e in log(tmp_path / "p")[5:]] == [(result.restart, 4)]


def test_keeping_by_training_loss_can_keep_another_restart_than_validation(tmp_path, parity):
    kept = {}
    for keep in ("validation", "train_loss"):
        train = TrainConfig(epochs=2, batch_size=4, restarts=3, keep=keep, seed=4)
        kept[keep] = Trainer(train, builder(parity, train), progress=False).fit(tmp_path / keep).restart
        best = {e["restart"]: e for e in log(tmp_path / keep) if e["best"] == e["val_entropy"]}    # each kept epoch
        value = {r: e["val_entropy" if keep == "validation" else "train_loss"] for r, e in best.items()}
        assert kept[keep] == min(value, key=value.get)
        assert json.loads((tmp_path / keep / "best" / "metrics.json").read_text())["restart"] == kept[keep]


def test_same_seed_same_numbers(tmp_path, parity):
    train = TrainConfig(epochs=2, batch_size=4, seed=5)
    for d in ("x", "y"):
        Trainer(train, builder(parity, train, model="rnn"), progress=False).fit(tmp_path / d)
    assert [e["val_entropy"] for e in log(tmp_path / "x")] == [e["val_entropy"] for e in log(tmp_path / "y")]


def test_train_loss_is_the_loss_per_unit_whatever_the_batch_size(tmp_path, parity):
    # the losses are batch means (the update's scale); the epoch's `train_loss` undoes that, so that the same
    # examples under the same weights (SGD at a rate of 1e-12) report the same loss per character at any batch size
    losses = []
    for batch_size in (1, 4):
        train = TrainConfig(epochs=1, batch_size=batch_size, seed=3, optimizer="sgd", lr=1e-12)
        Trainer(train, builder(parity, train), progress=False).fit(tmp_path / str(batch_size))
        losses.append(log(tmp_path / str(batch_size))[0]["train_loss"])
    assert losses[1] == pytest.approx(losses[0], rel=1e-5) and losses[0] > 0.5


@pytest.mark.parametrize("bad", [dict(epochs=0), dict(lr=-1.0), dict(batch_size=0), dict(bptt=-2),
                                 dict(restarts=0), dict(optimizer="lbfgs"), dict(average=1.0),
                                 dict(average_every=0)])
def test_nonsensical_settings_are_user_errors(bad):
    with pytest.raises(UserError):
        TrainConfig(**bad).validate()


def test_validation_and_the_saved_model_see_the_averaged_parameters(tmp_path, parity):
    train = TrainConfig(epochs=2, batch_size=4, seed=2, average=0.99)
    raw = TrainConfig(epochs=2, batch_size=4, seed=2)
    Trainer(train, builder(parity, train), progress=False).fit(tmp_path / "avg")
    Trainer(raw, builder(parity, raw), progress=False).fit(tmp_path / "raw")
    avg, plain = log(tmp_path / "avg"), log(tmp_path / "raw")
    assert [e["train_loss"] for e in avg] == [e["train_loss"] for e in plain]    # training itself unchanged
    assert [e["val_entropy"] for e in avg] != [e["val_entropy"] for e in plain]
    checkpoint = (tmp_path / "avg" / "run-1" / "checkpoint" / "params").read_bytes()
    assert checkpoint == (tmp_path / "raw" / "run-1" / "checkpoint" / "params").read_bytes()


def test_the_linear_schedule_decays_to_the_end_of_the_epochs_or_of_the_time_budget(tmp_path, parity):
    # DATA: 40 streams in batches of 4, so the last batch of epoch e starts after e + 9/10 epochs of 4
    train = TrainConfig(epochs=4, batch_size=4, lr=0.5, lr_schedule="linear", seed=3)
    Trainer(train, builder(parity, train), progress=False).fit(tmp_path / "epochs")
    assert [e["lr"] for e in log(tmp_path / "epochs")] == pytest.approx([0.5 * (1 - (e + 0.9) / 4) for e in range(4)])
    # a time budget that is nearly spent: the rate is at its floor from the first batch on
    budget = TrainConfig(epochs=4, batch_size=4, lr=0.5, lr_schedule="linear", seed=3, max_minutes=1e-9)
    Trainer(budget, builder(parity, budget), progress=False).fit(tmp_path / "time")
    assert log(tmp_path / "time")[0]["lr"] == pytest.approx(0.5 * 0.01)


def test_time_budget_stops_before_an_epoch_that_would_overrun(tmp_path, parity):
    train = TrainConfig(epochs=50, batch_size=4, seed=1, max_minutes=1e-9)
    Trainer(train, builder(parity, train), progress=False).fit(tmp_path)
    assert len(log(tmp_path)) == 1


class _Clock:
    """A `time` whose perf_counter advances only as the objective says: epochs of chosen lengths."""
    def __init__(self):
        self.now = 0.0

    def perf_counter(self):
        return self.now

    def __getattr__(self, name):
        return getattr(time, name)


@pytest.mark.parametrize("build_seconds, epochs", [(0, 2), (5, 1)])
def test_time_budget_counts_the_longest_epoch_and_the_building(tmp_path, parity, monkeypatch, build_seconds, epochs):
    # epochs of 30, 10 and 30 s in a minute: the last epoch's length (10 s) would admit the third and end at 70 s;
    # the longest so far (30 s) stops after two, at 40 s; building the model (5 s) counts, and then only one fits
    clock = _Clock()
    monkeypatch.setattr(trainer, "time", clock)
    train = TrainConfig(epochs=3, batch_size=4, seed=1, max_minutes=1.0)
    build = builder(parity, train)

    def timed(seed):
        objective = build(seed)
        clock.now += build_seconds
        validate, lengths = objective.validate, iter([30.0, 10.0, 30.0])

        def validated():
            clock.now += next(lengths)
            return validate()
        objective.validate = validated
        return objective
    Trainer(train, timed, progress=False).fit(tmp_path)
    assert len(log(tmp_path)) == epochs
    assert json.loads((tmp_path / "run-1" / "checkpoint" / "run_state.json").read_text())["seconds"] == \
        build_seconds + [30, 40][epochs - 1]



class _Exploding(SequenceObjective):
    """Its loss (and gradient) overflows to inf from epoch `at` on."""
    at = 2

    def batches(self, epoch, rng):
        self.epoch = epoch
        return super().batches(epoch, rng)

    def losses(self, batch):
        for loss, units in super().losses(batch):
            yield (loss * 1e30 * 1e30 if self.epoch >= self.at else loss), units


def exploding(task, train, at):
    def build(seed):
        pc = dy.ParameterCollection()
        m = MODELS["lstm"](pc, ModelConfig(hidden=6), len(task.symbols), len(task.outputs))
        objective = _Exploding(task, m, pc, train, DATA, validation_seed=train.seed)
        objective.at = at
        return objective
    return build


def test_a_diverging_run_stops_and_keeps_its_best_epoch(tmp_path, parity):
    train = TrainConfig(epochs=5, batch_size=4, seed=2, clip=5.0)
    with pytest.warns(UserWarning, match="diverged in epoch 3"):
        result = Trainer(train, exploding(parity, train, at=2), progress=False).fit(tmp_path)
    assert result.diverged.startswith("epoch 3: the gradient's norm is ") and result.epoch in (1, 2)
    entries = log(tmp_path)
    assert [e["epoch"] for e in entries] == [1, 2, 3] and "diverged" in entries[-1]
    again = Trainer(train, exploding(parity, train, at=2), progress=False).fit(tmp_path, resume=True)
    assert (again.best, again.diverged) == (result.best, result.diverged) and len(log(tmp_path)) == 3


def test_diverging_in_the_first_epoch_is_an_error(tmp_path, parity):
    train = TrainConfig(epochs=3, batch_size=4, seed=2, clip=5.0)
    with pytest.raises(UserError, match="diverged in its first epoch"):
        Trainer(train, exploding(parity, train, at=0), progress=False).fit(tmp_path)


def test_batching_by_length_makes_the_same_streams_into_batches_of_like_lengths():
    task = get_task("reversal")
    train = TrainConfig(batch_size=10, seed=1)
    made = {}
    for batching in ("mixed", "by-length"):
        data = SequenceDataConfig(epoch_size=200, validation_size=2, batching=batching)
        objective = SequenceObjective(task, None, None, train, data, validation_seed=1)
        made[batching] = objective.batches(0, np.random.default_rng(5))
    mixed, by_length = made["mixed"], made["by-length"]
    assert sorted(map(len, (s for b in mixed for s in b))) == sorted(map(len, (s for b in by_length for s in b)))
    padded = {k: sum(len(b) * max(map(len, b)) for b in v) for k, v in made.items()}
    assert padded["by-length"] < 0.8 * padded["mixed"]
    spans = sorted((min(map(len, b)), max(map(len, b))) for b in by_length)
    assert all(hi <= lo_next for (_, hi), (lo_next, _) in zip(spans, spans[1:]))     # batches do not overlap
    assert [min(map(len, b)) for b in by_length] != sorted(min(map(len, b)) for b in by_length)   # shuffled
