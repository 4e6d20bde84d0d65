"""dist.all_reduce (float32 SUM) time and bus bandwidth per size, for one backend.

One process per rank, joined by env:// (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT,
or a launcher's variables; bench/pytorch/compare.sh starts them). Rank 0 prints, per size:
bytes, time per op in us (the slowest rank's mean over a round; the median round of
five) and busbw in GB/s as nccl-tests define it (2 (n - 1) / n * bytes / time), with
each op waited for, then with the ops pipelined (async_op=True, the last waited for).
    mpirun -np 4 -x MASTER_ADDR=127.0.0.1 -x MASTER_PORT=29500 /usr/bin/python3 bench/pytorch/allreduce_bench.py --backend gloo
"""

import argparse
import os
import statistics
import time

import torch
import torch.distributed as dist

import hostccl.torch  # noqa: F401  (registers the backend; launcher variables for env://)


def parse_size(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    text = text.strip().upper()
    scale = units.get(text[-1:], 1)
    return int(text[:-1] if scale > 1 else text) * scale


def one_round(tensor, iters, pipelined):
    """Seconds per all_reduce on the slowest rank: each waited for before the next
    (dist.all_reduce as programs call it), or all issued with async_op=True and the
    last waited for (as allreduce_perf and nccl-tests time their loop)."""
    dist.barrier()
    start = time.perf_counter()
    if pipelined:
        work = None
        for _ in range(iters):
            work = dist.all_reduce(tensor, async_op=True)
        work.wait()
    else:
        for _ in range(iters):
            dist.all_reduce(tensor)
    elapsed = torch.tensor([(time.perf_counter() - start) / iters], dtype=torch.float64)
    dist.all_reduce(elapsed, op=dist.ReduceOp.MAX)
    return elapsed.item()


def measure(size, args, world):
    count = max(1, size // 4)
    tensor = torch.ones(count, dtype=torch.float32)
    iters = args.iters_small if size <= (1 << 20) else args.iters_large
    for _ in range(max(1, iters // 5)):  # warm-up: links, buffers, caches
        dist.all_reduce(tensor)
    seconds = statistics.median(one_round(tensor, iters, False) for _ in range(args.rounds))
    pipelined = statistics.median(one_round(tensor, iters, True) for _ in range(args.rounds))
    # A fresh probe: the backend must sum right (a fast wrong answer is no result).
    probe = torch.ones(4)
    dist.all_reduce(probe)
    if not torch.equal(probe, torch.full((4,), float(world))):
        raise SystemExit("all_reduce gave %s, not %d" % (probe.tolist(), world))
    factor = 2.0 * (world - 1) / world * count * 4 / 1e9 if world > 1 else 0.0
    return count * 4, seconds * 1e6, factor / seconds, pipelined * 1e6, factor / pipelined


def bench(rank, world, args):
    torch.set_num_threads(1)
    if rank == 0:
        memory = ", shareable memory" if args.shareable_memory else ""
        print("# backend %s, %d ranks%s" % (args.backend, world, memory))
        print("%12s %12s %10s %12s %10s" % ("bytes", "time_us", "busbw_GBs", "pipe_us", "pipe_GBs"), flush=True)
    for size in (parse_size(s) for s in args.sizes.split(",")):
        row = measure(size, args, world)
        if rank == 0:
            print("%12d %12.2f %10.3f %12.2f %10.3f" % row, flush=True)


def leave(args):
    if args.backend == "gloo":
        os._exit(0)  # torch 1.13's ProcessGroupGloo can deadlock on the GIL when destroyed
    dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="hostccl")
    parser.add_argument("--sizes", default="8,64M", help="comma-separated byte counts (K, M, G suffixes)")
    parser.add_argument("--iters-small", type=int, default=1000, help="ops per round up to 1 MiB")
    parser.add_argument("--iters-large", type=int, default=10, help="ops per round above 1 MiB")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--shareable-memory", action="store_true",
                        help="hostccl.torch.use_shareable_memory(): tensors peer processes can map")
    args = parser.parse_args()
    if args.shareable_memory:
        hostccl.torch.use_shareable_memory()
    dist.init_process_group(args.backend, init_method="env://")
    bench(dist.get_rank(), dist.get_world_size(), args)
    leave(args)


if __name__ == "__main__":
    main()
