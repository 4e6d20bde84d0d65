"""DDP training of a small CNN on generated data, on hostccl or Gloo, printing loss and step time.

Local processes (mp.spawn, tcp:// rendezvous):
    /usr/bin/python3 examples/pytorch/ddp_train.py --spawn 4 [--backend hostccl|gloo] [--hook topk:0.01]
Under a launcher (env://: rank and size come from the launcher's variables, which
`import hostccl.torch` turns into RANK / WORLD_SIZE; the meeting point is
MASTER_ADDR / MASTER_PORT, or HOSTCCL_ROOT_ADDR=host:port):
    mpirun -np 4 -x MASTER_ADDR=127.0.0.1 -x MASTER_PORT=29500 /usr/bin/python3 examples/pytorch/ddp_train.py
    mpiexec.mpich -n 4 -genv HOSTCCL_ROOT_ADDR 127.0.0.1:29500 /usr/bin/python3 examples/pytorch/ddp_train.py
    srun -N 2 --ntasks-per-node 2 /usr/bin/python3 examples/pytorch/ddp_train.py   (meets on the step's first node)
(PYTHONPATH=<build>/python, or source <prefix>/set_env.sh for an installed hostccl.)
Debian 12's torchrun (torch 1.13 on Python 3.11) crashes at start; mpirun or mp.spawn work instead.

Restartable: --checkpoint FILE resumes from FILE when it exists, and rank 0 saves the model,
optimizer and step there every --checkpoint-every steps; the data of a step depends on the step
alone, so a job killed and restarted (torchrun --max-restarts) ends with the parameters of an
undisturbed run (rank 0 prints their sha256, "parameters digest").

Step times on CPUs swing with glibc's heap and thread pools more than with the backend:
bench/pytorch/compare.sh runs with OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
MALLOC_MMAP_THRESHOLD_=4294967296 MALLOC_TRIM_THRESHOLD_=4294967296 (docs/pytorch-performance.md).

Hooks: none, fp16, bf16, powersgd (torch's), topk[:ratio] and sign (hostccl's
compressors with error feedback, hostccl.torch.hooks; hostccl only).

With hostccl's planner (docs/planner.md): --describe-model FILE writes the CNN as
hostccl-plan reads it (hostccl.planner.describe_module, one forward pass with hooks);
--plan FILE[:N] trains with plan N of hostccl-plan's plan file (the first by default):
its per-rank batch, micro-batches (gradients accumulated under no_sync), bucket size,
compressor and overlap. DDP is data parallelism only: plan with --tp 1 --pp 1.
"""

import argparse
import hashlib
import json
import os
import statistics
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
from torch.distributed.algorithms.ddp_comm_hooks import powerSGD_hook as powersgd
from torch.nn.parallel import DistributedDataParallel as DDP

import hostccl.planner
import hostccl.torch  # noqa: F401  (registers the backend; launcher variables for env://)
from hostccl.torch import hooks


