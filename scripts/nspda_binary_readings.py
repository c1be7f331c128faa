"""Test error (%) of NSPDAs trained with continuous weights (run directories of `weight_values` step, weight_step 0)
when their weights are made binary/ternary after training, in three readings of the paper's "W^s binary, W^a
ternary": each weight to the nearest of {0, 1} and {-1, 0, 1} (the models' `weight_values` paper before the default
size became H); to the nearest of {0, H} and {-H, 0, H}, H the run's inserted rules' strength (`rule_strength`); and to
{0, 1} / {-1, 0, 1} with the thresholds at H/2 and the state biases divided by H (the same network as {0, H} but for
the biases' scale). Then, at size H, which tensor's rounding breaks a model: W^s alone, W^a alone, and W^s made
ternary ({-H, 0, H}, not the paper's: it keeps the inhibitory state weights that binary W^s sets to 0), with the
share of each tensor's weights far from every level (|w| between H/4 and 3H/4) and of W^s below -H/2.

    python scripts/nspda_binary_readings.py RUN_DIR [RUN_DIR ...]
"""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import stackparse  # noqa: E402,F401  (configures DyNet before its first import)
from stackparse.evaluation.sequence import score_examples  # noqa: E402
from stackparse.experiments.sequence import load  # noqa: E402
from stackparse.models.arrays import levels  # noqa: E402


def binary(w, scale=1.0):
    """W^s's levels, {0, scale}."""
    return levels(w, (0.5,), scale=scale)


def ternary(w, scale=1.0):
    """W^a's levels, {-scale, 0, scale}."""
    return levels(w, (0.5,), (-0.5,), scale=scale)


def far(w, H):
    """Percent of the weights far from every level of size H: H/4 < |w| < 3H/4."""
    return 100 * np.mean((np.abs(w) > H / 4) & (np.abs(w) < 3 * H / 4))


readings, by_tensor = [], []
for d in sys.argv[1:]:
    experiment, obj = load(d)
    H = experiment.settings.data.rule_strength
    m = obj.model; m.training = False
    Ws, bs, Wa = [p.as_array().copy() for p in (m.Ws, m.bs, m.Wa)]
    test = obj.task.split("test")

    def err(ws=Ws, b=bs, wa=Wa):
        m.Ws.set_value(ws); m.bs.set_value(b); m.Wa.set_value(wa)
        e = 100 * (1 - np.mean([r.correct for r in score_examples(m, test, mirror=False)]))
        m.Ws.set_value(Ws); m.bs.set_value(bs); m.Wa.set_value(Wa)
        return e

    trained = err()
    readings.append([trained, err(binary(Ws), bs, ternary(Wa)), err(binary(Ws, H), bs, ternary(Wa, H)),
                     err(binary(Ws, H) / H, bs / H, ternary(Wa, H) / H)])
    by_tensor.append([trained, err(binary(Ws, H), bs, Wa), err(Ws, bs, ternary(Wa, H)),
                      err(ternary(Ws, H), bs, ternary(Wa, H)), far(Ws, H), far(Wa, H), 100 * np.mean(Ws < -H / 2)])
    print(f"{Path(d).name}: done", file=sys.stderr, flush=True)

print("| run | trained | {0, 1} | {0, H} | {0, 1}, b^s / H |")
print("|---|---|---|---|---|")
for d, row in zip(sys.argv[1:], readings):
    print(f"| {Path(d).name} | " + " | ".join(f"{v:.2f}" for v in row) + " |")
print("\n| run | trained | W^s at H only | W^a at H only | W^s ternary, W^a at H | W^s far | W^a far | W^s < -H/2 |")
print("|---|---|---|---|---|---|---|---|")
for d, row in zip(sys.argv[1:], by_tensor):
    print(f"| {Path(d).name} | " + " | ".join(f"{v:.2f}" for v in row[:4]) + " | "
          + " | ".join(f"{v:.2f} %" for v in row[4:]) + " |")
