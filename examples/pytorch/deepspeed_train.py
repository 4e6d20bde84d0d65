"""DeepSpeed ZeRO (stage 1 or 2) on CPUs over hostccl: the DDP example's CNN and data.

Under any launcher that sets torch's variables (torchrun; DeepSpeed's own launcher):
    DS_ACCELERATOR=cpu torchrun --nproc-per-node 4 examples/pytorch/deepspeed_train.py \\
        --backend hostccl --zero-stage 2 [--checkpoint FILE]
`deepspeed.init_distributed(dist_backend="hostccl")` makes hostccl DeepSpeed's communication
backend: ZeRO's reduce-scatters of gradients, all-gathers of parameters and its broadcasts
run on it. DS_ACCELERATOR=cpu: DeepSpeed would otherwise pick CUDA from a CUDA build of torch.
fp32 throughout (ZeRO's fp16 / bf16 paths are for accelerators), the optimizer torch's SGD.
--checkpoint FILE: rank 0 saves the final parameters there (compare two runs with them).
"""

import argparse
import os
import sys

import deepspeed
import torch
import torch.distributed as dist
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ddp_train import SmallCNN, make_data, parameters_digest  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="hostccl", help="hostccl, or gloo")
    parser.add_argument("--zero-stage", type=int, default=2, choices=(1, 2))
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--width", type=int, default=8)
    parser.add_argument("--lr", type=float, default=0.02)
    parser.add_argument("--checkpoint", metavar="FILE")
    parser.add_argument("--local_rank", type=int, default=0, help="set by DeepSpeed's launcher")
    args = parser.parse_args()

    deepspeed.init_distributed(dist_backend=args.backend)
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    model = SmallCNN(args.width)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    config = {
        "train_micro_batch_size_per_gpu": args.batch,
        "gradient_accumulation_steps": 1,
        "zero_optimization": {"stage": args.zero_stage, "reduce_bucket_size": 1 << 20,
                              "allgather_bucket_size": 1 << 20},
        "zero_allow_untested_optimizer": True,
        "steps_per_print": 1 << 30,
    }
    engine, _, _, _ = deepspeed.initialize(model=model, optimizer=opt, config=config)
    data = make_data(rank, args.batch, 8)
    loss_fn = nn.CrossEntropyLoss()
    for step in range(args.steps):
        x, y = data[step % len(data)]
        loss = loss_fn(engine(x), y)
        engine.backward(loss)
        engine.step()
        if rank == 0 and (step % 4 == 0 or step == args.steps - 1):
            print("step %4d  loss %.4f" % (step, loss.item()), flush=True)
    # ZeRO keeps each rank's optimizer shard; the module's parameters are whole on every rank.
    flat = torch.cat([p.detach().reshape(-1) for p in engine.module.parameters()])
    check = flat.clone()
    dist.broadcast(check, src=0)
    if not torch.equal(check, flat):
        raise SystemExit("rank %d: the model differs from rank 0's" % rank)
    if rank == 0:
        print("%s, ZeRO stage %d, %d ranks: final loss %.4f, parameters digest %s" %
              (dist.get_backend(), args.zero_stage, world, loss.item(), parameters_digest(engine.module)), flush=True)
        if args.checkpoint:
            torch.save({"model": engine.module.state_dict()}, args.checkpoint)
    dist.barrier()  # every rank leaves once rank 0 has saved
    if args.backend == "gloo":
        # torch 2.15's ProcessGroupGloo aborted one rank (SIGABRT) at exit while the others
        # tore down theirs: leave without its destructors, as ddp_train.py does for Gloo.
        sys.stdout.flush()
        os._exit(0)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