class SmallCNN(nn.Module):
    """Two convolutions and two dense layers over 1 x 28 x 28 inputs, 10 classes."""

    def __init__(self, width):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, width, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(width, 2 * width, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
        self.classifier = nn.Sequential(
            nn.Flatten(), nn.Linear(2 * width * 7 * 7, 256), nn.ReLU(), nn.Linear(256, 10))

    def forward(self, x):
        return self.classifier(self.features(x))


def make_data(rank, batch, batches):
    """Labelled images from a fixed random teacher, so the loss can fall; each rank its own."""
    gen = torch.Generator().manual_seed(1000 + rank)
    teacher = torch.randn(28 * 28, 10, generator=torch.Generator().manual_seed(7))
    data = []
    for _ in range(batches):
        x = torch.randn(batch, 1, 28, 28, generator=gen)
        data.append((x, (x.reshape(batch, -1) @ teacher).argmax(dim=1)))
    return data


def register_hook(ddp, name, backend, group=None):
    """DDP's comm hook for --hook NAME over ``group`` (None: the default group)."""
    if name == "none":
        return None
    if name == "fp16":
        ddp.register_comm_hook(group, default_hooks.fp16_compress_hook)
    elif name == "bf16":
        ddp.register_comm_hook(group, hooks.bf16_hook)
    elif name == "powersgd":
        state = powersgd.PowerSGDState(process_group=group, matrix_approximation_rank=2, start_powerSGD_iter=10)
        ddp.register_comm_hook(state, powersgd.powerSGD_hook)
    elif name.startswith("topk") or name == "sign":
        if backend == "gloo":
            raise SystemExit("--hook %s is hostccl's: it needs --backend hostccl" % name)
        state = hooks.CompressionState(name, group)
        ddp.register_comm_hook(state, hooks.compressed_hook)
        return state
    else:
        raise SystemExit("unknown --hook %s" % name)
    return None


class PlannedHook:
    """register_hook for one --hook NAME as a function(ddp, group); an object, not a
    lambda, so that describe_module's host-sharing processes (spawned) get it."""

    def __init__(self, name, backend):
        self.name, self.backend = name, backend

    def __call__(self, ddp, group):
        return register_hook(ddp, self.name, self.backend, group)


def planned_hooks(backend):
    """The compressions hostccl-plan tries, as this example trains them: for
    describe_module to time each DDP comm hook (top-k and sign are hostccl's)."""
    names = ["fp16", "bf16"] + (["topk:0.01", "sign"] if backend != "gloo" else [])
    return {name: PlannedHook(name, backend) for name in names}


def local_world(world):
    """Processes on this host (by the launcher's word; else all of them)."""
    for name in ("LOCAL_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "SLURM_NTASKS_PER_NODE"):
        if os.environ.get(name, "").isdigit():
            return int(os.environ[name])
    return world


def intra_op_threads(world):
    """One core's worth of intra-op threads per process: the host's cores shared among its
    ranks, and never more than the cores this process may run on (a launcher that binds
    each rank to its cores: two threads on one bound core took a scheduler tick, 4 ms,
    per micro-batch; a step of 8 micro-batches then took 32 ms, 7.2 with one thread)."""
    allowed = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(allowed, (os.cpu_count() or 1) // local_world(world)))


def read_plan(spec):
    """Plan N (1-based) of a plan file "FILE[:N]", checked for what DDP can run."""
    path, _, index = spec.partition(":")
    index = int(index) if index else 1
    with open(path) as f:
        plans = json.load(f)
    if not 1 <= index <= len(plans["plans"]):
        raise SystemExit("--plan %s: no plan %d (the file has %d)" % (spec, index, len(plans["plans"])))
    plan = plans["plans"][index - 1]
    if plan["tp"] != 1 or plan["pp"] != 1:
        raise SystemExit("--plan %s: plan %d splits tensors or stages (tp %d, pp %d); DDP runs data parallelism only "
                         "(plan with hostccl-plan --tp 1 --pp 1)" % (spec, index, plan["tp"], plan["pp"]))
    if not plan["overlap"] and plan["compression"] != "none":
        raise SystemExit("--plan %s: plan %d compresses with overlap off; this example compresses through DDP's comm "
                         "hooks, which overlap" % (spec, index))
    plan["global_batch"] = plans["global_batch"]
    return plan


def apply_plan(args, world):
    plan = read_plan(args.plan)
    if plan["dp"] != world:
        raise SystemExit("--plan: the plan is for %d data-parallel ranks, this run has %d" % (plan["dp"], world))
    args.batch = plan["global_batch"] // world
    args.micro_batches = plan["micro_batches"]
    args.bucket_mb = plan["bucket_bytes"] / float(1 << 20)
    args.hook = plan["compression"]
    args.overlap = plan["overlap"]
    args.predicted_ms = plan.get("predicted", {}).get("step_ms")


def average_gradients(model, world, bucket_mb):
    """Without overlap: every gradient averaged after backward, in flat fp32 buckets."""
    grads = [p.grad for p in model.parameters() if p.grad is not None]
    limit = max(1, int(bucket_mb * (1 << 20) / 4))
    bucket = []
    for g in grads + [None]:
        if g is not None and (not bucket or sum(t.numel() for t in bucket) + g.numel() <= limit):
            bucket.append(g)
            continue
        if bucket:
            flat = torch.cat([t.reshape(-1) for t in bucket])
            dist.all_reduce(flat)
            flat /= world
            at = 0
            for t in bucket:
                t.copy_(flat[at:at + t.numel()].view_as(t))
                at += t.numel()
        bucket = [g] if g is not None else []


def step_once(ddp, model, x, y, world, args):
    """Forward and backward over the micro-batches (all but the last under no_sync),
    gradients averaged by DDP as backward runs, or after it without overlap."""
    micro = args.micro_batches
    xs, ys = x.chunk(micro), y.chunk(micro)
    loss = 0.0
    for i in range(micro):
        quiet = args.no_sync or not args.overlap or i + 1 < micro
        if quiet:
            with ddp.no_sync():
                part = nn.functional.cross_entropy(ddp(xs[i]), ys[i]) / micro
                part.backward()
        else:
            part = nn.functional.cross_entropy(ddp(xs[i]), ys[i]) / micro
            part.backward()
        loss += part.item()
    if not args.overlap and not args.no_sync:
        average_gradients(model, world, args.bucket_mb)
    return loss


def load_checkpoint(path, model, opt):
    """The step to go on from: the one after the checkpoint's, or 0 without one."""
    if not path or not os.path.exists(path):
        return 0
    saved = torch.load(path)
    model.load_state_dict(saved["model"])
    opt.load_state_dict(saved["optimizer"])
    return saved["step"] + 1


def save_checkpoint(path, model, opt, step):
    """Rank 0's, written beside and renamed: a worker killed mid-write leaves the last one whole."""
    tmp = path + ".tmp"
    torch.save({"model": model.state_dict(), "optimizer": opt.state_dict(), "step": step}, tmp)
    os.replace(tmp, path)


def parameters_digest(model):
    """sha256 of the parameters' bytes: two runs ended alike when their digests match."""
    flat = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
    return hashlib.sha256(flat.numpy().tobytes()).hexdigest()


def train(rank, world, args):
    torch.set_num_threads(intra_op_threads(world))
    if args.shareable_memory:  # before the model and DDP: its gradient buckets become shareable
        hostccl.torch.use_shareable_memory()
    if args.plan:
        apply_plan(args, world)
    if args.batch % args.micro_batches != 0:
        raise SystemExit("--micro-batches %d must divide the batch of %d" % (args.micro_batches, args.batch))
    torch.manual_seed(0)
    model = SmallCNN(args.width)
    ddp = DDP(model, bucket_cap_mb=args.bucket_mb)
    state = register_hook(ddp, args.hook, args.backend)
    opt = torch.optim.SGD(ddp.parameters(), lr=args.lr, momentum=0.9)
    data = make_data(rank, args.batch, 8)
    first = load_checkpoint(args.checkpoint, model, opt)
    if rank == 0 and first > 0:
        print("resumed from %s at step %d" % (args.checkpoint, first), flush=True)
    times = []
    for step in range(first, args.steps):
        x, y = data[step % len(data)]
        start = time.perf_counter()
        opt.zero_grad()
        # --no-sync: compute alone, what the step would cost without communication.
        loss = step_once(ddp, model, x, y, world, args)
        opt.step()
        times.append(time.perf_counter() - start)
        if rank == 0 and (step % args.print_every == 0 or step == args.steps - 1):
            print("step %4d  loss %.4f  step %.1f ms" % (step, loss, times[-1] * 1e3), flush=True)
        if args.checkpoint and rank == 0 and (step + 1) % args.checkpoint_every == 0:
            save_checkpoint(args.checkpoint, model, opt, step)
    # Every rank must hold the same model: a broken reduction would show here.
    flat = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
    check = flat.clone()
    dist.broadcast(check, src=0)
    same = bool(torch.equal(check, flat)) or args.no_sync
    if not times:
        raise SystemExit("--steps %d: the checkpoint %s is at step %d already" % (args.steps, args.checkpoint, first - 1))
    steady = times[min(args.warmup, len(times) - 1):]
    median_step = statistics.median(steady)
    if rank == 0:
        params = sum(p.numel() for p in model.parameters())
        wire = ""
        if state is not None:
            wire = ", sent %.1f %% of fp32's bytes" % (100.0 * state.wire_bytes / max(1, state.fp32_wire_bytes))
        print("%s, %d ranks, hook %s, batch %d in %d micro-batches, buckets %.3g MiB, overlap %s, %d intra-op "
              "threads: %d parameters, final loss %.4f, median step %.2f ms (mean %.2f ms)%s" %
              (args.backend, world, args.hook, args.batch, args.micro_batches, args.bucket_mb,
               "on" if args.overlap else "off", torch.get_num_threads(), params, loss, median_step * 1e3,
               statistics.mean(steady) * 1e3, wire), flush=True)
        print("parameters digest %s" % parameters_digest(model), flush=True)
        predicted = getattr(args, "predicted_ms", None)
        if predicted:  # --plan: the planner's prediction against this run (+: predicted slower)
            measured = median_step * 1e3
            print("plan %s: predicted %.2f ms a step, measured %.2f ms (%+.0f %%)" %
                  (args.plan, predicted, measured, 100.0 * (predicted / measured - 1.0)), flush=True)
    if not same:
        raise SystemExit("rank %d: the model differs from rank 0's" % rank)
    return median_step


def spawned(rank, world, args):
    dist.init_process_group(args.backend, init_method="tcp://127.0.0.1:%d" % args.port, rank=rank, world_size=world)
    train(rank, world, args)
    finish(args)


def finish(args):
    if args.backend == "gloo":
        # torch 1.13's ProcessGroupGloo can deadlock on the GIL when destroyed with
        # DDP's reducer: leave without destructors.
        os._exit(0)
    dist.destroy_process_group()


def parse_args(argv=None):
    """The command line's options (argv: a list, or sys.argv's when None); also what
    ray_train.py hands each Ray worker."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="hostccl", help="hostccl (or hccl, the same), or gloo")
    parser.add_argument("--hook", default="none", help="none, fp16, bf16, powersgd, topk[:ratio], sign")
    parser.add_argument("--spawn", type=int, default=0, help="start this many local processes (else: env://)")
    parser.add_argument("--port", type=int, default=29527, help="tcp:// port with --spawn")
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--warmup", type=int, default=10, help="steps left out of the step time")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--width", type=int, default=32, help="channels of the first convolution")
    parser.add_argument("--bucket-mb", type=float, default=25.0)
    parser.add_argument("--lr", type=float, default=0.02)
    parser.add_argument("--print-every", type=int, default=10)
    parser.add_argument("--shareable-memory", action="store_true",
                        help="hostccl.torch.use_shareable_memory(): gradient buckets peer processes read in place")
    parser.add_argument("--no-sync", action="store_true",
                        help="no gradient communication (under ddp.no_sync): the compute-only step time")
    parser.add_argument("--micro-batches", type=int, default=1, help="per step, gradients accumulated under no_sync")
    parser.add_argument("--no-overlap", dest="overlap", action="store_false",
                        help="average gradients after backward (flat fp32 buckets) instead of DDP's overlap")
    parser.add_argument("--checkpoint", metavar="FILE",
                        help="resume from FILE when it exists; rank 0 saves the model, optimizer and step there every "
                             "--checkpoint-every steps (a restarted job, e.g. torchrun --max-restarts, goes on from it)")
    parser.add_argument("--checkpoint-every", type=int, default=10)
    parser.add_argument("--describe-model", metavar="FILE",
                        help="write the CNN as hostccl-plan reads it (one forward pass of --batch) and exit")
    parser.add_argument("--host-sharing", type=int, default=0, metavar="RANKS",
                        help="with --describe-model: measure what RANKS processes of this model cost each other on "
                             "this host (hostccl-plan uses it for hosts of as many ranks)")
    parser.add_argument("--plan", metavar="FILE[:N]",
                        help="train with plan N of hostccl-plan's plan file: batch, micro-batches, buckets, hook, overlap")
    return parser.parse_args(argv)


def main():
    args = parse_args()
    if args.describe_model:
        x, y = make_data(0, args.batch, 1)[0]
        spec = hostccl.planner.describe_module(SmallCNN(args.width), x, name="ddp_train SmallCNN",
                                               optimizer_state_per_param=1, loss=nn.CrossEntropyLoss(), target=y,
                                               data_parallel=args.backend, comm_hooks=planned_hooks(args.backend),
                                               host_sharing=args.host_sharing or None)
        hostccl.planner.write_model(args.describe_model, spec)
        return
    if args.spawn > 0:
        mp.spawn(spawned, args=(args.spawn, args), nprocs=args.spawn, join=True)
        return
    dist.init_process_group(args.backend, init_method="env://")
    train(dist.get_rank(), dist.get_world_size(), args)
    finish(args)


if __name__ == "__main__":
    main()
