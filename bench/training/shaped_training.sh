#!/usr/bin/env bash
# Issue 6's training benchmarks on emulated hosts: HOSTS network namespaces (one rank
# each) joined by a bridge, every host's link shaped to RATE each way with tc tbf, so
# the data-parallel allreduce crosses a slow network as between real machines.
#   overlap:     train_mlp with gradient buckets launched during backward and without
#                (--no-overlap); exposed communication of each and the share hidden
#   compression: train_mlp with each compressor: bytes on the wire and step time on
#                the shaped links, and the final loss of a longer run of a small
#                model on 4 local ranks (same data, same seed)
#   fused:       fused_matmul_bench (MC2-style ops, fused against unfused) across the hosts
# Needs root (ip netns, tc). Prints markdown tables (to --out FILE as well).
#   bash bench/training/shaped_training.sh [--rate 1gbit] [--hosts 4] [--steps 12]
#        [--parts overlap,compression,fused] [--out FILE]
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$PWD rate=1gbit hosts=4 steps=12 out="" parts=overlap,compression,fused
# 4.3 M parameters (17 MiB of gradients) in 4 MiB buckets: one bucket per block matrix,
# so the first are reduced while backward still computes the rest.
model=(--width 512 --hidden 2048 --blocks 2 --batch 1024 --features 256 --classes 16 --lr 0.01 --bucket-mb 4)
small=(--ranks 4 --steps 300 --quiet)
while [ $# -gt 0 ]; do
    case $1 in
        --rate) rate=$2; shift ;;
        --hosts) hosts=$2; shift ;;
        --steps) steps=$2; shift ;;
        --out) out=$2; shift ;;
        --parts) parts=$2; shift ;;
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

# onHosts NAME program args...: one rank per host; rank 0's output in $logs/NAME
onHosts() {
    local name=$1 port=$((20000 + RANDOM % 12000)) pids=()
    shift
    for h in $(seq 0 $((hosts - 1))); do
        ip netns exec "${tag}h$h" env RANK=$h WORLD_SIZE=$hosts LOCAL_RANK=0 HOSTCCL_ROOT_ADDR=10.235.0.1:$port \
            OPENBLAS_NUM_THREADS=1 timeout 900 "$@" >"$logs/$name.$h" 2>&1 &
        pids+=($!)
    done
    wait "${pids[@]}"
    cp "$logs/$name.0" "$logs/$name"
}
# run NAME train_mlp-flags...
run() {
    local name=$1
    shift
    onHosts "$name" "$bin" --steps "$steps" --quiet "${model[@]}" "$@"
}
want() { [[ ",$parts," == *",$1,"* ]]; }
field() { sed -n "s/.*[ ]$2=\([^ ]*\).*/\1/p" "$logs/$1" | tail -1; }

{
echo "Command: \`bash bench/training/shaped_training.sh --rate $rate --hosts $hosts --steps $steps --parts $parts\` on $(date -u +%Y-%m-%d), $(nproc) cores; $hosts namespace hosts, one rank each, TCP, every link $rate each way (tbf); model \`${model[*]}\`."
if want overlap; then
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
fi
if want compression; then
echo
echo "| compression | wire bytes per step per rank | vs fp32 | step ms (shaped) | exposed comm ms | loss after 300 steps (small model, 4 local ranks) |"
echo "|---|---|---|---|---|---|"
for c in none fp16 bf16 topk:0.01 sign; do
    run "c-$c" --compression "$c"
    OPENBLAS_NUM_THREADS=1 "$bin" "${small[@]}" --compression "$c" >"$logs/small-$c" 2>&1
    w=$(field "c-$c" wire_bytes_per_step) w0=$(field c-none wire_bytes_per_step)
    awk -v c="$c" -v w="$w" -v w0="$w0" -v s="$(field "c-$c" step_ms)" -v e="$(field "c-$c" exposed_comm_ms)" \
        -v l="$(field "small-$c" final_loss)" -v f="$(field "small-$c" first_loss)" \
        'BEGIN { printf "| %s | %.0f | %.3fx | %s | %s | %s (from %s) |\n", c, w, (w0 > 0 ? w / w0 : 0), s, e, l, f }'
done
fi
if want fused; then
    echo
    onHosts fused "$root/build/bench/training/fused_matmul_bench" --iters 5 --shape 1024x1024x1024 \
        --shape 2048x2048x1024 --shape 4096x1024x2048
    echo '```'
    cat "$logs/fused"
    echo '```'
fi
} | tee "${out:-/dev/null}"
echo "raw output: $logs"
