#!/usr/bin/env bash
# The PyTorch DDP example as users start it: mp.spawn (tcp://), Open MPI's mpirun and
# MPICH's mpiexec (env://, rank and size from the launcher's variables), and Slurm's
# variables as srun sets them (no srun here). Each run must exit 0 with every rank
# holding rank 0's model, its loss falling; then bench/pytorch/allreduce_bench.py on both
# backends. Usage: examples.sh <python> <ddp_train.py>
set -uo pipefail
python=$1 script=$2
status=0
port() { echo $((20000 + RANDOM % 12000)); }
check() {  # check <name> <command...>
    local name=$1 out
    shift
    out=$("$@" 2>&1)
    local rc=$?
    local first last
    first=$(grep -m1 -o 'loss [0-9.]*' <<<"$out" | cut -d' ' -f2)
    last=$(grep -o 'final loss [0-9.]*' <<<"$out" | cut -d' ' -f3)
    if [ $rc -eq 0 ] && [ -n "$first" ] && [ -n "$last" ] && awk -v a="$first" -v b="$last" 'BEGIN { exit !(b < a) }'; then
        echo "$name: ok (loss $first -> $last)"
    else
        echo "$name: FAILED (exit $rc, loss '$first' -> '$last')"; echo "$out"; status=1
    fi
}
args=(--steps 16 --warmup 4 --print-every 5 --width 8)
check "mp.spawn, topk hook" timeout 300 "$python" "$script" --spawn 2 --port "$(port)" --hook topk:0.1 "${args[@]}"
if command -v mpirun.openmpi >/dev/null; then
    check "Open MPI mpirun" timeout 300 mpirun.openmpi --allow-run-as-root --oversubscribe -np 2 \
        -x MASTER_ADDR=127.0.0.1 -x MASTER_PORT="$(port)" -x PYTHONPATH "$python" "$script" --hook fp16 "${args[@]}"
else
    echo "Open MPI mpirun: skipped (not installed; scripts/setup-deps.sh installs it)"
fi
if command -v mpiexec.mpich >/dev/null; then
    check "MPICH mpiexec" timeout 300 mpiexec.mpich -n 2 -env HOSTCCL_ROOT_ADDR "127.0.0.1:$(port)" "$python" "$script" "${args[@]}"
else
    echo "MPICH mpiexec: skipped (not installed; scripts/setup-deps.sh installs it)"
fi
slurm() {  # two processes with the variables srun gives its tasks; a port, or "step": srun's own meeting point
    local p=$1 pids=() rc=0 meet
    shift
    for r in 0 1; do
        if [ "$p" = step ]; then  # the step's first node, the port from the job and step ids
            meet="SLURM_JOB_ID=$job SLURM_STEP_ID=0 SLURM_STEP_NODELIST=localhost SLURMD_NODENAME=localhost"
        else
            meet="SLURM_JOB_ID=77 HOSTCCL_ROOT_ADDR=127.0.0.1:$p"
        fi
        env -u MASTER_ADDR -u MASTER_PORT -u HOSTCCL_ROOT_ADDR SLURM_PROCID=$r SLURM_NTASKS=2 SLURM_LOCALID=$r $meet \
            timeout 300 "$python" "$script" "$@" > /tmp/hostccl-ddp-slurm-$$-$r 2>&1 &
        pids+=($!)
    done
    for pid in "${pids[@]}"; do wait "$pid" || rc=1; done
    cat /tmp/hostccl-ddp-slurm-$$-*
    rm -f /tmp/hostccl-ddp-slurm-$$-*
    return $rc
}
check "Slurm's variables" slurm "$(port)" --hook sign "${args[@]}"
job=$((100000 + RANDOM))
check "Slurm's variables, no meeting point set" slurm step "${args[@]}"

