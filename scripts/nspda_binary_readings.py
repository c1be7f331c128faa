"""Test error (%) of NSPDAs trained with continuous weights (run directories of `weight_values` step, weight_step 0)
when their weights are made binary/ternary after training, in three readings of the paper's "W^s binary, W^a
ternary": each weight to the nearest of {0, 1} and {-1, 0, 1} (the models' `weight_values` paper); to the nearest
of {0, H} and {-H, 0, H}, H the inserted rules' strength (`rule_strength`, 8); and to {0, 1} / {-1, 0, 1} with
the thresholds at H/2 and the state biases divided by H (the same network as {0, H} but for the biases' scale).

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

H = 8.0


print("| run | trained | {0, 1} | {0, H} | {0, 1}, b^s / H |")
print("|---|---|---|---|---|")
for d in sys.argv[1:]:
    _, obj = load(d)
    m = obj.model; m.training = False
    Ws, bs, Wa, ba = [p.as_array().copy() for p in (m.Ws, m.bs, m.Wa, m.ba)]
    test = obj.task.split("test")

    def err():
        return 100 * (1 - np.mean([r.correct for r in score_examples(m, test, mirror=False)]))

    out = {"trained": err()}
    for name, (ws, b, wa) in {
            "{0,1}": (levels(Ws, (0.5,)), bs, levels(Wa, (0.5,), (-0.5,))),
            "{0,H}": (levels(Ws, (0.5,), scale=H), bs, levels(Wa, (0.5,), (-0.5,), scale=H)),
            "{0,1}, b/H": (levels(Ws, (0.5,), scale=H) / H, bs / H, levels(Wa, (0.5,), (-0.5,), scale=H) / H)}.items():
        m.Ws.set_value(ws); m.bs.set_value(b); m.Wa.set_value(wa)
        out[name] = err()
        m.Ws.set_value(Ws); m.bs.set_value(bs); m.Wa.set_value(Wa)
    print(f"| {Path(d).name} | " + " | ".join(f"{v:.2f}" for v in out.values()) + " |")
