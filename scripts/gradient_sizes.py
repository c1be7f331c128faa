"""The gradient's size through a training run: the largest element and the largest norm of any update's gradient
before clipping, and how many updates the run's element-wise clipping changed (BENCHMARKS.md, "Hard clipping").

Runs `python cli.py train ...` with the trainer's update wrapped (an instrument, not a training scheme): each
update's gradients are read through `stackparse._dynet_views` before the trainer's own update, which then clips them
as the run's settings say (`--clip-kind value --clip C`: `stackparse.training.clipping.ElementClip`; `--clip 0`:
not at all). An update counts as clipped when element-wise clipping is on and some element exceeds its threshold.

    python scripts/gradient_sizes.py train pda-palindrome-random --model nspda3 --hidden 9 --insert-rules 0.5 \\
        --weight-values step --weight-step 0 --clip-kind value --clip 13 --seed 1 --max-minutes 1 --out RUN
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
    seen = {"max_element": 0.0, "max_norm": 0.0, "updates_clipped": 0, "updates": 0}
    params, update, epoch = [], trainer._update, trainer.Trainer._epoch

    def measured(optimizer, clip):
        grads = [views(p).grad for p in params]
        largest = max(float(np.abs(g).max()) for g in grads)
        seen["max_norm"] = max(seen["max_norm"], float(np.sqrt(sum((g.astype(np.float64) ** 2).sum() for g in grads))))
        seen["max_element"], seen["updates"] = max(seen["max_element"], largest), seen["updates"] + 1
        seen["updates_clipped"] += clip is not None and largest > clip.threshold
        update(optimizer, clip)

    def each_epoch(self, objective, *rest, **named):
        params[:] = objective.param_collection().parameters_list()
        return epoch(self, objective, *rest, **named)

    trainer._update, trainer.Trainer._epoch = measured, each_epoch
    atexit.register(lambda: print("gradient sizes:", json.dumps(seen), file=sys.stderr))
    sys.argv = ["cli.py", *sys.argv[1:]]
    runpy.run_path(str(ROOT / "cli.py"), run_name="__main__")


if __name__ == "__main__":
    main()
