"""Every ProcessGroup op of torch 1.13 through hostccl, exact against a local
computation, for every dtype and reduce op, at 1 to 4 processes."""

import pytest
import torch
import torch.distributed as dist

from ranks import run_ranks

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int8, torch.int16, torch.int32,
          torch.int64, torch.uint8, torch.bool]
OPS = [dist.ReduceOp.SUM, dist.ReduceOp.PRODUCT, dist.ReduceOp.MIN, dist.ReduceOp.MAX, dist.ReduceOp.AVG]
N = 6


def value(rank, dtype, op=None):
    """Rank `rank`'s input: small integers, so every reduction is exact in every dtype."""
    base = torch.arange(N, dtype=torch.int64)
    if dtype == torch.bool:
        return ((base + rank) % 2 == 0)
    if op is not None and op == dist.ReduceOp.PRODUCT:
        return ((base + rank) % 2 + 1).to(dtype)
    return (base % 3 + rank + 1).to(dtype)


def expected(world, dtype, op):
    stack = torch.stack([value(r, dtype, op).to(torch.float64) for r in range(world)])
    if op == dist.ReduceOp.SUM:
        out = stack.sum(0) if dtype != torch.bool else stack.amax(0)
    elif op == dist.ReduceOp.PRODUCT:
        out = stack.prod(0) if dtype != torch.bool else stack.amin(0)
    elif op == dist.ReduceOp.MIN:
        out = stack.amin(0)
    elif op == dist.ReduceOp.MAX:
        out = stack.amax(0)
    else:  # AVG: the sum in the dtype, divided as torch divides that dtype
        total = stack.sum(0).to(dtype)
        return total / world if dtype.is_floating_point else torch.div(total, world, rounding_mode="trunc")
    return out.to(dtype)


def valid(dtype, op):
    return not (dtype == torch.bool and op == dist.ReduceOp.AVG)


def check(got, want, what):
    assert got.dtype == want.dtype, "%s: dtype %s, want %s" % (what, got.dtype, want.dtype)
    assert torch.equal(got, want), "%s:\n got %s\nwant %s" % (what, got.tolist(), want.tolist())


def reductions(rank, world):
    root = world - 1
    for dtype in DTYPES:
        for op in OPS:
            if not valid(dtype, op):
                continue
            what = "%s %s at %d ranks" % (dtype, op, world)
            want = expected(world, dtype, op)
            t = value(rank, dtype, op)
            dist.all_reduce(t, op=op)
            check(t, want, "all_reduce " + what)
            t = value(rank, dtype, op)
            dist.reduce(t, dst=root, op=op)
            check(t, want if rank == root else value(rank, dtype, op), "reduce " + what)
            # reduce_scatter: rank r's block k is value(r) shifted by k; block k goes to rank k
            blocks = [value(rank, dtype, op) for _ in range(world)]
            out = torch.empty(N, dtype=dtype)
            dist.reduce_scatter(out, blocks, op=op)
            check(out, want, "reduce_scatter " + what)
            flat_out = torch.empty(N, dtype=dtype)
            dist._reduce_scatter_base(flat_out, torch.cat(blocks), op=op)
            check(flat_out, want, "_reduce_scatter_base " + what)
            pieces = [value(rank, dtype, op)[:2].clone(), value(rank, dtype, op)[2:].clone()]
            dist.all_reduce_coalesced(pieces, op=op)
            check(torch.cat(pieces), want, "all_reduce_coalesced " + what)


