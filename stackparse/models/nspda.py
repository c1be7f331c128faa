"""The Neural State Pushdown Automaton (NSPDA): a higher-order neural state machine driving a discrete stack.

A. Mali, A. Ororbia and C. L. Giles, "The Neural State Pushdown Automata" (2019/2020), §3. With state
neurons s (N, the paper's z), one-hot input neurons x (I) and read neurons r (R), one step is

    z^t = W^s P^t + b^s,  s^t = g(z^t)                                                   (eq. 1)
    A^t = W^a P^t + b^a,  a^t = f(A^t) in {-1: POP, 0: NO-OP, 1: PUSH}                     (eq. 2)
    P^t = s^{t-1} (x) x^t (x) r^{t-1}               third order (`nspda3`, the paper's M2)
    P^t = s^{t-1} (x) [r^{t-1}; x^t]                second order (`nspda2`, the paper's M1; `pairing`)
    stack^t = update(stack^{t-1}, a^t, push x^t)    (`stackparse.memories.discrete_stack`)
    r^t = alpha_1(a) c(push top) + alpha_2(a) c(pop top) + alpha_3(a) c(top)            (eq. 6, below)
    alpha_1 = a(a+1)/2, alpha_2 = a(a-1)/2, alpha_3 = 1 - a^2     (1 for the action taken, else 0)
    y^t = sigmoid(W^o s^t + b^o)                    the response (`readout` state)

g(z) = round(sigmoid(z)); f is eq. 14's quantizer of f^(A) = 2 sigmoid(A) - 1: PUSH above 0.13, POP below -0.09,
NO-OP between (`action_quantizer`); both pass the gradient of their continuous version straight through (Bengio
et al. 2013). The stack is a real one: whole symbols. The read mixes each action's candidate top by polynomials in a
that are 1 for the action taken and 0 for the others: it equals the discrete read exactly (a is -1, 0 or 1), yet
has a gradient in a, hence in A. `stackparse.encoders.nspda.NSPDAController` holds eq. 1-2 and 6 once: the models
here drive it with one-hot symbols (the NNPDA, `stackparse.models.nnpda`, with its analog stack),
`stackparse.encoders.NSPDAEncoder` with any vectors. At evaluation the weights are discretized, W^s binary and W^a
ternary (`weight_values`), "before evaluation is conducted" (§3).

What the paper leaves open or contradicts, our reading, and why (each a setting; `EARLIER` is this project's model
before the paper's text was at hand, kept beside it):
- Eq. 6 and the examples after it make r a function of the action alone, one read and one action neuron per input
  symbol; yet the text calls r "the neuron that reads the content at the top of the stack", and an r blind to the
  stack could not tell a^3 b^2 from a^2 b^2. We keep the intent, a read of the top, with eq. 6's values: the read
  neurons are one per stack symbol (the input symbols, the bottom marker, the empty stack: R = I + 2), the top's
  neuron holds alpha_2 ~ U(0.901, 0.992) (eq. 6's push value), a symbol the step popped (unless it is also the
  new top) alpha_3 ~ U(0.025, 0.110) (the pop value), every other neuron alpha_1 ~ U(0.0001, 0.008) (the no-op
  value); one action neuron that pushes the current input, pops or does nothing (the NNPDA's interface, and the
  text's "the current input is pushed"). The values are drawn each step in training ("to create continuous value
  for backprop"), shared by the minibatch so that the copies of one state the gradient methods run read alike, and
  are the intervals' midpoints at evaluation, so that an answer is a function of the string (`read_values`
  onehot: e(top) exactly).
- M1 concatenates the read with the input, z (x) [r; x] (`pairing` read-input; state-read: [s; r] (x) x).
- The response is a logistic unit on the state (`readout` state); we write it as the two-class softmax over V s + c,
  the same function (sigmoid of the scores' difference). The state-read response, a softmax over s (x) r, sees the
  top as well: a programmed automaton needs it, since acceptance is a function of (state, top).
- Binary and ternary weights "at evaluation": each weight to the nearest of {0, s} (W^s) and {-s, 0, s} (W^a);
  biases and the response stay as trained (the text discretizes the "to-state" and "to-action" tensors only).
  The text prints the sets as {0, 1} and {-1, 0, 1}, yet programs its automata with "large" weights and says they
  are binary networks: both hold only if the levels are of the programmed weights' size. Measured (BENCHMARKS.md,
  "The binary weights' size"): Table 5's programmed NSPDAs, their weights of size H made binary/ternary at s = 1,
  misclassify half the strings, at s = H none; trained NSPDAs, whose rules are inserted at H, keep more of what they
  learnt at s = H than at s = 1. So `binary_scale` s defaults to 8, the default H of the inserted rules
  (`rule_strength`): keep the two equal (rule insertion warns where they differ); s = 1 with H = 1 is the printed
  values' consistent reading (`mali-end`'s "H=1" columns), s = 1 with H = 8 the printed values alone
  (`mali-variants`' "binary at 1"). (`weight_values` step: every recurrent weight to a multiple of `weight_step`,
  programmed ones unchanged.)
- What is pushed: the current input symbol, as in the NNPDA (Sun et al. 1993): the stack alphabet is the input
  alphabet plus a bottom marker (`bottom`: the stack starts holding it, like a PDA's Z).
- `quantize_states` (training): on by default, as the paper trains the quantized network; off gives continuous
  sigmoid states in training (evaluation always quantizes). Actions are always quantized: the stack is discrete.
- A popped empty stack stays empty (a PDA would have no move there; the response learns to reject).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from functools import partial
from typing import ClassVar

import dynet as dy
import numpy as np

from stackparse.config import SettingError, setting
from stackparse.encoders.nspda import NSPDAConfig, NSPDAController, NSPDAState
from stackparse.encoders.tensors import levels, outer
from stackparse.memories.discrete_stack import EMPTY, Action, DiscreteStack
from stackparse.models import arrays
from stackparse.models.arrays import NSPDAArrays
from stackparse.models.base import model_settings, register
from stackparse.models.second_order import TensorConfig, TensorRNN
from stackparse.sequences import reattach

READ_VALUES = ("alpha", "onehot")
READOUTS = ("state", "state-read")
WEIGHT_VALUES = ("paper", "step")
ALPHAS = {Action.NO_OP: (0.0001, 0.008), Action.PUSH: (0.901, 0.992), Action.POP: (0.025, 0.110)}
"""Eq. 6's read values: alpha_1 (no-op), alpha_2 (push), alpha_3 (pop), each uniform in its interval."""


