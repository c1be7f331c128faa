"""The NSPDA paper's training schedule: Algorithm 1 (two-stage incremental learning) on a toy dataset, Algorithm
2's partitions and shares, the stochastic learning rate and the noises in their stages, the stopping rule, and
the suites' nspda-paper recipe beside the earlier one."""
import stackparse  # noqa: F401  (configures DyNet before its first import)

import json
import math

import dynet as dy
import numpy as np
import pytest

from stackparse.benchmarks import suites
from stackparse.benchmarks.runner import job_settings
from stackparse.config import SettingError
from stackparse.errors import UserError
from stackparse.grammars import Split, shipped_pda
from stackparse.models import MODELS, ModelConfig
from stackparse.tasks.grammar import GrammarTask
from stackparse.training import TrainConfig, Trainer
from stackparse.training.noise import (InStage, LearningRateNoise, NoiseSettings, WeightNoise, algorithm2, hooks_for,
                                       partitions)
from stackparse.training.sequence import SequenceObjective, SequenceTraining, Step, algorithm1

TOY = {"train": Split(12, 12, (1, 6)), "validation": Split(4, 4, (1, 6)), "test": Split(4, 4, (1, 6))}


def toy_objective(train: TrainConfig | None = None, **data) -> SequenceObjective:
    task = GrammarTask(shipped_pda("anbn"), TOY)
    pc = dy.ParameterCollection()
    model = MODELS["rnn"](pc, ModelConfig(hidden=3), len(task.symbols), len(task.outputs))
    return SequenceObjective(task, model, pc, train or TrainConfig(), SequenceTraining(**data), validation_seed=1)


# ---- Algorithm 1 ----

def schedule(converged, midpoint=3, n_max=5, bounds=(4, 6), n_min=1):
    steps, epoch = [], 0
    while (step := algorithm1(epoch, converged, midpoint, n_max, bounds, n_min)) is not None:
        steps.append((step.stage, step.phase, step.n_l))
        epoch += 1
    return steps


def test_algorithm1_without_convergence_runs_both_stages_to_their_bounds():
    steps = schedule([False] * 100)
    assert steps == ([(1, "sequential", n) for n in (1, 2, 3)] + [(1, "random", 3)] * 4
                     + [(2, "sequential", n) for n in (1, 2, 3, 4, 5)] + [(2, "random", 5)] * 2)  # e_n: 4 + 2 = 6


def test_algorithm1_skips_a_random_phase_once_converged_on_validation():
    converged = [False] * 100
    converged[2] = True                 # converged after stage 1's last sequential pass: no random phase
    converged[7] = True                 # after stage 2's N_l = 5 pass (epochs 3..7): the algorithm returns
    assert schedule(converged) == ([(1, "sequential", n) for n in (1, 2, 3)]
                                   + [(2, "sequential", n) for n in (1, 2, 3, 4, 5)])
    assert algorithm1(8, converged, 3, 5, (4, 6)) is None


def test_algorithm1_starts_at_the_shortest_length_and_caps_the_midpoint():
    assert algorithm1(0, [], 14, 5, (0, 0), n_min=2) == Step(1, "sequential", 2)
    assert [s[2] for s in schedule([False] * 20, midpoint=14, bounds=(0, 0))] == [1, 2, 3, 4, 5] * 2


def test_each_epoch_sees_the_training_strings_algorithm1_says():
    objective = toy_objective(incremental="two-stage", incremental_midpoint=3, incremental_stage1=2,
                              incremental_stage2=3, epoch_size=1000)
    train = objective.task.split("train")
    assert objective.lengths() == (2, 6)                  # a^n b^n: no string of length 1
    objective.converged = [False] * 30
    expected = [2, 3, 3, 3, 2, 3, 4, 5, 6, 6]            # N_l per epoch: stage 1, its random phase, stage 2, its
    for epoch, n_l in enumerate(expected):
        seen = [e for batch in objective.batches(epoch, np.random.default_rng(epoch)) for e in batch]
        # one pass over D_l: every training string of length <= N_l, once
        assert sorted(e.inputs for e in seen) == sorted(e.inputs for e in train if e.n <= n_l), epoch
    assert objective.step(len(expected)) is None
    assert objective.batches(len(expected), np.random.default_rng(0)) == []


