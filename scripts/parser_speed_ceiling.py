"""How fast can the numpy engine parse with this model on this machine? The arithmetic of its stack-LSTM pushes alone.

Parses a CoNLL-U file greedily with a trained model's numpy engine (`parsers.inference`), counting the rows each
stack-LSTM (stack, buffer, actions) pushes, then times that arithmetic alone on this core (the matrix products of
each layer and the LSTM cell's element-wise work, at the batch sizes the parse used) and prints the words per second
the engine could not exceed even with no other cost: no encoder, no transition system, no Python. Run it on a core
to itself:

    OPENBLAS_NUM_THREADS=1 taskset -c 1 python scripts/parser_speed_ceiling.py runs/parser corpora/en-test.conllu
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from parsers.api import Parser  # noqa: E402  (after the path: the script runs from a checkout)
from parsers.conllu_io import read_conllu  # noqa: E402
from parsers.inference import F32, NumpyParser, _Nodes, parse_greedy  # noqa: E402


def counted(nodes, calls: list) -> None:
    """Record the rows of each `push` of a `_Nodes`."""
    push = nodes.push

    def recording(x0, parents):
        calls.append(len(parents))
        return push(x0, parents)
    nodes.push = recording


def seconds_per_call(f, least: float = 0.3) -> float:
    f()
    n, start = 0, time.perf_counter()
    while time.perf_counter() - start < least:
        f()
        n += 1
    return (time.perf_counter() - start) / n


def push_seconds(nodes, rows: int) -> float:
    """One push of `rows` rows by the engine's own `_Nodes.push` (its products, cells, gathers and stores), on
    a fresh copy of the stack-LSTM `nodes`."""
    fresh = _Nodes(nodes.layers, np.zeros(nodes.layers[0][0].shape[0], F32))
    x0 = np.random.default_rng(0).standard_normal((rows, nodes.layers[0][1].shape[1])).astype(F32)
    parents = np.ones(rows, dtype=np.intp)

    def push():
        fresh.reset()
        fresh.push(x0, parents)
    return seconds_per_call(push)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run", help="a train-parser run directory (or its best/ model)")
    parser.add_argument("conllu", help="the sentences to parse (their trees are not read)")
    args = parser.parse_args()
    model = Parser.load(args.run).model
    sentences, _ = read_conllu(args.conllu, require_trees=False)
    words = sum(len(s.forms) for s in sentences)
    engine = NumpyParser(model)
    calls = {name: [] for name in ("stack", "buffer", "actions")}
    for name, rows in calls.items():
        counted(getattr(engine, name), rows)
    start = time.process_time()
    parse_greedy(engine, sentences)
    engine_seconds = time.process_time() - start

    nodes = engine.stack                # the buffer's and the actions' stack-LSTMs have its sizes
    layers = nodes.layers
    hidden, n_layers = layers[0][1].shape[0], len(layers)
    macs_per_row = sum(wh.size + (wx.size if k else 0) for k, (wx, wh, _) in enumerate(layers))
    rows_total = sum(sum(c) for c in calls.values())
    # every push of the parse, timed at its own batch size (sizes rounded to powers of two, timed once each)
    sizes = np.concatenate([np.array(c) for c in calls.values()])
    buckets = 2 ** np.round(np.log2(sizes)).astype(int)
    arithmetic = sum(count * push_seconds(nodes, int(size)) * sizes[buckets == size].mean() / size
                     for size, count in zip(*np.unique(buckets, return_counts=True)))
    a, w = np.ones((128, hidden), F32), np.ones((hidden, 4 * hidden), F32)
    gmacs = a.size * w.shape[1] / seconds_per_call(lambda: a @ w) / 1e9
    z = np.ones((128, 4 * hidden), F32)
    exp_ns = seconds_per_call(lambda: np.exp(z)) / z.size * 1e9

    print(f"{args.conllu}: {len(sentences)} sentences, {words} words; model: {n_layers} layers of {hidden} units")
    print(f"pushes per word: {rows_total / words:.2f} (stack {sum(calls['stack']) / words:.2f}, buffer "
          f"{sum(calls['buffer']) / words:.2f}, actions {sum(calls['actions']) / words:.2f}); rows per push call: "
          f"{sizes.mean():.0f} on average")
    print(f"multiply-adds per word in the pushes: {rows_total * macs_per_row / words / 1e6:.2f} million")
    print(f"this core: float32 matrix product ({128}x{hidden} by {hidden}x{4 * hidden}) {gmacs:.1f} GMAC/s; "
          f"numpy float32 exp {exp_ns:.2f} ns per element")
    print(f"the pushes alone: {arithmetic / words * 1e6:.1f} us per word -> at most "
          f"{words / arithmetic:,.0f} words/s")
    print(f"the engine, whole parse (CPU time): {engine_seconds / words * 1e6:.1f} us per word -> "
          f"{words / engine_seconds:,.0f} words/s")


if __name__ == "__main__":
    main()
