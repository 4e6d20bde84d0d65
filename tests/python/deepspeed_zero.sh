#!/usr/bin/env bash
# DeepSpeed on CPUs with hostccl as its communication backend
# (deepspeed.init_distributed(dist_backend="hostccl")): examples/pytorch/deepspeed_train.py,
# ZeRO stages 1 and 2, 4 processes under torchrun, each checked to hold rank 0's model; stage
# 2 again on Gloo, and hostccl's parameters must be Gloo's but for rounding.
#   deepspeed_zero.sh <python of a torch 2.x venv with deepspeed> <PYTHONPATH tree for it>
# Exits 77 with the reason when DeepSpeed is not in that venv.
set -uo pipefail
same_parameters=$(realpath "$(dirname "$0")/same_parameters.py")
py=$1 tree=$2
example=$(realpath "$(dirname "$0")/../../examples/pytorch/deepspeed_train.py")
"$py" -c "import deepspeed" >/dev/null 2>&1 ||
    { echo "SKIPPED: no DeepSpeed beside $py (scripts/setup-torch.sh installs it beside the newest torch)"; exit 77; }
dir=$(mktemp -d /tmp/hostccl-deepspeed-XXXXXX)
trap 'rm -rf "$dir"' EXIT
status=0
run() {  # run <backend> <stage>
    local out rc started=$SECONDS
    out=$(DS_ACCELERATOR=cpu PYTHONPATH="$tree" OMP_NUM_THREADS=1 timeout 300 "$py" -m torch.distributed.run \
        --nproc-per-node 4 --master-port $((20000 + RANDOM % 12000)) "$example" --backend "$1" --zero-stage "$2" \
        --checkpoint "$dir/$1-$2.pt" 2>&1)
    rc=$?
    if [ $rc -eq 0 ] && grep -q "^$1, ZeRO stage $2, 4 ranks: final loss" <<<"$out"; then
        echo "DeepSpeed ZeRO stage $2 on $1, 4 processes: ok ($(grep -o 'final loss [0-9.]*' <<<"$out"), $((SECONDS - started)) s)"
    else
        echo "DeepSpeed ZeRO stage $2 on $1: FAILED (exit $rc)"; tail -40 <<<"$out"; status=1
    fi
}
run hostccl 1
run hostccl 2
run gloo 2
if compared=$("$py" "$same_parameters" "$dir/hostccl-2.pt" "$dir/gloo-2.pt" 1e-6); then
    echo "ZeRO stage 2: hostccl's parameters are Gloo's: ok ($compared)"
else
    echo "ZeRO parameters against Gloo: FAILED ($compared)"
    status=1
fi
exit $status
