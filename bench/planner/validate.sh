#!/usr/bin/env bash
# Is hostccl-plan right? Plans train_mlp on this host (ranks as threads, the cluster
# probed, GEMMs and the crowded host's sync cost measured), then trains the
# planner's first 5 plans and 5 more spread over the rest, each 3 times, and prints
# predicted against measured step time per plan, with the issue's two verdicts:
# >= 80 % of the plans within 20 % of the measured median, and the first choice
# the fastest measured or within 10 % of it.
# With --all every plan the planner lists runs instead (narrow the search with
# --search, e.g. --search "--compression none --buckets 1M --overlap off --max-micro-batches 8").
#   bash bench/planner/validate.sh [--ranks 4] [--batch 256] [--steps 25] [--runs 3] [--all] [--search "ARGS"]
#                                  [-- train_mlp model flags]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${HOSTCCL_BUILD:-$root/build}
ranks=4 batch=256 steps=25 runs=3 top=10 search=()
model=(--width 256 --hidden 1024 --blocks 4)
while [ $# -gt 0 ]; do
    case $1 in
        --ranks) ranks=$2; shift 2 ;;
        --batch) batch=$2; shift 2 ;;
        --steps) steps=$2; shift 2 ;;
        --runs) runs=$2; shift 2 ;;
        --all) export PLAN_CHOICE=all; top=0; shift ;;
        --search) read -r -d '' -a search <<<"$2" || true; shift 2 ;;  # every word, over lines too
        --) shift; model=("$@"); break ;;
        *) echo "validate.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
mlp=$build/examples/train_mlp plan=$build/tools/plan/hostccl-plan py=/usr/bin/python3
source "$root/bench/planner/common.sh"
dir=$(mktemp -d /tmp/hostccl-plan-validate.XXXXXX)
trap 'rm -rf "$dir"' EXIT

"$mlp" --describe-model "$dir/model.json" "${model[@]}"
"$plan" --model "$dir/model.json" --global-batch "$batch" --probe --probe-ranks "$ranks" --top "$top" \
    "${search[@]}" -o "$dir/plan.json" | tee "$dir/plan.txt" | grep '^#'
# One step time of the plan at rank $1 (run_plans chooses the plans: common.sh).
step_ms() {
    local out
    out=$(OPENBLAS_NUM_THREADS=1 "$mlp" --ranks "$ranks" --batch "$batch" "${model[@]}" --lr 0.005 --steps "$steps" --quiet \
        --plan "$dir/plan.json:$1" 2>&1) || { echo "$out" >&2; return 1; }
    sed -n 's/.* step_ms=\([0-9.]*\).*/\1/p' <<<"$out"
}
run_plans "$dir/plan.json" "$runs" "$dir/rows" step_ms
