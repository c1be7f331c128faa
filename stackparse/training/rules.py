"""Rule insertion as a training option: a grammar task's PDA written into an NSPDA before training.

The NSPDA paper's rule insertion (`stackparse.models.programming`) gives training a starting point:
the rules of the task's PDA (all of them, or a random share) are written into the first state neurons
with strength H, the other weights keep their random initial values. It needs a task that has rules
(a grammar task) and a model that can hold them (nspda2, nspda3); anything else is a one-line error.
"""
from __future__ import annotations

import numpy as np

from stackparse.errors import UserError
from stackparse.grammars.realtime import realtime
from stackparse.models.base import SequenceModel
from stackparse.models.nspda import NSPDA
from stackparse.models.programming import insert
from stackparse.tasks.base import Task
from stackparse.tasks.grammar import GrammarTask


def insert_rules(task: Task, model: SequenceModel, share: float, strength: float, rng: np.random.Generator) -> None:
    """Write `share` of the rules of `task`'s PDA into `model` with strength H = `strength`."""
    if not isinstance(task, GrammarTask):
        raise UserError(f"--insert-rules needs a grammar task (pda-*), not {task.name}")
    if not isinstance(model, NSPDA):
        raise UserError(f"--insert-rules needs an NSPDA model (nspda2, nspda3), not {model.name}")
    insert(model, realtime(task.pda), strength, share, rng)
