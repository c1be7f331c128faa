"""Whether a trained NSPDA's state falls into all zeros and stays there: for each run directory, the share of test
strings (the first 200) on which, from some step on, every state neuron is 0 at every step (the model kept in
`best`, as evaluated). From s = 0 every product P^t is 0, so the state and the answer no longer change.

    python scripts/nspda_zero_state.py RUN_DIR [RUN_DIR ...]
"""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import stackparse  # noqa: E402,F401  (configures DyNet before its first import)
from stackparse.experiments.sequence import load  # noqa: E402
from stackparse.sequences import unroll  # noqa: E402


def zero_from_some_step(model, example) -> bool:
    states = [state.state.npvalue().reshape(-1) for _, state in unroll(model, np.array(example.inputs)[:, None])]
    first = next((t for t, s in enumerate(states) if not s.any()), None)
    return first is not None and not any(s.any() for s in states[first:])


def main(directories: list[str]) -> None:
    print("| run | state neurons | test strings whose state becomes all zeros and stays |")
    print("|---|---|---|")
    for directory in directories:
        _, objective = load(directory)
        model = objective.model
        model.training = False
        strings = objective.task.split("test")[:200]
        dead = sum(zero_from_some_step(model, e) for e in strings)
        print(f"| {Path(directory).name} | {model.config.hidden} | {dead} / {len(strings)} |")


if __name__ == "__main__":
    main(sys.argv[1:])
