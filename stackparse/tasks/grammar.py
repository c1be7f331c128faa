"""String classification on context-free languages: the NSPDA experiments (Mali, Ororbia & Giles).

A. Mali, A. Ororbia and C. L. Giles, "The Neural State Pushdown Automata" (2019/2020). Each task is one
of the five PDAs shipped in `stackparse/grammars/pda/`, as `pda-NAME`:

    pda-anbn          a^n b^n                      pda-anmbncm   a^(n+m) b^n c^m
    pda-palindrome    w c w^R                      pda-dyck2     balanced ( ) and [ ]
    pda-anbncbmam     a^n b^n c b^m a^m

and each as `pda-NAME-end`: the same strings, each followed by the end marker "$" and answered there
(`stackparse.grammars.end_marked`: the model's PDA, for rule insertion and programming, reads "$" in an
accepting state to move to its only accepting state). Each of these ten also as `...-random`, its negatives
random strings of the alphabet instead of near misses (`stackparse.grammars.Negatives`).

The data are the paper's splits (`stackparse.grammars.PAPER_SPLITS`, seed `DATA_SEED`) and a validation
split of 100 + 100 strings of the training lengths (`GRAMMAR_SPLITS`, listed last so the others are
`datasets`'). An example's size n is its length: the curriculum settings give incremental learning by length.

What is scored: the model answers accept or reject after every symbol (the NSPDA's per-step
response); only the answer after the last symbol is scored, since the task is to classify the string
(each unscored target says whether the prefix read so far is in the language: `step_targets own` below).
The test error is the share of strings answered wrong (%).

Choices the paper leaves open, and why:
- What eq. 15 scores at each step. As printed it is the string's label y at every step t (no subscript on y; the
  default, `step_targets label`, with `score_every_step`); the refinement's text beside it says "the same target
  (y_t)", and the paper calls the NSPDA "a next-step prediction model" whose states the per-step loss "error
  corrects": a target of each step, which for a recogniser is whether the prefix read so far is accepted
  (`--step-targets own`). The label at every step asks every prefix of a string for the whole string's answer,
  which most prefixes cannot know (a prefix of a positive is as often a prefix of a negative); a prefix's own
  acceptance asks what a PDA knows at that step. Every model of the paper's tables trains with eq. 17, so neither
  reading favours the NSPDA over its baselines. Evaluation scores the last step only in both.
- `sample(rng, n)` draws a positive or a negative of length n with probability 1/2 each.
- Negatives: the paper never says how its negatives were made. Near misses (one edit of a positive) are the
  tasks' own: the hard reading, where many negatives need the stack to be rejected. Random strings are the other
  (tasks `...-random`), most of them rejected by a finite-state check. The paper's own numbers fit random
  strings (its stackless baselines score below what near misses allow a model without a stack: BENCHMARKS.md,
  "Which negatives"), so the suites of its tables read `...-random` (`stackparse.benchmarks.suites`).
- The datasets are fixed (seed 0): every model and run sees the same strings, as in the paper.
- The end marker: the paper never says how a string ends. Its response is read off the state alone
  (y_t = sigma(W^o z_t + b^o)), and the state of the last step was computed from the read before that
  step's stack action, so without a marker the answer cannot depend on what the last action left (an
  a^n b^n that ends on an empty stack, one that does not): BENCHMARKS.md, "Which piece keeps the paper's
  NSPDA from learning a^n b^n". The recurrent PDAs the paper builds on (Das, Giles & Sun 1992; the
  NNPDA, Sun et al. 1993) end each string with an end symbol for this reason; `pda-NAME-end` reads so.
  The strings and their lengths (n, Algorithm 1's) are those of `pda-NAME`, the marker not counted.
"""
from __future__ import annotations

from functools import cached_property
from typing import ClassVar

import numpy as np

from stackparse.errors import UserError
from stackparse.grammars import (END_MARKER, PAPER_SPLITS, PDA, Negatives, Sampler, Split, end_marked,
                                 prefixes_accepted, shipped_names, shipped_pda, split_of)
from stackparse.tasks.base import DatasetTask, Example, Protocol, register