@dataclass(frozen=True)
class NSPDAPaperConfig(TensorConfig):
    """What the NSPDA model adds to the higher-order models' settings: the paper's reads, response and weights,
    each beside this project's earlier choice (module docstring)."""
    read_values: str = setting("alpha", "nspda: the read neurons: alpha (eq. 6's values: the top's neuron "
                               "alpha_2, a just-popped symbol's alpha_3, the others alpha_1, drawn each step in "
                               "training, the midpoints at evaluation) or onehot (exactly e(top))", choices=READ_VALUES)
    readout: str = setting("state", "nspda: the response: state (y = sigmoid(W^o s + b^o), the paper's) or "
                           "state-read (a softmax over s (x) r, which sees the stack's top)", choices=READOUTS)
    weight_values: str = setting("paper", "nspda: the weights at evaluation: paper (W^s binary, W^a ternary, each "
                                 "weight to the nearest value; biases and the response as trained) or step "
                                 "(every recurrent weight to a multiple of weight_step)", choices=WEIGHT_VALUES)
    binary_scale: float = setting(8.0, "nspda, weight_values paper: the size s of the binary/ternary weights, W^s "
                                  "in {0, s} and W^a in {-s, 0, s}, each weight to the nearest (8: the inserted "
                                  "rules' default strength H, which a binary network holds only at s = H; keep it "
                                  "equal to rule_strength; 1: the values as printed)", min=0, min_open=True,
                                  absent=1.0)


EARLIER = {"pairing": "state-read", "action_quantizer": "round", "read_values": "onehot", "readout": "state-read",
           "weight_values": "step"}
"""This project's earlier NSPDA (before the paper's text was at hand), kept beside the paper's as settings."""

NSPDAModelConfig = model_settings("NSPDAModelConfig", NSPDAConfig, NSPDAPaperConfig, exclude=("order",))
"""Settings of the NSPDA: the NSPDA encoder's options but its order (nspda2, nspda3: the class's), the
higher-order models' and the paper's reads, response and weights (`NSPDAPaperConfig`)."""


