#!/usr/bin/env bash
# Configures and builds hostccl into build/ (Release, warnings as errors).
# Extra arguments go to cmake's configure step.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DHOSTCCL_WERROR=ON "$@" >/dev/null
cmake --build build -j2
