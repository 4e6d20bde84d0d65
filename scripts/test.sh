#!/usr/bin/env bash
# README command 2: install what is needed, build, run every test, then the
# sanitizer (ASan+UBSan, TSan) and fuzzing steps.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-deps.sh
bash scripts/build.sh
(cd build && ctest --output-on-failure --timeout 900 -j2)
bash scripts/sanitize.sh
