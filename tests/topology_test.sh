#!/usr/bin/env bash
# --topology / HostcclCommDescribe: four processes on two emulated hosts
# (HOSTCCL_HOST_ID), two ranks each. Rank 0 must name both hosts with their
# ranks, shared memory inside a host and TCP across, and no direct algorithm
# (that needs one host); one host of three threads must pick direct for 2 MiB (but
# for reducescatter, whose ring reduces on arrival at the pinned model's 8 GB/s).
# The cost model's numbers are pinned (HOSTCCL_COST_MODEL: no probe), so the
# choices are the model's and not this machine's mood: over a slow inter-host link
# the hierarchical allreduce wins at 2 MiB; tiny vectors go by recursive doubling.
set -uo pipefail
export HOSTCCL_COST_MODEL="shm=2us/4GBps tcp=30us/0.125GBps reduce=8GBps copy=8GBps"
tool=$1
out=$(mktemp /tmp/hostccl-topology.XXXXXX)
trap 'rm -f "$out"*' EXIT
port=$((20000 + RANDOM % 12000))
pids=()
for rank in 0 1 2 3; do
    env -u HCCL_ALGO -u HOSTCCL_TRANSPORT RANK=$rank WORLD_SIZE=4 LOCAL_RANK=$((rank % 2)) \
        HOSTCCL_ROOT_ADDR=127.0.0.1:$port HOSTCCL_HOST_ID=host$((rank / 2)) \
        timeout 120 "$tool" -b 8 -e 8 -n 1 -w 0 --topology >"$out.$rank" 2>&1 &
    pids+=($!)
done
for i in "${!pids[@]}"; do wait "${pids[$i]}" || { echo "rank $i failed:"; cat "$out.$i"; exit 1; }; done
expect() {  # pattern, file
    grep -qE "$1" "$2" || { echo "missing: $1"; cat "$2"; exit 1; }
}
expect "^# communicator .*: 4 ranks on 2 hosts; this is rank 0" "$out.0"
expect "^# host 0 \(host0\): [0-9]+ cores, [0-9]+ NUMA nodes?; ranks 0 \(local 0\) 1 \(local 1\)$" "$out.0"
expect "^# host 1 \(host1\): [0-9]+ cores, [0-9]+ NUMA nodes?; ranks 2 \(local 0\) 3 \(local 1\)$" "$out.0"
expect "^#   rank   0: \. s t t$" "$out.0"
expect "^#   rank   3: t t s \.$" "$out.0"
expect "^# cost model: shm alpha 2.00us beta 4.000GB/s \(config\), tcp alpha 30.00us beta 0.125GB/s \(config\)" "$out.0"
expect "^# +8 +recursive-doubling " "$out.0"
expect "^# +2097152 +hierarchical " "$out.0"
if grep -qE "^# +[0-9]+ .*direct" "$out.0"; then echo "direct chosen across hosts"; cat "$out.0"; exit 1; fi
if grep -q "^# communicator" "$out.1"; then echo "rank 1 printed the description too"; exit 1; fi
echo "two hosts ok"

env -u HCCL_ALGO -u HOSTCCL_TRANSPORT -u HOSTCCL_DIRECT_MIN_BYTES "$tool" -p 3 -b 8 -e 8 -n 1 -w 0 --topology >"$out.t" 2>&1 || { cat "$out.t"; exit 1; }
expect "^# communicator .*: 3 ranks on 1 host; this is rank 0" "$out.t"
expect "^#   rank   1: s \. s$" "$out.t"
expect "^# +2097152 +direct +direct +ring +direct +direct +direct$" "$out.t"
expect "^# +8 +recursive-doubling " "$out.t"
echo "one host ok"

# HOSTCCL_ALGO_EXPLAIN: rank 0 prints each candidate's estimate and marks the choice,
# once per collective and power-of-two size.
HOSTCCL_ALGO_EXPLAIN=1 "$tool" -p 3 -b 8 -e 2M -f 512 -n 2 -w 1 >"$out.x" 2>&1 || { cat "$out.x"; exit 1; }
expect "^\[hostccl\] explain: comm .* AllReduce 8 B over 3 ranks on 1 host\(s\):$" "$out.x"
expect "^  \* recursive-doubling +[0-9.]+ us$" "$out.x"
expect "^    hierarchical +[0-9.]+ us  \(cannot run this call\)$" "$out.x"
expect "^\[hostccl\] explain: comm .* AllReduce 2097152 B over 3 ranks on 1 host\(s\):$" "$out.x"
expect "^  \* direct +[0-9.]+ us$" "$out.x"
[ "$(grep -c "explain: .* AllReduce 8 B" "$out.x")" = 1 ] || { echo "explained more than once"; cat "$out.x"; exit 1; }
echo "explain ok"

# A malformed HOSTCCL_COST_MODEL fails creation with a clear error.
if HOSTCCL_COST_MODEL="shm=fast" "$tool" -p 2 -b 8 -e 8 -n 1 -w 0 >"$out.bad" 2>&1; then
    echo "a bad HOSTCCL_COST_MODEL was accepted"; cat "$out.bad"; exit 1
fi
expect "HOSTCCL_COST_MODEL \"shm=fast\": 'shm=fast': expected shm=<alpha>us/<bandwidth>GBps" "$out.bad"
echo "bad cost model rejected"

# With an override the table shows the forced families (the description builds the
# same normalised layouts as the API, displacements included).
HCCL_ALGO="level0:NA;level1:H-D_R" "$tool" -p 3 -b 8 -e 8 -n 1 -w 0 --topology >"$out.h" 2>&1 || { cat "$out.h"; exit 1; }
expect "^# +8 +halving-doubling +halving-doubling +halving-doubling +scatter-allgather " "$out.h"
echo "override ok"
