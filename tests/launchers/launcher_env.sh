#!/usr/bin/env bash
# A perf tool started as N processes with each launcher's environment variables
# (no launcher needed): Open MPI, MPICH/hydra, Slurm and torchrun schemes. Every
# process must exit 0 and rank 0 must report a fully verified table.
set -uo pipefail
tool=$1
n=3
status=0
run_scheme() {
    local name=$1; shift
    # Below the ephemeral range (32768 on), where any outgoing connection may hold the port.
    local port=$((20000 + RANDOM % 12000))
    local pids=() out=/tmp/hostccl-launcher-$$-$name
    for rank in $(seq 0 $((n - 1))); do
        env "$@" HOSTCCL_ROOT_ADDR=127.0.0.1:$port $(scheme_vars "$name" "$rank") \
            timeout 120 "$tool" -b 8 -e 1M -f 32 -n 3 -w 1 >"$out-$rank" 2>&1 &
        pids+=($!)
    done
    local ok=1
    for i in "${!pids[@]}"; do wait "${pids[$i]}" || { ok=0; echo "$name rank $i failed:"; cat "$out-$i"; }; done
    grep -q "Out of bounds values : 0 OK" "$out-0" || { ok=0; echo "$name: rank 0 did not report a verified table"; cat "$out-0"; }
    [ "$(grep -c 'Out of bounds' "$out-1")" -eq 0 ] || { ok=0; echo "$name: rank 1 printed a table too"; }
    rm -f "$out"-*
    echo "$name: $([ $ok -eq 1 ] && echo ok || echo FAILED)"
    [ $ok -eq 1 ] || status=1
}
scheme_vars() {
    local r=$2
    case $1 in
        openmpi) echo "OMPI_COMM_WORLD_RANK=$r OMPI_COMM_WORLD_SIZE=$n OMPI_COMM_WORLD_LOCAL_RANK=$r" ;;
        mpich) echo "PMI_RANK=$r PMI_SIZE=$n MPI_LOCALRANKID=$r" ;;
        slurm) echo "SLURM_PROCID=$r SLURM_NTASKS=$n SLURM_LOCALID=$r SLURM_JOB_ID=4242" ;;
        torchrun) echo "RANK=$r WORLD_SIZE=$n LOCAL_RANK=$r" ;;
    esac
}
for scheme in openmpi mpich slurm torchrun; do run_scheme $scheme; done
# torchrun's own variables as the meeting point
port=$((20000 + RANDOM % 12000))
for r in 0 1; do
    env RANK=$r WORLD_SIZE=2 LOCAL_RANK=$r MASTER_ADDR=localhost MASTER_PORT=$port timeout 120 "$tool" -b 8 -e 1K -f 8 -n 2 -w 1 \
        >/tmp/hostccl-master-$$-$r 2>&1 &
done
wait && grep -q "0 OK" /tmp/hostccl-master-$$-0 && echo "MASTER_ADDR/MASTER_PORT: ok" || { echo "MASTER_ADDR/MASTER_PORT: FAILED"; cat /tmp/hostccl-master-$$-*; status=1; }
rm -f /tmp/hostccl-master-$$-*
# srun without a meeting point set: the step's first node, on the port derived from the
# job and step ids (core/slurm_meeting_point.h).
job=$((100000 + RANDOM))
for r in 0 1; do
    env -u MASTER_ADDR -u MASTER_PORT -u HOSTCCL_ROOT_ADDR SLURM_PROCID=$r SLURM_NTASKS=2 SLURM_LOCALID=$r \
        SLURM_JOB_ID=$job SLURM_STEP_ID=0 SLURM_STEP_NODELIST="localhost,other[1-3]" SLURMD_NODENAME=localhost \
        timeout 120 "$tool" -b 8 -e 1K -f 8 -n 2 -w 1 >/tmp/hostccl-slurm-$$-$r 2>&1 &
done
wait && grep -q "0 OK" /tmp/hostccl-slurm-$$-0 && echo "Slurm step's own meeting point: ok" ||
    { echo "Slurm step's own meeting point: FAILED"; cat /tmp/hostccl-slurm-$$-*; status=1; }
rm -f /tmp/hostccl-slurm-$$-*
# refused <name> <pattern> <env assignments...>: rank 0 alone with these variables (and no
# meeting point set) must fail at once, its output matching the pattern.
refused() {
    local name=$1 pattern=$2 out rc
    shift 2
    out=$(env -u MASTER_ADDR -u MASTER_PORT -u HOSTCCL_ROOT_ADDR "$@" timeout 60 "$tool" -b 8 -e 8 -n 1 -w 0 2>&1)
    rc=$?
    if [ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q "$pattern" <<<"$out"; then
        echo "$name: ok"
    else
        echo "$name: FAILED (exit $rc)"; echo "$out"; status=1
    fi
}
# Rank 0 placed off the step's first node: it fails at once, naming the variable to set.
refused "Slurm rank 0 off the first node" "not on the step's first node localhost.*HOSTCCL_ROOT_ADDR" \
    SLURM_PROCID=0 SLURM_NTASKS=2 SLURM_JOB_ID=$job SLURM_STEP_ID=1 SLURM_STEP_NODELIST="localhost,other[1-3]" \
    SLURMD_NODENAME=other2
# A launcher's variables without a meeting point: the process fails, naming what to
# set, instead of running a job of its own.
refused "no meeting point" "no meeting point" OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=2
exit $status
