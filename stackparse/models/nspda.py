"""The Neural State Pushdown Automaton (NSPDA): a higher-order neural state machine driving a discrete stack.

A. Mali, A. Ororbia and C. L. Giles, "The Neural State Pushdown Automata" (2019/2020), §3. With state
neurons s (N), one-hot input neurons x (I) and read neurons r (R), one step is

    z^t = W^s P^t + b^s,  s^t = g(z^t)                                                   (eq. 1)
    A^t = W^a P^t + b^a,  a^t = f(A^t) in {-1: POP, 0: NO-OP, 1: PUSH}                     (eq. 2)
    P^t = s^{t-1} (x) x^t (x) r^{t-1}               third order (`nspda3`, the paper's M2)
    P^t = [s^{t-1}; r^{t-1}] (x) x^t                second order (`nspda2`, the paper's M1)
    stack^t = update(stack^{t-1}, a^t, push x^t)    (`stackparse.memories.discrete_stack`)
    r^t = alpha_1 e(push top) + alpha_2 e(pop top) + alpha_3 e(top)                      (eq. 6)
    alpha_1 = a(a+1)/2, alpha_2 = a(a-1)/2, alpha_3 = 1 - a^2     (1 for the action taken, else 0)
    y^t = softmax(V (s^t (x) r^t) + c)             (the response: reject / accept)

g(z) = round(sigmoid(z)) and f(A) = round(tanh(A)) are the quantized activations (eq. 7-14), with the
straight-through gradient of sigmoid(z) and tanh(A) (Bengio et al. 2013; `encoders.tensors.straight_through_round`).
The stack is a real one: whole symbols. Eq. 6 makes it learnable: the read, each action's candidate top weighted by
alpha(a), equals the discrete read exactly (a is -1, 0 or 1) yet has a gradient in a, hence in A.
`stackparse.encoders.nspda.NSPDAController` holds eq. 1-2 and 6 once: the models here drive it with one-hot symbols
(the NNPDA, `stackparse.models.nnpda`, with its analog stack), `stackparse.encoders.NSPDAEncoder` with any vectors.

Choices the paper leaves open, and why:
- What is pushed: the current input symbol, as in the NNPDA (Sun et al. 1993): the stack alphabet is the input
  alphabet plus a bottom marker (`bottom`: the stack starts holding it, like a PDA's Z). Read neurons: one per
  input symbol, one for the marker, one for the empty stack (R = I + 2); e(.) the one-hot vector of a top.
- M1 gets the read through its state vector, [s; r], each weight joining one neuron of it with one input symbol.
  Less expressive than M2: a neuron's input is a sum of a (state, input) and a (read, input) term, not a function
  of the three together (what that means for programming it: `stackparse.models.programming`).
- The response reads s^t (x) r^t after the step's action: acceptance can depend on what the stack shows after
  the last pop (a^n b^n: the bottom marker), which s^t cannot know.
- `quantize_states` (training): on by default, as the paper trains the quantized network; off gives continuous
  sigmoid states in training (evaluation always quantizes). Actions are always quantized: the stack is discrete.
- A popped empty stack stays empty (a PDA would have no move there; the response learns to reject).
"""
from __future__ import annotations

from dataclasses import replace

import dynet as dy
import numpy as np

from stackparse.config import SettingError
from stackparse.encoders.nspda import NSPDAConfig, NSPDAController, NSPDAState
from stackparse.encoders.tensors import outer
from stackparse.memories.discrete_stack import EMPTY, Action, DiscreteStack
from stackparse.models.base import model_settings, register
from stackparse.models.second_order import TensorConfig, TensorRNN

NSPDAModelConfig = model_settings("NSPDAModelConfig", NSPDAConfig, TensorConfig, exclude=("order",))
"""Settings of the NSPDA (and of the NNPDA, which shares its controller): the NSPDA encoder's options
but its order (nspda2, nspda3: the class's), and the higher-order models'."""


