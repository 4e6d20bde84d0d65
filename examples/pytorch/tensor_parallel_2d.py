"""2-D parallelism on hostccl: a DeviceMesh of data-parallel x tensor-parallel ranks.

Within each tensor-parallel group the MLP's first layer is split by columns and the
second by rows (DTensor's parallelize_module: all-gathers and reduce-scatters /
all-reduces inside the group); across the data-parallel dimension FSDP2 shards what is
left and averages the gradients. Both dimensions' groups are sub-communicators of the
world's (split_group on torch >= 2.9). torch 2.x only; the world size must divide by
--tp.

    python examples/pytorch/tensor_parallel_2d.py --spawn 4 --tp 2             # 2 x 2 mesh
    python examples/pytorch/tensor_parallel_2d.py --spawn 4 --tp 2 --backend gloo
    torchrun --nproc-per-node 4 examples/pytorch/tensor_parallel_2d.py --tp 2
"""

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard
from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module

import launch

IN, WIDTH, OUT, LAYERS = 16, 64, 8, 2


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(IN, WIDTH)
        self.layers = nn.ModuleList(
            nn.ModuleDict({"up": nn.Linear(WIDTH, 4 * WIDTH), "down": nn.Linear(4 * WIDTH, WIDTH)})
            for _ in range(LAYERS))
        self.out = nn.Linear(WIDTH, OUT)

    def forward(self, x):
        x = self.inp(x)
        for layer in self.layers:
            x = x + layer["down"](torch.relu(layer["up"](x)))
        return self.out(x)


def tensor_parallel_plan():
    plan = {}
    for i in range(LAYERS):
        plan["layers.%d.up" % i] = ColwiseParallel()
        plan["layers.%d.down" % i] = RowwiseParallel()
    return plan


def batch(step, dp_rank, size=16):
    """The data-parallel group's batch (its tensor-parallel ranks share it): a fixed
    random linear map of the input to learn."""
    target = torch.Generator().manual_seed(7)
    w = torch.randn(IN, OUT, generator=target)
    g = torch.Generator().manual_seed(1000 * step + dp_rank)
    x = torch.randn(size, IN, generator=g)
    return x, x @ w / IN ** 0.5


def full_parameters(model):
    return {name: p.full_tensor() if hasattr(p, "full_tensor") else p for name, p in model.named_parameters()}


def main(args):
    world = dist.get_world_size()
    if world % args.tp:
        raise SystemExit("tensor_parallel_2d: %d ranks do not divide into groups of --tp %d" % (world, args.tp))
    mesh = init_device_mesh("cpu", (world // args.tp, args.tp), mesh_dim_names=("dp", "tp"))
    torch.manual_seed(args.seed)
    model = MLP()
    parallelize_module(model, mesh["tp"], tensor_parallel_plan())
    fully_shard(model, mesh=mesh["dp"])
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    losses = []
    dp_rank = mesh["dp"].get_local_rank()
    for step in range(args.steps):
        x, y = batch(step, dp_rank)
        loss = nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(launch.mean_over_ranks(loss))
    launch.report(args, losses, full_parameters(model))


if __name__ == "__main__":
    p = launch.parser(__doc__.splitlines()[0])
    p.add_argument("--tp", type=int, default=2, help="ranks per tensor-parallel group (default 2)")
    launch.run(main, p.parse_args())
