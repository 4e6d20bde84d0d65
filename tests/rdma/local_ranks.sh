#!/bin/sh
# local_ranks.sh N program args...: N processes of `program` as ranks 0..N-1 of one
# job on this machine (torchrun-style variables); exits non-zero if any rank does.
n=$1; shift
port=$(( 20000 + $$ % 12000 ))
pids=""
for r in $(seq 0 $((n - 1))); do
    RANK=$r WORLD_SIZE=$n LOCAL_RANK=$r MASTER_ADDR=127.0.0.1 MASTER_PORT=$port "$@" > /tmp/rank$r.out 2>&1 &
    pids="$pids $!"
done
rc=0
for p in $pids; do wait $p || rc=1; done
cat /tmp/rank0.out
[ $rc -eq 0 ] || { echo "a rank failed:"; tail -n 5 /tmp/rank*.out; }
exit $rc
