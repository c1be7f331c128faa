"""The Stack RNN and List RNN through the sequence-model interface: shapes and backward, batching,
truncated-BPTT state round trips, rounding."""
import dynet as dy
import numpy as np
import pytest

from stackparse.models import MODELS
from stackparse.sequences import detach, reattach

VARIANTS = [("stack-rnn", {}), ("stack-rnn", {"no_op": True, "recurrent": True, "k": 3}),
            ("list-rnn", {}), ("list-rnn", {"no_op": True, "k": 1})]


def build(name, **settings):
    cls = MODELS[name]
    return cls(dy.ParameterCollection(), cls.Config(hidden=8, **{"stacks" if name == "stack-rnn" else "lists": 3,
                                                                   **settings}), 3, 3)


def run(model, sequences, state=None):
    """Scores (T, n_out, B) of `sequences` (T, B), and the final state."""
    state = state or model.initial_state(sequences.shape[1])
    scores = []
    for ids in sequences:
        state = model.step(state, list(ids))
        scores.append(model.scores(state).npvalue().reshape(model.n_outputs, -1))
    return np.stack(scores), state


@pytest.mark.parametrize("name,settings", VARIANTS)
def test_shapes_and_backward(rng, name, settings):
    model = build(name, **settings)
    state = model.initial_state(4)
    losses = []
    for ids in rng.integers(0, 3, size=(6, 4)):
        state = model.step(state, list(ids))
        assert model.scores(state).dim() == ((3,), 4)
        losses.append(dy.pickneglogsoftmax_batch(model.scores(state), list(ids)))
    dy.sum_batches(dy.esum(losses)).backward()
    for p in model.pc.parameters_list():
        if p.name() not in ("/stackrnn/c", "/listrnn/c"):
            assert np.abs(p.grad_as_array()).sum() > 0, p.name()


@pytest.mark.parametrize("name,settings", VARIANTS)
def test_a_batch_computes_what_each_sequence_computes_alone(rng, name, settings):
    model = build(name, **settings)
    sequences = rng.integers(0, 3, size=(12, 3))
    together, _ = run(model, sequences)
    for b in range(3):
        dy.renew_cg()
        alone, _ = run(model, sequences[:, b:b + 1])
        assert np.allclose(together[..., b], alone[..., 0], atol=1e-6)


@pytest.mark.parametrize("name,settings", VARIANTS)
def test_state_carried_across_a_graph_cut_continues_exactly(rng, name, settings):
    model = build(name, **settings)
    sequences = rng.integers(0, 3, size=(20, 2))
    whole, _ = run(model, sequences)
    _, state = run(model, sequences[:10])
    carried = detach(model.state_tensors(state))
    dy.renew_cg()
    rest, _ = run(model, sequences[10:], model.initial_state(2, reattach(carried)))
    assert np.allclose(whole[10:], rest, atol=1e-5)


def test_rounding_discretizes_actions_at_evaluation_only(rng):
    model = build("stack-rnn", rounding=True, no_op=True)
    model.training = True
    state = model.step(model.initial_state(2), [0, 1])
    soft = model.action_probabilities(state.hidden).npvalue()
    assert np.allclose(soft.sum(axis=0), 1, atol=1e-6) and not np.isin(soft, (0.0, 1.0)).any()
    model.training = False
    hard = model.action_probabilities(state.hidden).npvalue()
    assert np.array_equal(hard.sum(axis=0), np.ones((3, 2))) and np.isin(hard, (0.0, 1.0)).all()
    assert np.array_equal(hard.argmax(axis=0), soft.argmax(axis=0))


def test_rounding_multiplier_grows_from_its_start_epoch():
    model = build("stack-rnn", rounding=True, rounding_start=2, rounding_growth=2.0)
    betas = []
    for epoch in range(5):
        model.start_epoch(epoch)
        betas.append(model.beta)
    assert betas == [1.0, 1.0, 2.0, 4.0, 8.0]
    plain = build("stack-rnn")
    plain.start_epoch(30)
    assert plain.beta == 1.0


def test_rounding_removes_memories_whose_read_never_changes_without_changing_predictions(rng, parity):
    model = build("stack-rnn", rounding=True, rounding_start=0, rounding_growth=2.0)
    model.start_epoch(3)
    A = model.controller.A.as_array()
    A[:] = [[-50] * 8, [50] * 8] * 3                                 # stack 1 always pops: always empty;
    A[2:] = [[50] * 8, [-50] * 8] * 2                                # stacks 2 and 3 push sigma(D h_t)
    model.controller.A.set_value(A)
    examples = [parity.sample(rng, n) for n in (1, 2, 3, 4, 5)]

    def scores():
        return [run(model, np.array(e.inputs)[:, None])[0] for e in examples]

    before = scores()
    assert model.simplify(examples) == {"memories_in_use": 2}
    assert model.memories_in_use().tolist() == [1, 2] and not model.controller.P.as_array()[:, :2].any()
    assert all(np.allclose(b, a, atol=1e-5) for b, a in zip(before, scores()))
    assert model.simplify(examples) == {"memories_in_use": 2}          # nothing else is constant
