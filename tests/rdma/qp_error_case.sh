#!/bin/sh
# Rank 0 of two moves its queue pair to the error state after 1000 data writes (past the init probe), inside
# an allreduce. Both ranks must fail (not hang, not succeed): rank 0 with the
# completion error (HCCL_E_ROCE_TRANSFER), rank 1 told of it (HCCL_E_REMOTE or its own
# RoCE error). Exits 0 when that is what happened; a rank still running after 90 s
# counts as a hang (its threads' kernel stacks are printed).
perf=$1
# 64 KiB slots: the count of writes then lands inside the timed ops, past the init probe.
export HOSTCCL_RDMA_SLOTS=16 HOSTCCL_RDMA_SLOT_BYTES=65536
port=$(( 20000 + $$ % 12000 ))
RANK=0 WORLD_SIZE=2 LOCAL_RANK=0 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port HOSTCCL_RDMA_INJECT_QP_ERROR=${INJECT_AFTER:-1000} \
    "$perf" -b 4M -e 4M -n 40 -w 2 > /tmp/qp0 2>&1 &
p0=$!
RANK=1 WORLD_SIZE=2 LOCAL_RANK=1 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
    "$perf" -b 4M -e 4M -n 40 -w 2 > /tmp/qp1 2>&1 &
p1=$!
waited=0
while [ $waited -lt 90 ] && { kill -0 $p0 2>/dev/null || kill -0 $p1 2>/dev/null; }; do sleep 1; waited=$((waited + 1)); done
for p in $p0 $p1; do
    if kill -0 $p 2>/dev/null; then
        echo "--- pid $p still running after 90 s; its threads:"
        for t in /proc/$p/task/*; do echo "thread $(basename $t) $(cat $t/comm) in $(cat $t/wchan)"; head -n 4 $t/stack; done
        kill -9 $p
    fi
done
wait $p0; rc0=$?
wait $p1; rc1=$?
echo "rank 0 exit $rc0, rank 1 exit $rc1"
echo "--- rank 0:"; grep -v "^#" /tmp/qp0 | tail -n 4
echo "--- rank 1:"; grep -v "^#" /tmp/qp1 | tail -n 4
ok=1
[ $rc0 -ne 0 ] && [ $rc0 -lt 128 ] || ok=0   # failed by itself, not killed
[ $rc1 -ne 0 ] && [ $rc1 -lt 128 ] || ok=0
grep -q "HCCL_E_ROCE_TRANSFER" /tmp/qp0 || ok=0
grep -q -E "HCCL_E_REMOTE|HCCL_E_ROCE_TRANSFER" /tmp/qp1 || ok=0
[ $ok -eq 1 ] && echo "both ranks failed with the RoCE error, no hang" && exit 0
echo "expected both ranks to fail with the RoCE error"; exit 1
