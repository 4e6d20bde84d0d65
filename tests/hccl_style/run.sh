#!/usr/bin/env bash
# The CANN-style install as HCCL programs use it: install the build, source its
# set_env.sh, build tests/hccl_style with a Makefile written the way HCCL's are, and
# run every family under Open MPI's mpirun and MPICH's mpiexec. Also: installed
# tools start without LD_LIBRARY_PATH, the library aliases resolve to ours.
set -euo pipefail
trap 'echo "FAILED at line $LINENO: $BASH_COMMAND (status $?)"' ERR
build=$1 src=$2
if ! command -v mpirun.openmpi >/dev/null || ! command -v mpiexec.mpich >/dev/null; then
  echo "SKIPPED: Open MPI (mpirun.openmpi) and MPICH (mpiexec.mpich) are needed; scripts/setup-deps.sh installs them"
  exit 77
fi
work=$(mktemp -d /tmp/hostccl-hccl-style.XXXXXX)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >/dev/null

# Installed executables find their libraries through RUNPATH.
# (Outputs are captured before grep reads them: `cmd | grep -q` fails under pipefail
# when grep's early exit makes cmd die of SIGPIPE.)
perf_out=$(env -u LD_LIBRARY_PATH "$prefix/bin/allreduce_perf" -p 2 -b 8 -e 1K -f 32 -n 1 -w 1)
grep -q "Out of bounds values : 0 OK" <<<"$perf_out"
echo "installed allreduce_perf without LD_LIBRARY_PATH: ok"

# shellcheck disable=SC1091
source "$prefix/set_env.sh"
[ "$ASCEND_HOME_PATH" = "$prefix" ] && [ "$ASCEND_DIR" = "$prefix" ] && [ -e "$prefix/lib64/libhccl.so" ]
for alias in acl_rt msprofiler; do
  grep -q "INPUT(-l" "$prefix/lib64/lib$alias.so"
done
echo "set_env.sh, lib64 and the library aliases: ok"

for mpi in openmpi mpich; do
  mpi_home=$(bash "$src/scripts/mpi-home.sh" $mpi "$work/mpi-$mpi")
  mkdir -p "$work/bin-$mpi"
  make -s -C "$src/tests/hccl_style" ASCEND_HOME_PATH="$ASCEND_HOME_PATH" MPI_HOME="$mpi_home" OUT="$work/bin-$mpi"
  test_bin=$work/bin-$mpi/hccl_style_test
  libs=$(ldd "$test_bin")
  grep -q "libhccl.so.0 => $prefix/lib" <<<"$libs"
  if [ $mpi = openmpi ]; then
    launch=(mpirun.openmpi --allow-run-as-root --oversubscribe -x LD_LIBRARY_PATH -n) counts="2 3 4"
  else
    launch=(mpiexec.mpich -n) counts="2 4"
  fi
  for n in $counts; do
    for family in vmm range symwin prof group; do
      mkdir -p "$work/run-$mpi-$n-$family"
      timeout 300 "${launch[@]}" "$n" "$test_bin" $family "$work/run-$mpi-$n-$family" | tee "$work/out" | tail -1
      grep -q "^$family on $n ranks: ok$" "$work/out"
    done
  done
done
# Buffers inside the registered windows reach the direct algorithms as offsets: the
# window path runs (not only the ordinary one).
HOSTCCL_LOG_LEVEL=debug HOSTCCL_DIRECT_MIN_BYTES=0 timeout 300 mpirun.openmpi --allow-run-as-root --oversubscribe \
  -x LD_LIBRARY_PATH -x HOSTCCL_LOG_LEVEL -x HOSTCCL_DIRECT_MIN_BYTES -n 2 "$work/bin-openmpi/hccl_style_test" symwin \
  "$work" > "$work/out" 2>&1 || { tail -20 "$work/out"; exit 1; }
grep -q "^symwin on 2 ranks: ok$" "$work/out"
windowed=$(grep -c "buffers in symmetric window" "$work/out" || true)
[ "$windowed" -gt 0 ] || { echo "no operator used the symmetric windows"; exit 1; }
echo "symmetric windows used by $windowed operator runs"
echo "hccl_style: every family ok under Open MPI and MPICH"
