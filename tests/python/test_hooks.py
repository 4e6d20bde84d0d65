"""hostccl.torch.hooks: the compressors' exact results through a process group,
their error feedback across steps, and clear errors (DDP runs are in test_ddp.py)."""

import pytest
import torch
import torch.distributed as dist

from ranks import run_ranks


def _average(pg, state, tensor, key=0):
    work = pg.compressed_average(state.compressor, tensor, key)
    return work.get_future().wait()[0]


def exact_results(rank, world):
    from hostccl.torch import backend_of, hooks

    pg = backend_of()  # the group itself on torch 1.13, the backend torch attached on 2.x
    # topk:1.0 sends everything: the average, summed in rank order, then scaled by 1/n.
    state = hooks.CompressionState("topk:1.0")
    mine = torch.arange(10, dtype=torch.float32) * (rank + 1) - 3
    got = _average(pg, state, mine.clone())
    want = sum(torch.arange(10, dtype=torch.float32) * (r + 1) - 3 for r in range(world)) * (1.0 / world)
    assert torch.equal(got, want)

    # topk:0.25 of 4 entries sends one: the largest magnitude; the rest waits.
    state = hooks.CompressionState("topk:0.25")
    t = torch.zeros(4)
    t[rank % 4] = -(10.0 + rank)
    t[(rank + 1) % 4] = 1.0 + rank
    got = _average(pg, state, t, key=7)
    want = torch.zeros(4)
    for r in range(world):
        want[r % 4] += -(10.0 + r)
    assert torch.equal(got, want * (1.0 / world))
    # Next step with a zero gradient: what was held back (1 + rank) is sent now.
    got = _average(pg, state, torch.zeros(4), key=7)
    want = torch.zeros(4)
    for r in range(world):
        want[(r + 1) % 4] += 1.0 + r
    assert torch.equal(got, want * (1.0 / world))
    # Another key has its own residual: nothing is owed there.
    assert torch.equal(_average(pg, state, torch.zeros(4), key=8), torch.zeros(4))

    # sign: one bit per entry and the mean magnitude; entries of equal magnitude
    # (rank + 1) are sent exactly, so the residual stays zero.
    state = hooks.CompressionState("sign")
    signs = torch.tensor([1.0, -1.0, -1.0, 1.0, 1.0, -1.0, 1.0, 1.0, -1.0, 1.0, -1.0])

    def pattern(r):
        return signs.roll(r) * (r + 1)

    got = _average(pg, state, pattern(rank), key=1)
    want = torch.zeros(11)
    for r in range(world):
        want += (torch.tensor(float(r + 1)) / world) * signs.roll(r)
    assert torch.equal(got, want)
    assert torch.equal(_average(pg, state, torch.zeros(11), key=1), torch.zeros(11))
    assert state.wire_bytes == 2 * (world - 1) * (4 + 2) if world > 1 else state.wire_bytes == 0

    # A view is written back; an empty bucket is a no-op.
    state = hooks.CompressionState("topk:1.0")
    base = torch.zeros(4, 2)
    base[:, 1] = float(rank)
    assert torch.equal(_average(pg, state, base[:, 1]), torch.full((4,), sum(range(world)) / world))
    assert torch.equal(base[:, 1], torch.full((4,), sum(range(world)) / world))
    assert _average(pg, state, torch.zeros(0)).numel() == 0

    # Bad input: a clear error, nothing sent (the next op still matches on every rank).
    with pytest.raises(RuntimeError, match="float32"):
        pg.compressed_average(state.compressor, torch.zeros(4, dtype=torch.float64), 0)
    with pytest.raises(RuntimeError, match="key"):
        pg.compressed_average(state.compressor, torch.zeros(4), -1)
    with pytest.raises(RuntimeError, match="topk ratio"):
        hooks.CompressionState("topk:2")
    with pytest.raises(RuntimeError, match="expected none, fp16"):
        hooks.CompressionState("zip")
    t = torch.ones(1)
    dist.all_reduce(t)
    assert t.item() == world


@pytest.mark.parametrize("world", [1, 3])
def test_compressors_are_exact_through_a_group(world):
    run_ranks(world, exact_results)


def refuse_other_groups(rank, world):
    from hostccl.torch import hooks

    class Bucket:  # what DDP passes, reduced to what the hook reads
        def buffer(self):
            return torch.ones(4)

        def index(self):
            return 0

    with pytest.raises(RuntimeError, match="hostccl process group"):
        hooks.compressed_hook(hooks.CompressionState("sign"), Bucket())


def test_hooks_refuse_a_group_of_another_backend():
    # One rank: the refusal reads only the group's backend, and a one-rank Gloo group
    # opens no connections (Gloo's own connect on a loaded machine is not under test).
    run_ranks(1, refuse_other_groups, backend="gloo")
