"""hostccl as a torch.distributed backend (torch 1.13's plugin interface).

Importing this module registers the backend "hostccl", and "hccl" when no other
backend has that name. ``init_process_group("hostccl")`` works with every init
method torch has (env://, tcp://, file://, a store): rank 0's root info travels
through the group's store. ``new_group`` builds a sub-communicator of the default
group without a new rendezvous.
"""

import sys
import zlib
from datetime import timedelta

import torch.distributed as dist

from .._C import ProcessGroupHostccl

__all__ = ["ProcessGroupHostccl", "BACKEND"]

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
    return ProcessGroupHostccl(parent, ranks, group_id, timeout)


def _register():
    backends = dist.Backend
    if getattr(backends, BACKEND.upper(), None) is None:
        backends.register_backend(BACKEND, _create)
    if getattr(backends, "HCCL", None) is None:
        backends.register_backend("hccl", _create)


_register()