class StackTensorRNN(TensorRNN):
    """Eq. 1-2 around a stack: the state and action tensors, the response, and the order of the
    product (module docstring). Subclasses say how the stack is made, read and updated."""
    Config = NSPDAModelConfig
    order: int
    extra_reads: int
    """R - I, the read neurons beyond one per input symbol."""
    discrete: bool = True
    """Whether the state neurons are quantized at evaluation whatever `quantize_states` says."""

    def __init__(self, pc, config: NSPDAModelConfig, n_inputs, n_outputs):
        n, r = config.hidden, n_inputs + self.extra_reads
        # The response reads s (x) r: the base class's V, c are sized for it (module docstring).
        super().__init__(pc, replace(config, hidden=n * r), n_inputs, n_outputs, state_size=n)
        self.config, self.read_neurons = config, r
        # The equations, shared with the NSPDA encoder; Ws, Wa, bs, ba keep their names and order, and
        # stay attributes of the model (programming writes them).
        self.nspda = NSPDAController(self.pc, self.order, n, n_inputs, r, self.add_tensor)
        self.Ws, self.bs, self.Wa, self.ba = self.nspda.parameters

    def recurrent_parameters(self) -> list[dy.Parameters]:
        """W^s, b^s, W^a, b^a (`weights` gives them as a step uses them: discretized at evaluation)."""
        return self.nspda.parameters

    @property
    def quantize_states(self) -> bool:
        """Whether g quantizes now: in training as the settings say, at evaluation when `discrete`."""
        return self.config.quantize_states or (self.discrete and not self.training)

    def controller(self, state: NSPDAState, x: dy.Expression, weights) -> tuple[dy.Expression, dy.Expression]:
        """Eq. 1-2: (s^t, A^t) from s^{t-1}, x^t and r^{t-1}, with W^s, b^s, W^a, b^a = `weights`."""
        return self.nspda.state_and_action(state, x, weights, self.quantize_states)

    def initial_state(self, batch_size, tensors=None, start=None):
        """s^0 (or `start`, (N,) x B: `stackparse.training.refinement`), the empty stack and its read."""
        if tensors is not None:
            self.state_tensors(None)
        stack = self.empty_stack(batch_size)
        s0 = self.start_vector(batch_size) if start is None else start
        return NSPDAState(s0, self.read_vector(stack), stack, None)

    def hidden(self, state):
        return outer([state.state, state.read])

    def neurons(self, state: NSPDAState) -> dy.Expression:
        return state.state

    def pack(self, state: NSPDAState):
        """[s; r], (N + R,) x B, and the stack (the action a^t is an output, not part of the recurrence)."""
        return dy.concatenate([state.state, state.read]), state.stack

    def unpack(self, vector, rest):
        n = self.config.hidden
        return NSPDAState(dy.pick_range(vector, 0, n), dy.pick_range(vector, n, n + self.read_neurons), rest, None)

    def state_tensors(self, state):
        raise SettingError("bptt", f"must be 0 for {self.name}: its stack cannot be carried across a "
                                   f"truncated-BPTT cut")


class NSPDA(StackTensorRNN):
    """The NSPDA of eq. 1-2 and 6 (module docstring); `order` 2 or 3."""
    extra_reads = 2                               # the bottom marker, the empty stack

    def __init__(self, pc, config: NSPDAModelConfig, n_inputs, n_outputs):
        super().__init__(pc, config, n_inputs, n_outputs)
        r = self.read_neurons
        self.read_codes = self.pc.add_lookup_parameters((r, r), init=np.eye(r), name="readcodes")   # e(.)

    def programmable_parameters(self) -> dict[str, dy.Parameters]:
        """The parameters a PDA's rules are written into (`stackparse.models.programming`), by name."""
        return dict(zip(("Ws", "bs", "Wa", "ba", "V", "c"), (*self.nspda.parameters, *self.readout_parameters())))

    def read_ids(self, tops) -> list[int]:
        """Read neuron of each top: the symbol's own, the marker's (n_inputs), empty's (n_inputs + 1)."""
        return [self.n_inputs + 1 if t == EMPTY else t for t in tops]

    def onehots(self, tops) -> dy.Expression:
        """e(top) for a batch of tops: (R,) x B, constant."""
        return dy.lookup_batch(self.read_codes, self.read_ids(tops), update=False)

    def empty_stack(self, batch_size: int) -> DiscreteStack:
        """B stacks holding the bottom marker (with `bottom`)."""
        return DiscreteStack.empty(batch_size, (self.n_inputs,) if self.config.bottom else ())

    def read_vector(self, stack: DiscreteStack) -> dy.Expression:
        return self.onehots(stack.read())

    def cell(self, state: NSPDAState, x: dy.Expression, ids, weights):
        return self.nspda.step(state, x, ids, self.onehots, weights, self.quantize_states)

    def trace(self, state):
        """The action of the last step and the stack depth (first sequence of the batch)."""
        a = int(np.rint(state.action.npvalue().reshape(-1)[0]))
        return [("action", Action(a).name), ("depth", str(state.stack.depths()[0]))]


@register
class NSPDA2(NSPDA):
    name = "nspda2"
    description = "Neural State PDA, second-order weights (Mali, Ororbia & Giles, M1): discrete stack"
    order = 2


@register
class NSPDA3(NSPDA):
    name = "nspda3"
    description = "Neural State PDA, third-order weights (Mali, Ororbia & Giles, M2): discrete stack"
    order = 3
