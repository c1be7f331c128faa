"""Baselines: the Elman RNN of Joulin & Mikolov (2015) eq. 1-2, and LSTM and GRU.

Elman:  h_t = sigmoid(U x_t + R h_{t-1})      (eq. 1; a bias is added)
        y_t = softmax(V h_t)                   (eq. 2, in SequenceModel.scores)
LSTM and GRU use DyNet's builders (VanillaLSTMBuilder: the standard LSTM without peepholes). The LSTM with
peepholes (`lstm-p`, the NSPDA paper's baseline "LSTM-p": we read the label's "p" as peepholes, though the sentence
that introduces it lists "with (LSTM) and without peepholes (LSTM-p)") is DyNet's CoupledLSTMBuilder, whose
gates read the cell state; its input and forget gates are coupled (f = 1 - i): DyNet has no uncoupled one.
"""
from __future__ import annotations

import dynet as dy

from stackparse.models.base import Memoryless, SequenceModel, register


@register
class ElmanRNN(Memoryless, SequenceModel):
    name = "rnn"
    description = "Elman RNN with sigmoid units (Joulin & Mikolov 2015, eq. 1-2)"

    def __init__(self, pc, config, n_inputs, n_outputs):
        super().__init__(pc, config, n_inputs, n_outputs)
        h = config.hidden
        self.layers = []
        for i in range(config.layers):
            n_in = n_inputs if i == 0 else h
            self.layers.append((self.pc.add_parameters((h, n_in), name=f"U{i}"),
                                self.pc.add_parameters((h, h), name=f"R{i}"),
                                self.pc.add_parameters((h,), init=0.0, name=f"b{i}")))

    def initial_state(self, batch_size, tensors=None):
        if tensors is not None:
            return tuple(tensors)
        return tuple(dy.zeros((self.config.hidden,), batch_size=batch_size) for _ in self.layers)

    def step(self, state, ids):
        x, new = self.embed(ids), []
        for (U, R, b), h in zip(self.layers, state):
            x = dy.logistic(dy.affine_transform([b, U, x, R, h]))
            new.append(x)
        return tuple(new)

    def hidden(self, state):
        return state[-1]

    def state_tensors(self, state):
        return list(state)


class _BuilderModel(Memoryless, SequenceModel):
    """A model whose recurrence is one of DyNet's RNN builders."""
    builder_class: type

    def __init__(self, pc, config, n_inputs, n_outputs):
        super().__init__(pc, config, n_inputs, n_outputs)
        self.builder = self.builder_class(config.layers, self.input_size(), config.hidden, self.pc)

    def initial_state(self, batch_size, tensors=None):
        # DyNet's zero initial state broadcasts over any batch size.
        return self.builder.initial_state(tensors) if tensors is not None else self.builder.initial_state()

    def step(self, state, ids):
        return state.add_input(self.embed(ids))

    def hidden(self, state):
        return state.output()

    def state_tensors(self, state):
        return list(state.s())


@register
class LSTM(_BuilderModel):
    name = "lstm"
    description = "LSTM (DyNet VanillaLSTMBuilder)"
    builder_class = dy.VanillaLSTMBuilder


@register
class PeepholeLSTM(_BuilderModel):
    name = "lstm-p"
    description = "LSTM with peepholes, input and forget gates coupled (DyNet CoupledLSTMBuilder)"
    builder_class = dy.CoupledLSTMBuilder


@register
class GRU(_BuilderModel):
    name = "gru"
    description = "GRU (DyNet GRUBuilder)"
    builder_class = dy.GRUBuilder
