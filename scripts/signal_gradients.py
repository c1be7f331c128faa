"""Which way the loss pulls a trained neural memory's signals: the gradient of the training loss with respect to the
biases of its push and pop signals (b_du: per end, push then pop), at the run's kept model, on fresh minibatches of
the run's own task, by source length.

For each range of lengths, `--batches` minibatches of 10 sequences (each length drawn uniformly in the range) go
through the model's numpy mirror (the trainer's own gradient); printed per range: the mean loss per scored symbol
(nats), each bias's gradient as a share of the whole gradient's norm (the direction a step clipped at 1 takes:
positive = gradient descent lowers that signal), and in how many of the minibatches its sign is the mean's.

    python scripts/signal_gradients.py runs/reversal-B runs/copy-B --batches 12
    python scripts/signal_gradients.py runs/reversal-B --untrained      # a fresh model of the run's settings
"""
import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from stackparse.experiments.sequence import load  # noqa: E402

RANGES = ((8, 20), (30, 45), (50, 64))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", type=Path)
    parser.add_argument("--batches", type=int, default=12)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--untrained", action="store_true", help="a freshly initialised model of each run's settings instead of its trained one")
    args = parser.parse_args()
    print("| run | lengths | loss per symbol | gradient share: push, pop (the deque: top, then bottom) | same sign |")
    print("|---|---|---|---|---|")
    for run in args.runs:
        _, objective = load(run, trained=not args.untrained)
        mirror, task = objective.model.array_mirror(), objective.task
        rng = np.random.default_rng(args.seed)
        for low, high in RANGES:
            shares, loss, symbols = [], 0.0, 0
            for _ in range(args.batches):
                batch = [task.sample(rng, int(n)) for n in rng.integers(low, high + 1, 10)]
                gradient = mirror.gradient(batch)
                loss += gradient.loss
                symbols += sum(sum(example.scored) for example in batch)
                norm = np.sqrt(sum(float(np.square(g).sum()) for g in gradient.grads))
                bias = next(g for p, g in zip(gradient.params, gradient.grads) if p.name().endswith("bdu"))
                shares.append(np.asarray(bias).ravel() / max(norm, 1e-30))
            shares = np.array(shares)
            mean = shares.mean(axis=0)
            same = (np.sign(shares) == np.sign(mean)).mean(axis=0)
            print(f"| {run.name} | {low}-{high} | {loss / symbols:.3f} | " + ", ".join(f"{x:+.3f}" for x in mean)
                  + " | " + ", ".join(f"{x:.2f}" for x in same) + " |")


if __name__ == "__main__":
    main()
