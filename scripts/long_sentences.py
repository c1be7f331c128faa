"""Parse time and peak memory against the sentence's length: one synthetic sentence of N words (EWT
dev's words in order, one sentence), each N parsed in a fresh process so that its peak memory is its own.

    python scripts/long_sentences.py MODEL_DIR --lengths 500,1000,2000,4000,6000 --out runs/long-sentences

writes result.json and report.md into --out (BENCHMARKS.md, issue 17).
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ONE = """
import json, sys, time
from parsers.api import Parser
from parsers.conllu_io import read_conllu
parser = Parser.load(sys.argv[1])
sentences, _ = read_conllu(sys.argv[2], require_trees=False)
start = time.perf_counter()
parser.parse(sentences)
seconds = time.perf_counter() - start
peak = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM"))
print(json.dumps({"seconds": seconds, "peak_mb": peak / 1024}))
"""


def sentence_file(words: list[tuple[str, str]], n: int, path: Path) -> Path:
    """A CoNLL-U file of one sentence: the first n (form, UPOS) pairs, HEAD and DEPREL `_`."""
    lines = [f"{i + 1}\t{form}\t_\t{upos}\t_\t_\t_\t_\t_\t_" for i, (form, upos) in enumerate(words[:n])]
    path.write_text("\n".join(lines) + "\n\n", encoding="utf-8")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model_dir")
    parser.add_argument("--lengths", default="500,1000,2000,4000,6000")
    parser.add_argument("--dev", default="corpora/en-dev.conllu")
    parser.add_argument("--out", default="runs/long-sentences")
    args = parser.parse_args()
    from parsers.conllu_io import read_conllu
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    words = [(w.form, w.upos) for s in read_conllu(args.dev)[0] for w in s.words]
    rows = []
    for n in (int(x) for x in args.lengths.split(",")):
        path = sentence_file(words, n, out / f"sentence-{n}.conllu")
        done = subprocess.run([sys.executable, "-c", ONE, args.model_dir, str(path)], capture_output=True,
                              text=True, check=True)
        rows.append({"words": n, **json.loads(done.stdout.strip().splitlines()[-1])})
        print(rows[-1], flush=True)
    (out / "result.json").write_text(json.dumps({"model": args.model_dir, "date": time.strftime("%Y-%m-%d"),
                                                 "rows": rows}, indent=2) + "\n")
    table = ["| words | seconds | words/s | peak memory (MB) |", "|---|---|---|---|"]
    table += [f"| {r['words']:,} | {r['seconds']:.1f} | {r['words'] / r['seconds']:,.0f} | {r['peak_mb']:,.0f} |"
              for r in rows]
    (out / "report.md").write_text("\n".join(table) + "\n")
    print("\n".join(table))


if __name__ == "__main__":
    main()
