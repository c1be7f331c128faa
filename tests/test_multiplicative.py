"""The MI-RNN, MI-LSTM and MI-GRU (Wu et al. 2016): each step is its equations, computed here in numpy."""
import dynet as dy
import numpy as np
import pytest

from stackparse.models import get_model_class


def sigmoid(z):
    return 1 / (1 + np.exp(-z))


def mi(block, x, h):
    """Wu et al.'s eq. 4 from the block's parameter values."""
    W, U, b, alpha, beta1, beta2 = (p.as_array() for p in (block.W, block.U, block.b, block.alpha, block.beta1,
                                                           block.beta2))
    wx, uh = W @ x, U @ h
    return alpha * wx * uh + beta1 * uh + beta2 * wx + b


def reference(name, model, x, state):
    """One step of one layer in numpy; x one-hot, state the layer's vectors."""
    n = model.config.hidden
    if name == "mi-rnn":
        return [np.tanh(mi(model.blocks[0], x, state[0]))]
    if name == "mi-lstm":
        h, c = state
        z = mi(model.blocks[0], x, h)
        i, f, o, g = sigmoid(z[:n]), sigmoid(z[n:2 * n]), sigmoid(z[2 * n:3 * n]), np.tanh(z[3 * n:])
        c = f * c + i * g
        return [o * np.tanh(c), c]
    gates, candidate = model.blocks[0]
    h = state[0]
    zr = sigmoid(mi(gates, x, h))
    z, r = zr[:n], zr[n:]
    return [h + z * (np.tanh(mi(candidate, x, r * h)) - h)]


@pytest.mark.parametrize("name", ["mi-rnn", "mi-lstm", "mi-gru"])
def test_a_step_is_the_equations(name):
    dy.renew_cg()
    pc = dy.ParameterCollection()
    cls = get_model_class(name)
    model = cls(pc, cls.Config(hidden=5), 3, 2)
    rng = np.random.default_rng(0)
    for p in pc.parameters_list():       # away from the initial 1s and 0s, so every term counts
        p.set_value(rng.normal(size=p.shape()))
    state = model.initial_state(2)
    expected = [[np.zeros(5)] * model.parts for _ in range(2)]
    for ids in ([0, 2], [1, 1], [2, 0]):
        state = model.step(state, ids)
        expected = [reference(name, model, np.eye(3)[i], e) for i, e in zip(ids, expected)]
        for part, value in enumerate(state):
            got = value.npvalue()
            for b in range(2):
                np.testing.assert_allclose(got[:, b], expected[b][part], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["mi-rnn", "mi-lstm", "mi-gru"])
def test_every_parameter_learns_and_the_state_round_trips(name):
    dy.renew_cg()
    pc = dy.ParameterCollection()
    cls = get_model_class(name)
    model = cls(pc, cls.Config(hidden=4, layers=2), 3, 2)
    state = model.step(model.step(model.initial_state(2), [0, 1]), [2, 2])
    again = model.initial_state(2, model.state_tensors(state))
    np.testing.assert_array_equal(model.scores(again).npvalue(), model.scores(state).npvalue())
    dy.sum_batches(dy.sum_elems(model.scores(state))).backward()
    assert all(np.abs(p.grad_as_array()).sum() > 0 for p in pc.parameters_list() if p.name() != "V")
