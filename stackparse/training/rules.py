"""Rule insertion: a grammar task's PDA written into a built NSPDA, a step the experiment applies after
`build(seed)`, before training.

The NSPDA paper's rule insertion (`stackparse.models.programming`) gives training a starting point:
the rules of the task's PDA (all of them, or a random share) are written into the first state neurons
with strength H, the other weights keep their random initial values. It needs a PDA (a grammar task's)
and a model that can hold its rules (the `Programmable` capability); anything else is a one-line error.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from stackparse.config import SettingError, setting
from stackparse.grammars.pda import PDA
from stackparse.grammars.realtime import realtime
from stackparse.models.capabilities import Programmable, require
from stackparse.models.programming import insert


@dataclass(frozen=True)
class RuleInsertion:
    """How much of the task's PDA is written into the model before training."""
    insert_rules: float = setting(0.0, "grammar tasks, nspda models: share of the PDA's rules written into the "
                                  "model before training (0 = none, 1 = all)", min=0, max=1)
    rule_strength: float = setting(8.0, "H, the size of inserted (programmed) weights", min=0, min_open=True)


def insert_rules(model, pda: PDA | None, settings: RuleInsertion, seed: int) -> None:
    """Write `settings.insert_rules` of the rules of `pda` into `model` (nothing when that share is 0).

    Args:
        model: the model just built.
        pda: the task's PDA; None for a task without one.
        settings: the share and the strength H.
        seed: the run's seed; the share is drawn with `np.random.default_rng([seed, 3])`.
    Raises:
        UserError: no PDA, or a model that cannot hold rules.
    """
    if settings.insert_rules == 0:
        return
    if pda is None:
        raise SettingError("insert_rules", "needs a grammar task (pda-*)")
    require(model, Programmable, "insert_rules")
    insert(model, realtime(pda), settings.rule_strength, settings.insert_rules, np.random.default_rng([seed, 3]))
