#!/usr/bin/env bash
# README command 2: install what is needed, build, run every test, the RDMA suite in
# a soft-RoCE guest, then the sanitizer (ASan+UBSan, TSan) and fuzzing steps.
set -euo pipefail
cd "$(dirname "$0")/.."
# Each step's wall time is printed, so a CI log shows where the budget (30 min on
# 2 cores) goes.
step() {  # step <name> <command...>
    local name=$1 start=$SECONDS
    shift
    "$@"
    echo "test.sh: $name took $((SECONDS - start)) s"
}
# Compilations (the build, pip's builds in the tests) are cached here across runs.
export CCACHE_DIR=${CCACHE_DIR:-/var/cache/hostccl/ccache}
step setup-deps bash scripts/setup-deps.sh
# torch 2.x from PyPI in cached venvs (the newest and the oldest claimed), built and
# tested beside Debian's torch 1.13.
torch_pythons=/tmp/hostccl-torch-pythons
step setup-torch bash -c "bash scripts/setup-torch.sh > $torch_pythons"
# The RDMA suite's guest (debootstrap: mostly download and unpack) is prepared
# while the project builds and its tests run.
bash tests/rdma/run.sh --prepare > /tmp/hostccl-rdma-prepare.log 2>&1 &
prepare=$!
step build bash scripts/build.sh -DHOSTCCL_TORCH_PYTHONS="$(paste -sd';' $torch_pythons)"
step ctest bash -c 'cd build && ctest --output-on-failure --timeout 900 -j2'
step "waiting for the guest" wait $prepare || true
cat /tmp/hostccl-rdma-prepare.log
# Real verbs: soft-RoCE in a qemu guest (skipped, with the reason, where it cannot run).
step "rdma suite" timeout 900 bash tests/rdma/run.sh build
step sanitizers bash scripts/sanitize.sh
