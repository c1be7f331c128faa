"""The LSTM controllers of the neural stack, queue and deque, and the deep-LSTM baseline: shapes and
backward, the pop bias of Appendix B, truncated-BPTT state carrying, and the CLI path."""
import json

import dynet as dy
import numpy as np
import pytest
from click.testing import CliRunner

import cli
from stackparse.models import get_model_class
from stackparse.sequences import detach, reattach
from stackparse.models.neural_stack import NeuralMemoryModelConfig as NeuralMemoryConfig

MEMORY_MODELS = ["neural-stack", "neural-queue", "neural-deque"]
N_IN, N_OUT, B = 7, 5, 3


def build(name, **settings):
    cls = get_model_class(name)
    return cls(dy.ParameterCollection(), cls.Config(**{"hidden": 8, **settings}), N_IN, N_OUT)


def run(model, inputs, state=None):
    state = state or model.initial_state(inputs.shape[1])
    scores = []
    for ids in inputs:
        state = model.step(state, ids)
        scores.append(model.scores(state))
    return state, scores


@pytest.mark.parametrize("name", MEMORY_MODELS + ["deep-lstm"])
def test_scores_have_the_output_shape_and_backpropagate(rng, name):
    model = build(name, **({"memory_size": 4} if name != "deep-lstm" else {}))
    _, scores = run(model, rng.integers(0, N_IN, size=(6, B)))
    assert scores[-1].dim() == ((N_OUT,), B)
    loss = dy.sum_batches(dy.esum([dy.pickneglogsoftmax_batch(s, [0] * B) for s in scores]))
    loss.backward()
    assert np.isfinite(loss.value())
    assert np.abs(model.controller.W_o.grad_as_array() if name != "deep-lstm" else model.V.grad_as_array()).sum() > 0


@pytest.mark.parametrize("name,ends", [("neural-stack", 1), ("neural-queue", 1), ("neural-deque", 2)])
def test_memory_grows_per_step_and_pop_biases_start_at_the_setting(rng, name, ends):
    model = build(name, memory_size=4, pop_bias=-1.5)
    state, _ = run(model, rng.integers(0, N_IN, size=(5, B)))
    assert state.memory.values.dim() == ((4, 5 * ends), B)
    assert np.allclose(model.controller.b_du.as_array(), [0.0, -1.5] * ends)
    assert len(model.trace(state)) == 2 * ends + 1


@pytest.mark.parametrize("name,settings", [(name, {"memory_size": 4}) for name in MEMORY_MODELS]
                         + [("deep-lstm", {"layers": 3}), ("deep-lstm", {"layers": 3, "input_every_layer": True})])
def test_a_state_carried_across_a_cut_gives_the_same_scores(rng, name, settings):
    model, inputs = build(name, **settings), rng.integers(0, N_IN, size=(8, B))
    _, whole = run(model, inputs)
    expected = [s.npvalue() for s in whole]
    dy.renew_cg()
    state, first = run(model, inputs[:3])
    got = [s.npvalue() for s in first]
    carried = detach(model.state_tensors(state))
    dy.renew_cg()
    _, second = run(model, inputs[3:], model.initial_state(B, reattach(carried)))
    got += [s.npvalue() for s in second]
    assert all(np.allclose(a, b, atol=1e-5) for a, b in zip(got, expected))


def test_memory_size_must_be_positive_and_embedding_not_negative():
    with pytest.raises(Exception, match="memory.size"):
        NeuralMemoryConfig(memory_size=0).validate()
    with pytest.raises(Exception, match="embedding"):
        NeuralMemoryConfig(embedding=-1).validate()


@pytest.mark.parametrize("name", MEMORY_MODELS + ["deep-lstm"])
def test_embeddings_are_learned_or_one_hot(rng, name):
    inputs = rng.integers(0, N_IN, size=(2, B))
    learned = build(name, embedding=5)
    assert learned.embed(inputs[0]).dim() == ((5,), B)
    _, scores = run(learned, inputs)
    dy.sum_batches(dy.esum([dy.pickneglogsoftmax_batch(s, [0] * B) for s in scores])).backward()
    assert np.abs(learned.E.grad_as_array()).sum() > 0
    one_hot = build(name, embedding=0)
    assert one_hot.E is None and one_hot.embed(inputs[0]).dim() == ((N_IN,), B)


@pytest.mark.parametrize("name", MEMORY_MODELS + ["deep-lstm"])
def test_cli_trains_and_reports_coarse_and_fine_accuracy(tmp_path, name):
    out = tmp_path / name
    result = CliRunner().invoke(cli.main, [
        "train", "copy", "--model", name, "--hidden", "4", "--layers", "1", "--epochs", "1", "--epoch-size", "4",
        "--validation-size", "2", "--batch-size", "2", "--bptt", "0", "--test-max-n", "65", "--out", str(out),
        "--quiet", *(["--memory-size", "3"] if name != "deep-lstm" else [])])
    assert result.exit_code == 0, result.output
    assert "coarse accuracy" in result.output and "fine accuracy" in result.output
    metrics = json.loads((out / "metrics.json").read_text())
    assert 0 <= metrics["fine_accuracy"] <= 1 and set(metrics["fine_by_n"]) == {"65"}
    assert "val_fine_accuracy" in metrics["validation"]
    table = CliRunner().invoke(cli.main, ["inspect", str(out), "--n", "8"])
    assert table.exit_code == 0, table.output
    assert "| <s> |" in table.output and ("push" in table.output) == (name != "deep-lstm")


