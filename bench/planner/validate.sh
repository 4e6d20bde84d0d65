#!/usr/bin/env bash
# Is hostccl-plan right? Plans train_mlp on this host (ranks as threads, the cluster
# probed, GEMMs and the crowded host's sync cost measured), then trains the
# planner's first 5 plans and 5 more spread over the rest, each 3 times, and prints
# predicted against measured step time per plan, with the issue's two verdicts:
# >= 80 % of the plans within 20 % of the measured median, and the first choice
# the fastest measured or within 10 % of it.
#   bash bench/planner/validate.sh [--ranks 4] [--batch 256] [--steps 25] [--runs 3] [-- train_mlp model flags]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${HOSTCCL_BUILD:-$root/build}
ranks=4 batch=256 steps=25 runs=3
model=(--width 256 --hidden 1024 --blocks 4)
while [ $# -gt 0 ]; do
    case $1 in
        --ranks) ranks=$2; shift 2 ;;
        --batch) batch=$2; shift 2 ;;
        --steps) steps=$2; shift 2 ;;
        --runs) runs=$2; shift 2 ;;
        --) shift; model=("$@"); break ;;
        *) echo "validate.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
mlp=$build/examples/train_mlp plan=$build/tools/plan/hostccl-plan py=/usr/bin/python3
dir=$(mktemp -d /tmp/hostccl-plan-validate.XXXXXX)
trap 'rm -rf "$dir"' EXIT

"$mlp" --describe-model "$dir/model.json" "${model[@]}"
"$plan" --model "$dir/model.json" --global-batch "$batch" --probe --probe-ranks "$ranks" --top 10 \
    -o "$dir/plan.json" | tee "$dir/plan.txt" | grep '^#'
# Which plans to run: the first 5, then 5 spread evenly over the rest.
mapfile -t chosen < <($py - "$dir/plan.json" <<'PY'
import json, sys
plans = json.load(open(sys.argv[1]))["plans"]
runnable = [p["rank"] for p in plans]
top, rest = runnable[:5], runnable[5:]
spread = [rest[round(i * (len(rest) - 1) / 4)] for i in range(5)] if len(rest) >= 5 else rest
for r in top + sorted(set(spread)):
    print(r)
PY
)
echo "| plan rank | plan | predicted ms | measured ms (median of $runs) | runs | error |"
echo "|---|---|---|---|---|---|"
for n in "${chosen[@]}"; do
    times=()
    for ((k = 0; k < runs; k++)); do
        out=$(OPENBLAS_NUM_THREADS=1 "$mlp" --ranks "$ranks" --batch "$batch" "${model[@]}" --lr 0.005 --steps "$steps" --quiet \
            --plan "$dir/plan.json:$n" 2>&1) || { echo "$out"; exit 1; }
        times+=("$(sed -n 's/.* step_ms=\([0-9.]*\).*/\1/p' <<<"$out")")
    done
    $py - "$dir/plan.json" "$n" "${times[@]}" <<'PY' | tee -a "$dir/rows"
import json, statistics, sys
p = json.load(open(sys.argv[1]))["plans"][int(sys.argv[2]) - 1]
t = sorted(float(x) for x in sys.argv[3:])
m, pred = statistics.median(t), p["predicted"]["step_ms"]
print(f"| {p['rank']} | {p['label']} | {pred:.2f} | {m:.2f} | {' '.join(f'{x:.2f}' for x in t)} | {100 * (pred / m - 1):+.0f} % |")
PY
done
$py - "$dir/rows" <<'PY'
import sys
rows = [l.split("|") for l in open(sys.argv[1])]
pred = [float(r[3]) for r in rows]; meas = [float(r[4]) for r in rows]; rank = [int(r[1]) for r in rows]
within = sum(abs(p / m - 1) <= 0.2 for p, m in zip(pred, meas))
first = meas[rank.index(min(rank))]
print(f"\npredicted within 20 % of measured: {within} of {len(rows)} ({100 * within / len(rows):.0f} %; requirement 80 %): "
      f"{'met' if within >= 0.8 * len(rows) else 'missed'}")
print(f"first choice measured {first:.2f} ms, fastest measured {min(meas):.2f} ms ({100 * (first / min(meas) - 1):.0f} % slower; "
      f"requirement within 10 %): {'met' if first <= 1.1 * min(meas) else 'missed'}")
PY
