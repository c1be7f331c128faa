"""Where a training step of the neural memories' numpy mirror (`stackparse.models.neural_stack_arrays`) goes: the
milliseconds per step of `gradient` (forward, backward and every weight's gradient, the trainer's update not
counted) at the paper's sizes, and the share of it in the step-by-step matrix products (`_Product`: the gates'
and the signals', forward and backward), which read whole weight matrices for a few rows each.

Minibatches of 10 reversal sequences of one length each (as `--batching by-length` makes them), the lengths drawn
uniformly in 8-64; each model is timed `repeats` times over the same minibatches, and the fastest and the median
pass are printed: on a shared machine the fastest is the least disturbed.

    OPENBLAS_NUM_THREADS=1 taskset -c 0 python scripts/mirror_step.py neural-stack neural-queue neural-deque
    python scripts/mirror_step.py neural-deque --batches 40 --repeats 7
    python scripts/mirror_step.py neural-stack --hidden 8 --memory-size 8    # the step's fixed cost: no arithmetic
    python scripts/mirror_step.py neural-stack --openblas    # the products by OpenBLAS alone, not few_row_products.c
"""
import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import dynet as dy  # noqa: E402

from stackparse.models import get_model_class, neural_stack_arrays  # noqa: E402
from stackparse.tasks import get_task  # noqa: E402


def timed_products(totals: list) -> callable:
    """`_Product.__call__` adding its time to totals[0]."""
    call = neural_stack_arrays._Product.__call__

    def timed(self, x, out=None):
        start = time.perf_counter()
        result = call(self, x, out)
        totals[0] += time.perf_counter() - start
        return result
    return timed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("models", nargs="+")
    parser.add_argument("--batches", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--hidden", type=int, default=0, help="controller units (0: the model's default)")
    parser.add_argument("--memory-size", type=int, default=0, help="memory values' size (0: the model's default)")
    parser.add_argument("--openblas", action="store_true",
                        help="the step's products by OpenBLAS alone, as where few_row_products.c does not run")
    args = parser.parse_args()
    if args.openblas:
        neural_stack_arrays._few_row_products = lambda: None
    task = get_task("reversal")
    call = neural_stack_arrays._Product.__call__
    for name in args.models:
        cls = get_model_class(name)
        sizes = {"hidden": args.hidden, "memory_size": args.memory_size}
        config = cls.Config(**{name: value for name, value in sizes.items() if value})
        model = cls(dy.ParameterCollection(), config, len(task.symbols), len(task.outputs))
        rng = np.random.default_rng(args.seed)
        batches = [[task.sample(rng, int(n)) for _ in range(10)] for n in rng.integers(8, 65, args.batches)]
        steps = sum(len(batch[0].inputs) for batch in batches)
        mirror = model.array_mirror()
        mirror.gradient(batches[0])                                   # first-call costs out of the timing
        passes, products = [], [0.0]
        for _ in range(args.repeats):
            start = time.perf_counter()
            for batch in batches:
                mirror.gradient(batch)
            passes.append((time.perf_counter() - start) / steps * 1e3)
        neural_stack_arrays._Product.__call__ = timed_products(products)
        try:
            for batch in batches:
                mirror.gradient(batch)
        finally:
            neural_stack_arrays._Product.__call__ = call
        print(f"{name}: {min(passes):.3f} ms a step (median {statistics.median(passes):.3f}) over {steps} steps of "
              f"10 rows; step-by-step products {products[0] / steps * 1e3:.3f} ms a step (one more, timed pass)")


if __name__ == "__main__":
    main()
