#!/usr/bin/env bash
# What live monitoring costs (issue 20: at most 1 %): allreduce at 8 B and 64 MiB,
# two processes on shared memory started with launcher variables (as bench/compare.sh
# runs hostccl), with monitoring off (HOSTCCL_MONITOR=0: no measurement, no monitor
# thread) and on with its endpoint (HOSTCCL_METRICS_PORT=0), the two alternating run
# by run so that the machine's drift falls on both. Prints per size the median time
# of each and the overhead of on over off.
#   bash bench/monitor_overhead.sh [--runs N] [--ranks N]
set -uo pipefail
cd "$(dirname "$0")/.."
runs=9 ranks=2
while [ $# -gt 0 ]; do
    case $1 in
        --runs) runs=$2; shift ;;
        --ranks) ranks=$2; shift ;;
        *) echo "unknown argument $1"; exit 2 ;;
    esac
    shift
done
bash scripts/setup-deps.sh && bash scripts/build.sh >/dev/null || exit 1
perf=build/bench/perf/allreduce_perf
logs=$(mktemp -d /tmp/hostccl-monitor-overhead.XXXXXX)

one_run() {  # monitor(0|1) bytes iters warmup: prints rank 0's out-of-place time, us
    local on=$1 size=$2 iters=$3 warm=$4 p pids=() r
    p=$((20000 + RANDOM % 12000))
    for r in $(seq 0 $((ranks - 1))); do
        env RANK=$r WORLD_SIZE=$ranks LOCAL_RANK=$r HOSTCCL_ROOT_ADDR=127.0.0.1:$p HOSTCCL_MONITOR=$on \
            $( [ "$on" = 1 ] && echo HOSTCCL_METRICS_PORT=0 ) \
            timeout 120 "$perf" -b $size -e $size -n $iters -w $warm >"$logs/out.$r" 2>&1 &
        pids+=($!)
    done
    wait "${pids[@]}"
    awk '$1 ~ /^[0-9]+$/ { print $6; exit }' "$logs/out.0"
}
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'; }

echo "Command: \`bash bench/monitor_overhead.sh --runs $runs --ranks $ranks\` on $(date -u +%Y-%m-%d), $(nproc) cores."
echo
echo "| size | monitoring off, us (median of $runs) | on, us | overhead |"
echo "|---|---|---|---|"
for spec in "8 2000 200" "67108864 10 2"; do
    read -r size iters warm <<<"$spec"
    : >"$logs/off" && : >"$logs/on"
    for k in $(seq 1 "$runs"); do
        one_run 0 "$size" "$iters" "$warm" >>"$logs/off"
        one_run 1 "$size" "$iters" "$warm" >>"$logs/on"
    done
    off=$(median <"$logs/off") on=$(median <"$logs/on")
    awk -v s="$size" -v a="$off" -v b="$on" 'BEGIN {
        printf "| %s | %.3f | %.3f | %+.1f %% |\n", (s >= 1048576 ? s / 1048576 " MiB" : s " B"), a, b, (a > 0 ? 100 * (b / a - 1) : 0) }'
    echo "   runs off: $(sort -g "$logs/off" | tr '\n' ' ')" >&2
    echo "   runs on:  $(sort -g "$logs/on" | tr '\n' ' ')" >&2
done
rm -rf "$logs"
