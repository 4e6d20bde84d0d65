#!/usr/bin/env bash
# Is hostccl-plan right for the PyTorch DDP example? Describes its CNN
# (hostccl.planner.describe_module, with what DDP adds to a step and what RANKS
# processes of it cost each other on this host), plans it for
# RANKS local processes (--tp 1 --pp 1 --overlap on: DDP is data parallelism, and the
# example's compressors are DDP comm hooks, which overlap), then trains the first 5
# plans and 5 spread over the rest RUNS times each with mp.spawn and prints predicted
# against measured median step time, with the issue's two verdicts.
#   bash bench/planner/validate_ddp.sh [--ranks 2] [--batch 64] [--width 8] [--steps 40] [--runs 3]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${HOSTCCL_BUILD:-$root/build}
ranks=2 batch=64 width=8 steps=40 runs=3
while [ $# -gt 0 ]; do
    case $1 in
        --ranks) ranks=$2; shift 2 ;;
        --batch) batch=$2; shift 2 ;;
        --width) width=$2; shift 2 ;;
        --steps) steps=$2; shift 2 ;;
        --runs) runs=$2; shift 2 ;;
        *) echo "validate_ddp.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
py=/usr/bin/python3 plan=$build/tools/plan/hostccl-plan example=$root/examples/pytorch/ddp_train.py
# Steady step times on CPUs (bench/pytorch/compare.sh, docs/pytorch-performance.md).
export PYTHONPATH=$build/python HOSTCCL_PLAN=$plan OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
export MALLOC_MMAP_THRESHOLD_=4294967296 MALLOC_TRIM_THRESHOLD_=4294967296
source "$root/bench/planner/common.sh"
dir=$(mktemp -d /tmp/hostccl-plan-ddp.XXXXXX)
trap 'rm -rf "$dir"' EXIT

sharing=()
[ "$ranks" -lt 2 ] || sharing=(--host-sharing "$ranks")  # what the ranks cost each other, measured with the model's processes
"$py" "$example" --describe-model "$dir/cnn.json" --width "$width" --batch $((batch / ranks)) "${sharing[@]}"
described "$dir/cnn.json"
"$plan" --model "$dir/cnn.json" --global-batch "$batch" --probe --probe-ranks "$ranks" --tp 1 --pp 1 --overlap on \
    --top 10 -o "$dir/plan.json"  # the top 10 with their parts beside the measured table
step_ms() {
    local out
    out=$("$py" "$example" --spawn "$ranks" --width "$width" --steps "$steps" --warmup 10 \
        --plan "$dir/plan.json:$1" --port $((29000 + RANDOM % 3000)) 2>&1) || { echo "$out" >&2; return 1; }
    sed -n 's/.*median step \([0-9.]*\) ms.*/\1/p' <<<"$out" | head -1
}
run_plans "$dir/plan.json" "$runs" "$dir/rows" step_ms
