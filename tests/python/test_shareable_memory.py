"""hostccl.torch.use_shareable_memory: CPU tensors from memory the peer processes map.

Collectives on such tensors run the direct algorithms (each rank reads its peers'
tensors in place); tensors from torch's own allocator go through the links. The
trace each communicator writes (HOSTCCL_TRACE) names the algorithm every op ran.
"""

import glob
import json
import os
import tempfile

import pytest
import torch
import torch.distributed as dist

import hostccl.torch as hostccl_torch
from ranks import run_ranks

MIB = 1 << 20


@pytest.fixture
def shareable():
    """The allocator on (1 MiB and up, 64 MiB cached) for one test, off afterwards."""
    hostccl_torch.use_shareable_memory(min_bytes=MIB, cache_bytes=64 * MIB)
    yield
    hostccl_torch.stop_shareable_memory()


def test_large_tensors_come_from_shareable_blocks_and_are_reused(shareable):
    before = hostccl_torch.shareable_memory_stats()
    assert before["active"]
    small = torch.empty(MIB // 4 - 1, dtype=torch.float32)  # 4 bytes short of the threshold
    assert hostccl_torch.shareable_memory_stats()["blocks_allocated"] == before["blocks_allocated"]
    big = torch.empty(3 * MIB + 5, dtype=torch.uint8)  # rounded up to pages: 3 MiB + 4 KiB
    after = hostccl_torch.shareable_memory_stats()
    assert after["blocks_allocated"] + after["blocks_reused"] == before["blocks_allocated"] + before["blocks_reused"] + 1
    assert after["bytes_in_use"] == before["bytes_in_use"] + 3 * MIB + 4096
    big.fill_(7)
    assert int(big.sum()) == 7 * (3 * MIB + 5)
    del big
    freed = hostccl_torch.shareable_memory_stats()
    assert freed["bytes_in_use"] == before["bytes_in_use"]
    assert freed["bytes_cached"] >= 3 * MIB + 4096
    again = torch.zeros(3 * MIB + 100, dtype=torch.uint8)  # same pages: the cached block
    reused = hostccl_torch.shareable_memory_stats()
    assert reused["blocks_reused"] == freed["blocks_reused"] + 1
    assert reused["blocks_allocated"] == freed["blocks_allocated"]
    assert int(again.sum()) == 0  # zeros() clears a reused block like any other
    del small


def test_blocks_beyond_the_cache_are_released():
    hostccl_torch.use_shareable_memory(min_bytes=MIB, cache_bytes=0)
    try:
        t = torch.ones(2 * MIB, dtype=torch.uint8)
        in_use = hostccl_torch.shareable_memory_stats()["bytes_in_use"]
        assert in_use >= 2 * MIB
        del t
        stats = hostccl_torch.shareable_memory_stats()
        assert stats["bytes_cached"] == 0 and stats["bytes_in_use"] == in_use - 2 * MIB
    finally:
        hostccl_torch.stop_shareable_memory()


def test_stop_gives_torch_its_allocator_back_and_old_tensors_stay_valid():
    hostccl_torch.use_shareable_memory(min_bytes=MIB, cache_bytes=64 * MIB)
    kept = torch.full((MIB,), 3.0)
    hostccl_torch.stop_shareable_memory()
    stats = hostccl_torch.shareable_memory_stats()
    assert not stats["active"]
    torch.empty(4 * MIB, dtype=torch.uint8)
    assert hostccl_torch.shareable_memory_stats()["blocks_allocated"] == stats["blocks_allocated"]
    assert float(kept.sum()) == 3.0 * MIB
    del kept  # back to the cache, though the allocator is off
    assert hostccl_torch.shareable_memory_stats()["bytes_in_use"] == stats["bytes_in_use"] - 4 * MIB


def test_bad_limits_are_refused_and_change_nothing():
    with pytest.raises(ValueError, match="min_bytes"):
        hostccl_torch.use_shareable_memory(min_bytes=0)
    assert not hostccl_torch.shareable_memory_stats()["active"]


def test_kernels_taking_raw_scratch_memory_run_on_it():
    # oneDNN's convolutions take scratch buffers through c10's raw_allocate /
    # raw_deallocate, which need the data pointer as context and one deleter for all.
    torch.manual_seed(0)
    conv = torch.nn.Conv2d(3, 16, 3)
    x = torch.randn(8, 3, 64, 64)
    want = conv(x)
    want.sum().backward()
    want_grad = conv.weight.grad.clone()
    conv.weight.grad = None
    before = hostccl_torch.shareable_memory_stats()["blocks_allocated"]
    hostccl_torch.use_shareable_memory(min_bytes=4096, cache_bytes=64 * MIB)
    try:
        got = conv(x)
        got.sum().backward()
        assert hostccl_torch.shareable_memory_stats()["blocks_allocated"] > before
        assert torch.allclose(got, want, rtol=1e-6, atol=1e-6)
        assert torch.allclose(conv.weight.grad, want_grad, rtol=1e-5, atol=1e-5)
        del got
    finally:
        hostccl_torch.stop_shareable_memory()


def allreduce_both_kinds(rank, world):
    hostccl_torch.use_shareable_memory(min_bytes=MIB)
    count = 2 * MIB // 4 + 3  # not a multiple of the ranks: uneven pieces
    shared = torch.arange(count, dtype=torch.float32) + rank
    dist.all_reduce(shared)
    want = torch.arange(count, dtype=torch.float32) * world + sum(range(world))
    assert torch.equal(shared, want)
    hostccl_torch.stop_shareable_memory()
    private = torch.arange(count, dtype=torch.float32) + rank
    dist.all_reduce(private)
    assert torch.equal(private, want)


@pytest.mark.parametrize("world", [2, 3])
def test_collectives_on_shareable_tensors_read_peers_in_place(world):
    with tempfile.TemporaryDirectory() as tmp:
        prefix = os.path.join(tmp, "trace")
        os.environ["HOSTCCL_TRACE"] = prefix  # the spawned ranks inherit it
        # Direct from 1 MiB on: what is tested is that shareable tensors are read in
        # place and private ones are not, not the cost model's verdict on 2 MiB (its
        # init probe on a loaded machine may rate a ring cheaper).
        os.environ["HOSTCCL_DIRECT_MIN_BYTES"] = str(MIB)
        try:
            run_ranks(world, allreduce_both_kinds)
        finally:
            del os.environ["HOSTCCL_TRACE"]
            del os.environ["HOSTCCL_DIRECT_MIN_BYTES"]
        files = sorted(glob.glob(prefix + "*.json"))
        assert len(files) == world
        for f in files:
            with open(f) as fh:
                ops = [e["args"] for e in json.load(fh)["traceEvents"]
                       if e.get("cat") == "op" and e["name"] == "AllReduce" and e["args"]["count"] > 1000]
            assert [o["algorithm"] for o in ops][:1] == ["direct"], (f, ops)
            assert ops[1]["algorithm"] != "direct", (f, ops)
