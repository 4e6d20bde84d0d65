#!/usr/bin/env bash
# Runs the elastic example on 4 local processes (torchrun-style environment); by
# default rank 2 dies in step 26 and the other three shrink and finish.
# Usage: run.sh <elastic_example binary> [--steps N] [--kill-rank R] [--kill-step S]
set -u
bin=${1:?usage: run.sh <elastic_example binary> [flags]}
shift
# Below the ephemeral range (32768 on), where an outgoing connection may hold the port.
port=$(( 20000 + RANDOM % 12000 ))
out=$(mktemp -d /tmp/hostccl-elastic.XXXXXX)
trap 'rm -rf "$out"' EXIT
pids=()
for r in 0 1 2 3; do
    RANK=$r WORLD_SIZE=4 LOCAL_RANK=$r MASTER_ADDR=127.0.0.1 MASTER_PORT=$port "$bin" "$@" > "$out/$r" 2>&1 &
    pids+=($!)
done
status=0 finished=0
for r in 0 1 2 3; do
    wait "${pids[$r]}" 2>/dev/null
    rc=$?
    cat "$out/$r"
    # The rank told to die ends by SIGKILL (137); every other must finish consistent.
    if [ $rc -eq 137 ]; then continue; fi
    if [ $rc -ne 0 ]; then echo "rank $r exited with $rc"; status=1; fi
    grep -q -- "-> consistent" "$out/$r" && finished=$((finished + 1))
done
echo "elastic: $finished ranks finished consistent"
exit $status
