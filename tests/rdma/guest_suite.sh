#!/bin/sh
# PID 1 of the soft-RoCE guest (tests/rdma/run.sh boots it): sets up rdma_rxe on lo,
# runs hostccl's RDMA suite with the transport forced, prints "RDMA SUITE DONE
# result=PASS|FAIL" on the serial console, and powers off. The host's build tree is
# mirrored at the same absolute paths, so tests find their workers where they were built
# (so nothing is mounted over /tmp: a checkout there would vanish under it).
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
mount -t proc proc /proc 2>/dev/null
mount -t sysfs sysfs /sys 2>/dev/null
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mount -t tmpfs tmpfs /dev/shm 2>/dev/null || { mkdir -p /dev/shm && mount -t tmpfs tmpfs /dev/shm; }
mount -o remount,rw / 2>/dev/null
ulimit -l unlimited
[ -s /etc/hosts ] || printf '127.0.0.1 localhost\n' > /etc/hosts
. /hostccl-suite.env  # BUILD, SRC, RANKS, STEPS, written by run.sh
export LD_LIBRARY_PATH=/hostccl-libs
t() { echo "=== [$(cut -d' ' -f1 /proc/uptime)s] $*"; }
finish() { t "RDMA SUITE DONE result=$1"; sync; echo o > /proc/sysrq-trigger; sleep 30; }
RES=PASS
check() {  # check NAME command...: runs it (bounded), records a failure
    name=$1; shift
    t "$name: $*"
    timeout "${STEP_TIMEOUT:-600}" "$@" > /tmp/out 2>&1; rc=$?
    tail -n "${TAIL:-25}" /tmp/out
    if [ $rc -eq 0 ]; then t "$name OK"; else t "$name FAILED (rc=$rc)"; RES=FAIL; fi
}

ip link set lo up
modprobe rdma_rxe || finish FAIL-modprobe
rdma link add rxe0 type rxe netdev lo || finish FAIL-rdma-link
sleep 1
ibv_devinfo -d rxe0 | grep -E "state|active_mtu|link_layer"
export HOSTCCL_TRANSPORT=rdma HOSTCCL_LOG_LEVEL=info

want() { case ",$STEPS," in *",$1,"*) return 0 ;; esac; return 1; }

# 1. Every collective, 2-4 ranks as processes, every op, sizes up to several MB: the
#    process matrix, all families in one job per rank count (a job per family would
#    spend most of the time starting ranks under emulation), in one dtype of each
#    element size (the transport's slots hold whole elements; the kernels are the same
#    as over TCP, where the main suite runs every dtype), ${MATRIX_DTYPES} to change;
#    then the worker's own suite: aclrtMalloc memory, a sub-communicator, two
#    communicators at once.
W="$BUILD/tests/mp_worker"
for n in $RANKS; do
    want matrix && check "matrix_${n}ranks" sh "$SRC/tests/rdma/worker_job.sh" "$W" $n "all:${MATRIX_DTYPES:-int8,fp16,fp32,fp64}"
done
want matrix && check worker_suite_3ranks sh "$SRC/tests/rdma/worker_job.sh" "$W" 3
# 1b. Rings shrunk to a budget (HOSTCCL_RDMA_RING_BUDGET at its 1 MiB minimum: 3 ranks'
#     2 links each get 4 x 64 KiB slots instead of 8 x 1 MiB): every family still exact,
#     messages spanning many slots and credits.
if want ring_budget; then
    check ring_budget_3ranks env HOSTCCL_RDMA_RING_BUDGET=1048576 sh "$SRC/tests/rdma/worker_job.sh" "$W" 3 "all:fp32"
    grep -q "RDMA rings of 4 x 64 KiB" /tmp/worker0.out || { t "ring_budget: the rings were not shrunk"; RES=FAIL; }
fi
# 2. Sub-communicators and the typed C++ collectives (ranks as threads of one process).
want subcomm && check subcomm "$BUILD/tests/cxx_api_test" --gtest_filter='CxxApi.SplitIntoGroups:CxxApi.TypedCollectives:CxxApi.AsyncAllReduceManyInFlight'
# 3. Zero-copy sends from aclrtMalloc memory: registered once, forgotten by aclrtFree.
want zero_copy && check zero_copy "$BUILD/tests/rdma_zero_copy_test"
# 4. An injected queue-pair error on rank 0 must fail the op on both ranks, not hang.
want qp_error && TAIL=20 check qp_error sh "$SRC/tests/rdma/qp_error_case.sh" "$BUILD/bench/perf/allreduce_perf"
# 5. Bandwidth: hostccl's allreduce and send/recv beside ib_write_bw, 4 MiB messages.
if want bandwidth; then
    # hostccl's send/recv between 2 ranks is a ring exchange (both directions at once),
    # so ib_write_bw runs bidirectionally (-b) as well as one way. Each configuration is
    # slots x slot bytes / smallest zero-copy send (0: always through staging).
    for cfg in ${BW_CONFIGS:-8x1048576/65536 8x1048576/0 16x65536/65536}; do
        ring=${cfg%/*}
        export HOSTCCL_RDMA_SLOTS=${ring%x*} HOSTCCL_RDMA_SLOT_BYTES=${ring#*x} HOSTCCL_RDMA_ZERO_COPY_BYTES=${cfg#*/}
        TAIL=4 check "bw_allreduce_$cfg" sh "$SRC/tests/rdma/local_ranks.sh" 2 "$BUILD/bench/perf/allreduce_perf" -b 4M -e 4M -n 20 -w 3
        TAIL=4 check "bw_sendrecv_$cfg" sh "$SRC/tests/rdma/local_ranks.sh" 2 "$BUILD/bench/perf/sendrecv_perf" -b 4M -e 4M -n 20 -w 3
        echo "sends: $(grep -h 'closed:' /tmp/rank0.out | tail -n 1 | sed 's/.*closed: //')"  # how many zero-copy
    done
    unset HOSTCCL_RDMA_SLOTS HOSTCCL_RDMA_SLOT_BYTES HOSTCCL_RDMA_ZERO_COPY_BYTES
    for mode in "" "-b"; do
        timeout 120 ib_write_bw -d rxe0 -x 1 -F -s 4194304 -n 100 --report_gbits $mode > /tmp/srv 2>&1 &
        sleep 2
        TAIL=2 check "ib_write_bw$mode" timeout 120 ib_write_bw -d rxe0 -x 1 -F -s 4194304 -n 100 --report_gbits $mode 127.0.0.1
        wait
    done
fi
finish $RES
