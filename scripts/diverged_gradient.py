"""Why a run stopped as diverged: a copy of it resumed from its last checkpoint, each update's gradient recorded in
double precision as the gradient method computed it (before DyNet's single-precision memory holds it), until the run
diverges again or ends (BENCHMARKS.md, "Runs that diverged: DyNet's single-precision norm").

    python scripts/diverged_gradient.py RUN COPY

RUN is a finished run directory whose `run-1` diverged (its checkpoint says so); COPY, a new directory, receives the
copy, which is resumed (RUN itself is left as it is). Prints the last updates' largest element, norm and loss, and
the norms of the updates seen. With the code of 9d52562 on, DyNet's clipping no longer stops on a finite gradient
(`stackparse.training.clipping.NormRescue`): run it with the commit before to see the divergence itself.
"""
import json
import shutil
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from stackparse.experiments.driver import run  # noqa: E402
from stackparse.experiments.sequence import SequenceExperiment, _saved_settings  # noqa: E402
from stackparse.training import gradients  # noqa: E402


def resumable_copy(source: Path, copy: Path) -> None:
    """`source` copied to `copy` with its divergence undone: the checkpoint not finished, the log's last line gone."""
    shutil.copytree(source, copy)
    for name in ("result.json", "metrics.json"):
        (copy / name).unlink(missing_ok=True)
    state_file = copy / "run-1" / "checkpoint" / "run_state.json"
    state = json.loads(state_file.read_text())
    if not state.get("diverged"):
        raise SystemExit(f"{source}: its run did not diverge")
    state["finished"], state["diverged"] = False, ""
    state_file.write_text(json.dumps(state))
    log = copy / "log.jsonl"
    log.write_text("".join(line for line in log.read_text().splitlines(True) if '"diverged"' not in line))


def main() -> None:
    source, copy = Path(sys.argv[1]), Path(sys.argv[2])
    resumable_copy(source, copy)
    seen = []
    backward = gradients.PrecomputedLoss.backward

    def recorded(self):
        g = np.concatenate([np.ravel(x) for x in self.grads])
        seen.append((float(np.abs(g).max()), float(np.linalg.norm(g)), float(self.loss)))
        return backward(self)

    gradients.PrecomputedLoss.backward = recorded
    try:
        run(SequenceExperiment(_saved_settings(copy / "config.json")), copy, resume=True, progress=False)
    finally:
        seen = np.array(seen)
        norms = seen[:, 1]
        print(json.dumps({"updates": len(seen), "last (largest element, norm, loss)": seen[-3:].tolist(),
                          "norm median": float(np.median(norms)), "norm 99th percentile": float(np.percentile(norms, 99)),
                          "norm max": float(norms.max()), "updates over 13": int((norms > 13).sum()),
                          "updates with an element over 1.8e19": int((seen[:, 0] > 1.8e19).sum())}, indent=1))


if __name__ == "__main__":
    main()
