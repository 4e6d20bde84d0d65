#!/usr/bin/env bash
# `pip install ./python` as a user runs it (PEP 517: scikit-build-core and the project's
# CMake, pip's build isolation on), into a fresh venv that has torch:
#   - Debian's /usr/bin/python3: a venv made with --system-site-packages (torch 1.13);
#   - a torch 2.x venv's python: a plain venv that sees that venv's packages through a
#     .pth file (as if torch had been pip-installed into it; no second 5 GB download).
# Then, from outside the source tree and without PYTHONPATH, two processes all_reduce
# through the installed package, which must find libhccl beside its extension; torch
# >= 2.5 must load it by itself (autoload) on `import torch`.
# Usage: pip_install.sh <python with torch> <source dir>
set -euo pipefail
python=$1 src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
torch_version=$("$python" -c 'import torch; print(torch.__version__)' 2>/dev/null)
if [ "$python" = /usr/bin/python3 ]; then
    /usr/bin/python3 -m venv --system-site-packages "$work/venv"
else
    /usr/bin/python3 -m venv "$work/venv"
    "$python" -c 'import site; print(site.getsitepackages()[0])' \
        > "$work/venv/lib/python3.11/site-packages/torch-from-cache.pth"
fi
# Its own build directory per torch (two of these may run at once), beside build/ in
# the checkout and with warnings as errors as in the README's build, whose ccache
# entries (keyed on paths relative to the checkout) it then shares.
# (The compiler by the name the README's build finds it, which ccache hashes: under
# pip CMake would take Python's build-time name for it, x86_64-linux-gnu-g++.)
start=$SECONDS
CC=cc CXX=c++ "$work/venv/bin/pip" install -q "$src/python" --config-settings=build-dir="../build-pip-torch$torch_version" \
    --config-settings=cmake.define.HOSTCCL_WERROR=ON
echo "pip install ./python (torch $torch_version) took $((SECONDS - start)) s"
where=$(cd "$work" && env -u PYTHONPATH "$work/venv/bin/python" -c 'import hostccl, os; print(os.path.dirname(hostccl.__file__))')
case $where in
    "$work/venv/"*) echo "installed in $where: $(ls "$where" | tr '\n' ' ')" ;;
    *) echo "FAILED: hostccl imported from $where, not the venv"; exit 1 ;;
esac
cd "$work"
# (a file, not stdin: mp.spawn's children import the main module from its path)
cat > check.py <<'PY'
import os, sys, tempfile
import torch, torch.distributed as dist, torch.multiprocessing as mp

AUTOLOAD = tuple(int(x) for x in torch.__version__.split(".")[:2]) >= (2, 5)

def rank_main(rank, world, init):
    if not AUTOLOAD:
        import hostccl.torch  # noqa: F401
    dist.init_process_group("hostccl", init_method="file://" + init, rank=rank, world_size=world)
    t = torch.full((1000,), float(rank + 1))
    dist.all_reduce(t)
    assert torch.equal(t, torch.full((1000,), 3.0)), t[:4]
    dist.destroy_process_group()

if __name__ == "__main__":
    if AUTOLOAD:
        assert "hostccl.torch" in sys.modules, "import torch did not load the installed hostccl"
    with tempfile.TemporaryDirectory() as d:
        mp.spawn(rank_main, args=(2, os.path.join(d, "rv")), nprocs=2, join=True)
    print("all_reduce through the pip-installed package (torch %s%s): ok"
          % (torch.__version__, ", loaded by import torch" if AUTOLOAD else ""))
PY
env -u PYTHONPATH "$work/venv/bin/python" check.py
