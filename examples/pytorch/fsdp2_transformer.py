"""FSDP2 (torch.distributed.fsdp.fully_shard) training a small transformer on hostccl.

Every block and the whole model are sharded across the ranks: parameters are
all-gathered before each block's forward and backward, gradients reduce-scattered
after. The task is next-token prediction of a generated sequence (x[t+1] = 3 x[t] + 1
mod vocab), so the loss falls within a few steps. torch 2.x only.

    python examples/pytorch/fsdp2_transformer.py --spawn 4                 # 4 local processes
    python examples/pytorch/fsdp2_transformer.py --spawn 4 --backend gloo  # the same on Gloo
    torchrun --nproc-per-node 4 examples/pytorch/fsdp2_transformer.py
"""

import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed.device_mesh import DeviceMesh
from torch.distributed.fsdp import fully_shard

import launch

VOCAB, WIDTH, HEADS, LAYERS, SEQ = 64, 64, 4, 2, 16


class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(width), nn.LayerNorm(width)
        self.attn = nn.MultiheadAttention(width, HEADS, batch_first=True)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))

    def forward(self, x):
        causal = torch.triu(torch.full((x.size(1), x.size(1)), float("-inf")), diagonal=1)
        h = self.norm1(x)
        x = x + self.attn(h, h, h, attn_mask=causal, need_weights=False)[0]
        return x + self.mlp(self.norm2(x))


class TinyTransformer(nn.Module):
    def __init__(self, width=WIDTH, layers=LAYERS):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, width)
        self.position = nn.Parameter(torch.randn(SEQ, width) * 0.02)
        self.blocks = nn.ModuleList(Block(width) for _ in range(layers))
        self.head = nn.Linear(width, VOCAB)

    def forward(self, tokens):
        x = self.embed(tokens) + self.position
        for block in self.blocks:
            x = block(x)
        return self.head(x)


def batch(step, rank, size=8):
    """This rank's part of the step's batch: sequences of x[t+1] = 3 x[t] + 1 (mod VOCAB)."""
    g = torch.Generator().manual_seed(1000 * step + rank)
    start = torch.randint(0, VOCAB, (size, 1), generator=g)
    seq = [start]
    for _ in range(SEQ):
        seq.append((seq[-1] * 3 + 1) % VOCAB)
    seq = torch.cat(seq, dim=1)
    return seq[:, :-1], seq[:, 1:]


def full_parameters(model):
    """Every parameter as a full tensor (FSDP2 keeps a shard on each rank: DTensors)."""
    return {name: p.full_tensor() if hasattr(p, "full_tensor") else p for name, p in model.named_parameters()}


def main(args):
    torch.manual_seed(args.seed)
    model = TinyTransformer(args.width, args.layers)
    mesh = None
    if args.compute_only:  # each rank alone: the same steps without communication
        alone, _ = dist.new_subgroups(group_size=1)
        mesh = DeviceMesh.from_group(alone, "cpu")
    for block in model.blocks:
        fully_shard(block, mesh=mesh)
    fully_shard(model, mesh=mesh)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    losses, seconds = [], []
    for step in range(args.steps):
        x, y = batch(step, dist.get_rank(), args.batch)
        start = time.perf_counter()
        loss = nn.functional.cross_entropy(model(x).flatten(0, 1), y.flatten())
        opt.zero_grad()
        loss.backward()
        opt.step()
        seconds.append(time.perf_counter() - start)
        losses.append(launch.mean_over_ranks(loss))
    launch.report(args, losses, full_parameters(model), seconds)


if __name__ == "__main__":
    p = launch.parser(__doc__.splitlines()[0])
    p.add_argument("--batch", type=int, default=8, help="sequences per rank and step (default 8)")
    p.add_argument("--width", type=int, default=WIDTH, help="model width (default %d)" % WIDTH)
    p.add_argument("--layers", type=int, default=LAYERS, help="transformer blocks (default %d)" % LAYERS)
    p.add_argument("--compute-only", action="store_true",
                   help="every rank trains alone (a group of one): the step without communication")
    launch.run(main, p.parse_args())