def test_the_schedule_record_is_saved_and_restored(tmp_path):
    objective = toy_objective(incremental="two-stage")
    objective.converged = [False, True]
    objective.save(tmp_path)
    again = toy_objective(incremental="two-stage")
    again.restore(tmp_path)
    assert again.converged == [False, True]
    assert not (lambda d: (d.mkdir(), toy_objective().save(d), (d / "schedule.json").exists())[2])(tmp_path / "plain")


def test_two_stage_training_stops_when_algorithm1_returns(tmp_path):
    train = TrainConfig(epochs=100, batch_size=4, lr=0.5, lr_schedule="constant", seed=2)
    data = SequenceTraining(incremental="two-stage", incremental_midpoint=2, incremental_stage1=1,
                            incremental_stage2=2, epoch_size=1000)
    task = GrammarTask(shipped_pda("anbn"), TOY)

    entries = _fit_rnn(tmp_path, task, train, data)
    converged = [e["val_accuracy"] == 1.0 for e in entries]
    assert len(entries) == len(schedule(converged, midpoint=2, n_max=6, bounds=(1, 2), n_min=2))
    assert entries[-1]["done"] == 1.0 and all(e["done"] == 0.0 for e in entries[:-1])
    # each epoch's place in the schedule is logged: how far a run cut by a budget got
    steps = schedule(converged, midpoint=2, n_max=6, bounds=(1, 2), n_min=2)
    assert [(e["stage"], e["longest"]) for e in entries] == [(s[0], s[2]) for s in steps]


# ---- the stopping rule ----

def test_training_stops_once_the_stop_metric_is_reached(tmp_path, parity):
    train = TrainConfig(epochs=50, batch_size=4, lr=0.5, seed=3, stop_metric="train_accuracy", stop_at=0.0)
    data = SequenceTraining(epoch_size=20, stream_examples=1, validation_size=10)

    entries = _fit_rnn(tmp_path, parity, train, data)
    assert len(entries) == 1 and 0.0 <= entries[0]["train_accuracy"] <= 1.0


def test_an_unknown_stop_metric_names_the_setting(tmp_path, parity):
    train = TrainConfig(epochs=2, batch_size=4, seed=3, stop_metric="no_such_metric")
    data = SequenceTraining(epoch_size=8, stream_examples=1, validation_size=4)

    def build(seed):
        pc = dy.ParameterCollection()
        model = MODELS["rnn"](pc, ModelConfig(hidden=3), len(parity.symbols), len(parity.outputs))
        return SequenceObjective(parity, model, pc, train, data, validation_seed=seed)
    with pytest.raises(UserError, match="stop_metric"):
        Trainer(train, build, progress=False).fit(tmp_path)


# ---- Algorithm 2 ----

@pytest.mark.parametrize("count, expected", [
    (1, ([], [], [0])), (2, ([], [0], [1])), (3, ([0], [1], [2])),            # odd K: K/3, 2K/3; even: (K-1)/3, ...
    (6, ([0], [1, 2], [3, 4, 5])), (7, ([0, 1], [2, 3], [4, 5, 6])),
    (12, ([0, 1, 2], [3, 4, 5, 6], list(range(7, 12)))),
])
def test_algorithm2_partitions_as_printed(count, expected):
    parts = partitions(count)
    assert tuple(list(p) for p in parts) == expected
    assert sum(map(len, parts)) == count


@pytest.mark.parametrize("share", [0.08, 0.2, 0.3])
def test_algorithm2_scales_a_share_of_each_partition_by_one_halving_draw(share):
    rows, width, count, beta = 3, 2, 12, 0.7
    pc = dy.ParameterCollection()
    start = np.random.default_rng(0).uniform(1, 2, size=(rows, width * count))
    p = pc.add_parameters((rows, width * count), init=dy.NumpyInitializer(start))
    start = p.as_array()
    noise = algorithm2([(p, (rows, width, count))], beta, (share, share), np.random.default_rng(5))
    after = p.as_array()
    factors = [float(np.mean(after[:, k * width:(k + 1) * width] / start[:, k * width:(k + 1) * width]))
               for k in range(count)]
    changed = [k for k in range(count) if not math.isclose(factors[k], 1.0, rel_tol=1e-6)]
    for part in partitions(count):            # ceil(N_p |P_i|) matrices of each partition
        assert sum(k in part for k in changed) == math.ceil(share * len(part))
    # Q in order (P_1's, P_2's, P_3's, each in its drawn order): factors p beta, p beta / 2, p beta / 4, ...
    rng = np.random.default_rng(5)
    rng.uniform(share, share)
    order = [int(k) for part in partitions(count) for k in rng.permutation(np.arange(part.start, part.stop))
             [:math.ceil(share * len(part))]]
    p_hat = rng.normal()
    assert [factors[k] for k in order] == pytest.approx([p_hat * beta / 2 ** i for i in range(len(order))])
    noise.remove()
    assert p.as_array() == pytest.approx(start)