DATA_SEED = 0
GRAMMAR_SPLITS = {**PAPER_SPLITS, "validation": Split(100, 100, (1, 21))}
OUTPUTS = ("reject", "accept")
PAPER_CHOICES = {"lr_decay": 0.01, "lr_noise": 0.5}
"""What the paper's text leaves open of its learning-rate annealing (its reference [29]): the decay of the rate
lr / (1 + lr_decay e) at epoch e and the spread of each update's uniform factor around it (our choices)."""
PAPER_TRAINING = {
    "train": {"lr": 0.1005000321, "lr_schedule": "inverse", "lr_decay": PAPER_CHOICES["lr_decay"], "clip": 13.0,
              "epochs": 500, "bptt": 0, "stop_metric": "train_accuracy", "stop_at": 1.0},
    "data": {"incremental": "two-stage", "epoch_size": 4000, "lr_noise": PAPER_CHOICES["lr_noise"],
             "score_every_step": True, "refine": 4, "grad": "bptt"},
}
"""The NSPDA paper's training, for every model on these tasks ("Experimental details", eq. 15-17, Algorithm 1):
online SGD from 0.1005000321 with the stochastic annealing it cites, gradients clipped at 13, the loss at every
step (eq. 15) refined K = 4 times (eq. 17), two-stage incremental learning (Algorithm 1) over passes of the whole
training set, at most 500 epochs or until every training string is classified correctly. What belongs to a kind of
model comes with the model or the experiment: the noise regulariser (Algorithm 2) of the higher-order networks,
rule insertion into the NSPDA, UORO.

"Hard clipped to 13" reads two ways (`stackparse.training.clipping`): the gradient's norm, or each of its elements.
The norm is the default: the paper's intent is a bound on the step against exploding gradients, and of the two
readings only the norm's keeps the NSPDA learning a^n b^n in the same runs (`--clip-kind value` beside it in
`mali-variants`: BENCHMARKS.md, "Hard clipping")."""


class GrammarTask(DatasetTask):
    """Accept or reject strings of a PDA's language (module docstring); subclasses set `grammar`."""
    kind = "grammar"
    grammar: str
    output_symbols = OUTPUTS
    protocol = Protocol(train_n=GRAMMAR_SPLITS["train"].lengths, test_n=GRAMMAR_SPLITS["test"].lengths,
                        test_samples=1, curriculum_every=0, stream=False)
    test_splits = ("test", "test-480", "test-960", "train")
    default_training = PAPER_TRAINING

    end_marker: ClassVar[bool] = False
    """Whether each string is followed by END_MARKER, the step answered (module docstring)."""
    negatives: ClassVar[Negatives] = Negatives.NEAR_MISS
    """How the negatives are drawn (module docstring)."""

    def __init__(self, pda: PDA | None = None, splits: dict[str, Split] = GRAMMAR_SPLITS):
        """`pda` (the language's) defaults to the shipped one named `grammar`; tests give smaller `splits`.
        `self.pda` is the automaton of what the model reads: with the end marker, `end_marked(pda)`."""
        self.language = pda or shipped_pda(self.grammar)
        self.pda = end_marked(self.language) if self.end_marker else self.language
        self.name = f"pda-{self.pda.name}" + ("-random" if self.negatives is Negatives.RANDOM else "")
        self.splits = splits
        self.symbols = self.pda.input_symbols
        self._cache: dict[str, list[Example]] = {}

    def example(self, string: str, label: bool) -> Example:
        """A labelled string of the language as an Example (its end marker appended where the task has one),
        scored at its last step; its size n is the string's length. Each step's target says whether the prefix
        read so far is in the language (the last one: `label`)."""
        if not string:
            raise UserError(f"{self.name}: the empty string has no step to answer at")
        read = string + END_MARKER if self.end_marker else string
        targets = tuple(int(accepted) for accepted in prefixes_accepted(self.pda, read)[1:])
        if targets[-1] != int(label):
            raise ValueError(f"{self.name}: {string!r} is labelled {label} but the PDA says {not label}")
        return Example(self.encode(read), targets, (False,) * (len(read) - 1) + (True,), len(string))

    def split(self, name: str) -> list[Example]:
        if name not in self._cache:
            strings = split_of(self.language, DATA_SEED, name, self.splits, self.negatives)
            self._cache[name] = [self.example(s, label) for s, label in strings]
        return self._cache[name]

    @cached_property
    def _sampler(self) -> Sampler:
        return Sampler(self.language, max(split.lengths[1] for split in self.splits.values()), self.negatives)

    def sample(self, rng: np.random.Generator, n: int) -> Example:
        if not self._sampler.has_strings(n):
            raise ValueError(f"{self.name} has no strings of length {n}")
        positive = bool(rng.integers(2))
        string = self._sampler.positive(rng, n) if positive else self._sampler.negative(rng, n)
        return self.example(string, positive)


def _grammar_task(grammar: str, end_marker: bool, negatives: Negatives) -> type[GrammarTask]:
    suffix, ended = ("-end", ", each followed by the end marker $") if end_marker else ("", "")
    if negatives is Negatives.RANDOM:
        suffix, ended = f"{suffix}-random", f"{ended}; negatives random strings"
    return type(f"Grammar_{grammar}{suffix.replace('-', '_')}", (GrammarTask,), {
        "name": f"pda-{grammar}{suffix}", "grammar": grammar, "end_marker": end_marker, "negatives": negatives,
        "description": f"accept/reject strings of {grammar}.pda{ended} (Mali, Ororbia & Giles, NSPDA)"})


for _name in shipped_names():
    for _marked in (False, True):
        for _negatives in Negatives:
            register(_grammar_task(_name, _marked, _negatives))
