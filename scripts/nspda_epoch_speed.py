"""Training speed of the paper's NSPDA recipe where Table 4's runs spend their time: Algorithm 1 held in stage 1's
random phase (every training length up to N_Tr = 14) from the first epoch, so that a short run times the epochs a
long one is made of. `train`'s own command otherwise (UORO, K = 4, the inserted rules, Algorithm 2's noise, online
SGD), epochs of --epoch-size strings; its per-epoch line gives train_chars_per_s and epoch_seconds. Run from the
root of the checkout to time (its own `stackparse` is imported):

    python scripts/nspda_epoch_speed.py pda-palindrome-random --minutes 1.5 --out RUN [--model nspda2 --hidden 22]
"""
import argparse
import os
import runpy
import sys

sys.path.insert(0, os.getcwd())

import stackparse.training.sequence as sequence  # noqa: E402

parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("task")
parser.add_argument("--minutes", default="1.5")
parser.add_argument("--out", required=True)
parser.add_argument("--model", default="nspda2")
parser.add_argument("--hidden", default="22")
parser.add_argument("--epoch-size", default="1000")
args = parser.parse_args()
if not sequence.__file__.startswith(os.getcwd()):
    sys.exit(f"run from the checkout to time: stackparse comes from {sequence.__file__}")
# Algorithm 1's step at every epoch: stage 1's random phase at the longest stage-1 length
sequence.algorithm1 = lambda epoch, converged, midpoint, n_max, bounds, n_min=1: sequence.Step(1, "random", midpoint)
sys.argv = ["cli.py", "train", args.task, "--model", args.model, "--hidden", args.hidden, "--insert-rules", "0.5",
            "--weight-values", "step", "--weight-step", "0", "--seed", "1", "--max-minutes", args.minutes,
            "--epoch-size", args.epoch_size, "--out", args.out, "--force"]
runpy.run_path("cli.py", run_name="__main__")
