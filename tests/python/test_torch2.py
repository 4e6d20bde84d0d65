"""What torch 2.x asks of a backend beyond torch 1.13's ops: registration for the
CPU (also as "cpu:hostccl", and by torch's autoload), split_group and DeviceMesh
sub-groups, coalescing and the coalesced tensor collectives, AVG and PREMUL_SUM,
set_timeout, abort, and destroy_process_group leaving nothing behind."""

import os
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import timedelta

import pytest
import torch
import torch.distributed as dist

if int(torch.__version__.split(".")[0]) < 2:
    pytest.skip("torch 2.x's backend interface; this Python has torch %s" % torch.__version__,
                allow_module_level=True)

import hostccl.torch  # noqa: E402
from hostccl.torch import ProcessGroupHostccl, backend_of  # noqa: E402
from ranks import run_ranks, spawn  # noqa: E402

TORCH_MINOR = int(torch.__version__.split(".")[1])


def _tree():
    """The directory on sys.path that holds this hostccl package."""
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(hostccl.torch.__file__))))


def _python(code, **env):
    """Runs `code` in a fresh interpreter of this Python, the environment's plus `env`."""
    full = dict(os.environ, **env)
    return subprocess.run([sys.executable, "-c", code], env=full, capture_output=True, text=True, timeout=120)


def test_registered_for_the_cpu_without_taking_glooss_place():
    assert dist.Backend.HOSTCCL == "hostccl"
    assert dist.Backend.backend_capability["hostccl"] == ["cpu"]
    assert dist.Backend.default_device_backend_map["cpu"] == "gloo"  # users ask for hostccl by name
    assert dist.Backend.HCCL == "hccl"  # free here: no NPU plugin registered it


def test_import_torch_loads_it_unless_autoload_is_off():
    code = "import sys, torch, torch.distributed as d; print(getattr(d.Backend, 'HOSTCCL', None), 'hostccl.torch' in sys.modules)"
    on = _python(code)
    assert on.returncode == 0 and on.stdout.split() == ["hostccl", "True"], on.stderr
    off = _python(code, TORCH_DEVICE_BACKEND_AUTOLOAD="0")
    assert off.returncode == 0 and off.stdout.split() == ["None", "False"], off.stderr


def test_an_extension_built_for_another_torch_names_both_and_spares_import_torch():
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, "tree")
        shutil.copytree(_tree(), copy, ignore=shutil.ignore_patterns("__pycache__"))
        with open(os.path.join(copy, "hostccl", "_build_info.py"), "w") as f:
            f.write('TORCH_VERSION = "2.0.0+cpu"\n')
        direct = _python("import hostccl.torch", PYTHONPATH=copy)
        assert direct.returncode == 1
        assert "built for torch 2.0.0+cpu, but this Python runs torch %s" % torch.__version__ in direct.stderr
        assert "ImportError" in direct.stderr and "Segmentation" not in direct.stderr
        # torch's autoload must not make `import torch` fail: it warns.
        auto = _python("import torch; print('torch imported')", PYTHONPATH=copy)
        assert auto.returncode == 0 and "torch imported" in auto.stdout, auto.stderr
        assert "hostccl's torch backend was not loaded" in auto.stderr and "2.0.0+cpu" in auto.stderr


def device_string(rank, world):
    assert dist.get_backend() == "cpu:hostccl"
    assert isinstance(backend_of(), ProcessGroupHostccl)
    t = torch.tensor([rank + 1.0])
    dist.all_reduce(t)
    assert t.item() == world * (world + 1) / 2


def test_cpu_colon_hostccl_names_the_backend_per_device():
    run_ranks(2, device_string, backend="cpu:hostccl")


def mesh_2d(rank, world):
    from torch.distributed.device_mesh import init_device_mesh

    mesh = init_device_mesh("cpu", (2, 2), mesh_dim_names=("dp", "tp"))
    dp, tp = rank // 2, rank % 2
    for dim, members in (("dp", [tp, tp + 2]), ("tp", [2 * dp, 2 * dp + 1])):
        group = mesh.get_group(dim)
        assert isinstance(backend_of(group), ProcessGroupHostccl), dim
        assert dist.get_process_group_ranks(group) == members
        t = torch.tensor([float(rank)])
        dist.all_reduce(t, group=group)
        assert t.item() == sum(members), dim


def test_a_2d_device_mesh_builds_its_groups_from_hostccl():
    run_ranks(4, mesh_2d)


def split_in_order(rank, world):
    assert backend_of().supports_splitting
    group = dist.split_group(split_ranks=[[1, 0], [3, 2]])
    mine = [1, 0] if rank < 2 else [3, 2]
    assert dist.get_rank(group) == mine.index(rank)
    gathered = [torch.zeros(1, dtype=torch.int64) for _ in range(2)]
    dist.all_gather(gathered, torch.tensor([rank]), group=group)
    assert [int(g) for g in gathered] == mine  # group rank i is the i-th listed
    # A split of a split, and the parent still works beside both.
    alone = dist.split_group(parent_pg=group, split_ranks=[[0], [1]])
    t = torch.tensor([float(rank)])
    dist.all_reduce(t, group=alone)
    assert t.item() == rank
    dist.all_reduce(t)
    assert t.item() == sum(range(world))


