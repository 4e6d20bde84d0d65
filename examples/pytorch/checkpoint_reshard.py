"""torch.distributed.checkpoint on hostccl: saved at one world size, loaded at another.

--phase save trains fsdp2_transformer.py's model with FSDP2 for --steps and saves the
sharded model and optimizer state (dcp.save: every rank writes its shards, the plan is
agreed with gather/scatter/broadcast of objects). --phase load, with another number of
ranks, builds the model anew (another seed), loads the checkpoint into its own
sharding (dcp.load reshards), checks that every parameter equals what was saved, and
trains on. torch 2.x only.

    python examples/pytorch/checkpoint_reshard.py --spawn 4 --phase save --dir /tmp/ckpt
    python examples/pytorch/checkpoint_reshard.py --spawn 2 --phase load --dir /tmp/ckpt
"""

import os

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
import torch.nn as nn
from torch.distributed.checkpoint.state_dict import (get_model_state_dict, get_optimizer_state_dict,
                                                     set_model_state_dict, set_optimizer_state_dict)
from torch.distributed.fsdp import fully_shard

import launch
from fsdp2_transformer import TinyTransformer, batch, full_parameters


def sharded_model(seed):
    torch.manual_seed(seed)
    model = TinyTransformer()
    for block in model.blocks:
        fully_shard(block)
    fully_shard(model)
    return model, torch.optim.AdamW(model.parameters(), lr=3e-3)


def train(model, opt, first_step, steps):
    losses = []
    for step in range(first_step, first_step + steps):
        x, y = batch(step, dist.get_rank())
        loss = nn.functional.cross_entropy(model(x).flatten(0, 1), y.flatten())
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(launch.mean_over_ranks(loss))
    return losses


def save(args):
    model, opt = sharded_model(args.seed)
    losses = train(model, opt, 0, args.steps)
    dcp.save({"model": get_model_state_dict(model), "optim": get_optimizer_state_dict(model, opt)},
             checkpoint_id=args.dir)
    saved = full_parameters(model)  # a collective: every rank takes part
    if dist.get_rank() == 0:
        torch.save(saved, os.path.join(args.dir, "saved_parameters.pt"))
    launch.report(args, losses, saved)


def load(args):
    model, opt = sharded_model(args.seed + 1)  # not what was saved: the load must replace it
    state = {"model": get_model_state_dict(model), "optim": get_optimizer_state_dict(model, opt)}
    dcp.load(state, checkpoint_id=args.dir)
    set_model_state_dict(model, state["model"])
    set_optimizer_state_dict(model, opt, state["optim"])
    loaded = full_parameters(model)
    saved = torch.load(os.path.join(args.dir, "saved_parameters.pt"))
    wrong = [name for name, p in loaded.items() if not torch.equal(p, saved[name])]
    if wrong:
        raise SystemExit("checkpoint_reshard: parameters differ from the saved ones after loading at %d ranks: %s"
                         % (dist.get_world_size(), ", ".join(wrong)))
    if dist.get_rank() == 0:
        print("loaded at %d ranks: every parameter equals the saved one" % dist.get_world_size(), flush=True)
    launch.report(args, train(model, opt, args.steps, args.steps), full_parameters(model))


def main(args):
    (save if args.phase == "save" else load)(args)


if __name__ == "__main__":
    p = launch.parser(__doc__.splitlines()[0])
    p.add_argument("--phase", choices=["save", "load"], required=True)
    p.add_argument("--dir", required=True, help="the checkpoint's directory")
    launch.run(main, p.parse_args())
