#!/usr/bin/env bash
# README command 2: install what is needed, build, run every test, the RDMA suite in
# a soft-RoCE guest, then the sanitizer (ASan+UBSan, TSan) and fuzzing steps.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-deps.sh
# The RDMA suite's guest (debootstrap: mostly download and unpack) is prepared
# while the project builds and its tests run.
bash tests/rdma/run.sh --prepare > /tmp/hostccl-rdma-prepare.log 2>&1 &
prepare=$!
bash scripts/build.sh
(cd build && ctest --output-on-failure --timeout 900 -j2)
wait $prepare || true
cat /tmp/hostccl-rdma-prepare.log
# Real verbs: soft-RoCE in a qemu guest (skipped, with the reason, where it cannot run).
timeout 900 bash tests/rdma/run.sh build
bash scripts/sanitize.sh
