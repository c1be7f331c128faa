"""Context-free languages given as pushdown automata, and their datasets (no neural models here).

`pda`: the PDA text format, its parser and the runner (membership); `cfg`: the PDA's grammar, its derivations counted by
length, and sampling; `sampling`: positives, negatives (hard or random) and the datasets of Mali, Ororbia & Giles's
Neural State Pushdown Automata experiments. The PDAs of that paper's five languages ship in `pda/` (palindrome, anbn,
anbncbmam, anmbncm, dyck2: docs/grammars.md); these are grammar names, not task names (a task `anbn` exists already).
"""
from stackparse.grammars.pda import (END_MARKER, PDA, Transition, accepts, end_marked, load_pda, parse_pda,
                                     prefixes_accepted, shipped_names, shipped_pda, stack_bound)
from stackparse.grammars.sampling import (PAPER_SPLITS, Edit, Labelled, Negatives, Sampler, Split, dataset, datasets,
                                         near_miss, split_of)

__all__ = [
    "END_MARKER", "PDA", "Transition", "accepts", "end_marked", "load_pda", "parse_pda", "prefixes_accepted",
    "shipped_names", "shipped_pda", "stack_bound",
    "PAPER_SPLITS", "Edit", "Labelled", "Negatives", "Sampler", "Split", "dataset", "datasets", "near_miss", "split_of",
]