# ---- issue 19: the deque starts as the paper's queue, its other two signals nearly shut (docs/deque.md) -------
def test_the_deque_starts_as_the_papers_queue_with_its_top_pop_and_bottom_push_nearly_shut(rng):
    """The default start (docs/deque.md): push 0.5 at the top and pop 0.27 at the bottom, as the paper starts the
    queue; the top pop (a stack's, a path away from the queue's front) and the bottom push nearly shut; the bottom
    pop above the bottom push (the gradient towards the queue's front)."""
    model = build("neural-deque", memory_size=4)
    state, _ = run(model, rng.integers(0, N_IN, size=(1, B)))
    (top, bottom) = [(s.push.npvalue(), s.pop.npvalue()) for s in state.signals]
    assert np.all(top[0] > 0.3) and np.all(top[1] < 0.1) and np.all(bottom[0] < 0.05)
    assert np.all(bottom[1] > 0.15) and np.all(bottom[1] > 5 * bottom[0])
    assert np.allclose(model.controller.b_du.as_array(), [0.0, -1.0] * 2)
    for name in ("neural-stack", "neural-queue"):
        assert build(name, memory_size=4).controller.signal_offsets == (0.0, 0.0)  # stack and queue unchanged


def test_a_fresh_deque_reads_at_the_bottom_the_values_pushed_at_the_top(rng):
    """The cause of issue 19: with both ends pushing 0.5 and popping 0.27, each read saw only its own end's
    pushes (weight 0 on the other end's rows, and gradient 0 through max(0, 1 - sum)), so copy was unlearnable."""
    from stackparse.memories.grefenstette import read_weights
    model, steps = build("neural-deque", memory_size=4), 10
    state, _ = run(model, rng.integers(0, N_IN, size=(steps, B)))
    weights = read_weights(state.memory.strengths, from_top=False).npvalue()   # (2 steps, B), bottom rows first
    assert weights[steps:].sum(0).min() > 0.5                                   # rows pushed at the top


def test_the_deque_model_loss_matches_finite_differences_on_a_saturated_controller(rng):
    """Issue 19 (4): the whole model's loss w.r.t. both ends' push/pop and value weights, with the controller's
    weights scaled up so that most signals are near 0 or 1 (a trained-like controller)."""
    from stackparse.sequences import masked_nll
    model = build("neural-deque", memory_size=4, embedding=5)
    c = model.controller
    for p in (c.W_du, c.W_v, c.b_du):
        p.set_value(p.as_array() * 8)
    inputs, targets = rng.integers(0, N_IN, size=(9, B)), rng.integers(0, N_OUT, size=(9, B))

    def loss():
        dy.renew_cg()
        state, terms = model.initial_state(B), []
        for ids, ys in zip(inputs, targets):
            state = model.step(state, list(ids))
            terms.append(masked_nll(model.scores(state), list(ys), np.ones(B)))
        return dy.sum_batches(dy.esum(terms))

    loss().backward()
    for p, m in ((c.W_du, 2), (c.W_v, 4)):
        grad, base = p.grad_as_array().copy(), p.as_array().copy()
        for end in range(2):
            direction = np.zeros_like(base)
            direction[end * m:(end + 1) * m] = rng.standard_normal(direction[end * m:(end + 1) * m].shape)
            p.set_value(base + 1e-3 * direction)
            plus = loss().value()
            p.set_value(base - 1e-3 * direction)
            minus = loss().value()
            p.set_value(base)
            assert (plus - minus) / 2e-3 == pytest.approx(float((grad * direction).sum()), abs=5e-3, rel=5e-2)


# ---- issue 19: a learned h_0 (§3.4) ----------------------------------------------------------------------------------
@pytest.mark.parametrize("name,layers", [("neural-stack", 1), ("neural-deque", 2)])
def test_a_learned_h0_receives_a_gradient_and_one_per_layer(rng, name, layers):
    model = build(name, memory_size=4, learned_h0=True, layers=layers)
    assert len(model.controller.h0) == layers
    _, scores = run(model, rng.integers(0, N_IN, size=(4, B)))
    dy.sum_batches(dy.esum([dy.pickneglogsoftmax_batch(s, [0] * B) for s in scores])).backward()
    assert all(np.abs(h.grad_as_array()).sum() > 0 for h in model.controller.h0)


