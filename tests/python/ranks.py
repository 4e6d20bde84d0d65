"""Runs a function on `world` processes joined by a hostccl process group.

Each rank runs fn(rank, world) after init_process_group("hostccl") over a fresh
file:// rendezvous; an exception on any rank fails the caller with its traceback.
"""

import os
import tempfile

import torch.distributed as dist
import torch.multiprocessing as mp


def _rank_main(rank, world, init_file, fn, backend):
    import hostccl.torch  # noqa: F401  (registers the backend in the spawned process)

    dist.init_process_group(backend, init_method="file://" + init_file, rank=rank, world_size=world)
    try:
        fn(rank, world)
    finally:
        dist.destroy_process_group()


def run_ranks(world, fn, backend="hostccl"):
    with tempfile.TemporaryDirectory() as tmp:
        init_file = os.path.join(tmp, "rendezvous")
        mp.spawn(_rank_main, args=(world, init_file, fn, backend), nprocs=world, join=True)
