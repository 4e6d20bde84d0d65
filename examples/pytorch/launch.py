"""What the torch 2.x examples share: how they start, and what they write.

Each example runs under torchrun (env://) or starts its own local processes with
``--spawn N``; ``--backend`` picks hostccl (default) or gloo, so the same script
trains on either from the same seed. ``--out FILE`` makes rank 0 write the loss
curve and the final parameters (full tensors), which tests/python/examples_torch2.py
compares between the two backends.
"""

import argparse
import os
import socket
import statistics

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def parser(description):
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--backend", default="hostccl", help="hostccl (default), cpu:hostccl or gloo")
    p.add_argument("--spawn", type=int, default=0, metavar="N",
                   help="start N local processes (without it: torchrun's environment, env://)")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", help="rank 0 writes the losses and the final parameters here (torch.save)")
    return p


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _spawned(rank, world, port, main, args):
    os.environ.update(RANK=str(rank), WORLD_SIZE=str(world), LOCAL_RANK=str(rank),
                      MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    _run_rank(main, args)


def _run_rank(main, args):
    if "hostccl" in args.backend:
        import hostccl.torch  # noqa: F401  (torch >= 2.5 imports it by itself when installed)
    # One intra-op thread per process when processes share the cores: torch's pool of
    # one per core, in every process, would fight over them.
    world = int(os.environ["WORLD_SIZE"])
    torch.set_num_threads(max(1, (os.cpu_count() or 1) // world))
    dist.init_process_group(args.backend)
    try:
        main(args)
    finally:
        dist.destroy_process_group()


def run(main, args):
    """Runs main(args) on every rank, after init_process_group(args.backend)."""
    if args.spawn:
        mp.spawn(_spawned, args=(args.spawn, _free_port(), main, args), nprocs=args.spawn, join=True)
    else:
        _run_rank(main, args)


def mean_over_ranks(value):
    """The mean of a scalar tensor over the ranks, as a float (SUM, then divided: the
    Gloo of older torch, 2.7 among them, refuses ReduceOp.AVG)."""
    total = value.detach().clone()
    dist.all_reduce(total)
    return total.item() / dist.get_world_size()


def report(args, losses, parameters, step_seconds=None):
    """Prints the loss curve on rank 0 (and the median step time, after the first
    steps' warm-up, when `step_seconds` are given) and writes it with `parameters`
    (name -> full tensor) to --out."""
    if dist.get_rank() != 0:
        return
    print("backend %s, %d ranks: loss %s" % (args.backend, dist.get_world_size(),
                                             " ".join("%.4f" % x for x in losses)), flush=True)
    if step_seconds and len(step_seconds) > 3:
        print("median step %.2f ms" % (1000 * statistics.median(step_seconds[3:])), flush=True)
    if args.out:
        torch.save({"losses": losses, "parameters": {k: v.detach().clone() for k, v in parameters.items()}},
                   args.out)
