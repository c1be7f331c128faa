"""Rule insertion (the NSPDA paper's, `stackparse.models.programming`), a step the experiment applies
after `build(seed)`: training starts from the task's PDA's rules (all, or a random share) written into
the first state neurons with strength H, the other weights keep their random initial values.
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
    insert_rules: float = setting(0.0, "grammar tasks, nspda models: share of the PDA's rules written into the "
                                  "model before training (0 = none, 1 = all)", min=0, max=1)
    rule_strength: float = setting(8.0, "H, the size of inserted (programmed) weights", min=0, min_open=True)


def insert_rules(model, pda: PDA | None, settings: RuleInsertion, seed: int) -> None:
    """Write the share `settings.insert_rules` of the rules of `pda` (None: the task has none) into the
    `model` just built, drawn with `default_rng([seed, 3])`; a one-line error without a PDA, or for a
    model that cannot hold rules (`Programmable`)."""
    if settings.insert_rules == 0:
        return
    if pda is None:
        raise SettingError("insert_rules", "needs a grammar task (pda-*)")
    require(model, Programmable, "insert_rules")
    insert(model, realtime(pda), settings.rule_strength, settings.insert_rules, np.random.default_rng([seed, 3]))