# A rank bound to one core (as mpirun --bind-to core or srun --cpu-bind leave it) runs one
# intra-op thread there, however many cores the host has.
if command -v taskset >/dev/null; then
    core=$("$python" -c 'import os; print(min(os.sched_getaffinity(0)))')  # one this process may run on
    out=$(taskset -c "$core" timeout 300 "$python" "$script" --spawn 1 --port "$(port)" "${args[@]}" 2>&1)
    if grep -q ", 1 intra-op threads:" <<<"$out"; then
        echo "bound to one core: ok (1 intra-op thread)"
    else
        echo "bound to one core: FAILED (not 1 intra-op thread)"; echo "$out"; status=1
    fi
else
    echo "bound to one core: skipped (no taskset)"
fi

# hostccl's planner: the CNN described (hostccl.planner.describe_module, its comm hooks
# timed), planned for two data-parallel ranks from Python, trained with the first plan
# (its batch, micro-batches, buckets and hook), which the summary line must show.
plandir=$(mktemp -d /tmp/hostccl-ddp-plan.XXXXXX)
if "$python" "$script" --describe-model "$plandir/cnn.json" --width 8 && "$python" - "$plandir" <<'PY'
import json, sys
import hostccl.planner as planner
cnn = json.load(open(sys.argv[1] + "/cnn.json"))
# Each compressor the planner tries, timed as the example's DDP comm hook trains it.
assert sorted(cnn["compression_overhead_seconds"]) == ["bf16", "fp16", "sign", "topk:0.01"], cnn
r = planner.plan(sys.argv[1] + "/cnn.json", global_batch=32,
                 extra_args=["--ranks-per-host", "2", "--tp", "1", "--pp", "1", "--compression", "none,fp16", "--gflops", "20"])
json.dump(r, open(sys.argv[1] + "/plan.json", "w"))
p = r["plans"][0]
print("batch %d in %d micro-batches, buckets %.3g MiB" % (32 // p["dp"], p["micro_batches"], p["bucket_bytes"] / 2**20),
      file=open(sys.argv[1] + "/want", "w"))
PY
then
    check "planned (--plan)" timeout 300 "$python" "$script" --spawn 2 --port "$(port)" --plan "$plandir/plan.json" "${args[@]}"
    want=$(cat "$plandir/want")
    out=$(timeout 300 "$python" "$script" --spawn 2 --port "$(port)" --plan "$plandir/plan.json" "${args[@]}" 2>&1)
    grep -qF "$want" <<<"$out" || { echo "planned run does not show '$want':"; echo "$out"; status=1; }
    # ... and the planner's prediction against the run's own step.
    predicted=$("$python" -c 'import json,sys; print("%.2f" % json.load(open(sys.argv[1]))["plans"][0]["predicted"]["step_ms"])' \
        "$plandir/plan.json")
    grep -qE "^plan .*plan.json: predicted $predicted ms a step, measured [0-9.]+ ms \([-+][0-9]+ %\)$" <<<"$out" \
        || { echo "planned run does not report the prediction ($predicted ms):"; echo "$out"; status=1; }
else
    echo "planning the CNN: FAILED"; status=1
fi
rm -rf "$plandir"

# bench/pytorch/allreduce_bench.py, briefly, on both backends (it checks its sums itself).
bench=$(cd "$(dirname "$script")/../.." && pwd)/bench/pytorch/allreduce_bench.py
for backend in hostccl gloo; do
    p=$(port) pids=()
    for r in 0 1; do
        env RANK=$r WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$p GLOO_SOCKET_IFNAME=lo timeout 300 "$python" "$bench" \
            --backend $backend --sizes 8,1M --iters-small 20 --iters-large 2 --rounds 1 > /tmp/hostccl-bench-$$-$r 2>&1 &
        pids+=($!)
    done
    ok=1
    for pid in "${pids[@]}"; do wait "$pid" || ok=0; done
    rows=$(awk '$1 == 8 || $1 == 1048576' /tmp/hostccl-bench-$$-0 | wc -l)
    if [ $ok -eq 1 ] && [ "$rows" -eq 2 ]; then echo "allreduce_bench on $backend: ok"; else
        echo "allreduce_bench on $backend: FAILED"; cat /tmp/hostccl-bench-$$-*; status=1; fi
    rm -f /tmp/hostccl-bench-$$-*
done
exit $status
