"""How sure teachers are of the training sentences (`parsers.distillation`): of the first N sentences of a treebank,
the mean probability of the teachers' likeliest action on the oracle's path and on a sampled path, the share of steps
where it is below 0.9 and 0.99, how many sampled paths differ from the oracle's, and the mean probability of each
word's likeliest UPOS.

    python scripts/teacher_confidence.py corpora/en.conllu 300 runs/parser-E4 runs/parser-E5 runs/parser-E6
"""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from parsers.conllu_io import read_conllu  # noqa: E402
from parsers.distillation import teach  # noqa: E402
from parsers.experiment import derivable  # noqa: E402
from parsers.inference import NumpyParser  # noqa: E402
from parsers.training import load_parser  # noqa: E402


def main(treebank: str, count: str, *teachers: str) -> None:
    sentences = read_conllu(treebank)[0][:int(count)]
    engines = [NumpyParser(load_parser(directory)[0]) for directory in teachers]
    kept, oracles = derivable(engines[0].system, sentences)
    lessons = teach(engines, kept, oracles, 1, np.random.default_rng(0))
    for which, name in ((0, "oracle's path"), (1, "sampled path")):
        best = np.concatenate([lesson.paths[which].probs[:, 0][lesson.paths[which].probs.sum(axis=1) > 0]
                               for lesson in lessons])
        print(f"{name}: {len(best)} scored steps, best action's mean probability {best.mean():.4f}, "
              f"below 0.9 at {(best < 0.9).mean():.3f}, below 0.99 at {(best < 0.99).mean():.3f}")
    differ = sum(lesson.paths[1].actions != lesson.paths[0].actions for lesson in lessons)
    print(f"sampled paths other than the oracle's: {differ} of {len(lessons)}")
    if lessons[0].upos is not None:
        print(f"best UPOS's mean probability {np.concatenate([lesson.upos.max(axis=1) for lesson in lessons]).mean():.4f}")


if __name__ == "__main__":
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])