@pytest.mark.skipif(TORCH_MINOR < 9, reason="torch %s splits groups without Backend.split" % torch.__version__)
def test_split_group_keeps_the_listed_order_without_a_rendezvous():
    run_ranks(4, split_in_order)


def coalesced(rank, world):
    import torch.distributed._functional_collectives as funcol

    a, b = torch.full((3,), float(rank)), torch.full((5,), float(rank + 1))
    with dist._coalescing_manager(async_ops=True) as cm:
        dist.all_reduce(a)
        dist.all_reduce(b)
    cm.wait()
    assert torch.equal(a, torch.full((3,), float(sum(range(world)))))
    assert torch.equal(b, torch.full((5,), float(sum(range(1, world + 1)))))
    group = dist.group.WORLD
    # The names torch 2.15 prefers, else 2.7's.
    all_gather = getattr(funcol, "all_gather_single_coalesced", None) or funcol.all_gather_into_tensor_coalesced
    reduce_scatter = (getattr(funcol, "reduce_scatter_single_coalesced", None)
                      or funcol.reduce_scatter_tensor_coalesced)
    ins = [torch.full((2,), float(rank)), torch.arange(3, dtype=torch.float64) + rank]
    gathered = all_gather(ins, group)
    assert torch.equal(gathered[0], torch.repeat_interleave(torch.arange(world, dtype=torch.float32), 2))
    assert torch.equal(gathered[1], torch.cat([torch.arange(3, dtype=torch.float64) + r for r in range(world)]))
    rs_in = [torch.arange(world * 2, dtype=torch.float32), torch.ones(world * 3, dtype=torch.int64)]
    scattered = reduce_scatter(rs_in, "sum", [0, 0], group)
    assert torch.equal(scattered[0], torch.arange(rank * 2, rank * 2 + 2, dtype=torch.float32) * world)
    assert torch.equal(scattered[1], torch.full((3,), world, dtype=torch.int64))
    # Non-contiguous outputs are written through their views.
    out = torch.zeros(world, 4)[:, 1]
    dist.all_gather_into_tensor(out, torch.tensor([rank + 0.5]))
    assert torch.equal(out, torch.arange(world, dtype=torch.float32) + 0.5)


def test_coalescing_manager_and_coalesced_tensor_collectives():
    run_ranks(3, coalesced)


