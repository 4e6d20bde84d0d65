#!/usr/bin/env bash
# hostccl-plan against measured steps across emulated hosts: 2 hosts (this network
# namespace and a new one, joined by veth shaped to RATE each way with tc tbf),
# PER_HOST train_mlp processes on each started with launcher variables. The cluster
# is probed across them (hostccl-sim --probe), the hosts given their part of this
# machine's cores, host sharing measured with thread ranks here (hostccl-plan
# --probe); then the first 5 plans and 5 spread over the rest run 3 times each, as
# bench/planner/validate.sh does on one host. Needs root (ip netns, tc).
#   bash bench/planner/validate_hosts.sh [--rate 1gbit] [--per-host 2] [--batch 256] [--steps 15] [--runs 3]
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$PWD rate=1gbit per_host=2 batch=256 steps=15 runs=3
model=(--width 256 --hidden 1024 --blocks 4)
while [ $# -gt 0 ]; do
    case $1 in
        --rate) rate=$2; shift 2 ;;
        --per-host) per_host=$2; shift 2 ;;
        --batch) batch=$2; shift 2 ;;
        --steps) steps=$2; shift 2 ;;
        --runs) runs=$2; shift 2 ;;
        *) echo "validate_hosts.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
[ "$(id -u)" -eq 0 ] || { echo "skipped: needs root for ip netns and tc"; exit 0; }
build=${HOSTCCL_BUILD:-$root/build}
mlp=$build/examples/train_mlp plan=$build/tools/plan/hostccl-plan sim=$build/tools/sim/hostccl-sim py=/usr/bin/python3
tag=vh$$ nsB=vh$$b vethA=vh$$a ipA=10.236.0.1 ipB=10.236.0.2
ip netns add "$nsB" || exit 1
source "$root/bench/planner/common.sh"
dir=$(mktemp -d /tmp/hostccl-plan-hosts.XXXXXX)
trap 'ip netns del "$nsB" 2>/dev/null; ip link del "$vethA" 2>/dev/null; rm -rf "$dir"' EXIT
ip link add "$vethA" type veth peer name ${tag}b0 && ip link set ${tag}b0 netns "$nsB"
ip addr add $ipA/24 dev "$vethA" && ip link set "$vethA" up
ip -n "$nsB" addr add $ipB/24 dev ${tag}b0 && ip -n "$nsB" link set ${tag}b0 up && ip -n "$nsB" link set lo up
tc qdisc add dev "$vethA" root tbf rate "$rate" burst 256kb latency 50ms
ip netns exec "$nsB" tc qdisc add dev ${tag}b0 root tbf rate "$rate" burst 256kb latency 50ms
n=$((2 * per_host))

# onHosts OUT program args...: n ranks, the second half in the other namespace (its own
# hostname, so hostccl sees two hosts); rank 0's output in OUT.
onHosts() {
    local out=$1 port=$((20000 + RANDOM % 12000)) pids=() rc=0
    shift
    for r in $(seq 0 $((n - 1))); do
        local cmd=(env RANK=$r WORLD_SIZE=$n LOCAL_RANK=$((r % per_host)) HOSTCCL_ROOT_ADDR=$ipA:$port
                   OPENBLAS_NUM_THREADS=1 timeout 600 "$@")
        if [ $r -lt $per_host ]; then
            "${cmd[@]}" >"$dir/rank.$r" 2>&1 &
        else
            ip netns exec "$nsB" unshare --uts bash -c "hostname $nsB; $(printf '%q ' "${cmd[@]}")" >"$dir/rank.$r" 2>&1 &
        fi
        pids+=($!)
    done
    for p in "${pids[@]}"; do wait "$p" || rc=1; done
    cp "$dir/rank.0" "$out"
    return $rc
}

"$mlp" --describe-model "$dir/model.json" "${model[@]}"
onHosts "$dir/platform.json" "$sim" --probe || { cat "$dir"/rank.*; exit 1; }
# This machine's cores, shared by the two emulated hosts; host sharing measured with
# thread ranks (as many as the whole job: they all share these cores).
cores=$(awk -v c="$(nproc)" 'BEGIN { h = c / 2; printf "%g", (h >= 1 ? int(h) : h) }')
local_out=$("$plan" --model "$dir/model.json" --global-batch "$batch" --probe --probe-ranks "$n" --top 1)
sync=$(sed -n 's/.* costs \([0-9.]*\) us more.*/\1/p' <<<"$local_out")
slow=$(sed -n 's/^# ranks sharing a host compute \([0-9.]*\)x.*/\1/p' <<<"$local_out")
"$plan" --model "$dir/model.json" --global-batch "$batch" --platform "$dir/platform.json" --cores "$cores" \
    --sync-us "${sync:-0}" --compute-slowdown "${slow:-1}" --top 10 -o "$dir/plan.json" | tee "$dir/plan.txt" | grep '^#'
mapfile -t chosen < <(choose_plans "$dir/plan.json")
echo "| plan rank | plan | predicted ms | measured ms (median of $runs) | runs | error |"
echo "|---|---|---|---|---|---|"
for k in "${chosen[@]}"; do
    times=()
    for ((i = 0; i < runs; i++)); do
        onHosts "$dir/out" "$mlp" --batch "$batch" "${model[@]}" --lr 0.005 --steps "$steps" --quiet --plan "$dir/plan.json:$k" \
            || { cat "$dir"/rank.*; exit 1; }
        times+=("$(sed -n 's/.* step_ms=\([0-9.]*\).*/\1/p' "$dir/out")")
    done
    plan_row "$dir/plan.json" "$k" "${times[@]}" | tee -a "$dir/rows"
done
verdicts "$dir/rows"
