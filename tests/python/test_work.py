"""Async ops, their Work and futures, subgroups, and clear errors through hostccl."""

import os
import signal
import tempfile
import time

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from ranks import run_ranks


def futures(rank, world):
    # Many ops in flight, waited for in reverse order; futures hold the results.
    tensors = [torch.full((1000,), float(rank + k)) for k in range(8)]
    works = [dist.all_reduce(t, async_op=True) for t in tensors]
    futs = [w.get_future() for w in works]
    for k in reversed(range(8)):
        assert works[k].wait()
        # (Work.exception() cannot be called from Python in torch 1.13, whatever the backend:
        # its exception_ptr has no Python conversion.)
        assert works[k].is_completed() and works[k].is_success()
        want = float(sum(r + k for r in range(world)))
        assert torch.equal(futs[k].wait()[0], torch.full((1000,), want))
    # A callback that issues a collective and waits for its future (as PowerSGD's do)
    # completes: futures are completed on threads later ops do not need.
    t = torch.ones(4)

    def second_round(fut):
        x = fut.value()[0] * 2
        return dist.all_reduce(x, async_op=True).get_future().wait()[0]

    result = dist.all_reduce(t, async_op=True).get_future().then(second_round).wait()
    assert torch.equal(result, torch.full((4,), float(2 * world * world)))


def subgroups(rank, world):
    evens = dist.new_group([r for r in range(world) if r % 2 == 0])
    odds = dist.new_group([r for r in range(world) if r % 2 == 1])
    everyone = dist.new_group(list(range(world)))
    mine = evens if rank % 2 == 0 else odds
    members = [r for r in range(world) if r % 2 == rank % 2]
    t = torch.tensor([float(rank)])
    dist.all_reduce(t, group=mine)
    assert t.item() == sum(members)
    assert dist.get_rank(mine) == members.index(rank) and dist.get_world_size(mine) == len(members)
    t = torch.tensor([float(rank)])
    dist.broadcast(t, src=members[-1], group=mine)  # src is a global rank
    assert t.item() == members[-1]
    t = torch.tensor([1])
    dist.all_reduce(t, group=everyone)
    assert t.item() == world
    # The same members twice make two groups, each exact.
    again = dist.new_group([r for r in range(world) if r % 2 == 0])
    if rank % 2 == 0:
        t = torch.tensor([2.0])
        dist.all_reduce(t, group=again)
        assert t.item() == 2.0 * len(members)


def errors(rank, world):
    t = torch.ones(3, dtype=torch.int32)
    with pytest.raises(RuntimeError, match="bitwise"):
        dist.all_reduce(t, op=dist.ReduceOp.BAND)
    with pytest.raises(RuntimeError, match="any source"):
        dist.recv(t)
    with pytest.raises(RuntimeError, match="dense"):
        dist.all_reduce(torch.ones(2).to_sparse())
    # The group still works after refused calls.
    dist.all_reduce(t)
    assert torch.equal(t, torch.full((3,), world, dtype=torch.int32))


def test_async_ops_and_futures():
    run_ranks(3, futures)


def test_subgroups_without_rendezvous():
    run_ranks(4, subgroups)


def test_bad_calls_raise_clearly_and_change_nothing():
    run_ranks(2, errors)


def _dying_rank(rank, world, init_file, results):
    import hostccl.torch  # noqa: F401

    dist.init_process_group("hostccl", init_method="file://" + init_file, rank=rank, world_size=world)
    t = torch.ones(1 << 16)
    for step in range(100000):
        if rank == world - 1 and step == 20:
            os.kill(os.getpid(), signal.SIGKILL)
        try:
            dist.all_reduce(t)
        except RuntimeError as e:
            results.put((rank, time.time(), str(e)))
            return
    results.put((rank, time.time(), "no error"))


def test_a_killed_rank_raises_naming_it():
    world = 3
    ctx = mp.get_context("spawn")
    results = ctx.Queue()
    with tempfile.TemporaryDirectory() as tmp:
        procs = [ctx.Process(target=_dying_rank, args=(r, world, os.path.join(tmp, "rdv"), results))
                 for r in range(world)]
        for p in procs:
            p.start()
        got = [results.get(timeout=60) for _ in range(world - 1)]
        for p in procs:
            p.join(timeout=30)
    for rank, _, text in got:
        assert "rank %d" % (world - 1) in text, "rank %d's error does not name the dead rank: %s" % (rank, text)
    assert procs[world - 1].exitcode == -signal.SIGKILL


def _init_ways(rank, world, how, port, results):
    import hostccl.torch  # noqa: F401

    if how == "env":
        os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank), WORLD_SIZE=str(world))
        dist.init_process_group("hostccl")  # env:// is the default
    elif how == "tcp":
        dist.init_process_group("hostccl", init_method="tcp://127.0.0.1:%d" % port, rank=rank, world_size=world)
    else:  # a store of the caller's
        store = dist.TCPStore("127.0.0.1", port, world, rank == 0)
        dist.init_process_group("hostccl", store=store, rank=rank, world_size=world)
    t = torch.tensor([rank + 1.0])
    dist.all_reduce(t)
    results.put((rank, t.item()))
    dist.destroy_process_group()


@pytest.mark.parametrize("how,port", [("env", 29631), ("tcp", 29632), ("store", 29633)])
def test_every_init_method(how, port):
    world = 3
    ctx = mp.get_context("spawn")
    results = ctx.Queue()
    procs = [ctx.Process(target=_init_ways, args=(r, world, how, port, results)) for r in range(world)]
    for p in procs:
        p.start()
    got = sorted(results.get(timeout=60) for _ in range(world))
    for p in procs:
        p.join(timeout=30)
        assert p.exitcode == 0
    assert got == [(r, 6.0) for r in range(world)]
