"""hostccl as a torch.distributed backend (torch 1.13's plugin interface).

Importing this module registers the backend "hostccl", and "hccl" when no other
backend has that name. ``init_process_group("hostccl")`` works with every init
method torch has (env://, tcp://, file://, a store): rank 0's root info travels
through the group's store. ``new_group`` builds a sub-communicator of the default
group without a new rendezvous.

Started by mpirun, mpiexec or srun, env:// finds its RANK, WORLD_SIZE and LOCAL_RANK:
importing this module fills them from the launcher's variables (Open MPI's
OMPI_COMM_WORLD_*, MPICH's PMI_*, Slurm's SLURM_*) where they are not set, and
MASTER_ADDR / MASTER_PORT from HOSTCCL_ROOT_ADDR=host:port where that is set.
"""

import atexit
import os
import sys
import zlib
from datetime import timedelta

import torch.distributed as dist

from .. import _C
from .._C import ProcessGroupHostccl, launcher_rank

__all__ = [
    "ProcessGroupHostccl",
    "BACKEND",
    "monitored_barrier",
    "use_shareable_memory",
    "stop_shareable_memory",
    "shareable_memory_stats",
]

BACKEND = "hostccl"

# Subgroups built so far, per list of members: members see the same sequence of
# new_group calls, so (members, how many came before) names a group alike on each.
_groups_built = {}


def _ranks_of_new_group(store, group_rank, group_size):
    """The global ranks of the group being created, ascending.

    torch 1.13 does not pass them to a plugin backend: they are read from the
    caller's frame (torch's _new_process_group_helper), else exchanged through the
    group's store.
    """
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name == "_new_process_group_helper":
            ranks = frame.f_locals.get("global_ranks_in_group")
            if ranks:
                return sorted(int(r) for r in ranks)
            break
        frame = frame.f_back
    store.set("hostccl/global_rank/%d" % group_rank, str(dist.get_rank()))
    return sorted(int(store.get("hostccl/global_rank/%d" % r)) for r in range(group_size))


def _default_group():
    if not dist.is_initialized():
        return None
    pg = dist.distributed_c10d._get_default_group()
    return pg if isinstance(pg, ProcessGroupHostccl) else None


def _create(store, rank, size, timeout):
    """torch's backend factory: (prefix store, group rank, group size, timeout)."""
    if not isinstance(timeout, timedelta):
        timeout = timedelta(seconds=float(timeout))
    parent = _default_group()
    if parent is None:  # the default group itself (or a world built by another backend)
        return ProcessGroupHostccl(store, rank, size, timeout)
    ranks = _ranks_of_new_group(store, rank, size)
    key = tuple(ranks)
    occurrence = _groups_built.get(key, 0)
    _groups_built[key] = occurrence + 1
    group_id = zlib.crc32(repr((key, occurrence)).encode()) | (occurrence << 32)
    return ProcessGroupHostccl(parent, ranks, group_id, timeout, store)


_torch_monitored_barrier = dist.monitored_barrier


def monitored_barrier(group=None, timeout=None, wait_all_ranks=False):
    """dist.monitored_barrier, on hostccl groups too (torch 1.13's refuses every backend but Gloo).

    Rank 0 raises a RuntimeError naming the first rank (every rank, with
    ``wait_all_ranks``) that did not arrive within ``timeout`` (default: the group's);
    the others raise when rank 0 does not answer in that time. Other groups go to
    torch's own. Importing this module makes it torch.distributed.monitored_barrier.
    """
    pg = group if group is not None else dist.distributed_c10d._get_default_group()
    if not isinstance(pg, ProcessGroupHostccl):
        return _torch_monitored_barrier(group, timeout, wait_all_ranks)
    if timeout is None:
        timeout = dist.default_pg_timeout
    return pg.monitored_barrier(timeout, wait_all_ranks=wait_all_ranks)


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
    root = env.get("HOSTCCL_ROOT_ADDR", "")
    if ":" in root and "MASTER_ADDR" not in env and "MASTER_PORT" not in env:
        host, port = root.rsplit(":", 1)
        env["MASTER_ADDR"], env["MASTER_PORT"] = host, port


def _register():
    backends = dist.Backend
    if getattr(backends, BACKEND.upper(), None) is None:
        backends.register_backend(BACKEND, _create)
    if getattr(backends, "HCCL", None) is None:
        backends.register_backend("hccl", _create)


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
