"""Milliseconds per training batch of the parser, split into building the graph (Python) and DyNet's forward,
backward and update: static-oracle batches of 32 sentences (--batch-size) of a treebank, the default model, random fixed vectors
of 100 dimensions in place of the README's files (their size does not change the graph), Adam.

    OPENBLAS_NUM_THREADS=1 taskset -c 0 python scripts/parser_batch_timing.py corpora/en.conllu --batches 30

Run it in a worktree of each commit to compare them (same batches, same seed).
"""
import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import parsers  # noqa: E402,F401  (after the path: the script runs from a checkout; DyNet's memory first)
import dynet as dy  # noqa: E402
from parsers.conllu_io import read_conllu  # noqa: E402
from parsers.experiment import derivable  # noqa: E402
from parsers.model import ParserModelConfig, ParserTrainingConfig  # noqa: E402
from parsers.training import build_parser  # noqa: E402
from parsers.transitions import get_system  # noqa: E402
from parsers.vocab import Vocab  # noqa: E402


def main() -> None:
    args = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    args.add_argument("treebank")
    args.add_argument("--batches", type=int, default=30)
    args.add_argument("--batch-size", type=int, default=32, help="sentences a batch")
    a = args.parse_args()
    sentences = read_conllu(a.treebank)[0][:2000]
    vocab = Vocab.build(sentences)
    config = ParserModelConfig()
    system = get_system(config.system, vocab.labels)
    sentences, oracles = derivable(system, sentences)
    words = list(dict.fromkeys(w for s in sentences for w in s.forms))
    vectors = np.random.default_rng(0).standard_normal((len(words), 100)).astype(np.float32)
    model, pc = build_parser(config, vocab, system, (words, vectors), ParserTrainingConfig())
    trainer = dy.AdamTrainer(pc, 0.002)
    rng = np.random.default_rng(1)
    order = rng.permutation(len(sentences))
    build = run = 0.0
    start = time.perf_counter()
    for b in range(a.batches):
        batch = order[b * a.batch_size:(b + 1) * a.batch_size]
        dy.renew_cg(autobatching=True)
        t0 = time.perf_counter()
        loss = model.loss([sentences[i] for i in batch], [oracles[i] for i in batch], rng) / len(batch)
        t1 = time.perf_counter()
        loss.value()
        loss.backward()
        trainer.update()
        build, run = build + t1 - t0, run + time.perf_counter() - t1
    per = 1000 / a.batches
    print(f"{a.batches} batches: build {build * per:.0f} ms, forward+backward+update {run * per:.0f} ms, "
          f"in all {(time.perf_counter() - start) * per:.0f} ms per batch "
          f"({(time.perf_counter() - start) * per / a.batch_size:.1f} ms per sentence)")


if __name__ == "__main__":
    main()
