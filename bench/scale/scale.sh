#!/usr/bin/env bash
# What a communicator costs as it grows (issue 16; the table in docs/scale.md):
# creation time, first op, steady op, descriptors / resident memory / shared memory
# per rank, for an allreduce-only job and an alltoall job, with ranks
#   - as threads of one process (16 .. 1024),
#   - as processes on this host (64, 256; launcher variables, no launcher needed),
#   - as processes spread over emulated hosts (network namespaces on a bridge:
#     shared memory inside a host, TCP between; needs root, skipped with a reason).
#   bash bench/scale/scale.sh [--threads "16 64 256 1024"] [--procs "64 256"] [--hosts 8] [--host-ranks 256]
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$PWD threads="16 64 256 1024" procs="64 256" hosts=8 host_ranks=256
while [ $# -gt 0 ]; do
    case $1 in
        --threads) threads=$2; shift ;;
        --procs) procs=$2; shift ;;
        --hosts) hosts=$2; shift ;;
        --host-ranks) host_ranks=$2; shift ;;
        *) echo "unknown argument $1"; exit 2 ;;
    esac
    shift
done
bench=$root/build/bench/scale/scale_bench
[ -x "$bench" ] || { echo "build first: bash scripts/build.sh"; exit 1; }
logs=$(mktemp -d /tmp/hostccl-scale.XXXXXX)

row() {  # a scale_bench line -> a markdown row, with where the ranks ran
    awk -v where="$1" '/^ranks / {
        for (i = 1; i < NF; i += 2) v[$i] = $(i + 1)
        printf "| %s | %s | %s | %s | %.2f | %.0f | %.0f | %.2f | %.2f | %.2f | %s |\n", v["ranks"], where, v["op"], v["count"],
            v["create_s"], v["first_op_ms"], v["op_us"], v["fds_per_rank"], v["rss_mib_per_rank"], v["shm_mib_per_rank"], v["result"] }'
}

# N processes with launcher variables; PREFIX(r) is the command prefix for rank r.
spawn() {  # n op prefix-function out
    local n=$1 op=$2 prefix=$3 out=$4 port=$((20000 + RANDOM % 12000)) pids=()
    for r in $(seq 0 $((n - 1))); do
        $prefix "$r" "$port" env RANK=$r WORLD_SIZE=$n timeout 900 "$bench" --op "$op" >"$out.$r" 2>&1 &
        pids+=($!)
    done
    local bad=0
    for p in "${pids[@]}"; do wait "$p" || bad=1; done
    [ $bad = 0 ] || { echo "a rank failed:" >&2; grep -l . "$out".* | head -3 | xargs tail -5 >&2; }
    cat "$out.0"
}
here() { echo "HOSTCCL_ROOT_ADDR=127.0.0.1:$2"; }
local_prefix() { env "$(here "$@")" LOCAL_RANK=$1 "${@:3}"; }

echo "| ranks | where | op | count | create s | first op ms | op us | fds / rank | RSS MiB / rank | shm MiB / rank | result |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
for n in $threads; do
    for op in allreduce alltoall; do
        # An all-to-all among n threads is n(n-1)/2 in-process links, each touching
        # pages of its rings: beyond 256 thread ranks that is tens of GB.
        if [ "$op" = alltoall ] && [ "$n" -gt 256 ]; then
            echo "| $n | threads, 1 process | alltoall | - | not run: n(n-1)/2 in-process links | | | | | | |"
            continue
        fi
        "$bench" -p "$n" --op "$op" 2>"$logs/t$n.$op.err" | row "threads, 1 process"
    done
done
for n in $procs; do
    for op in allreduce alltoall; do
        spawn "$n" "$op" local_prefix "$logs/p$n.$op" | row "processes, 1 host"
    done
done

# Emulated hosts: namespaces hs0..hs{H-1} on a bridge, 10.236.0.{i+1}.
if [ "$(id -u)" -ne 0 ] || ! ip netns list >/dev/null 2>&1; then
    echo
    echo "emulated hosts skipped: needs root for ip netns" >&2
    exit 0
fi
br=hsbr$$
cleanup() {
    for i in $(seq 0 $((hosts - 1))); do ip netns del hs$$-$i 2>/dev/null; done
    ip link del "$br" 2>/dev/null
}
trap cleanup EXIT
ip link add "$br" type bridge && ip link set "$br" up
for i in $(seq 0 $((hosts - 1))); do
    ns=hs$$-$i
    ip netns add "$ns"
    ip link add v$$h$i type veth peer name eth0 netns "$ns"
    ip link set v$$h$i master "$br" up
    ip -n "$ns" addr add 10.236.0.$((i + 1))/24 dev eth0
    ip -n "$ns" link set eth0 up && ip -n "$ns" link set lo up
done
per_host=$((host_ranks / hosts))
in_host() {  # rank port command...: runs in the rank's namespace with its own host id
    local r=$1 port=$2 h=$(($1 / per_host))
    ip netns exec hs$$-$h env HOSTCCL_ROOT_ADDR=10.236.0.1:$port HCCL_IF_IP=10.236.0.$((h + 1)) \
        HOSTCCL_HOST_ID=host$h LOCAL_RANK=$((r % per_host)) "${@:3}"
}
for op in allreduce alltoall; do
    spawn "$host_ranks" "$op" in_host "$logs/h$host_ranks.$op" | row "processes, $hosts hosts"
done
