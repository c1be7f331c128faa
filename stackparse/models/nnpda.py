"""The neural network pushdown automaton (NNPDA) of Sun, Giles, Chen and Lee: an analog stack.

G. Z. Sun, C. L. Giles, H. H. Chen and Y. C. Lee, "The Neural Network Pushdown Automaton: Model, Stack and
Learning Simulations", UMIACS-TR-93-77 (1993; Neural Networks 1998). The controller is the NSPDA's third-order
state machine (`stackparse.models.nspda`, eq. 1-2, which descends from it); the stack is continuous: one action
neuron A^t in [-1, 1] pushes the input symbol with length A^t when positive, pops |A^t| of length when negative,
and the read is the top unit of length, a mixture of the symbols it covers:

    A^t = tanh(W^a (s^{t-1} (x) x^t (x) r^{t-1}) + b^a)
    push amount relu(A^t), pop amount relu(-A^t), value e(x^t)
    r^t = [top unit's symbols; 1 - their total]          (R = I + 1)

The stack is Grefenstette et al.'s neural stack (`stackparse.memories.grefenstette`), which is this
analog stack with separate push and pop signals (pop first, then push, as in the NNPDA).

Choices the paper leaves open, and why:
- The last read neuron is the share of the top unit that is empty ("1 - total"): the NNPDA reads the empty stack
  as nothing, which would silence a multiplicative product; this gives it its own code, as the NSPDA's empty neuron.
- Third order, as the NNPDA; the response reads s^t (x) r^t as in the NSPDA. The state neurons are continuous
  sigmoids (`quantize_states` off); `bottom` has no effect (the analog stack starts empty).
"""
from __future__ import annotations

import dynet as dy

from stackparse.encoders.nspda import NSPDAConfig, NSPDAState
from stackparse.memories.grefenstette import NeuralStack, Signals
from stackparse.models.base import model_settings, register
from stackparse.models.nspda import StackTensorRNN
from stackparse.models.second_order import TensorConfig

NNPDAModelConfig = model_settings("NNPDAModelConfig", NSPDAConfig, TensorConfig, exclude=("order", "pairing",
                                                                                          "action_quantizer"),
                                  quantize_states=False)
"""The NSPDA's settings; the NNPDA's state neurons are continuous sigmoids unless quantized."""


@register
class NNPDA(StackTensorRNN):
    name = "nnpda"
    description = "NNPDA: third-order state machine, analog stack (Sun, Giles, Chen & Lee 1993)"
    # A graph holds every step's analog stack: 256 test strings of length 960 at once took 14 GB.
    evaluation_batch = 16
    Config = NNPDAModelConfig
    order = 3
    discrete = False
    # Sun et al.'s network has one form: its state reads the stack's top beside the input, its response sees the
    # state and the read; its action is tanh(A) itself (`cell`), so the quantizer named here is never used.
    fixed = {"pairing": "read-input", "action_quantizer": "round", "readout": "state-read"}
    # RTRL and UORO need a state of fixed size; the analog stack grows with the string: the NNPDA trains by the
    # task's gradient algorithm (BPTT on the grammar tasks), the one departure from the paper's UORO for every
    # higher-order network.
    gradient_cell = None
    default_training = {"data": {k: v for k, v in StackTensorRNN.default_training["data"].items() if k != "grad"}}

    extra_reads = 1

    def empty_stack(self, batch_size: int) -> NeuralStack:
        return NeuralStack.empty(self.n_inputs)          # broadcasts over any batch

    def read_vector(self, stack: NeuralStack) -> dy.Expression:
        """r^t: the top unit's symbols and the share of it that is empty, (I + 1,) x B."""
        top = stack.read()[0]
        return dy.concatenate([top, -dy.sum_elems(top) + 1.0])

    def cell(self, state: NSPDAState, x: dy.Expression, ids, weights):
        s, A = self.controller(state, x, weights)
        a = dy.tanh(A)
        stack = state.stack.next([Signals(push=dy.rectify(a), pop=dy.rectify(-a), value=x)])
        return NSPDAState(s, self.read_vector(stack), stack, a)

    def trace(self, state):
        """The action neuron's value at the last step: + pushes, - pops that much."""
        return [("action", f"{state.action.npvalue().reshape(-1)[0]:+.2f}")]
