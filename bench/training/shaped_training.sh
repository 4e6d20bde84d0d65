#!/usr/bin/env bash
# Issue 6's training benchmarks on emulated hosts: HOSTS network namespaces (one rank
# each) joined by a bridge, every host's link shaped to RATE each way with tc tbf, so
# the data-parallel allreduce crosses a slow network as between real machines.
#   overlap:     train_mlp with gradient buckets launched during backward and without
#                (--no-overlap); exposed communication of each and the share hidden
#   compression: train_mlp with each compressor: bytes on the wire and final loss
# Needs root (ip netns, tc). Prints markdown tables (to --out FILE as well).
#   bash bench/training/shaped_training.sh [--rate 1gbit] [--hosts 4] [--steps 12] [--out FILE]
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$PWD rate=1gbit hosts=4 steps=12 out=""
model=(--width 512 --hidden 2048 --blocks 2 --batch 512 --features 256 --classes 16)
while [ $# -gt 0 ]; do
    case $1 in
        --rate) rate=$2; shift ;;
        --hosts) hosts=$2; shift ;;
        --steps) steps=$2; shift ;;
        --out) out=$2; shift ;;
        *) echo "unknown argument $1"; exit 2 ;;
    esac
    shift
done
[ "$(id -u)" -eq 0 ] || { echo "skipped: needs root for ip netns and tc"; exit 0; }
bin=$root/build/examples/train_mlp
[ -x "$bin" ] || { bash scripts/setup-deps.sh && bash scripts/build.sh >/dev/null; } || exit 1
tag=st$$ bridge=st$$br
ip link add "$bridge" type bridge && ip link set "$bridge" up || exit 1
cleanup() {
    for h in $(seq 0 $((hosts - 1))); do ip netns del "${tag}h$h" 2>/dev/null; ip link del "${tag}p$h" 2>/dev/null; done
    ip link del "$bridge" 2>/dev/null
}
trap cleanup EXIT
for h in $(seq 0 $((hosts - 1))); do
    ns=${tag}h$h
    ip netns add "$ns"
    ip link add "${tag}p$h" type veth peer name "${tag}n$h"
    ip link set "${tag}n$h" netns "$ns"
    ip link set "${tag}p$h" master "$bridge" up
    ip -n "$ns" addr add 10.235.0.$((h + 1))/24 dev "${tag}n$h"
    ip -n "$ns" link set "${tag}n$h" up && ip -n "$ns" link set lo up
    # Both directions of the host's link: out of the host, and out of the bridge to it.
    ip netns exec "$ns" tc qdisc add dev "${tag}n$h" root tbf rate "$rate" burst 256kb latency 50ms
    tc qdisc add dev "${tag}p$h" root tbf rate "$rate" burst 256kb latency 50ms
done
logs=$(mktemp -d /tmp/hostccl-training.XXXXXX)

# run NAME train_mlp-flags...: rank 0's output in $logs/NAME
run() {
    local name=$1 port=$((20000 + RANDOM % 12000)) pids=()
    shift
    for h in $(seq 0 $((hosts - 1))); do
        ip netns exec "${tag}h$h" env RANK=$h WORLD_SIZE=$hosts LOCAL_RANK=0 HOSTCCL_ROOT_ADDR=10.235.0.1:$port \
            OPENBLAS_NUM_THREADS=1 timeout 900 "$bin" --steps "$steps" --quiet "${model[@]}" "$@" \
            >"$logs/$name.$h" 2>&1 &
        pids+=($!)
    done
    wait "${pids[@]}"
    cp "$logs/$name.0" "$logs/$name"
}
field() { sed -n "s/.*[ ]$2=\([^ ]*\).*/\1/p" "$logs/$1" | tail -1; }

{
echo "Command: \`bash bench/training/shaped_training.sh --rate $rate --hosts $hosts --steps $steps\` on $(date -u +%Y-%m-%d), $(nproc) cores; $hosts namespace hosts, one rank each, TCP, every link $rate each way (tbf); model \`${model[*]}\`."
echo
run overlap
run no-overlap --no-overlap
echo "| mode | step ms | compute ms | exposed communication ms | allreduce run ms | buckets |"
echo "|---|---|---|---|---|---|"
for m in no-overlap overlap; do
    echo "| $m | $(field $m step_ms) | $(field $m compute_ms) | $(field $m exposed_comm_ms) | $(field $m comm_ms) | $(field $m buckets) |"
done
awk -v a="$(field overlap exposed_comm_ms)" -v b="$(field no-overlap exposed_comm_ms)" \
    'BEGIN { if (b > 0) printf "\nOverlap hides %.0f%% of the exposed allreduce time (1 - %.1f / %.1f ms).\n", 100 * (1 - a / b), a, b }'
echo
echo "| compression | wire bytes per step per rank | vs fp32 | first loss | final loss |"
echo "|---|---|---|---|---|"
for c in none fp16 bf16 topk:0.01 sign; do
    run "c-$c" --compression "$c"
    w=$(field "c-$c" wire_bytes_per_step) w0=$(field c-none wire_bytes_per_step)
    awk -v c="$c" -v w="$w" -v w0="$w0" -v f="$(field "c-$c" first_loss)" -v l="$(field "c-$c" final_loss)" \
        'BEGIN { printf "| %s | %.0f | %.3fx | %s | %s |\n", c, w, (w0 > 0 ? w / w0 : 0), f, l }'
done
} | tee "${out:-/dev/null}"
echo "raw output: $logs"
