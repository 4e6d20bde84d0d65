#!/usr/bin/env bash
# An all-to-all among 8 processes, each on an emulated host of its own (so no host is
# crowded): its first op sets up its links several at a time (connect ahead), and
# every value arrives exactly.   connect_ahead.sh <scale_bench>
set -uo pipefail
bench=$1 n=8 port=$((20000 + RANDOM % 12000)) dir=$(mktemp -d /tmp/hostccl-ahead.XXXXXX)
trap 'rm -rf "$dir"' EXIT
pids=()
for r in $(seq 0 $((n - 1))); do
    env HOSTCCL_ROOT_ADDR=127.0.0.1:$port RANK=$r WORLD_SIZE=$n LOCAL_RANK=0 HOSTCCL_HOST_ID=h$r \
        HOSTCCL_LOG_LEVEL=debug timeout 120 "$bench" --op alltoall >"$dir/out.$r" 2>&1 &
    pids+=($!)
done
bad=0
for p in "${pids[@]}"; do wait "$p" || bad=1; done
if [ $bad != 0 ]; then
    echo "a rank failed"; tail -5 "$dir"/out.*; exit 1
fi
grep "^ranks" "$dir/out.0"
if ! grep -q "result exact" "$dir/out.0"; then
    echo "rank 0 did not report exact results"; exit 1
fi
ahead=$(grep -l "connected ahead to" "$dir"/out.* | wc -l)
echo "$ahead of $n ranks connected ahead"
[ "$ahead" -ge 1 ] || { echo "no rank set up its links ahead of the first all-to-all"; exit 1; }
