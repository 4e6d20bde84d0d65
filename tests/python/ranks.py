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


# Ranks fork from a server that imported torch once (the way mp.spawn starts them,
# every rank of every test would import it again: seconds each on 2 cores). The
# server imports nothing of hostccl's, so no thread of its exists when a rank forks.
mp.set_forkserver_preload(["torch", "torch.distributed"])


def _in_environment(i, environ, fn, args):
    os.environ.clear()
    os.environ.update(environ)
    fn(i, *args)


def spawn(fn, args, nprocs):
    """mp.spawn's contract (fn(i, *args) on nprocs processes, any failure raised here,
    the caller's environment as it is now) with ranks forked from the preloaded server
    (whose environment is the one it started with). A rank's exit skips atexit
    handlers: tests of what happens at Python's exit start their processes with "spawn"."""
    mp.start_processes(_in_environment, args=(dict(os.environ), fn, args), nprocs=nprocs, join=True,
                       start_method="forkserver")


def run_ranks(world, fn, backend="hostccl"):
    with tempfile.TemporaryDirectory() as tmp:
        init_file = os.path.join(tmp, "rendezvous")
        spawn(_rank_main, (world, init_file, fn, backend), world)
