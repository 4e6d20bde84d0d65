#!/usr/bin/env bash
# Installs the Debian packages hostccl needs to build and test. Idempotent: packages
# already present are not reinstalled, so a warm machine spends no time here.
set -euo pipefail

packages=(
  build-essential cmake pkg-config ninja-build ccache
  libspdlog-dev libfmt-dev         # logging
  libhwloc-dev                     # topology (cores, NUMA)
  nlohmann-json3-dev               # rank tables, traces
  libgtest-dev libgmock-dev        # tests
  libbenchmark-dev                 # micro-benchmarks
  libcli11-dev                     # command lines of the tools
  libopenblas-dev                  # GEMMs of the fused compute-communication ops
  libboost-context-dev             # the simulator's ranks as fibers (sim/)
  iproute2                         # network-namespace tests
  clang libclang-rt-dev            # sanitizer builds and libFuzzer targets (scripts/sanitize.sh)
  libibverbs-dev                   # the RDMA (RoCE) transport
  qemu-system-x86 debootstrap      # the RDMA suite's soft-RoCE guest (tests/rdma/run.sh)
  openmpi-bin libopenmpi-dev       # mpirun-started tests (launcher env, HCCL-Test-style programs)
  mpich libmpich-dev               # the same under MPICH's mpiexec.mpich (Hydra)
  slurm-wlm munge                  # a real Slurm on namespace hosts (tests/launchers/slurm_cluster.sh)
  chromium chromium-driver python3-selenium  # browser tests: the monitoring dashboard, the planner report
  python3-dev pybind11-dev python3-torch libtorch-dev python3-pytest python3-venv python3-pip python3-setuptools  # the PyTorch backend (python/; pip install ./python)
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

sudo_cmd=""
[ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
echo "setup-deps: installing ${missing[*]}"
$sudo_cmd apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
