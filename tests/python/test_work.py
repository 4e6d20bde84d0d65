"""Async ops, their Work and futures, subgroups, and clear errors through hostccl."""

import os
import signal
import socket
import tempfile
import time
from datetime import timedelta

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
    # A callback holding the last reference to its group (destroyed meanwhile): the
    # group goes on the thread that ran the callback, one of its own completer's
    # threads, which cannot wait for itself to end. (Rank 0 comes late, so the others
    # attach the callback before the op completes.)
    group = dist.new_group(list(range(world)))
    if rank == 0:
        time.sleep(0.3)
    fut = dist.all_reduce(torch.ones(4), group=group, async_op=True).get_future()
    done = fut.then(lambda f, g=group: f.value()[0].sum().item())
    dist.destroy_process_group(group)
    del group
    assert done.wait() == 4 * world


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
    with pytest.raises(RuntimeError, match="bitwise reductions .* take integer or bool tensors"):
        dist.all_reduce(torch.ones(3), op=dist.ReduceOp.BAND)
    with pytest.raises(RuntimeError, match="any source needs a tensor with elements"):
        dist.recv(torch.ones(0))
    # Only all_reduce takes sparse tensors: torch 2.x's dispatcher refuses the others
    # before any backend sees them ("SparseCPU"), 1.13 hands them to hostccl.
    with pytest.raises(RuntimeError, match="dense|'SparseCPU' backend"):
        dist.broadcast(torch.ones(2).to_sparse(), src=0)
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
            # The next op is refused at once, the communicator having failed: in the same words.
            try:
                dist.all_reduce(t)
                again = "no error"
            except RuntimeError as refused:
                again = str(refused)
            results.put((rank, time.time(), str(e) + " | then: " + again))
            return
    results.put((rank, time.time(), "no error"))


def test_a_killed_rank_raises_naming_it():
    world = 3
    ctx = mp.get_context("forkserver")  # preloaded by ranks.py
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
        for said in text.split(" | then: "):
            assert "rank %d" % (world - 1) in said, "rank %d's error does not name the dead rank: %s" % (rank, text)
    assert procs[world - 1].exitcode == -signal.SIGKILL


def _leave_with_a_callback_pending(rank, world, init_file, out_dir):
    import hostccl.torch  # noqa: F401

    dist.init_process_group("hostccl", init_method="file://" + init_file, rank=rank, world_size=world)
    if rank == 0:
        time.sleep(0.5)  # the others attach their callbacks long before the op completes

    def record(fut):
        time.sleep(0.2)
        with open(os.path.join(out_dir, "rank%d" % rank), "w") as f:
            f.write(str(fut.value()[0].sum().item()))

    dist.all_reduce(torch.ones(4), async_op=True).get_future().then(record)
    # Leaves at once, neither waiting nor destroying the group: Python's exit waits
    # for the callback (run once the interpreter is finalizing, it would abort).


def test_python_exit_waits_for_pending_callbacks():
    world = 2
    ctx = mp.get_context("spawn")  # a forked rank's exit would skip the atexit drain
    with tempfile.TemporaryDirectory() as tmp:
        procs = [ctx.Process(target=_leave_with_a_callback_pending, args=(r, world, os.path.join(tmp, "rdv"), tmp))
                 for r in range(world)]
        for p in procs:
            p.start()
        for p in procs:
            p.join(timeout=60)
        assert [p.exitcode for p in procs] == [0] * world
        for r in range(world):
            with open(os.path.join(tmp, "rank%d" % r)) as f:
                assert f.read() == str(4.0 * world)


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


def _free_port():
    # (A fixed port would collide with this file run at once under another torch.)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("how", ["env", "tcp", "store"])
def test_every_init_method(how):
    world = 3
    port = _free_port()
    ctx = mp.get_context("forkserver")
    results = ctx.Queue()
    procs = [ctx.Process(target=_init_ways, args=(r, world, how, port, results)) for r in range(world)]
    for p in procs:
        p.start()
    got = sorted(results.get(timeout=60) for _ in range(world))
    for p in procs:
        p.join(timeout=30)
        assert p.exitcode == 0
    assert got == [(r, 6.0) for r in range(world)]


def monitored(rank, world):
    from hostccl.torch import monitored_barrier

    # torch's own entry point reaches hostccl groups (import hostccl.torch extends it).
    dist.monitored_barrier(timeout=timedelta(seconds=10))  # everyone arrives
    if rank == 0:
        with pytest.raises(RuntimeError, match=r"\[Rank 0\]: Ranks 2, 3 failed to pass monitoredBarrier in 1000 ms"):
            monitored_barrier(timeout=timedelta(seconds=1), wait_all_ranks=True)
    elif rank == 1:
        with pytest.raises(RuntimeError, match=r"\[Rank 1\]: Rank 1 successfully reached monitoredBarrier, but "
                                               r"received errors while waiting for send/recv from rank 0 "
                                               r"\(no answer within 1000 ms\)"):
            monitored_barrier(timeout=timedelta(seconds=1))
    else:
        time.sleep(2.5)  # ranks 2 and 3 come late: rank 0 has given up on them
        with pytest.raises(RuntimeError, match="successfully reached monitoredBarrier, but received errors"):
            monitored_barrier(timeout=timedelta(seconds=1))
    # The barrier met only through the store: the group's ops still run.
    t = torch.ones(1)
    dist.all_reduce(t)
    assert t.item() == world
    if rank == 0:
        # Without wait_all_ranks, the first missing rank fails it; with no time at
        # all, rank 0's own budget.
        with pytest.raises(RuntimeError, match=r"\[Rank 0\]: Rank 1 failed to pass monitoredBarrier in 200 ms"):
            dist.monitored_barrier(timeout=timedelta(milliseconds=200))
        with pytest.raises(RuntimeError, match=r"\[Rank 0\]: Rank 0 timed out in monitoredBarrier after 0 ms"):
            dist.monitored_barrier(timeout=timedelta(seconds=0))
    dist.barrier()


def test_monitored_barrier_names_the_ranks_that_did_not_arrive():
    run_ranks(4, monitored)


def batched(rank, world):
    # Every rank receives before it sends: run one by one, the ops would wait for each
    # other forever; batch_isend_irecv runs them as one batch.
    ops, recvs = [], {}
    base = torch.full((5, 2), -1.0)
    for peer in range(world):
        if peer == rank:
            continue
        recvs[peer] = base[:, 0] if peer == (rank + 1) % world else torch.full((5,), -1.0)  # one is a view
        ops.append(dist.P2POp(dist.irecv, recvs[peer], peer))
        ops.append(dist.P2POp(dist.isend, torch.full((5,), float(rank * 10 + peer)), peer))
    for work in dist.batch_isend_irecv(ops):
        work.wait()
    for peer, t in recvs.items():
        assert torch.equal(t, torch.full((5,), float(peer * 10 + rank)))
    assert torch.equal(base[:, 0], torch.full((5,), float(((rank + 1) % world) * 10 + rank)))
    t = torch.ones(1)
    dist.all_reduce(t)  # the group goes on
    assert t.item() == world


def test_batch_isend_irecv_runs_the_ops_as_one_batch():
    run_ranks(3, batched)