def test_algorithm2_draws_the_share_between_its_bounds():
    pc = dy.ParameterCollection()
    p = pc.add_parameters((1, 30), init=1.0)
    counts = set()
    for seed in range(40):
        noise = algorithm2([(p, (1, 1, 30))], 2.0, (0.08, 0.3), np.random.default_rng(seed))
        counts.add(int(np.sum(~np.isclose(p.as_array(), 1.0))))
        noise.remove()
    # partitions of 9, 10 and 11 matrices: 1..3, 1..3 and 1..4 of them
    assert min(counts) >= 3 and max(counts) <= 10 and len(counts) > 1


def test_noise_kinds_and_share_bounds_are_settings():
    assert NoiseSettings().noise_kind == "algorithm2"
    with pytest.raises(SettingError, match="noise_kind"):
        SequenceTraining(noise_kind="gaussian").validate()
    with pytest.raises(SettingError, match="noise_share_min"):
        SequenceTraining(noise_share_min=0.4, noise_share_max=0.3).validate()


# ---- the stochastic learning rate, and each noise in its stage ----

class FakeOptimizer:
    learning_rate = 0.2


def test_the_stochastic_rate_stays_around_the_annealed_rate_and_is_restored():
    optimizer, hook, rng = FakeOptimizer(), LearningRateNoise(0.5), np.random.default_rng(0)
    rates = []
    for _ in range(200):
        hook.before_update(optimizer, rng)
        rates.append(optimizer.learning_rate)
        hook.after_update(optimizer)
    assert optimizer.learning_rate == 0.2
    assert 0.1 <= min(rates) < 0.12 and 0.28 < max(rates) <= 0.3


def test_with_two_stages_the_rate_noise_acts_in_stage_1_and_the_weight_noise_in_stage_2():
    class Model:
        def weight_tensors(self):
            return [(p, (1, 1, 4))]
    pc = dy.ParameterCollection()
    p = pc.add_parameters((1, 4), init=1.0)
    now = [1]
    settings = NoiseSettings(noise=1.0, lr_noise=0.5)
    weight, rate = hooks_for(settings, Model(), lambda: now[0])
    assert isinstance(weight, InStage) and isinstance(weight.hook, WeightNoise)
    assert isinstance(rate.hook, LearningRateNoise)
    for stage, weight_on, rate_on in ((1, False, True), (2, True, False), (0, True, True)):
        now[0] = stage
        for hook in (weight, rate):
            hook.before_update(FakeOptimizer, np.random.default_rng(stage))
        assert (weight.on, rate.on) == (weight_on, rate_on)
        for hook in (weight, rate):
            hook.after_update(FakeOptimizer)
    assert p.as_array() == pytest.approx(np.ones((1, 4)))
    assert all(not isinstance(h, InStage) for h in hooks_for(NoiseSettings(noise=1.0, noise_by_stage=False),
                                                            Model(), lambda: 1))


# ---- the suites' recipes ----

