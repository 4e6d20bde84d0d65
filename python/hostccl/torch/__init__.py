"""hostccl as a torch.distributed backend, on torch 1.13 and on torch 2.x.

Importing this module registers the backend "hostccl", and "hccl" when no other
backend has that name. ``init_process_group("hostccl")`` (or ``"cpu:hostccl"`` on
torch 2.x) works with every init method torch has (env://, tcp://, file://, a
store): rank 0's root info travels through the group's store. ``new_group``,
``split_group`` and DeviceMesh build sub-communicators of the default group without
a new rendezvous. On torch >= 2.5 an installed hostccl is imported by ``import
torch`` itself (torch's backend autoload; ``TORCH_DEVICE_BACKEND_AUTOLOAD=0``
turns that off).

Started by mpirun, mpiexec or srun, env:// finds its RANK, WORLD_SIZE and LOCAL_RANK:
importing this module fills them from the launcher's variables (Open MPI's
OMPI_COMM_WORLD_*, MPICH's PMI_*, Slurm's SLURM_*) where they are not set, and
MASTER_ADDR / MASTER_PORT from HOSTCCL_ROOT_ADDR=host:port where that is set, or
under srun from the step itself (its first node and port: docs/launchers.md).
"""

import atexit
import os

import torch

from .._build_info import TORCH_VERSION as _BUILT_FOR


def _release(version):
    return version.split("+")[0]


# The extension links against one torch's C++ API: under another it would fail on
# undefined symbols or worse, so the mismatch is named before it is loaded.
if _release(torch.__version__) != _release(_BUILT_FOR):
    raise ImportError(
        "hostccl's torch extension was built for torch %s, but this Python runs torch %s "
        "(%s): rebuild it against this torch (pip install ./python in this environment)"
        % (_BUILT_FOR, torch.__version__, os.path.dirname(torch.__file__)))

import torch.distributed as dist  # noqa: E402 (after the version check)

from .. import _C  # noqa: E402
from .._C import ProcessGroupHostccl, launcher_meeting_point, launcher_rank  # noqa: E402
from . import _groups  # noqa: E402

__all__ = [
    "ProcessGroupHostccl",
    "BACKEND",
    "TORCH2",
    "backend_of",
    "standalone_group",
    "monitored_barrier",
    "use_shareable_memory",
    "stop_shareable_memory",
    "shareable_memory_stats",
]

BACKEND = "hostccl"
TORCH2 = _groups.TORCH2
standalone_group = _groups.standalone_group


def backend_of(group=None):
    """hostccl's backend object of ``group`` (default: the default group), or None.

    On torch 1.13 that is the group itself; on torch 2.x the backend torch attached
    to the group for the CPU. Its own methods (``compressed_average``,
    ``describe``) are there.
    """
    return _groups.hostccl_backend(group if group is not None else dist.distributed_c10d._get_default_group())


_torch_monitored_barrier = dist.monitored_barrier


def monitored_barrier(group=None, timeout=None, wait_all_ranks=False):
    """dist.monitored_barrier, on hostccl groups too (torch before 2.14 refuses every
    backend but Gloo by its name).

    Rank 0 raises a RuntimeError naming the first rank (every rank, with
    ``wait_all_ranks``) that did not arrive within ``timeout`` (default: the group's);
    the others raise when rank 0 does not answer in that time. Other groups go to
    torch's own. Importing this module makes it torch.distributed.monitored_barrier.
    """
    pg = group if group is not None else dist.distributed_c10d._get_default_group()
    backend = _groups.hostccl_backend(pg)
    if backend is None:
        return _torch_monitored_barrier(group, timeout, wait_all_ranks)
    if timeout is None:
        timeout = dist.default_pg_timeout
    return backend.monitored_barrier(timeout, wait_all_ranks=wait_all_ranks)


def use_shareable_memory(min_bytes=1 << 20, cache_bytes=1 << 30):
    """Allocates CPU tensors of ``min_bytes`` and more from memory the other processes can map.

    A collective on such a tensor between processes of one host reads the peers'
    tensors in place (one copy); a tensor from torch's own allocator goes through
    shared rings (two). Call it before the model, its DDP wrapper (whose gradient
    buckets are then shareable) and the tensors to communicate are made. Freed blocks
    are kept for reuse by an allocation of the same size, up to ``cache_bytes``.
    The memory stays shared across fork(): a child writing to a tensor made before
    the fork writes to its parent's.
    """
    _C.use_shareable_memory(int(min_bytes), int(cache_bytes))


def stop_shareable_memory():
    """torch's CPU allocator goes back to the one before use_shareable_memory."""
    _C.stop_shareable_memory()


def shareable_memory_stats():
    """Blocks allocated and reused, bytes cached and in use, by use_shareable_memory."""
    return dict(_C.shareable_memory_stats(), active=_C.shareable_memory_active())


def _adopt_launcher_env():
    """torch's env:// reads RANK and WORLD_SIZE: a launcher's own variables stand in."""
    env = os.environ
    found = launcher_rank()
    if found is not None and ("RANK" not in env or "WORLD_SIZE" not in env):
        rank, size, local_rank = found
        env.setdefault("RANK", str(rank))
        env.setdefault("WORLD_SIZE", str(size))
        env.setdefault("LOCAL_RANK", str(local_rank))
    if "MASTER_ADDR" not in env and "MASTER_PORT" not in env:
        point = launcher_meeting_point()  # HOSTCCL_ROOT_ADDR, or under srun the step's own
        if point is not None:
            env["MASTER_ADDR"], env["MASTER_PORT"] = point[0], str(point[1])


def _register():
    """Registers "hostccl", and "hccl" while no other backend holds that name.

    Also torch 2.x's entry point for backends named before they are imported
    (group ``torch.distributed.backends``).
    """
    _groups.register(BACKEND)
    if getattr(dist.Backend, "HCCL", None) is None:
        _groups.register("hccl")


# How long Python's exit waits for futures still completing (an op in flight whose
# future has Python callbacks: run once the interpreter is finalizing, a callback
# would end its thread and abort the process).
_EXIT_DRAIN_SECONDS = 10.0


def _drain_futures_at_exit():
    _C.drain_futures(_EXIT_DRAIN_SECONDS)


_adopt_launcher_env()
_register()
atexit.register(_drain_futures_at_exit)
dist.monitored_barrier = dist.distributed_c10d.monitored_barrier = monitored_barrier