def movements(rank, world):
    root = world - 1
    for dtype in DTYPES:
        what = "%s at %d ranks" % (dtype, world)
        mine = value(rank, dtype)
        t = mine.clone() if rank == root else torch.zeros(N, dtype=dtype)
        dist.broadcast(t, src=root)
        check(t, value(root, dtype), "broadcast " + what)
        outs = [torch.zeros(N, dtype=dtype) for _ in range(world)]
        dist.all_gather(outs, mine)
        for r in range(world):
            check(outs[r], value(r, dtype), "all_gather " + what)
        flat = torch.zeros(world * N, dtype=dtype)
        dist._all_gather_base(flat, mine)
        check(flat, torch.cat([value(r, dtype) for r in range(world)]), "_all_gather_base " + what)
        gathered = [torch.zeros(N, dtype=dtype) for _ in range(world)] if rank == root else None
        dist.gather(mine, gather_list=gathered, dst=root)
        if rank == root:
            for r in range(world):
                check(gathered[r], value(r, dtype), "gather " + what)
        got = torch.zeros(N, dtype=dtype)
        dist.scatter(got, scatter_list=[value(r, dtype) for r in range(world)] if rank == root else None, src=root)
        check(got, value(rank, dtype), "scatter " + what)
        # all_to_all_single, equal: rank r's block for k holds r * 10 + k
        src = torch.tensor([rank * 10 + k for k in range(world) for _ in range(2)]).to(dtype)
        dst = torch.zeros(2 * world, dtype=dtype)
        dist.all_to_all_single(dst, src)
        check(dst, torch.tensor([k * 10 + rank for k in range(world) for _ in range(2)]).to(dtype),
              "all_to_all_single " + what)
        # uneven: rank r sends k + 1 rows to rank k; receives r + 1 rows from each
        src = torch.cat([torch.full((k + 1, 2), rank * 10 + k) for k in range(world)]).to(dtype)
        dst = torch.zeros(((rank + 1) * world, 2), dtype=dtype)
        dist.all_to_all_single(dst, src, output_split_sizes=[rank + 1] * world,
                               input_split_sizes=[k + 1 for k in range(world)])
        check(dst, torch.cat([torch.full((rank + 1, 2), k * 10 + rank) for k in range(world)]).to(dtype),
              "all_to_all_single uneven " + what)
        # rank r sends r * k rows to rank k: rank 0 moves nothing either way yet takes
        # part (the next collective would find its sequence number behind otherwise)
        src = torch.cat([torch.full((rank * k, 2), rank * 10 + k) for k in range(world)]).to(dtype)
        dst = torch.zeros((rank * sum(range(world)), 2), dtype=dtype)
        dist.all_to_all_single(dst, src, output_split_sizes=[k * rank for k in range(world)],
                               input_split_sizes=[rank * k for k in range(world)])
        check(dst, torch.cat([torch.full((k * rank, 2), k * 10 + rank) for k in range(world)]).to(dtype),
              "all_to_all_single with an idle rank " + what)
        ins = [torch.full((k + 1,), rank * 10 + k).to(dtype) for k in range(world)]
        outs = [torch.zeros(rank + 1, dtype=dtype) for _ in range(world)]
        dist.all_to_all(outs, ins)
        for k in range(world):
            check(outs[k], torch.full((rank + 1,), k * 10 + rank).to(dtype), "all_to_all " + what)
        if world > 1:  # a ring of send/recv: even ranks send first
            nxt, prv = (rank + 1) % world, (rank - 1) % world
            got = torch.zeros(N, dtype=dtype)
            if rank % 2 == 0:
                dist.send(mine, nxt)
                dist.recv(got, prv)
            else:
                dist.recv(got, prv)
                dist.send(mine, nxt)
            check(got, value(prv, dtype), "send/recv " + what)
        lists = [[torch.zeros(2, dtype=dtype), torch.zeros(4, dtype=dtype)] for _ in range(world)]
        dist.all_gather_coalesced(lists, [mine[:2].clone(), mine[2:].clone()])
        for r in range(world):
            check(torch.cat(lists[r]), value(r, dtype), "all_gather_coalesced " + what)
    dist.barrier()


def views(rank, world):
    """Non-contiguous tensors are reduced through a copy and written back into the view."""
    base = torch.arange(12, dtype=torch.float32).reshape(3, 4) + rank
    view = base.t()  # 4 x 3, not contiguous
    dist.all_reduce(view)
    want = sum(torch.arange(12, dtype=torch.float32).reshape(3, 4) + r for r in range(world))
    check(base, want, "all_reduce of a transposed view")
    column = torch.zeros(4, 3)
    if rank == 0:
        column[:, 1] = torch.tensor([1.0, 2.0, 3.0, 4.0])
    dist.broadcast(column[:, 1], src=0)
    check(column[:, 1], torch.tensor([1.0, 2.0, 3.0, 4.0]), "broadcast into a column view")


