#!/usr/bin/env bash
# Makes, once, the virtual environments with torch 2.x from PyPI that the PyTorch
# backend is built and tested against (beside Debian's torch 1.13), Ray Train and
# DeepSpeed beside the newest, and prints their interpreters, one a line. A venv is reused while its stamp
# names the same packages; a half-made one (no stamp) is made again. torch 2.x from PyPI is a CUDA
# build with its CUDA libraries (about 5 GB a venv; the backend uses none of it):
# made on a fresh machine in about 90 s a venv, nothing on a machine that has one.
#
#   bash scripts/setup-torch.sh                    # the newest and the oldest torch claimed
#   HOSTCCL_TORCH_VERSIONS="2.15.0" bash scripts/setup-torch.sh
#
# Env: HOSTCCL_TORCH_VERSIONS (default: the newest and the oldest 2.x tested, below),
# HOSTCCL_TORCH_CACHE (where the venvs live, default /var/cache/hostccl).
set -euo pipefail

# The newest torch on PyPI and the oldest 2.x the package claims: 2.7 is the first
# whose PyPI wheels use the C++11 ABI that hostccl's libraries are built with.
versions=${HOSTCCL_TORCH_VERSIONS:-"2.15.0 2.7.1"}
cache=${HOSTCCL_TORCH_CACHE:-/var/cache/hostccl}
# Debian's Python: its headers (python3-dev) build the extension.
python=/usr/bin/python3
# Beside the newest torch: the engines tests/launchers/ray_train.sh and
# tests/python/deepspeed_zero.sh start.
engines_want="ray[train]==2.60.0 deepspeed==0.19.8"

for v in $versions; do
    venv=$cache/torch-$v
    want="torch==$v numpy pytest expecttest"
    if [ "$(cat "$venv/.hostccl-stamp" 2>/dev/null)" != "$want" ]; then
        echo "setup-torch: making $venv ($want)" >&2
        rm -rf "$venv"
        mkdir -p "$cache"
        start=$SECONDS
        "$python" -m venv "$venv" >&2
        "$venv/bin/python" -m pip install -q $want >&2
        echo "$want" > "$venv/.hostccl-stamp"
        echo "setup-torch: $venv made in $((SECONDS - start)) s" >&2
    fi
    # The engines beside the first (newest) torch: a stamp of their own, so that adding
    # them leaves the torch venv as it is (about 35 s, once).
    if [ "$v" = "${versions%% *}" ] && [ "$(cat "$venv/.hostccl-engines-stamp" 2>/dev/null)" != "$engines_want" ]; then
        echo "setup-torch: installing $engines_want into $venv" >&2
        "$venv/bin/python" -m pip install -q $engines_want >&2
        echo "$engines_want" > "$venv/.hostccl-engines-stamp"
    fi
    echo "$venv/bin/python"
done
