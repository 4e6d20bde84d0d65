"""A 2-stage pipeline (torch.distributed.pipelining) trained on hostccl.

Rank 0 holds the first half of an MLP, rank 1 the second; each step's batch is cut
into micro-batches that flow through the stages under a GPipe or 1F1B schedule
(activations and their gradients go between the stages as sends and receives, batched
with batch_isend_irecv). torch 2.x only; 2 ranks.

    python examples/pytorch/pipeline_2stage.py --spawn 2 [--schedule 1f1b]
    python examples/pytorch/pipeline_2stage.py --spawn 2 --backend gloo
    torchrun --nproc-per-node 2 examples/pytorch/pipeline_2stage.py
"""

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed.pipelining import PipelineStage, Schedule1F1B, ScheduleGPipe

import launch

IN, WIDTH, OUT, MICROBATCHES, BATCH = 16, 64, 4, 4, 32


def stages():
    """The whole model, in its two stages (every rank builds both from one seed and
    keeps its own, so the run starts from the same model as a single process would)."""
    first = nn.Sequential(nn.Linear(IN, WIDTH), nn.ReLU(), nn.Linear(WIDTH, WIDTH), nn.ReLU())
    second = nn.Sequential(nn.Linear(WIDTH, WIDTH), nn.ReLU(), nn.Linear(WIDTH, OUT))
    return [first, second]


def batch(step):
    target = torch.Generator().manual_seed(7)
    w = torch.randn(IN, OUT, generator=target)
    x = torch.randn(BATCH, IN, generator=torch.Generator().manual_seed(step))
    return x, torch.tanh(x @ w / IN ** 0.5)


def main(args):
    if dist.get_world_size() != 2:
        raise SystemExit("pipeline_2stage: runs on 2 ranks (got %d)" % dist.get_world_size())
    rank = dist.get_rank()
    torch.manual_seed(args.seed)
    module = stages()[rank]
    stage = PipelineStage(module, rank, 2, torch.device("cpu"))
    loss_fn = nn.MSELoss()
    kind = Schedule1F1B if args.schedule == "1f1b" else ScheduleGPipe
    schedule = kind(stage, n_microbatches=MICROBATCHES, loss_fn=loss_fn)
    opt = torch.optim.Adam(module.parameters(), lr=0.01)
    losses = []
    for step in range(args.steps):
        x, y = batch(step)
        opt.zero_grad()
        if rank == 0:
            schedule.step(x)
            loss = torch.zeros(1)
        else:
            micro = []
            schedule.step(target=y, losses=micro)
            loss = torch.stack(micro).mean().reshape(1)
        opt.step()
        dist.broadcast(loss, src=1)  # the last stage knows the loss
        losses.append(loss.item())
    # Both stages' parameters, gathered on every rank: the model as one piece.
    parts = [None, None]
    dist.all_gather_object(parts, {"stage%d.%s" % (rank, k): v for k, v in module.state_dict().items()})
    launch.report(args, losses, {k: v for part in parts for k, v in part.items()})


if __name__ == "__main__":
    p = launch.parser(__doc__.splitlines()[0])
    p.add_argument("--schedule", choices=["gpipe", "1f1b"], default="gpipe")
    launch.run(main, p.parse_args())
