"""Programming and inserting rules: an NSPDA's weights set from a PDA (Mali, Ororbia & Giles, §"Programming and
Inserting Rules"; Omlin & Giles 1996's method for second-order networks, extended to the stack).

The PDA is first made real-time (`stackparse.grammars.realtime`): move(q, x, top) = (q', action), acceptance a
function of (q, top). Its states get a one-hot code on the state neurons; weights are H or -H where a rule says so:

Third order (`nspda3`): neuron q' is on after reading x in state q with top l exactly when move(q, x, l) goes to q':
    W^s[q', (q, x, l)] = H,  b^s = -H/2           (so z = H/2 when the rule fires, -H/2 otherwise)
    W^a[(q, x, l)] = H * action (+H PUSH, -H POP, 0 NO-OP),  b^a = 0
Second order (`nspda2`): a neuron's input is a sum of a (state, input) and a (read, input) term, so it can test
"state q AND input x AND top l" (a threshold of the sum) but not map each triple to its own next state. So one
neuron per rule (q, x, l), firing when that rule was the last used, stands for its state q' (neuron 0: the start):
    W^s[(q, x, l), (j, x)] = H for every neuron j standing for q,  W^s[(q, x, l), (read l, x)] = H,
    b^s = -3H/2                                 (H/2 when all three hold, -H/2 or less otherwise)
    W^a[(j, x)] = H * action(q_j, x)
The action must then depend on (state, input) alone; `insert` says so when a PDA's does not (the five shipped
ones are fine). The response, on s (x) r:  V[accept, (q, l)] = H when (q, l) accepts, c = (0, -H/2).

A state code of all zeros is the dead state (no rule fired): it stays dead and rejects. With H = 8, sigmoid(+-H/2)
and tanh(H) round to the exact codes: the programmed network runs the PDA exactly on strings of any length.

Partial insertion (`insert`): the rules go into a model about to be trained, the other weights keep their random
values, and `share` < 1 writes only a random share of the moves (the paper's "partial" prior knowledge), each with
its stack action, and, with `all_actions`, the stack action of every move (the two kinds of hint,
`stackparse.training.rules`). A model whose
response reads the state alone (the paper's) gets no response written: acceptance is a function of (state, top).
"""
from __future__ import annotations

from dataclasses import dataclass

import dynet as dy
import numpy as np

from stackparse.config import SettingError
from stackparse.errors import UserError
from stackparse.grammars.pda import PDA
from stackparse.grammars.realtime import BOTTOM, EMPTY, RealTimePDA, realtime
from stackparse.models.nspda import NSPDA, NSPDA2, NSPDA3

OUTPUTS = ("reject", "accept")
"""The response's classes, in the order of the model's outputs."""


@dataclass(frozen=True)
class Code:
    """Where a programmed PDA lives in an NSPDA: what each state neuron stands for.

    states: per neuron, the PDA state it stands for. rules: per neuron, the move key (q, x, top) it
    fires for, None for the start neuron (and for every neuron of the third-order code)."""
    states: tuple[str, ...]
    rules: tuple[tuple[str, str, str] | None, ...]


def code(table: RealTimePDA, order: int) -> Code:
    """The state code of `table` for an NSPDA of this order (module docstring); neuron 0 is the start."""
    pda = table.pda
    if order == 3:
        states = (pda.start, *(q for q in pda.states if q != pda.start))
        return Code(states, (None,) * len(states))
    keys = sorted(table.moves)
    return Code((pda.start, *(table.moves[k].target for k in keys)), (None, *keys))


def read_index(table: RealTimePDA, top: str) -> int:
    """The NSPDA's read neuron for a top of the table (`stackparse.models.nspda`: symbols, marker, empty)."""
    symbols = table.pda.input_symbols
    return {BOTTOM: len(symbols), EMPTY: len(symbols) + 1}.get(top, symbols.index(top) if top in symbols else -1)


def neurons_needed(table: RealTimePDA, order: int) -> int:
    return len(code(table, order).states)


def programmed_nspda(pda: PDA, order: int, strength: float = 8.0,
                     pc: dy.ParameterCollection | None = None, binary_scale: float | None = None) -> NSPDA:
    """An NSPDA of order 2 or 3 running `pda` exactly, with no training (module docstring), weights of
    `strength` H, in `pc` (a new collection if None). Its inputs are the PDA's input symbols, in order,
    its outputs `OUTPUTS`. A UserError if the PDA does not fit (`realtime`) or its actions need order 3.
    `binary_scale` s: evaluated with the paper's binary/ternary weights of size s (exact at s = H); None: with the
    weights as programmed."""
    table = realtime(pda)
    cls = {2: NSPDA2, 3: NSPDA3}[order]
    # The response must see the top (acceptance is a function of (q, top)); as programmed: no rounding at all (a
    # weight_step of 1 would round the biases of -H/2 of rules at H = 1).
    weights = {"weight_values": "step", "weight_step": 0.0} if binary_scale is None else \
        {"weight_values": "paper", "binary_scale": binary_scale}
    config = cls.Config(hidden=neurons_needed(table, order), bottom=bool(pda.bottom), readout="state-read",
                        **weights)
    model = cls(pc or dy.ParameterCollection(), config, len(pda.input_symbols), len(OUTPUTS))
    insert(model, table, strength, share=1.0, rng=np.random.default_rng(0), clear=True)
    return model


