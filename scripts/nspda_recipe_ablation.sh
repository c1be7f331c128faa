#!/bin/bash
# Which piece of the NSPDA paper's model and recipe keeps a trained NSPDA from learning a^n b^n: one run per row,
# each the paper's recipe (the grammar tasks' defaults: SGD 0.1005000321 annealed, clip 13, Algorithm 1, stop at
# 100 % training accuracy) for nspda2 (M1) with 23 state neurons, half of the rules inserted (Hint #2) and no noise,
# then the row's changes; every run cut at 2 minutes of training. Writes OUT/ROW/ (a run directory each) and prints a
# markdown table: epochs run, the last epoch's training loss, validation and training accuracy, test error.
#
#   scripts/nspda_recipe_ablation.sh [OUT [TASK]]   (default runs/nspda-recipe-ablation, pda-anbn; about 30 minutes,
#                                                   one core; TASK pda-anbn-end: the strings end with a marker)
set -euo pipefail
OUT=${1:-runs/nspda-recipe-ablation}
TASK=${2:-pda-anbn}
cd "$(dirname "$0")/.."
COMMON=(train "$TASK" --model nspda2 --hidden 23 --insert-rules 0.5 --noise 0 --max-minutes 2 --quiet --force)
CONTINUOUS=(--weight-values step --weight-step 0)
declare -A ROWS=(
  ["a last-step loss, K=1, continuous weights"]="--no-score-every-step --refine 1 ${CONTINUOUS[*]}"
  ["b a + Algorithm 2 noise (beta 1)"]="--no-score-every-step --refine 1 --noise 1 ${CONTINUOUS[*]}"
  ["c a + learning-rate noise"]="--no-score-every-step --refine 1 --lr-noise 0.5 ${CONTINUOUS[*]}"
  ["d a + loss at every step (eq. 15)"]="--score-every-step --refine 1 ${CONTINUOUS[*]}"
  ["e d + refinement K=4 (eq. 17)"]="--score-every-step --refine 4 ${CONTINUOUS[*]}"
  ["f e + binary/ternary weights (the paper's recipe, no noise)"]="--score-every-step --refine 4"
  ["g earlier model, last-step loss, K=1"]="--no-score-every-step --refine 1 --pairing state-read --action-quantizer round --read-values onehot --readout state-read ${CONTINUOUS[*]}"
  ["h a with the state-read response"]="--no-score-every-step --refine 1 --readout state-read ${CONTINUOUS[*]}"
  ["i h + loss at every step"]="--score-every-step --refine 1 --readout state-read ${CONTINUOUS[*]}"
  ["j i + refinement K=4"]="--score-every-step --refine 4 --readout state-read ${CONTINUOUS[*]}"
  ["k j + binary/ternary weights"]="--score-every-step --refine 4 --readout state-read"
  ["l earlier model, the paper's loss and refinement"]="--score-every-step --refine 4 --pairing state-read --action-quantizer round --read-values onehot --readout state-read ${CONTINUOUS[*]}"
  ["m h + refinement K=4 (last-step loss)"]="--no-score-every-step --refine 4 --readout state-read ${CONTINUOUS[*]}"
)
echo "| row | settings | epochs | last training loss | validation accuracy | training accuracy | test error % |"
echo "|---|---|---|---|---|---|---|"
for row in $(printf '%s\n' "${!ROWS[@]}" | sort | tr ' ' '\001'); do
  row=$(echo "$row" | tr '\001' ' ')
  dir="$OUT/${row%% *}"
  # shellcheck disable=SC2086
  nice -n 5 python cli.py "${COMMON[@]}" --out "$dir" ${ROWS[$row]} > /dev/null
  python - "$dir" "$row" "${ROWS[$row]}" <<'PY'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1] + "/log.jsonl")]
metrics = json.load(open(sys.argv[1] + "/metrics.json"))
last = rows[-1]
print(f"| {sys.argv[2]} | `{sys.argv[3]}` | {len(rows)} | {last['train_loss']:.3f} | {last['val_accuracy']:.2f} | "
      f"{last.get('train_accuracy', float('nan')):.2f} | {metrics['error_by_split']['test']:.1f} |")
PY
done
