#!/usr/bin/env bash
# Configures and builds hostccl into build/ (Release, warnings as errors).
# Extra arguments go to cmake's configure step. With ccache installed (setup-deps
# installs it) compilations are cached (CMakeLists.txt), here in
# /var/cache/hostccl/ccache unless CCACHE_DIR says otherwise: a fresh clone on a
# machine that has built before compiles only what changed (the torch extensions
# alone take ~25 CPU-minutes).
set -euo pipefail
cd "$(dirname "$0")/.."
export CCACHE_DIR=${CCACHE_DIR:-/var/cache/hostccl/ccache} CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-10G}
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DHOSTCCL_WERROR=ON "$@" >/dev/null
cmake --build build -j2