def insert(model: NSPDA, table: RealTimePDA, strength: float, share: float, rng: np.random.Generator,
           clear: bool = False, all_actions: bool = True) -> set[tuple[str, str, str]]:
    """Write the rules of the real-time `table` into `model`'s first state neurons, with weights of `strength` H (module
    docstring): a `share` of the moves (chosen with `rng`, the only source of randomness; 1 = all), their state
    transitions (W^s) and stack actions (W^a); with `all_actions`, every move's stack action. `clear` zeroes every other weight too (full
    programming) rather than keep it (insertion). Returns the moves written. A UserError if the model is too small or
    its inputs and outputs are not the PDA's input symbols and `OUTPUTS`."""
    pda = table.pda
    if model.n_inputs != len(pda.input_symbols) or model.n_outputs != len(OUTPUTS):
        raise UserError(f"{model.name}: {model.n_inputs} inputs and {model.n_outputs} outputs cannot hold "
                        f"{pda.name} ({len(pda.input_symbols)} input symbols, accept/reject)")
    if table.pda.bottom and not model.config.bottom:
        raise SettingError("bottom", f"must be on for {model.name} to hold {pda.name}, which has a bottom marker")
    c = code(table, model.order)
    if model.config.hidden < len(c.states):
        raise SettingError("hidden", f"must be at least {len(c.states)} for {model.name} to hold {pda.name} "
                                     f"(got {model.config.hidden})")
    keys = sorted(table.moves)
    kept = set(keys[i] for i in rng.permutation(len(keys))[:int(round(share * len(keys)))])
    writer = _write3 if model.order == 3 else _write2
    parameters = model.programmable_parameters()
    arrays = {name: p.as_array() for name, p in parameters.items()}
    if clear:
        arrays = {name: np.zeros_like(a) for name, a in arrays.items()}
    writer(model, table, c, kept, strength, arrays, all_actions)
    if not model.reads_out_state:
        _write_response(model, table, c, strength, arrays)
    for name, a in arrays.items():
        parameters[name].set_value(a)
    return kept


def _write3(model: NSPDA, table: RealTimePDA, c: Code, kept: set, h: float, w: dict, all_actions: bool) -> None:
    n, i, neuron = model.config.hidden, model.n_inputs, {q: j for j, q in enumerate(c.states)}
    w["bs"][:len(c.states)] = -h / 2
    for (q, x, top), move in table.moves.items():
        column = neuron[q] + n * (table.pda.input_symbols.index(x) + i * read_index(table, top))
        if (q, x, top) in kept:
            w["Ws"][:len(c.states), column] = 0.0
            w["Ws"][neuron[move.target], column] = h
        if (q, x, top) in kept or all_actions:
            w["Wa"][0, column] = h * move.op.value


def _write2(model: NSPDA, table: RealTimePDA, c: Code, kept: set, h: float, w: dict, all_actions: bool) -> None:
    n, r = model.config.hidden, model.read_neurons
    symbols = table.pda.input_symbols
    # The columns of (state neuron j, input x) and (j, read l) for s (x) [r; x] (read-input), and of (j, x) and
    # (read l, x) for [s; r] (x) x (state-read): `outer` puts the first factor's index fastest.
    if model.config.pairing == "read-input":
        state_input, read_term = (lambda j, x: j + n * (r + x)), (lambda j, l, x: j + n * l)
    else:
        state_input, read_term = (lambda j, x: j + (n + r) * x), (lambda j, l, x: n + l + (n + r) * x)
    for target, rule in enumerate(c.rules):
        if rule is not None and rule not in kept:
            continue                                   # left to training
        w["bs"][target], w["Ws"][target] = -1.5 * h, 0.0
        if rule is None:
            continue                                   # the start neuron never fires again
        q, x, top = rule
        x, l = symbols.index(x), read_index(table, top)
        for j, state in enumerate(c.states):
            if state == q:
                w["Ws"][target, state_input(j, x)] = h
                if model.config.pairing == "read-input":
                    w["Ws"][target, read_term(j, l, x)] = h
        if model.config.pairing == "state-read":
            w["Ws"][target, read_term(None, l, x)] = h
    for j, q in enumerate(c.states):
        for x in symbols:
            ops = {move.op for key, move in table.moves.items() if key[:2] == (q, x) and (key in kept or all_actions)}
            if len(ops) > 1:
                raise UserError(f"{table.pda.name}: in state {q} reading {x!r}, the stack action depends on the "
                                f"top; the second-order NSPDA cannot hold it (use order 3)")
            if ops:
                w["Wa"][0, state_input(j, symbols.index(x))] = h * ops.pop().value


def _write_response(model: NSPDA, table: RealTimePDA, c: Code, h: float, w: dict) -> None:
    n = model.config.hidden
    w["c"][:] = (0.0, -h / 2)
    for j, q in enumerate(c.states):
        for top in table.tops:
            w["V"][1, j + n * read_index(table, top)] = h if (q, top) in table.accepting else 0.0
