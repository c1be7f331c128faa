"""CPU time of the dynamic oracle (`TransitionSystem.optimal`) at every configuration of a random path through each
of a treebank's first projective sentences: each path follows the oracle with probability 0.7 and a uniform legal
action otherwise (drawn once, before the timing), so that it leaves the gold tree as exploration does. Prints the
best of three passes and a checksum of the answers, to compare two commits (run it in a worktree of each).

    OPENBLAS_NUM_THREADS=1 taskset -c 1 python scripts/oracle_timing.py corpora/en.conllu
"""
import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from parsers import trees  # noqa: E402  (after the path: the script runs from a checkout)
from parsers.conllu_io import read_conllu  # noqa: E402
from parsers.transitions import DEFAULT_SYSTEM, SYSTEMS, get_system  # noqa: E402


def main() -> None:
    args = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    args.add_argument("treebank")
    args.add_argument("--sentences", type=int, default=1500, help="the treebank's first N, projective ones kept")
    args.add_argument("--system", default=DEFAULT_SYSTEM,
                      choices=[name for name, system in SYSTEMS.items() if system.dynamic_oracle])
    a = args.parse_args()
    sentences = [s for s in read_conllu(a.treebank)[0][:a.sentences] if trees.is_projective(s.heads)]
    system = get_system(a.system, sorted({label for s in sentences for label in s.deprels[1:]}))
    rng = np.random.default_rng(0)
    paths = []
    for s in sentences:
        gold, config, path = (tuple(s.heads), tuple(s.deprels)), system.initial(len(s.words)), []
        while not system.is_terminal(config):
            path.append(config)
            legal = system.legal(config)
            action = system.optimal(config, *gold)[0] if rng.random() < 0.7 else legal[rng.integers(len(legal))]
            config = system.apply(config, action)
        paths.append((gold, path))
    calls, best, answers = sum(len(path) for _, path in paths), float("inf"), []
    for _ in range(3):
        start = time.process_time()
        answers = [system.optimal(config, *gold) for gold, path in paths for config in path]
        best = min(best, time.process_time() - start)
    print(f"{len(sentences)} sentences, {calls} calls: {best:.3f} s CPU, {best / calls * 1e6:.1f} us a call; "
          f"checksum {sum(map(sum, answers))} / {sum(map(len, answers))}")


if __name__ == "__main__":
    main()
