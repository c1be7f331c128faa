"""Rule insertion (the NSPDA paper's, `stackparse.models.programming`), a step the experiment applies
after `build(seed)`: training starts from the task's PDA's rules (all, or a random share) written into
the first state neurons with strength H, the other weights keep their random initial values; and the hint
vector of iterative refinement (eq. 17): which steps of a string use an inserted rule.

The paper's main tables use "Hint #2", and it compares it with "Hint #1" (Table 1), but never defines either. Our
reading, from what the text says a hint gives (§"Programming and Inserting Rules": the state transitions of known
rules by orthogonal state encoding, and "each symbol has specific stack operations associated with it, which
provide prior knowledge as to when to push and when to pop"): Hint #1 inserts the chosen rules, their state
transitions and stack actions (W^s, W^a); Hint #2 adds the stack action of every move, the push/pop knowledge the
text says each symbol carries (`rule_hint`). Hint #2 is what this project inserted into nspda2 before the paper's text was at
hand. Either way a step is hinted (h_t = 1, one prediction instead of K in eq. 17) when the move the PDA makes there
is one of the inserted rules: its transition is given, not learnt.
"""
from __future__ import annotations

import functools
import warnings
from dataclasses import dataclass
from typing import Callable

import numpy as np

from stackparse.config import SettingError, setting
from stackparse.grammars.pda import PDA
from stackparse.grammars.realtime import realtime
from stackparse.models.capabilities import Programmable, require
from stackparse.models.programming import insert
from stackparse.sequences import Example

HINTS = ("hint2", "hint1")


@dataclass(frozen=True)
class RuleInsertion:
    insert_rules: float = setting(0.0, "grammar tasks, nspda models: share of the PDA's rules written into the "
                                  "model before training (0 = none, 1 = all)", min=0, max=1)
    rule_strength: float = setting(8.0, "H, the size of inserted (programmed) weights", min=0, min_open=True)
    rule_hint: str = setting("hint2", "what insertion writes: hint2 (the chosen rules and every move's stack "
                             "action) or hint1 (the chosen rules only); our readings of the paper's Hint #2 and #1",
                             choices=HINTS)


def insert_rules(model, pda: PDA | None, settings: RuleInsertion, seed: int) -> Callable[[Example], tuple] | None:
    """Write the share `settings.insert_rules` of the rules of `pda` (None: the task has none) into the
    `model` just built, drawn with `default_rng([seed, 3])`; a one-line error without a PDA, or for a
    model that cannot hold rules (`Programmable`). Returns the hint vector of a training example over the PDA's
    input symbols (module docstring), None when no rule is inserted."""
    if settings.insert_rules == 0:
        return None
    if pda is None:
        raise SettingError("insert_rules", "needs a grammar task (pda-*)")
    require(model, Programmable, "insert_rules")
    config = model.config
    if getattr(config, "weight_values", None) == "paper" and config.binary_scale != settings.rule_strength:
        # the binary/ternary weights hold the inserted rules only at their strength (stackparse.models.nspda)
        warnings.warn(f"binary_scale {config.binary_scale:g} differs from rule_strength {settings.rule_strength:g}: "
                      f"evaluation's binary/ternary weights of size {config.binary_scale:g} do not keep the rules "
                      f"inserted at {settings.rule_strength:g}")
    table = realtime(pda)
    kept = insert(model, table, settings.rule_strength, settings.insert_rules, np.random.default_rng([seed, 3]),
                  all_actions=settings.rule_hint == "hint2")
    symbols = pda.input_symbols

    @functools.lru_cache(maxsize=None)      # a training string's hints are the same every epoch
    def of_inputs(inputs: tuple[int, ...]) -> tuple[bool, ...]:
        return tuple(key in kept for key in table.trace("".join(symbols[i] for i in inputs)))
    return lambda example: of_inputs(tuple(example.inputs))
