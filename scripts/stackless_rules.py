"""Whether a trained acceptor's answers follow a rule that needs no stack: for each run given, its kept model's
answers on a split beside "accept iff the string ends in Y", "... starts with X and ends in Y", "... holds one Y" and
"... holds one Y and starts and ends alike", for every symbol X and Y, the rule of best agreement printed with its own
accuracy (BENCHMARKS.md, "Table 4's NSPDA with UORO
compiled", a^n b^n M2).

    python scripts/stackless_rules.py RUN... [--split test] [--shape REGEX] [--counter OPENERS] [--task NAME]

`--shape` adds "accept iff the string matches REGEX" (a regular language holding the task's, e.g. a*b* for a^n b^n:
what random negatives leave to a stack). `--counter` adds "accept iff the string is a Dyck word when each symbol of
OPENERS is read as ( and every other as )" (Dyck(2) read as one kind of bracket, `--counter '(['`: one counter, not a
stack of two symbols; the shipped dyck2 PDA decides). For either, the model's accuracy on the strings where the rule is wrong says
whether it knows more than the rule.
"""
import argparse
import itertools
import re
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from stackparse.evaluation.sequence import score_examples  # noqa: E402
from stackparse.experiments.sequence import load  # noqa: E402
from stackparse.grammars import accepts, shipped_pda  # noqa: E402
from stackparse.tasks import get_task  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", type=Path)
    parser.add_argument("--split", default="test")
    parser.add_argument("--shape", default="", help="a regular expression over the task's symbols")
    parser.add_argument("--counter", default="", help="the symbols that count up; every other counts down")
    parser.add_argument("--task", default="", help="the split of this task instead of the run's own (the same "
                        "symbols: e.g. pda-anbn's near misses for a run of pda-anbn-random)")
    args = parser.parse_args()
    for run in args.runs:
        experiment, objective = load(run)
        task, model = (get_task(args.task) if args.task else experiment.task), objective.model
        if task.symbols != experiment.task.symbols:
            raise SystemExit(f"{args.task} reads {task.symbols}, the run's task {experiment.task.symbols}")
        model.training = False
        examples = task.split(args.split)
        label = np.array([e.targets[-1] for e in examples])
        correct = np.array([r.correct for r in score_examples(model, examples)])
        answer = np.where(correct, label, 1 - label)            # accept = 1, reject = 0
        first = np.array([task.symbols[e.inputs[0]] for e in examples])
        last = np.array([task.symbols[e.inputs[-1]] for e in examples])
        rules = {f"ends in {y}": last == y for y in task.symbols}
        rules.update({f"starts with {x}, ends in {y}": (first == x) & (last == y)
                      for x, y in itertools.product(task.symbols, repeat=2)})
        counts = {y: np.array([sum(task.symbols[i] == y for i in e.inputs) for e in examples]) for y in task.symbols}
        rules.update({f"holds one {y}": counts[y] == 1 for y in task.symbols})
        rules.update({f"holds one {y}, starts and ends alike": (counts[y] == 1) & (first == last) for y in task.symbols})
        asked = {}
        if args.shape:
            asked[f"matches {args.shape}"] = np.array(
                [re.fullmatch(args.shape, "".join(task.symbols[i] for i in e.inputs)) is not None for e in examples])
        if args.counter:
            dyck = shipped_pda("dyck2")
            asked[f"counts {args.counter} up"] = np.array(
                [accepts(dyck, "".join("(" if task.symbols[i] in args.counter else ")" for i in e.inputs))
                 for e in examples])
        rules.update(asked)
        for name in asked:
            wrong = rules[name] != label
            print(f"{run.name}: '{name}' is right on {np.mean(~wrong):.4f} of {args.split}, agrees with the answers on "
                  f"{np.mean(rules[name] == answer):.4f}; where it is wrong ({wrong.sum()} strings) the model is right on "
                  f"{correct[wrong].sum()}")
        name, rule = max(rules.items(), key=lambda item: np.mean(item[1] == answer))
        print(f"{run.name}: accuracy {correct.mean():.4f}, accepts {answer.mean():.4f}; its answers agree with "
              f"'{name}' on {np.mean(rule == answer):.4f} of {args.split} ({len(examples)} strings), a rule whose own "
              f"accuracy is {np.mean(rule == label):.4f}")


if __name__ == "__main__":
    main()
