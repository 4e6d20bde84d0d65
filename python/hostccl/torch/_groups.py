"""How torch asks for a hostccl group, in each torch generation.

torch 1.13 calls a factory ``(store, rank, size, timeout)`` and uses the
ProcessGroup it returns; torch 2.x (``extended_api=True``) passes one options object
(store, group rank and size, timeout, group name, the group's global ranks) and
attaches the c10d Backend it returns to a ProcessGroup of its own. Either way a
group of a hostccl default group is a sub-communicator of it: no new rendezvous.
"""

import hashlib
import sys
import zlib
from datetime import timedelta

import torch
import torch.distributed as dist

from .._C import ProcessGroupHostccl

TORCH2 = int(torch.__version__.split(".")[0]) >= 2
_CPU = torch.device("cpu")


def hostccl_backend(pg):
    """The ProcessGroupHostccl behind ``pg`` (a group of either torch), or None."""
    if isinstance(pg, ProcessGroupHostccl):
        return pg
    if TORCH2 and isinstance(pg, dist.ProcessGroup):
        try:
            backend = pg._get_backend(_CPU)
        except RuntimeError:  # no CPU backend in this group
            return None
        return backend if isinstance(backend, ProcessGroupHostccl) else None
    return None


def standalone_group(backend, store):
    """A group of ``backend`` alone (a Backend such as ProcessGroupHostccl or
    ProcessGroupGloo made directly, outside init_process_group), usable where torch
    takes a ProcessGroup (DDP): the backend itself on torch 1.13, where backends are
    ProcessGroups; on torch 2.x a ProcessGroup holding it for the CPU."""
    if not TORCH2:
        return backend
    kind = dist.ProcessGroup.BackendType.GLOO if backend.name() == "gloo" else dist.ProcessGroup.BackendType.CUSTOM
    pg = dist.ProcessGroup(store, backend.rank(), backend.size())
    pg._set_default_backend(kind)
    pg._register_backend(_CPU, kind, backend)
    return pg


def _default_backend():
    if not dist.is_initialized():
        return None
    return hostccl_backend(dist.distributed_c10d._get_default_group())


def _as_timedelta(timeout):
    return timeout if isinstance(timeout, timedelta) else timedelta(seconds=float(timeout))


# --- torch 2.x -------------------------------------------------------------------

def _group_id(name):
    """A 64-bit id from torch's group name, which is the same on every member."""
    return int.from_bytes(hashlib.blake2b(str(name).encode(), digest_size=8).digest(), "little")


def _create_backend(opts, backend_options=None):
    """torch 2.x's factory (extended API): a c10d Backend for the group ``opts`` names."""
    timeout = _as_timedelta(opts.timeout)
    parent = _default_backend()
    ranks = [int(r) for r in opts.global_ranks_in_group]
    if parent is None or not ranks:  # the default group (or a world that is not hostccl's)
        return ProcessGroupHostccl(opts.store, opts.group_rank, opts.group_size, timeout)
    return ProcessGroupHostccl(parent, ranks, _group_id(opts.group_id), timeout, opts.store)


# --- torch 1.13 ------------------------------------------------------------------

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


def _create_process_group(store, rank, size, timeout):
    """torch 1.13's factory: (prefix store, group rank, group size, timeout)."""
    timeout = _as_timedelta(timeout)
    parent = _default_backend()
    if parent is None:  # the default group itself (or a world built by another backend)
        return ProcessGroupHostccl(store, rank, size, timeout)
    ranks = _ranks_of_new_group(store, rank, size)
    key = tuple(ranks)
    occurrence = _groups_built.get(key, 0)
    _groups_built[key] = occurrence + 1
    group_id = zlib.crc32(repr((key, occurrence)).encode()) | (occurrence << 32)
    return ProcessGroupHostccl(parent, ranks, group_id, timeout, store)


def register(name):
    """Registers ``name`` as hostccl's backend with this torch (once)."""
    backends = dist.Backend
    if getattr(backends, name.upper(), None) is not None:
        return
    if TORCH2:
        backends.register_backend(name, _create_backend, extended_api=True, devices=["cpu"])
    else:
        backends.register_backend(name, _create_process_group)