def functional(rank, world):
    """The functional collectives DTensor and torch.compile issue (what torch's
    test_functional_api checks on Gloo), on the world group and on a mesh dimension."""
    import torch.distributed._functional_collectives as funcol
    from torch.distributed.device_mesh import init_device_mesh

    mesh = init_device_mesh("cpu", (world,), mesh_dim_names=("dp",))
    for group in (dist.group.WORLD, mesh, (mesh, 0)):
        reduced = funcol.all_reduce(torch.full((3,), float(rank + 1)), "sum", group)
        assert torch.equal(funcol.wait_tensor(reduced), torch.full((3,), float(world * (world + 1) // 2)))
        maxed = funcol.all_reduce(torch.tensor([rank, -rank], dtype=torch.int32), "max", group)
        assert maxed.tolist() == [world - 1, 0]
        rows = funcol.all_gather_tensor(torch.full((1, 2), float(rank)), 0, group)
        assert torch.equal(rows, torch.arange(world, dtype=torch.float32).repeat_interleave(2).view(world, 2))
        cols = funcol.all_gather_tensor(torch.full((2, 1), float(rank)), 1, group)  # gathered on dim 1
        assert torch.equal(cols, torch.arange(world, dtype=torch.float32).expand(2, world))
        block = funcol.reduce_scatter_tensor(torch.arange(world * 2, dtype=torch.float64), "sum", 0, group)
        assert torch.equal(block, torch.arange(rank * 2, rank * 2 + 2, dtype=torch.float64) * world)
        # Rank r sends r + 1 elements to every peer, each carrying its sender and receiver.
        sends = torch.cat([torch.full((rank + 1,), rank * 10 + p) for p in range(world)])
        got = funcol.all_to_all_single(sends, [p + 1 for p in range(world)], [rank + 1] * world, group)
        assert got.tolist() == [p * 10 + rank for p in range(world) for _ in range(p + 1)]
        assert funcol.broadcast(torch.tensor([rank * 7]), 1, group).tolist() == [7]


def test_functional_collectives_on_the_group_and_on_a_device_mesh():
    run_ranks(3, functional)


def averages(rank, world):
    t = torch.full((4,), float(rank * 2))
    dist.all_reduce(t, op=dist.ReduceOp.AVG)
    assert torch.equal(t, torch.full((4,), float(world - 1)))
    half = dist._make_nccl_premul_sum(0.5)
    t = torch.full((4,), float(rank + 1))
    dist.all_reduce(t, op=half)
    assert torch.equal(t, torch.full((4,), 0.5 * world * (world + 1) / 2))
    # A tensor factor, and reduce_scatter: the input is left as it was.
    src = torch.arange(world * 2, dtype=torch.float32)
    out = torch.zeros(2)
    dist.reduce_scatter_tensor(out, src, op=dist._make_nccl_premul_sum(torch.tensor([3.0])))
    assert torch.equal(out, torch.arange(rank * 2, rank * 2 + 2, dtype=torch.float32) * 3 * world)
    assert torch.equal(src, torch.arange(world * 2, dtype=torch.float32))
    with pytest.raises(RuntimeError, match="PREMUL_SUM takes floating-point tensors"):
        dist.all_reduce(torch.ones(2, dtype=torch.int32), op=half)
    t = torch.ones(1)
    dist.all_reduce(t)  # refused calls change nothing
    assert t.item() == world


def test_avg_and_premul_sum():
    run_ranks(2, averages)


def _timeout_rank(rank, world, init_file, out):
    import hostccl.torch  # noqa: F401

    dist.init_process_group("hostccl", init_method="file://" + init_file, rank=rank, world_size=world,
                            timeout=timedelta(seconds=600))
    dist.set_timeout(timedelta(seconds=1))
    if rank == 0:
        start = time.monotonic()
        try:
            dist.recv(torch.zeros(4), src=1)  # rank 1 never sends
            out.put("no error")
        except RuntimeError as e:
            out.put("%.1f %s" % (time.monotonic() - start, e))
    else:
        time.sleep(4)  # alive (not failed) while rank 0's op times out


@pytest.mark.skipif(TORCH_MINOR < 9, reason="torch %s has no Backend.setTimeout" % torch.__version__)
def test_set_timeout_bounds_the_ops_after_it():
    out = _queue()
    _run_plain(2, _timeout_rank, (out,))
    took, text = out.get(timeout=30).split(" ", 1)
    assert " timeout " in text and float(took) < 10, text  # 1 s, not the group's 600


def _abort_rank(rank, world, init_file, out):
    import hostccl.torch  # noqa: F401

    dist.init_process_group("hostccl", init_method="file://" + init_file, rank=rank, world_size=world)
    sub = dist.new_group([0, 1])
    backend = backend_of(sub)
    if rank == 0:
        work = dist.irecv(torch.zeros(4), src=1)  # never sent: in flight when the groups abort
        time.sleep(0.3)
        start = time.monotonic()
        dist.distributed_c10d._abort_process_group()
        try:
            work.wait()
            out.put("no error")
        except RuntimeError as e:
            out.put("%.1f %s" % (time.monotonic() - start, e))
        try:  # every group was aborted, the sub-group too
            backend.allreduce([torch.ones(1)]).wait()
            out.put("still usable")
        except RuntimeError as e:
            out.put(str(e))
    else:
        time.sleep(3)


def test_abort_fails_the_op_in_flight_at_once():
    out = _queue()
    _run_plain(2, _abort_rank, (out,))
    took, text = out.get(timeout=30).split(" ", 1)
    assert float(took) < 5 and "hostccl" in text, text
    later = out.get(timeout=30)
    assert "the process group was aborted: no op can be issued on it any more" in later, later


def _lifecycles(rank, world, init_file, out):
    import hostccl.torch  # noqa: F401

    def census():
        fds = len(os.listdir("/proc/self/fd"))
        threads = len(os.listdir("/proc/self/task"))
        # This process's segments only: those it created (named with its pid) and those it
        # maps. /dev/shm is the machine's: the peer rank's, or another test's, come and go.
        mine = "hostccl-%d-" % os.getpid()
        created = len([f for f in os.listdir("/dev/shm") if f.startswith(mine)])
        with open("/proc/self/maps") as maps:
            mapped = len({line[line.index("/dev/shm/"):].split()[0] for line in maps if "/dev/shm/hostccl" in line})
        return fds, threads, created + mapped

    counts = []
    for cycle in range(4):
        dist.init_process_group("hostccl", init_method="file://%s.%d" % (init_file, cycle), rank=rank,
                                world_size=world)
        sub = dist.new_group(list(range(world)))
        t = torch.ones(1 << 16)
        dist.all_reduce(t)
        dist.all_reduce(t, group=sub)
        dist.destroy_process_group()
        counts.append(census())
    out.put((rank, counts))


def test_destroy_process_group_leaves_no_descriptors_threads_or_segments():
    out = _queue()
    world = 2
    _run_plain(world, _lifecycles, (out,))
    for _ in range(world):
        rank, counts = out.get(timeout=60)
        # The first cycle may start torch's own pools; every later one ends where it began.
        assert counts[1] == counts[2] == counts[3], (rank, counts)


def _queue():
    import torch.multiprocessing as mp

    return mp.get_context("forkserver").Queue()


def _run_plain(world, fn, args):
    """Ranks that make (and end) their groups themselves."""
    with tempfile.TemporaryDirectory() as tmp:
        spawn(fn, (world, os.path.join(tmp, "rdv")) + args, world)
