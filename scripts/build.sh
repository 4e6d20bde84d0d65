#!/usr/bin/env bash
# Configures and builds hostccl into build/ (Release, warnings as errors).
# Extra arguments go to cmake's configure step. With ccache installed (setup-deps
# installs it) compilations are cached in /var/cache/hostccl/ccache, keyed on paths
# relative to the checkout: a fresh clone on a machine that has built before
# compiles only what changed (the torch extensions alone are ~25 CPU-minutes).
set -euo pipefail
cd "$(dirname "$0")/.."
launcher=()
if command -v ccache >/dev/null; then
    export CCACHE_DIR=${CCACHE_DIR:-/var/cache/hostccl/ccache} CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=1
    export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-10G}
    launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DHOSTCCL_WERROR=ON "${launcher[@]}" "$@" >/dev/null
cmake --build build -j2
