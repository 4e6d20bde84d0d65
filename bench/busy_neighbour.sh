#!/usr/bin/env bash
# A job beside a busy program: 2 ranks on shared memory, each collective at 8 B and
# 64 KiB, run alone and then with one busy loop (another program's thread that never
# sleeps) on the machine: hostccl and Open MPI 5 (when scripts/setup-peers.sh has
# installed it), alternating launch by launch. Prints each library's median time per op
# over the launches and its worst launch. On 2 cores the busy loop takes one core's
# share from whichever rank the scheduler puts beside it.
#   bash bench/busy_neighbour.sh [--runs N] [--collectives "allreduce broadcast"]
set -uo pipefail
cd "$(dirname "$0")/.."
runs=7 collectives="allreduce reducescatter broadcast"
while [ $# -gt 0 ]; do
    case $1 in
        --runs) runs=$2; shift ;;
        --collectives) collectives=$2; shift ;;
        *) echo "unknown argument $1"; exit 2 ;;
    esac
    shift
done
bash scripts/setup-deps.sh && bash scripts/build.sh >/dev/null || exit 1
openmpi5=/var/cache/hostccl/peers/openmpi/bin/mpirun harness=build-peers/mpi_perf_openmpi5
[ -x "$openmpi5" ] && [ -x "$harness" ] || openmpi5=""
logs=$(mktemp -d /tmp/hostccl-busy-neighbour.XXXXXX)
hog=""
trap '[ -n "$hog" ] && kill $hog 2>/dev/null; rm -rf "$logs"' EXIT  # an interrupted run leaves no busy loop

hostccl_run() {  # coll bytes iters: rank 0's out-of-place time, us
    local p=$((20000 + RANDOM % 12000)) pids=() r
    for r in 0 1; do
        env RANK=$r WORLD_SIZE=2 LOCAL_RANK=$r HOSTCCL_ROOT_ADDR=127.0.0.1:$p \
            timeout 120 "build/bench/perf/$1_perf" -b $2 -e $2 -n $3 -w 100 >"$logs/out.$r" 2>&1 &
        pids+=($!)
    done
    wait "${pids[@]}"
    awk '$1 ~ /^[0-9]+$/ { print $6; exit }' "$logs/out.0"
}
openmpi5_run() {  # the same through the MPI harness
    timeout 120 "$openmpi5" --allow-run-as-root --oversubscribe -np 2 "$harness" $1 -b $2 -e $2 -n $3 -w 100 2>/dev/null |
        awk '$1 ~ /^[0-9]+$/ { print $6; exit }'
}
summary() { sort -g | awk '{ v[NR] = $1 } END { if (NR) printf "%s (worst %s)", v[int((NR + 1) / 2)], v[NR]; else printf "-" }'; }

echo "Command: \`bash bench/busy_neighbour.sh --runs $runs\` on $(date -u +%Y-%m-%d), $(nproc) cores; us per op, median of $runs launches."
echo
echo "| collective | size | hostccl alone | hostccl beside a busy loop | Open MPI 5 alone | Open MPI 5 beside a busy loop |"
echo "|---|---|---|---|---|---|"
for coll in $collectives; do
    for size in 8 65536; do
        iters=500; [ $size -gt 8 ] && iters=200
        for busy in 0 1; do
            [ $busy = 1 ] && { timeout 600 sh -c 'while :; do :; done' & hog=$!; sleep 0.2; }
            for i in $(seq 1 "$runs"); do
                hostccl_run $coll $size $iters >>"$logs/hostccl.$busy"
                [ -n "$openmpi5" ] && openmpi5_run $coll $size $iters >>"$logs/openmpi5.$busy"
            done
            [ $busy = 1 ] && { kill $hog; hog=""; }
        done
        row="| $coll | $size B | $(summary <"$logs/hostccl.0") | $(summary <"$logs/hostccl.1") |"
        if [ -n "$openmpi5" ]; then row+=" $(summary <"$logs/openmpi5.0") | $(summary <"$logs/openmpi5.1") |"; else row+=" not installed | |"; fi
        echo "$row"
        rm -f "$logs"/hostccl.* "$logs"/openmpi5.*
    done
done
