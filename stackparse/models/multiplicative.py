"""Recurrent networks with multiplicative integration (Wu, Zhang, Zhang, Bengio & Salakhutdinov 2016, "On
Multiplicative Integration with Recurrent Neural Networks", NeurIPS): the MI-RNN, MI-LSTM and MI-GRU of the NSPDA
paper's Table 7, which it calls a crude approximation of second-order state neurons.

Every additive block phi(W x + U h + b) of the network becomes the general MI block (Wu et al., eq. 4)
    phi(alpha (.) W x (.) U h  +  beta_1 (.) U h  +  beta_2 (.) W x  +  b)               (`block`)
with alpha, beta_1, beta_2 vectors learned beside W, U, b; (.) is the element-wise product. Then
    MI-RNN   h_t = tanh(MI(x_t, h_{t-1}))
    MI-LSTM  [i; f; o; g] = MI(x_t, h_{t-1}) (one block over the four gates), c_t = sigma(f) c_{t-1} + sigma(i) tanh(g),
             h_t = sigma(o) tanh(c_t)
    MI-GRU   [z; r] = sigma(MI(x_t, h_{t-1})),  h~ = tanh(MI(x_t, r (.) h_{t-1})),  h_t = (1 - z) h_{t-1} + z h~

Choices the paper leaves open, and why: alpha, beta_1 and beta_2 start at 1 (so a block starts as the additive one
plus the product of its two terms); the LSTM's forget gate starts with bias 1, as DyNet's LSTMs (its
VanillaLSTMBuilder) do; one layer (`layers` stacks them, each reading the one below). The NSPDA paper does not
give the MI rows' sizes: like the other first-order baselines of its Table 4, at most 50 units (the suites').
"""
from __future__ import annotations

import dynet as dy
import numpy as np

from stackparse._dynet import product as matmul
from stackparse.models.base import Memoryless, SequenceModel, register


class _MIBlock:
    """The parameters of one MI block of `width` outputs over inputs of `n_in` and a state of `n_state`."""

    def __init__(self, pc: dy.ParameterCollection, width: int, n_in: int, n_state: int, bias: np.ndarray | float = 0.0):
        self.W = pc.add_parameters((width, n_in))
        self.U = pc.add_parameters((width, n_state))
        self.b = pc.add_parameters((width,), init=dy.NumpyInitializer(np.broadcast_to(bias, (width,)).astype(float)))
        self.alpha, self.beta1, self.beta2 = (pc.add_parameters((width,), init=1.0) for _ in range(3))

    def __call__(self, x: dy.Expression, h: dy.Expression) -> dy.Expression:
        """The pre-activation of Wu et al.'s eq. 4."""
        wx, uh = matmul(self.W, x), matmul(self.U, h)
        return dy.cmult(dy.cmult(self.alpha, wx), uh) + dy.cmult(self.beta1, uh) + dy.cmult(self.beta2, wx) + self.b


class _MIModel(Memoryless, SequenceModel):
    """A stack of `layers` MI cells (subclasses: `cell`, the state's parts per layer)."""
    parts: int = 1
    """Vectors of the state per layer: h (RNN, GRU), or h and c (LSTM)."""

    def __init__(self, pc, config, n_inputs, n_outputs):
        super().__init__(pc, config, n_inputs, n_outputs)
        h = config.hidden
        self.blocks = [self.make(n_inputs if i == 0 else h, h) for i in range(config.layers)]

    def initial_state(self, batch_size, tensors=None):
        if tensors is not None:
            return tuple(tensors)
        return tuple(dy.zeros((self.config.hidden,), batch_size=batch_size) for _ in self.blocks
                     for _ in range(self.parts))

    def step(self, state, ids):
        x, new = self.embed(ids), []
        for i, blocks in enumerate(self.blocks):
            layer = self.cell(blocks, x, state[i * self.parts:(i + 1) * self.parts])
            new += layer
            x = layer[0]
        return tuple(new)

    def hidden(self, state):
        return state[-self.parts]

    def state_tensors(self, state):
        return list(state)


@register
class MIRNN(_MIModel):
    name = "mi-rnn"
    description = "RNN with multiplicative integration (Wu et al. 2016; the NSPDA paper's Table 7)"

    def make(self, n_in, h):
        return _MIBlock(self.pc, h, n_in, h)

    def cell(self, block, x, state):
        return [dy.tanh(block(x, state[0]))]


@register
class MILSTM(_MIModel):
    name = "mi-lstm"
    description = "LSTM with multiplicative integration (Wu et al. 2016; the NSPDA paper's Table 7)"
    parts = 2

    def make(self, n_in, h):
        return _MIBlock(self.pc, 4 * h, n_in, h, np.repeat([0.0, 1.0, 0.0, 0.0], h))     # i, f (bias 1), o, g

    def cell(self, block, x, state):
        h, c = state
        n = self.config.hidden
        z = block(x, h)
        i, f, o = (dy.logistic(dy.pick_range(z, k * n, (k + 1) * n)) for k in range(3))
        c = dy.cmult(f, c) + dy.cmult(i, dy.tanh(dy.pick_range(z, 3 * n, 4 * n)))
        return [dy.cmult(o, dy.tanh(c)), c]


@register
class MIGRU(_MIModel):
    name = "mi-gru"
    description = "GRU with multiplicative integration (Wu et al. 2016; the NSPDA paper's Table 7)"

    def make(self, n_in, h):
        return _MIBlock(self.pc, 2 * h, n_in, h), _MIBlock(self.pc, h, n_in, h)     # [z; r], the candidate

    def cell(self, blocks, x, state):
        gates, candidate = blocks
        h, n = state[0], self.config.hidden
        zr = dy.logistic(gates(x, h))
        z, r = dy.pick_range(zr, 0, n), dy.pick_range(zr, n, 2 * n)
        proposal = dy.tanh(candidate(x, dy.cmult(r, h)))
        return [h + dy.cmult(z, proposal - h)]
