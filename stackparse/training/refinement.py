"""Iterative refinement per time step (Mali, Ororbia & Giles, "The Neural State Pushdown Automata", §3, eq. 16-17).

At step t the model predicts the same target S(t) times, its state carried from one prediction to the next ("a deep
feedforward network with tied weights across K hidden layers", after Ororbia et al.), and every prediction is scored:

    D(y^, y) = -y log y^ - (1 - y) log(1 - y^)                                            (eq. 16)
    L(y, X, S) = sum_t sum_{k = 1..S(t)} D(y^_{t,k}, y)                                  (eq. 17)
    S = K (1 - H) + H                    H_t = 1 at a hinted step (`stackparse.training.rules`): one prediction

With every step scored by the string's label (eq. 15, `score_every_step`) this is the paper's training loss as
printed (y with no subscript; the text's "the same target (y_t)" read as each prefix's own acceptance is
`step_targets own`: `stackparse.tasks.grammar`); K = 1 is the plain loss exactly. For a two-class task D is the negative log-softmax of the label (`masked_nll`).

What the text leaves open, and our reading:
- What a refinement pass is. The state is "carried over these K steps", the input is the step's: the first S(t) - 1
  passes run the recurrence again on x_t without the memory acting (`Refinable.refine`: the NSPDA's stack neither
  pushes nor pops and its read stays r_{t-1}; a model without a memory just steps again), and the last pass is the
  step itself, whose action the most refined state decides. Pushing x_t K times would change the language the stack
  holds.
- Where refinement applies: training only. Evaluation reads every string once, one pass per step.
"""
from __future__ import annotations

from typing import Callable

import dynet as dy
import numpy as np

from stackparse.sequences import Example, masked_nll, pad


def refined_losses(model, batch: list[Example], passes: int, hints: Callable[[Example], tuple] | None = None):
    """Eq. 17 for one minibatch of a `Refinable` model (K = `passes`; `hints`: an example's hint vector H, None for
    H = 0): yields one (L / the number of streams, scored predictions) in a fresh graph, what
    `methods.segment_losses` yields for full BPTT when K = 1."""
    inputs, targets, scored = pad(batch)                        # (T, B)
    mask, hinted = scored > 0, hint_matrix(batch, len(inputs), hints)
    dy.renew_cg()
    state, terms, predictions = model.initial_state(len(batch)), [], 0
    for t in range(len(inputs)):
        refined = mask[t] & ~hinted[t]                          # the predictions S(t) > 1 adds
        for _ in range(passes - 1):
            state = model.refine(state, inputs[t], hinted[t] if hinted[t].any() else None)
            if refined.any():
                terms.append(masked_nll(model.scores(state), targets[t], refined))
                predictions += int(refined.sum())
        state = model.step(state, inputs[t])
        if mask[t].any():
            terms.append(masked_nll(model.scores(state), targets[t], mask[t]))
            predictions += int(mask[t].sum())
    if terms:
        yield dy.sum_batches(dy.esum(terms)) / len(batch), predictions


def hint_matrix(batch: list[Example], length: int, hints: Callable[[Example], tuple] | None) -> np.ndarray:
    """H of each sequence of `batch` as columns, (length, B) bool, False past a sequence's end and where `hints` is
    None."""
    hinted = np.zeros((length, len(batch)), dtype=bool)
    if hints is not None:
        for b, example in enumerate(batch):
            hinted[:len(example), b] = hints(example)
    return hinted


def predictions(batch: list[Example], passes: int, hints: Callable[[Example], tuple] | None) -> int:
    """How many predictions eq. 17 scores in `batch`: S(t) = K (1 - H_t) + H_t at each scored step."""
    hinted = hint_matrix(batch, max(map(len, batch)), hints)
    return sum(sum(1 if h else passes for scored, h in zip(e.scored, hinted[:, b]) if scored)
               for b, e in enumerate(batch))