@pytest.mark.parametrize("name", MEMORY_MODELS)
def test_without_learned_h0_nothing_changes_and_a_zero_learned_h0_is_the_same_model(rng, name):
    """learned_h0 false adds no parameter; true draws every other parameter as before (h_0 is made last), so
    with h_0 set to zero the scores are those of the zero-h_0 model."""
    inputs = rng.integers(0, N_IN, size=(6, B))
    dy.reset_random_seed(3)
    plain = build(name, memory_size=4, learned_h0=False)
    dy.reset_random_seed(3)
    learned = build(name, memory_size=4, learned_h0=True)
    assert plain.controller.h0 == [] and plain.config.learned_h0 is False
    assert len(learned.pc.parameters_list()) == len(plain.pc.parameters_list()) + 1
    for h in learned.controller.h0:
        h.set_value(np.zeros(h.shape()))
    _, expected = run(plain, inputs)
    _, got = run(learned, inputs)
    assert all(np.allclose(a.npvalue(), b.npvalue(), atol=1e-6) for a, b in zip(got, expected))


def test_the_deep_lstm_reading_the_input_at_every_layer_has_appendix_ds_parameter_counts():
    """Appendix D, Table 2: 2.1e6 and 4.5e6 weights for 4 and 8 layers of 256 units over 64-d embeddings, and 1.7e7
    for 8 layers of 512: the counts of LSTMs whose layers above the first read [h_below; x]. The stacked LSTM (the
    default) has fewer."""
    def recurrent_weights(**settings):
        model = build("deep-lstm", embedding=64, **settings)
        return sum(p.as_array().size for block in model.blocks for layer in block.get_parameters() for p in layer)
    for hidden, layers, published in ((256, 4, 2.1e6), (256, 8, 4.5e6), (512, 8, 1.7e7)):
        every = recurrent_weights(hidden=hidden, layers=layers, input_every_layer=True)
        assert float(f"{every:.2g}") == published
        assert recurrent_weights(hidden=hidden, layers=layers) < every


def test_a_deque_saved_before_an_offset_existed_loads_with_the_offset_it_was_trained_with():
    """A saved model's settings lacking `top_pop_offset`, `bottom_push_offset` or `bottom_pop_offset` were made
    without it (0), not with today's default: the run loads as it was trained (`setting(absent=...)`); fresh
    settings take the defaults."""
    from stackparse.experiments.sequence import SequenceSettings
    fresh = SequenceSettings("copy", "neural-deque").model_config
    assert (fresh.top_pop_offset, fresh.bottom_push_offset, fresh.bottom_pop_offset) == (-2.0, -4.0, 0.0)
    older = SequenceSettings("copy", "neural-deque", {"memory_size": 8, "bottom_push_offset": -4.0,
                                                       "bottom_pop_offset": -2.5}).model_config
    assert (older.memory_size, older.top_pop_offset, older.bottom_push_offset, older.bottom_pop_offset) == (
        8, 0.0, -4.0, -2.5)
    oldest = SequenceSettings("copy", "neural-deque", {"memory_size": 8}).model_config
    assert (oldest.top_pop_offset, oldest.bottom_push_offset, oldest.bottom_pop_offset, oldest.pop_bias) == (
        0.0, 0.0, 0.0, -1.0)


def test_the_deque_trains_both_its_starts_and_goes_on_with_the_one_of_lower_training_loss(tmp_path):
    """Its own training: restart 1 at the start given (the queue's), restart 2 at the stack-like start (each at its
    rate), each probed,
    the one of lower training loss kept and trained on; `load` rebuilds the kept restart's start."""
    from stackparse.encoders.grefenstette import STACK_LIKE_START
    from stackparse.experiments import run, with_changes
    from stackparse.experiments.sequence import SequenceExperiment, load
    defaults = SequenceExperiment.defaults("copy", "neural-deque")
    assert (defaults.train.restarts, defaults.train.keep, defaults.train.probe_epochs > 0) == (2, "train_loss", True)
    task_patience = SequenceExperiment.defaults("copy", "neural-stack").train.patience
    assert defaults.train.patience > task_patience        # to convergence: docs/deque.md, seventh part
    settings = with_changes(defaults, {"hidden": 4, "memory_size": 3, "embedding": 3, "epochs": 2, "probe_epochs": 1,
                                       "epoch_size": 4, "validation_size": 2, "test_n": (65, 65)})
    experiment = SequenceExperiment(settings)
    stack_like = experiment.for_restart(2).settings.model_config
    assert {k: getattr(stack_like, k) for k in STACK_LIKE_START} == STACK_LIKE_START
    assert experiment.for_restart(3) is experiment and experiment.for_restart(1).settings.model_config.top_pop_offset == -2
    assert (experiment.settings.train.lr, experiment.for_restart(2).settings.train.lr) == (5e-4, 1e-3)
    metrics = run(experiment, tmp_path, progress=False)
    entries = [json.loads(line) for line in (tmp_path / "log.jsonl").read_text().splitlines()]
    assert [(e["restart"], e["epoch"]) for e in entries] == [(1, 1), (2, 1), (metrics["best_restart"], 2)]
    loaded, _ = load(tmp_path)
    assert loaded.settings.model_config == experiment.for_restart(metrics["best_restart"]).settings.model_config
