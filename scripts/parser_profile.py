"""Where the numpy engine's time goes: one greedy parse of a CoNLL-U file with a trained model, each part timed.

Wraps the engine's parts (`parsers.inference`: the encoder and its pieces, the stack-LSTM pushes, scoring,
composition, the transition system's `legal`, `ops` and `perform`) in wall-clock timers and prints the seconds
each took, as a markdown table. Parts nest (the pushes are inside `advance`, the token vectors inside
`tag_scores`), and the timers add their own cost, so the shares are what this is for, not the total. Run it on a
core to itself:

    OPENBLAS_NUM_THREADS=1 taskset -c 1 python scripts/parser_profile.py runs/parser corpora/en-test.conllu
"""
from __future__ import annotations

import argparse
import collections
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import parsers.inference as inference  # noqa: E402  (after the path: the script runs from a checkout)
from parsers.api import Parser  # noqa: E402
from parsers.conllu_io import read_conllu  # noqa: E402

PARTS = [  # (owner, attribute, what it is)
    (inference.NumpyParser, "tag_scores", "tagger (all of it): token vectors, its BiLSTM, the tags' scores"),
    (inference.NumpyParser, "token_vectors", "  token vectors (embeddings, character BiLSTM)"),
    (inference.NumpyParser, "encode", "sentence encoder after the tags (their embeddings, the context BiLSTM)"),
    (inference.NumpyParser, "advance", "applying the actions (all of it)"),
    (inference._Nodes, "push", "  stack-LSTM pushes (also the initial buffers)"),
    (inference.NumpyParser, "_compose", "  compositions"),
    (inference.NumpyParser, "_initial_buffers", "initial buffers"),
    (inference.NumpyParser, "scores", "scores"),
]


def timed(owner, name: str, key: str, seconds: collections.Counter) -> None:
    inner = getattr(owner, name)

    def wrapper(*args, **kwargs):
        start = time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            seconds[key] += time.perf_counter() - start
    setattr(owner, name, wrapper)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run_dir", type=Path, help="a train-parser run (its best model is read)")
    ap.add_argument("conllu", type=Path, help="the sentences to parse (their UPOS are read)")
    a = ap.parse_args()
    model = Parser.load(a.run_dir).model
    sentences, _ = read_conllu(a.conllu)
    seconds: collections.Counter = collections.Counter()
    for owner, name, key in PARTS:
        timed(owner, name, key, seconds)
    system = type(model.system)
    for name in ("legal", "ops"):
        timed(system, name, f"transition system: {name}", seconds)
    perform = inference.perform
    timed(inference, "perform", "transition system: perform", seconds)
    assert inference.perform is not perform
    start = time.perf_counter()
    engine = inference.NumpyParser(model)
    seconds["the engine built from the model"] += time.perf_counter() - start
    inference.parse_greedy(engine, sentences)
    total = time.perf_counter() - start
    words = sum(len(s.forms) for s in sentences)
    print(f"{words} words in {total:.3f} s with the timers ({words / total:.0f} words/s)\n")
    print("| part | seconds | share |\n|---|---|---|")
    for key, value in sorted(seconds.items(), key=lambda kv: -kv[1]):
        print(f"| {key} | {value:.3f} | {100 * value / total:.0f} % |")


if __name__ == "__main__":
    main()
