"""The gradient's size through a training run: the largest element and the largest norm of any update's gradient
before clipping, and how many updates element-wise clipping at C changed (BENCHMARKS.md, "Hard clipping").

Runs `python cli.py train ...` with the trainer's update wrapped (an instrument, not a training scheme): each
update's gradients are read through `stackparse._dynet_views` and, with C > 0, clipped element-wise to [-C, C] with
DyNet's own clipping off (what `--clip-kind value` does); C = 0 leaves them unclipped.

    python scripts/gradient_sizes.py 13 -- train pda-palindrome-random --model nspda3 --hidden 9 --insert-rules 0.5 \\
        --weight-values step --weight-step 0 --seed 1 --max-minutes 1 --out RUN
"""
import atexit
import json
import runpy
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import stackparse.training.trainer as trainer  # noqa: E402
from stackparse._dynet_views import views  # noqa: E402


def main() -> None:
    limit, args = float(sys.argv[1]), sys.argv[sys.argv.index("--") + 1:]
    seen = {"max_element": 0.0, "max_norm": 0.0, "updates_clipped": 0, "updates": 0}
    params, update, epoch = [], trainer._update, trainer.Trainer._epoch

    def measured(optimizer, clip):
        optimizer.set_clip_threshold(0)
        grads = [views(p).grad for p in params]
        largest = max(float(np.abs(g).max()) for g in grads)
        seen["max_norm"] = max(seen["max_norm"], float(np.sqrt(sum((g.astype(np.float64) ** 2).sum() for g in grads))))
        seen["max_element"], seen["updates"] = max(seen["max_element"], largest), seen["updates"] + 1
        seen["updates_clipped"] += 0 < limit < largest
        for g in grads if limit > 0 else ():
            np.clip(g, -limit, limit, out=g)
        update(optimizer, clip)

    def each_epoch(self, objective, *rest, **named):
        params[:] = objective.param_collection().parameters_list()
        return epoch(self, objective, *rest, **named)

    trainer._update, trainer.Trainer._epoch = measured, each_epoch
    atexit.register(lambda: print("gradient sizes:", json.dumps(seen), file=sys.stderr))
    sys.argv = ["cli.py", *args]
    runpy.run_path(str(ROOT / "cli.py"), run_name="__main__")


if __name__ == "__main__":
    main()
