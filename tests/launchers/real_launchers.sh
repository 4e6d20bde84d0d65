#!/usr/bin/env bash
# The perf tools under the real launchers (scripts/setup-deps.sh installs Open MPI
# and MPICH). Exits 77 (skipped) with
# the reason when none is installed.
set -uo pipefail
tool=$1
ran=0 status=0
check() {
    local name=$1; shift
    local out
    out=$(timeout 180 "$@" "$tool" -b 8 -e 256K -f 16 -n 3 -w 1 2>&1)
    if [ $? -eq 0 ] && grep -q "Out of bounds values : 0 OK" <<<"$out"; then echo "$name: ok"; else echo "$name: FAILED"; echo "$out"; status=1; fi
    ran=1
}
if command -v mpirun.openmpi >/dev/null; then
    check "Open MPI mpirun" mpirun.openmpi --allow-run-as-root --oversubscribe -np 4 -x HOSTCCL_ROOT_ADDR=127.0.0.1:$((20000 + RANDOM % 12000))
fi
if command -v mpiexec.mpich >/dev/null; then
    check "MPICH mpiexec" mpiexec.mpich -n 4 -env HOSTCCL_ROOT_ADDR 127.0.0.1:$((20000 + RANDOM % 12000))
fi
[ $ran -eq 1 ] || { echo "SKIPPED: neither Open MPI's mpirun nor MPICH's mpiexec is installed (scripts/setup-deps.sh installs them)"; exit 77; }
exit $status