def sparse(rank, world):
    """Sparse COO tensors (sparse embeddings' gradients) are summed where indices meet."""
    # Rank r holds rows r and r + 1 of a 6 x 2 matrix (overlapping its neighbours'),
    # with a repeated index that coalescing sums first.
    indices = torch.tensor([[rank, rank + 1, rank]])
    values = torch.tensor([[1.0, 2.0], [3.0, 4.0], [10.0, 20.0]]) * (rank + 1)
    t = torch.sparse_coo_tensor(indices, values, (6, 2))
    dist.all_reduce(t)
    want = torch.zeros(6, 2)
    for r in range(world):
        want[r] += torch.tensor([11.0, 22.0]) * (r + 1)
        want[r + 1] += torch.tensor([3.0, 4.0]) * (r + 1)
    assert t.is_sparse
    check(t.to_dense(), want, "all_reduce of a sparse tensor")
    empty = torch.sparse_coo_tensor(torch.zeros(1, 0, dtype=torch.long), torch.zeros(0, 2), (6, 2))
    dist.all_reduce(empty)
    check(empty.to_dense(), torch.zeros(6, 2), "all_reduce of an empty sparse tensor")
    with pytest.raises(RuntimeError, match="ReduceOp.SUM only"):
        dist.all_reduce(t, op=dist.ReduceOp.MAX)


def any_source(rank, world):
    """recv/irecv without src: every other rank sends rank 0 two tensors of its own
    values; each arrives whole, from the rank recv() returns, in each sender's order."""
    if rank != 0:
        for k in range(2):
            dist.send(torch.full((5,), float(rank * 10 + k)), 0)
    else:
        seen = {}
        for m in range(2 * (world - 1)):
            got = torch.full((5,), -1.0)
            if m % 2 == 0:
                src = dist.recv(got)
            else:
                work = dist.irecv(got)
                work.wait()
                src = work._source_rank()
            assert 0 < src < world, f"message {m}: source {src}"
            k = seen.get(src, 0)
            seen[src] = k + 1
            check(got, torch.full((5,), float(src * 10 + k)), f"message {m} from rank {src}")
        assert sorted(seen.items()) == [(r, 2) for r in range(1, world)], seen
        with pytest.raises(RuntimeError, match="needs a tensor with elements"):
            dist.recv(torch.zeros(0))
    work = dist.barrier(async_op=True)
    work.wait()
    with pytest.raises(RuntimeError, match="not a receive from any source"):
        work._source_rank()


BITWISE = {dist.ReduceOp.BAND: torch.bitwise_and, dist.ReduceOp.BOR: torch.bitwise_or,
           dist.ReduceOp.BXOR: torch.bitwise_xor}


def bitwise(rank, world):
    """BAND, BOR and BXOR (as Gloo takes them): integer and bool tensors, exact."""
    def mine(r, dtype):
        bits = torch.tensor([0b1011, 0b0110, 0b1111, 0, 0b1000, 0b0101]) * (r + 1)
        return (bits % 2 == 1) if dtype == torch.bool else bits.to(dtype)

    for dtype in (torch.int8, torch.uint8, torch.int32, torch.int64, torch.bool):
        for op, fold in BITWISE.items():
            want = mine(0, dtype)
            for r in range(1, world):
                want = fold(want, mine(r, dtype))
            what = "%s %s at %d ranks" % (dtype, op, world)
            t = mine(rank, dtype)
            dist.all_reduce(t, op=op)
            check(t, want, "all_reduce " + what)
            t = mine(rank, dtype)
            dist.reduce(t, dst=world - 1, op=op)
            check(t, want if rank == world - 1 else mine(rank, dtype), "reduce " + what)
            # Two elements a rank (world <= 3: mine() has six).
            out = torch.zeros(2, dtype=dtype)
            dist.reduce_scatter(out, list(mine(rank, dtype)[:2 * world].chunk(world)), op=op)
            check(out, want[2 * rank:2 * rank + 2], "reduce_scatter " + what)
    with pytest.raises(RuntimeError, match="take integer or bool tensors"):
        dist.all_reduce(torch.ones(3), op=dist.ReduceOp.BOR)
    t = torch.ones(1)
    dist.all_reduce(t)  # refused calls change nothing
    assert t.item() == world


@pytest.mark.parametrize("world", [1, 3])
def test_bitwise_reductions_exact(world):
    run_ranks(world, bitwise)


@pytest.mark.parametrize("world", [2, 4])
def test_recv_from_any_source(world):
    run_ranks(world, any_source)


@pytest.mark.parametrize("world", [1, 3])
def test_sparse_all_reduce_sums(world):
    run_ranks(world, sparse)


@pytest.mark.parametrize("world", [1, 2, 3, 4])
def test_reductions_exact(world):
    run_ranks(world, reductions)


@pytest.mark.parametrize("world", [1, 2, 3, 4])
def test_movements_exact(world):
    run_ranks(world, movements)


def test_views_written_back():
    run_ranks(2, views)
