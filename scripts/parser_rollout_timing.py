"""Seconds that exploration's roll-outs take (`parsers.inference.draw_explorations`: the numpy engine's lockstep
decoding with actions drawn from the model and the dynamic oracle asked at each open step) on the first projective
sentences of a treebank, for a trained model; with --profile, where that time goes (cProfile, the functions that
take most of it).

    OPENBLAS_NUM_THREADS=1 taskset -c 1 python scripts/parser_rollout_timing.py runs/parser-GL5f corpora/en.conllu

Run it in a worktree of each commit to compare them (same model, sentences and seed).
"""
import argparse
import cProfile
import pstats
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import parsers  # noqa: E402,F401  (after the path: the script runs from a checkout; DyNet's memory first)
from parsers import trees  # noqa: E402
from parsers.conllu_io import read_conllu  # noqa: E402
from parsers.inference import NumpyParser, draw_explorations  # noqa: E402
from parsers.training import load_parser  # noqa: E402


def main() -> None:
    args = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    args.add_argument("model")
    args.add_argument("treebank")
    args.add_argument("--sentences", type=int, default=1280, help="the treebank's first N, projective ones kept")
    args.add_argument("--rounds", type=int, default=2)
    args.add_argument("--profile", action="store_true")
    a = args.parse_args()
    model, _ = load_parser(a.model)
    sentences = [s for s in read_conllu(a.treebank)[0][:a.sentences] if trees.is_projective(s.heads)]
    words = sum(len(s.words) for s in sentences)
    engine = NumpyParser(model)
    for _ in range(a.rounds):
        start = time.perf_counter()
        draw_explorations(engine, sentences, 1.0, np.random.default_rng(0))
        seconds = time.perf_counter() - start
        print(f"{len(sentences)} sentences, {words} words: {seconds:.2f} s, {words / seconds:.0f} words/s")
    if a.profile:
        profile = cProfile.Profile()
        profile.runcall(draw_explorations, engine, sentences, 1.0, np.random.default_rng(0))
        pstats.Stats(profile).sort_stats("tottime").print_stats(15)


if __name__ == "__main__":
    main()
