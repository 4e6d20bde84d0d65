#!/usr/bin/env bash
# Hierarchical algorithms across a slow link (issue 4's benchmark): two emulated
# hosts (this network namespace and a new one, joined by veth shaped to RATE each way
# with tc tbf), RANKS_PER_HOST processes on each, started with launcher variables.
# For each collective at SIZE: busbw with the flat algorithm, the hierarchical one
# and the selector's own choice. Needs root (ip netns, tc).
#   bash bench/shaped_hosts.sh [--rate 1gbit] [--ranks-per-host 4] [--size 64M] [--out FILE]
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD rate=1gbit per_host=4 size=64M out=""
while [ $# -gt 0 ]; do
    case $1 in
        --rate) rate=$2; shift ;;
        --ranks-per-host) per_host=$2; shift ;;
        --size) size=$2; shift ;;
        --out) out=$2; shift ;;
        *) echo "unknown argument $1"; exit 2 ;;
    esac
    shift
done
[ "$(id -u)" -eq 0 ] || { echo "skipped: needs root for ip netns and tc"; exit 0; }
bash scripts/setup-deps.sh && bash scripts/build.sh >/dev/null || exit 1
tag=hsh$$ nsB=hsh$$b vethA=hsh$$a ipA=10.234.0.1 ipB=10.234.0.2
ip netns add "$nsB" || exit 1
trap 'ip netns del "$nsB" 2>/dev/null; ip link del "$vethA" 2>/dev/null' EXIT
ip link add "$vethA" type veth peer name ${tag}b0 && ip link set ${tag}b0 netns "$nsB"
ip addr add $ipA/24 dev "$vethA" && ip link set "$vethA" up
ip -n "$nsB" addr add $ipB/24 dev ${tag}b0 && ip -n "$nsB" link set ${tag}b0 up && ip -n "$nsB" link set lo up
tc qdisc add dev "$vethA" root tbf rate "$rate" burst 256kb latency 50ms
ip netns exec "$nsB" tc qdisc add dev ${tag}b0 root tbf rate "$rate" burst 256kb latency 50ms
logs=$(mktemp -d /tmp/hostccl-shaped.XXXXXX)
n=$((2 * per_host))

# run COLL HCCL_ALGO-or-auto: rank 0's table in $logs/COLL.ALGO
run() {
    local coll=$1 algo=$2 port=$((20000 + RANDOM % 12000)) pids=() envs=()
    [ "$algo" != auto ] && envs=("HCCL_ALGO=$coll=level0:NA;level1:$algo")
    for r in $(seq 0 $((n - 1))); do
        local cmd=(env -u HCCL_ALGO "${envs[@]}" RANK=$r WORLD_SIZE=$n LOCAL_RANK=$((r % per_host))
                   HOSTCCL_ROOT_ADDR=$ipA:$port HOSTCCL_ALGO_EXPLAIN=1
                   timeout 600 "$root/build/bench/perf/${coll}_perf" -b "$size" -e "$size" -n 3 -w 1 -c 0)
        if [ $r -lt $per_host ]; then
            "${cmd[@]}" >"$logs/$coll.$algo.$r" 2>&1 &
        else
            ip netns exec "$nsB" unshare --uts bash -c "hostname $nsB; $(printf '%q ' "${cmd[@]}")" >"$logs/$coll.$algo.$r" 2>&1 &
        fi
        pids+=($!)
    done
    wait "${pids[@]}"
}
busbw() { awk '$1 ~ /^[0-9]+$/ { print $8; exit }' "$1"; }
chosen() { awk '/^  \* / { print $2; exit }' "$1"; }

{
echo "Command: \`bash bench/shaped_hosts.sh --rate $rate --ranks-per-host $per_host --size $size\` on $(date -u +%Y-%m-%d), $(nproc) cores."
echo
echo "| collective | flat algorithm | flat busbw GB/s | hierarchical busbw GB/s | hierarchical / flat | selector's choice | its busbw GB/s |"
echo "|---|---|---|---|---|---|---|"
for spec in allreduce:ring allgather:ring reducescatter:ring broadcast:binomial; do
    coll=${spec%%:*} flat=${spec#*:}
    for algo in "$flat" NHR auto; do run "$coll" "$algo"; done
    f=$(busbw "$logs/$coll.$flat.0") h=$(busbw "$logs/$coll.NHR.0") a=$(busbw "$logs/$coll.auto.0")
    awk -v c="$coll" -v fl="$flat" -v f="${f:-0}" -v h="${h:-0}" -v ch="$(chosen "$logs/$coll.auto.0")" -v a="${a:-0}" \
        'BEGIN { printf "| %s | %s | %.3f | %.3f | %.2fx | %s | %.3f |\n", c, fl, f, h, (f > 0 ? h / f : 0), ch, a }'
done
} | tee "${out:-/dev/null}"
echo "raw tables: $logs"
