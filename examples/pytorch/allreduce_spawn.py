"""HCCL's PyTorch example pattern on CPU hosts: mp.spawn, init_process_group over
tcp://, one all_reduce, the result printed by every rank.

    PYTHONPATH=<build>/python /usr/bin/python3 examples/pytorch/allreduce_spawn.py [--ranks 4] [--backend hccl]

With an installed hostccl: source <prefix>/set_env.sh first (it puts the package on
PYTHONPATH). "hccl" is hostccl's second name when no other backend holds it.
"""

import argparse
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

import hostccl.torch  # noqa: F401  (registers the "hostccl" and "hccl" backends)


def run(rank, world, backend, port):
    dist.init_process_group(backend=backend, init_method="tcp://127.0.0.1:%d" % port, rank=rank, world_size=world)
    tensor = torch.ones(8, dtype=torch.float32) * (rank + 1)
    dist.all_reduce(tensor, op=dist.ReduceOp.SUM)
    want = float(world * (world + 1) // 2)
    ok = bool(torch.all(tensor == want))
    print("rank %d: all_reduce -> %s (%s)" % (rank, tensor.tolist(), "ok" if ok else "WRONG"), flush=True)
    dist.destroy_process_group()
    if not ok:
        raise SystemExit(1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--backend", default="hccl", help="hccl or hostccl (the same backend), or gloo")
    parser.add_argument("--port", type=int, default=int(os.environ.get("MASTER_PORT", "29517")))
    args = parser.parse_args()
    mp.spawn(run, args=(args.ranks, args.backend, args.port), nprocs=args.ranks, join=True)


if __name__ == "__main__":
    main()