class StackTensorRNN(TensorRNN):
    """Eq. 1-2 around a stack: the state and action tensors, the response, and the order of the
    product (module docstring). Subclasses say how the stack is made, read and updated."""
    Config = NSPDAModelConfig
    order: int
    extra_reads: int
    """R - I, the read neurons beyond one per input symbol."""
    discrete: bool = True
    """Whether the state neurons are quantized at evaluation whatever `quantize_states` says."""
    fixed: ClassVar[dict[str, str]] = {}
    """The NSPDA settings a subclass's Config leaves out, and the values it always uses."""

    def setting(self, config, name: str) -> str:
        """`config.name`, or the class's fixed value when its settings do not offer one."""
        return self.fixed[name] if name in self.fixed else getattr(config, name)

    def __init__(self, pc, config: NSPDAModelConfig, n_inputs, n_outputs):
        n, r = config.hidden, n_inputs + self.extra_reads
        self.reads_out_state = self.setting(config, "readout") == "state"
        # The base class's V, c are sized for what the response reads: s, or s (x) r (module docstring).
        super().__init__(pc, replace(config, hidden=n if self.reads_out_state else n * r), n_inputs, n_outputs,
                         state_size=n)
        self.config, self.read_neurons = config, r
        # The equations, shared with the NSPDA encoder; Ws, Wa, bs, ba keep their names and order, and
        # stay attributes of the model (programming writes them).
        self.nspda = NSPDAController(self.pc, self.order, n, n_inputs, r, self.add_tensor,
                                     self.setting(config, "pairing"), self.setting(config, "action_quantizer"))
        self.Ws, self.bs, self.Wa, self.ba = self.nspda.parameters

    def recurrent_parameters(self) -> list[dy.Parameters]:
        """W^s, b^s, W^a, b^a (`weights` gives them as a step uses them: discretized at evaluation)."""
        return self.nspda.parameters

    @property
    def quantize_states(self) -> bool:
        """Whether g quantizes now: in training as the settings say, at evaluation when `discrete`."""
        return self.config.quantize_states or (self.discrete and not self.training)

    def refine_cell(self, state: NSPDAState, x: dy.Expression, ids, weights) -> NSPDAState:
        """Eq. 1 again on x^t with the stack and its read as they are (`stackparse.training.refinement`)."""
        s, _ = self.controller(state, x, weights)
        return NSPDAState(s, state.read, state.stack, state.action)

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
        return state.state if self.reads_out_state else outer([state.state, state.read])

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
        """The one-hot vector of each of a batch of tops: (R,) x B, constant."""
        return dy.lookup_batch(self.read_codes, self.read_ids(tops), update=False)

    def codes(self):
        """e(.) of this step: B tops (and, for the POP candidate, the tops it pops) -> the read vectors, (R,) x B.
        `onehot`: e(top) exactly. `alpha` (eq. 6's values, module docstring): alpha_1 everywhere but the top's
        neuron, alpha_2, and a popped symbol's, alpha_3 (unless it is the new top); drawn once per step for the
        whole batch in training (the copies of one state the gradient methods run must read alike), the intervals'
        midpoints at evaluation."""
        if self.config.read_values == "onehot":
            return lambda tops, popped=None: self.onehots(tops)
        r = self.read_neurons
        off, on, gone = (dy.random_uniform((r,), lo, hi) if self.training else dy.constant((r,), (lo + hi) / 2)
                         for lo, hi in (ALPHAS[Action.NO_OP], ALPHAS[Action.PUSH], ALPHAS[Action.POP]))

        def e(tops, popped=None) -> dy.Expression:
            code = off + dy.cmult(on - off, self.onehots(tops))
            marked = [p != EMPTY and p != t for p, t in zip(popped or (), tops)]
            if any(marked):
                mask = reattach([np.array(marked, dtype=float).reshape(1, -1)])[0]
                code = code + dy.cmult(dy.cmult(gone - off, self.onehots(popped)), mask)
            return code
        return e

    def empty_stack(self, batch_size: int) -> DiscreteStack:
        """B stacks holding the bottom marker (with `bottom`)."""
        return DiscreteStack.empty(batch_size, (self.n_inputs,) if self.config.bottom else ())

    def read_vector(self, stack: DiscreteStack) -> dy.Expression:
        return self.codes()(stack.read())

    def weights(self, theta: list[dy.Expression] | None = None) -> list[dy.Expression]:
        """W^s, b^s, W^a, b^a as this step uses them (`theta`: the expressions standing for them, None for the
        parameters): at evaluation (and in training with `discretize_training`) the paper's W^s binary and W^a
        ternary, each weight to the nearest value (`weight_values` paper), or every weight to a multiple of
        `weight_step` (step)."""
        if self.config.weight_values == "step" or (self.training and not self.config.discretize_training):
            return super().weights(theta)
        Ws, bs, Wa, ba = theta or self.parameter_expressions()
        s = self.config.binary_scale
        return [levels(Ws, above=(0.5,), scale=s), bs, levels(Wa, above=(0.5,), below=(-0.5,), scale=s), ba]

    def cell(self, state: NSPDAState, x: dy.Expression, ids, weights):
        return self.nspda.step(state, x, ids, self.codes(), weights, self.quantize_states)

    def array_rounding(self) -> tuple:
        """`weights` in training, in numpy (`TensorRNN.array_rounding`): the paper's binary W^s and ternary W^a."""
        if self.config.weight_values == "step" or not self.config.discretize_training:
            return super().array_rounding()
        s = self.config.binary_scale
        return (partial(arrays.levels, above=(0.5,), scale=s), None,
                partial(arrays.levels, above=(0.5,), below=(-0.5,), scale=s), None)

    def array_cell(self) -> NSPDAArrays:
        """`gradient_cell` in numpy, with its derivatives (`stackparse.models.arrays`)."""
        c = self.config
        return NSPDAArrays(c.hidden, self.n_inputs, self.parameter_count(), self.order, c.pairing, c.action_quantizer,
                           c.read_values, c.readout, c.quantize_states, c.bottom,
                           tuple(ALPHAS[a] for a in (Action.NO_OP, Action.PUSH, Action.POP)), self.array_rounding())

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
