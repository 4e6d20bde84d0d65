#!/usr/bin/env bash
# `pip install ./python` as a user runs it, into a venv over Debian's Python (torch from
# Debian's site-packages), taking the libraries and extension from this build tree
# (HOSTCCL_BUILD_DIR; a build from scratch takes as long as the README's). Then, from
# outside the source tree and without PYTHONPATH, two processes all_reduce through
# the installed package, which must find libhccl beside its extension.
# Usage: pip_install.sh <python> <source dir> <build dir>
set -euo pipefail
python=$1 src=$2 build=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# A copy of the package's sources: pip builds in place and must not write into the checkout.
mkdir -p "$work/src"
cp -r "$src/python" "$src/CMakeLists.txt" "$work/src/"
rm -rf "$work/src/python/build" "$work/src/python/"*.egg-info
"$python" -m venv --system-site-packages "$work/venv"
HOSTCCL_BUILD_DIR=$build "$work/venv/bin/pip" install --no-build-isolation --no-deps --no-index -q "$work/src/python"
where=$(cd "$work" && env -u PYTHONPATH "$work/venv/bin/python" -c 'import hostccl, os; print(os.path.dirname(hostccl.__file__))')
case $where in
    "$work/venv/"*) echo "installed in $where: $(ls "$where" | tr '\n' ' ')" ;;
    *) echo "FAILED: hostccl imported from $where, not the venv"; exit 1 ;;
esac
cd "$work"
# (a file, not stdin: mp.spawn's children import the main module from its path)
cat > check.py <<'PY'
import tempfile, os
import torch, torch.distributed as dist, torch.multiprocessing as mp

def rank_main(rank, world, init):
    import hostccl.torch  # noqa: F401
    dist.init_process_group("hostccl", init_method="file://" + init, rank=rank, world_size=world)
    t = torch.full((1000,), float(rank + 1))
    dist.all_reduce(t)
    assert torch.equal(t, torch.full((1000,), 3.0)), t[:4]
    dist.destroy_process_group()

if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as d:
        mp.spawn(rank_main, args=(2, os.path.join(d, "rv")), nprocs=2, join=True)
    print("all_reduce through the pip-installed package: ok")
PY
env -u PYTHONPATH "$work/venv/bin/python" check.py
