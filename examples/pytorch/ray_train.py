"""Ray Train: the DDP example (ddp_train.py) trained by Ray's TorchTrainer on hostccl or Gloo.

On a running Ray cluster (`ray start --head`, then `ray start --address HEAD:PORT` on the
other hosts), with hostccl installed in the workers' Python (`pip install ./python`):
    python examples/pytorch/ray_train.py --address HEAD:PORT --workers 4 --backend hostccl \\
        --storage /shared/ray_results -- --steps 30 --checkpoint /shared/ddp.pt
Arguments after `--` are ddp_train.py's. The training function has no hostccl code: Ray
calls init_process_group("hostccl") in each worker (TorchConfig(backend="hostccl")), and
`import torch` has registered the backend there already (torch's backend autoload reads
the installed package's entry point; torch >= 2.5). A worker whose torch cannot load
hostccl fails at init_process_group with torch's "Invalid backend" error.
"""

import argparse
import os
import sys

import ray
from ray.train import RunConfig, ScalingConfig
from ray.train.torch import TorchConfig, TorchTrainer

EXAMPLES = os.path.dirname(os.path.abspath(__file__))


def train_loop(config):
    """Runs in each Ray worker, after Ray set up the process group."""
    import torch.distributed as dist

    sys.path.insert(0, config["examples"])
    import ddp_train

    args = ddp_train.parse_args(config["ddp_args"] + ["--backend", dist.get_backend()])
    ddp_train.train(dist.get_rank(), dist.get_world_size(), args)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--address", default="auto", help="the Ray cluster to join (ray.init's address)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--cpus-per-worker", type=float, default=1.0)
    parser.add_argument("--backend", default="hostccl", help="hostccl, or gloo")
    parser.add_argument("--storage", default=None, help="RunConfig's storage_path (Ray's results)")
    parser.add_argument("ddp_args", nargs=argparse.REMAINDER, help="-- then ddp_train.py's options")
    args = parser.parse_args()
    ddp_args = args.ddp_args[1:] if args.ddp_args[:1] == ["--"] else args.ddp_args

    ray.init(address=args.address)
    trainer = TorchTrainer(
        train_loop,
        train_loop_config={"examples": EXAMPLES, "ddp_args": ddp_args},
        torch_config=TorchConfig(backend=args.backend),
        scaling_config=ScalingConfig(num_workers=args.workers, use_gpu=False,
                                     resources_per_worker={"CPU": args.cpus_per_worker}),
        run_config=RunConfig(storage_path=args.storage, name="ddp_train_%s" % args.backend),
    )
    result = trainer.fit()
    if result.error:
        raise SystemExit("Ray Train failed: %s" % result.error)
    print("Ray Train on %s, %d workers: done" % (args.backend, args.workers), flush=True)


if __name__ == "__main__":
    main()