def test_the_table4_suite_runs_the_paper_recipe_and_the_earlier_one_as_a_profile():
    table4 = suites.get_suite("mali-table4")
    paper = job_settings(next(j for j in table4.jobs(1) if j.model == "nspda2"))
    assert (paper.train.lr, paper.train.clip, paper.train.epochs) == (0.1005000321, 13.0, 500)
    assert (paper.train.lr_schedule, paper.train.stop_metric, paper.train.stop_at) == ("inverse", "train_accuracy", 1.0)
    assert (paper.data.incremental, paper.data.incremental_midpoint) == ("two-stage", 14)
    assert (paper.data.incremental_stage1, paper.data.incremental_stage2) == (200, 350)
    assert (paper.data.noise_kind, paper.data.noise_share_min, paper.data.noise_share_max) == ("algorithm2", 0.08, 0.3)
    assert (paper.data.score_every_step, paper.data.refine, paper.data.insert_rules) == (True, 4, 0.5)
    assert (paper.model_config.read_values, paper.model_config.weight_values) == ("alpha", "paper")
    assert table4.profile("full").seeds == 5
    variants = suites.get_suite("mali-variants")
    earlier = job_settings(next(j for j in variants.jobs(1, "earlier") if j.label == "earlier M1"))
    assert (earlier.train.lr, earlier.train.epochs, earlier.train.clip, earlier.train.stop_metric) == (0.5, 3, 15.0, "")
    assert (earlier.data.incremental, earlier.data.noise_kind, earlier.data.noise) == ("curriculum", "additive", 0.05)
    assert (earlier.data.refine, earlier.model_config.read_values, earlier.model_config.pairing) == (1, "onehot",
                                                                                                   "state-read")
    assert table4.published["pda-dyck2-random"]["NSPDA, M1"] == 2.58


def test_the_incremental_table_compares_standard_il_and_algorithm1():
    jobs = {j.label: job_settings(j) for j in suites.get_suite("mali-table2").jobs(1) if j.task == "pda-anbn-random"}
    assert {label: s.data.incremental for label, s in jobs.items()} == {
        "Standard M1": "curriculum", "Standard M2": "curriculum", "IL M1": "curriculum", "IL M2": "curriculum",
        "2-IL M1": "two-stage", "2-IL M2": "two-stage"}
    assert jobs["IL M1"].data.curriculum_start == 7 and jobs["2-IL M2"].data.insert_rules == 0.0


@pytest.mark.parametrize("model_name", ["rnn", "nspda2"])
def test_a_resumed_two_stage_run_equals_the_uninterrupted_one(tmp_path, model_name):
    """Also with the paper's NSPDA, whose read values DyNet draws, refined, the loss at every step."""
    data = SequenceTraining(incremental="two-stage", incremental_midpoint=3, incremental_stage1=2,
                            incremental_stage2=3, epoch_size=1000, lr_noise=0.5,
                            **({"refine": 2, "score_every_step": True} if model_name == "nspda2" else {}))
    task = GrammarTask(shipped_pda("anbn"), TOY)

    def fit(epochs, out, resume=False):
        train = TrainConfig(epochs=epochs, batch_size=4, lr=0.5, lr_schedule="inverse", lr_decay=0.1, seed=4)

        def build(seed):
            pc = dy.ParameterCollection()
            cls = MODELS[model_name]
            model = cls(pc, cls.Config(hidden=3), len(task.symbols), len(task.outputs))
            return SequenceObjective(task, model, pc, train, data, validation_seed=seed)
        Trainer(train, build, progress=False, hooks=lambda o: hooks_for(data, o.model, o.stage)).fit(out, resume)
        return [json.loads(line) for line in (out / "log.jsonl").read_text().splitlines()]
    full = fit(6, tmp_path / "a")
    fit(3, tmp_path / "b")         # "interrupted" after epoch 3, in stage 1's random phase
    state_file = tmp_path / "b" / "run-1" / "checkpoint" / "run_state.json"
    state_file.write_text(json.dumps({**json.loads(state_file.read_text()), "finished": False}))
    resumed = fit(6, tmp_path / "b", resume=True)
    strip = lambda entries: [{k: v for k, v in e.items() if "second" not in k and "per_s" not in k and k != "ended"}
                             for e in entries]
    assert strip(resumed) == strip(full)


def _fit_rnn(out, task, train, data) -> list[dict]:
    """A 3-unit RNN trained on `task` with these settings; the log's entries, one per epoch."""
    def build(seed):
        pc = dy.ParameterCollection()
        model = MODELS["rnn"](pc, ModelConfig(hidden=3), len(task.symbols), len(task.outputs))
        return SequenceObjective(task, model, pc, train, data, validation_seed=seed)
    Trainer(train, build, progress=False).fit(out)
    return [json.loads(line) for line in (out / "log.jsonl").read_text().splitlines()]
