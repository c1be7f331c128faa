"""Iterative refinement: the training loss of K passes over each string, each pass starting from a state corrected by a
hint from the pass before (Mali, Ororbia & Giles, "The Neural State Pushdown Automata", §3, eq. 15-17, K = 4).

The paper (after Ororbia et al.) gives eq. 15-17, K = 4 passes and a "hint vector", but the copies we could
search (arXiv 1909.05233; IEEE TAI 1(3), 2020) held only the abstract and introduction, and the works it cites
(Ororbia et al., "Like a baby: visually situated neural language acquisition", ACL 2019; "Learning to adapt by
minimizing discrepancy"; the Temporal Neural Coding Network) only abstracts. So this is our reading: what the text
says (K passes over one string, a hint passed on, one loss) and what Ororbia et al.'s refinement does elsewhere (a
state estimate corrected K times by an error signal, each corrected estimate scored):

    L_k = Σ_t m_t (-log p_k(y_t | x_1..t))         pass k from the start state s^0_k      (eq. 15)
    s^0_1 = s^0,  s^0_k = correct(s^0_{k-1}, h_{k-1})                                   (eq. 16)
    L = Σ_{k=1..K} L_k                                                                  (eq. 17)

with two hint schemes (`HINTS`), β = `rate`:
- "error": h_k = ∂L_k/∂s^0_k (Ororbia et al.'s error-driven state correction), s^0_{k+1} = clip(s^0_k - β h_k,
  0, 1) (state neurons are in [0, 1]). The hint is a constant: the trainer's gradient does not flow through it
  (their learning does not backpropagate through the correction). K - 1 extra forward and backward passes, the
  weights as constants (no parameter's gradient touched). The gradient reaching s^0 through a string is small
  (~1e-5 measured, untrained 3-neuron rnn2 on a^n b^n), so β must be large for the passes to differ much.
- "state": h_k = s^T_k, where each string ended pass k, s^0_{k+1} = (1 - β) s^0 + β h_k: the next pass rereads
  the string knowing where the last ended. One graph: the gradient flows through the hint.

The discrete stack restarts from its bottom in every pass (its content follows from the string, read again).
K = 1 is the plain loss exactly. Evaluation reads every string once from s^0: refinement is a training method.
"""
from __future__ import annotations

import dynet as dy
import numpy as np

from stackparse.sequences import masked_nll, pad, reattach, unroll

HINTS = ("error", "state")


def refined_losses(model, batch, passes: int, hint: str, rate: float):
    """Eq. 15-17 for one minibatch of a `Refinable` model (K = `passes`, β = `rate`): yields one (L / the number of
    streams, scored steps) in a fresh graph, what `methods.segment_losses` yields for full BPTT when K = 1."""
    inputs, targets, mask = pad(batch)
    size = len(batch)
    starts = error_hinted_starts(model, inputs, targets, mask, passes, rate) if hint == "error" else None
    dy.renew_cg()
    weights, readout = model.weights(), model.readout()
    s0 = model.neurons(model.initial_state(size))
    start, losses = None, []
    for k in range(passes):
        if starts is not None and k > 0:
            start = reattach([starts[k]])[0]
        states, loss = read_once(model, inputs, targets, mask, weights, readout, start)
        losses.append(loss)
        if hint == "state":
            start = s0 * (1 - rate) + last_neurons(model, states, [len(e) for e in batch]) * rate  # eq. 16
    yield dy.esum(losses) / size, int(mask.sum())                                                 # eq. 17


def read_once(model, inputs: np.ndarray, targets: np.ndarray, mask: np.ndarray, weights, readout, start=None):
    """One pass (eq. 15) over (T, B) padded arrays with the recurrence's `weights` and the response's
    `readout` given, from `start` ((N,) x B; None: s^0): the state after every step, and the summed
    loss of the scored steps (a scalar)."""
    states, terms = [], []
    steps = unroll(model, inputs, model.initial_state(inputs.shape[1], start=start),
                   lambda state, ids: model.cell(state, model.embed(ids), ids, weights))
    for t, state in steps:
        states.append(state)
        if mask[t].any():
            terms.append(masked_nll(model.response(state, *readout), targets[t], mask[t]))
    return states, dy.sum_batches(dy.esum(terms))


def error_hinted_starts(model, inputs, targets, mask, passes: int, rate: float) -> list[np.ndarray]:
    """The "error" scheme's starts s^0_1 .. s^0_K (eq. 16), K arrays (N, B), each from the previous
    one's gradient, in graphs of their own with the parameters as constants."""
    size = inputs.shape[1]
    dy.renew_cg()
    starts = [model.neurons(model.initial_state(size)).npvalue().reshape(-1, size)]   # (N, B): DyNet drops B = 1
    recurrent = model.recurrent_parameters()
    values = [p.as_array() for p in (*recurrent, *model.readout_parameters())]
    for _ in range(passes - 1):
        dy.renew_cg()
        constants = [dy.inputTensor(v) for v in values]
        start = reattach([starts[-1]])[0]
        _, loss = read_once(model, inputs, targets, mask, constants[:len(recurrent)], constants[len(recurrent):], start)
        loss.backward(full=True)                     # full: the gradient reaches the constant start
        gradient = start.gradient().reshape(-1, size)
        starts.append(np.clip(starts[-1] - rate * gradient, 0.0, 1.0))
    return starts


def last_neurons(model, states: list, lengths: list[int]) -> dy.Expression:
    """(N,) x B: each stream's state neurons at its own last step (a padded minibatch runs past it)."""
    picks = []
    for t, state in enumerate(states):
        last = np.array([[1.0 if n - 1 == t else 0.0 for n in lengths]])        # (1, B): ends at t
        if last.any():
            picks.append(model.neurons(state) * reattach([last])[0])          # (N, 1) (1, 1) per stream
    return dy.esum(picks)
