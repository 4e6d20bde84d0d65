"""How a model's ranks sharing one host slow each other: hostccl-plan's crowded-host
probe (planner/crowding_probe.cc) run with the model's own processes.

hostccl-plan's probe times sgemm segments and allreduces on thread ranks (or, under a
launcher, on the job's C++ processes). A framework's ranks are heavier to share a core
among: eight PyTorch processes of the example CNN on 2 cores, each step synced, spent
2.2x the CPU a step takes alone (the thread ranks read 1.03-1.08x), and a collective
between their steps cost far more than between the probe's sgemms (docs/planner.md).
Here ``ranks`` processes, each training a copy of the model under a process group of
``backend``, run the same measurement with the model's training step as the compute:

- the compute slowdown: a step's CPU time while every rank trains, each step followed
  by an allreduce (the median round), over its time alone (the best round); and the
  same for a step of the example's samples one at a time (one-sample micro-batches);
- what a collective costs between compute phases: each round's wall time beyond the
  CPU its steps took spread over the cores, per collective, after no compute, one step
  and four steps (the fixed part, the part per second of compute, the cost with none);
  for a model that trains under DDP (``data_parallel``) the one-step figure comes from
  DDP steps, whose averaging meets the ranks as training does.

With ``comm_hooks`` (compression spec -> a picklable function(ddp, group) registering
the DDP comm hook that trains with it), also what each hook adds to a DDP step there
with every rank training: on one idle core the example's bf16 hook adds 0.1 ms a step,
while at 4 and 8 ranks on 2 cores DDP steps with it took 2 ms longer than without.

Its cost grows with the step: each rank trains 8 x 120 steps beside the others (16 of
them a sample at a time) and rank 0 as many alone (about 25 s at 8 ranks on 2 cores for
the example's 1.4 ms step, spawning included; the one-sample steps pass at most 8
samples whatever the example's size), and the hooks' turns up to 12 s more.
The figures are hostccl-plan's raw probe figures (``host_sharing`` in the model file);
the planner takes the op's own time out as it does for its own probe.
"""

import json
import os
import socket
import tempfile

# Rounds of each interval, alternating, so a change on the host meets them all alike.
_ROUNDS = 8
# (name, training steps per segment, segments per round): none, one and four steps
# between collectives (the C++ probe: none, about 1 ms and 5 ms of sgemm). Long
# rounds: a round's cost per collective carries how the scheduler left the ranks
# spread over the cores when it began (8 ranks of the example CNN, 20 and 8 segments:
# one step's collective read 2.5-6.7 ms round to round, a high short round beside a
# low long one; probes read it 2.5-4.7 ms and 1.2-3.0 ms fixed, even with 16 rounds;
# with 40 and 16 segments three probes read 4.0-4.4 ms and 2.6 ms).
# "micro": a step of the example's samples one at a time (as a plan of one-sample
# micro-batches runs it), for the compute slowdown at that size: passes over small
# batches share a core more cheaply (8 ranks of the example CNN on 2 cores: 1.24-1.26x
# for one-sample passes where whole steps of 8 read 1.4-1.8x), and plans of many
# micro-batches were predicted 20-39 % over with the whole step's. At most
# _MICRO_PASSES passes a step (the first samples of the example): the figure is the
# slowdown of one-sample passes, and passing a 256-sample example one at a time would
# make the interval 32 times as long for the same reading (a larger share of the
# optimizer's step in it, which shares a core more dearly: the figure reads high, if
# anything, for examples of more than 8 samples).
_MICRO_PASSES = 8
_INTERVALS = (("none", 0, 40, False), ("short", 1, 40, False), ("long", 4, 16, False), ("micro", 1, 16, True))
# A model that trains under DDP meets its ranks at DDP's own averaging, not at an
# allreduce called after the step: the reducer launches it from a backward hook onto
# the group's stream thread and the step waits for its future, and those threads want
# the crowded cores too. 4 ranks of the example CNN on 2 cores: a step and a blocking
# allreduce took 5.3-6.6 ms, a DDP step 7.2-7.8 ms, of which DDP's own CPU explains
# about 1 ms; DDP plans timed with the blocking allreduce were predicted 10-15 % under.
# So for such a model this interval, DDP steps, gives the fixed cost of a sync.
_DDP_INTERVAL = ("ddp", 40)
_SYNC_FLOATS = (64 << 10) // 4  # the C++ probe's message: 64 KiB (kSyncProbeBytes)
# The comm hooks: DDP steps with each hook and with none, one step of each in turn
# (every rank steps the same models in the same order), this many turns at most, as
# many as fit in _HOOK_BUDGET_SECONDS. A step of 8 ranks on 2 cores varies by a few ms
# with how the scheduler left them; in rounds of 12 steps of one model at a time,
# fp16's hook read 0.3-4.5 ms a step in three probes.
_HOOK_TURNS, _HOOK_MIN_TURNS, _HOOK_BUDGET_SECONDS = 120, 30, 12.0


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class _Rank:
    """One process's part: a copy of the model training on the example, the group, and
    the CPU its steps took (``cpu``, from the start of the last ``together``)."""

    def __init__(self, step, alone_core=None, data_parallel=False):
        import copy
        import time
        import torch
        import torch.distributed as dist
        self.time, self.torch, self.dist = time, torch, dist
        self.step, self.model = step, step.module
        self.opt = step.optimizer(self.model.parameters())
        self.ddp = None
        if data_parallel:  # a copy under DDP over the ranks' group, for _DDP_INTERVAL
            from torch.nn.parallel import DistributedDataParallel
            self.ddp = DistributedDataParallel(copy.deepcopy(self.model))
            self.ddp_opt = step.optimizer(self.ddp.parameters())
        self.data = torch.ones(_SYNC_FLOATS)
        self.cpu = 0.0
        self.alone_core = alone_core

    def train(self, steps, one_sample=False):
        """`steps` training steps, each over the example's first samples one at a time
        with `one_sample` (at most _MICRO_PASSES; gradients accumulated, one optimizer
        step)."""
        example = self.step.example
        passes = [example[i:i + 1] for i in range(min(example.shape[0], _MICRO_PASSES))] if one_sample else [example]
        began = self.time.thread_time()  # CPU backward runs on the calling thread
        for _ in range(steps):
            for x in passes:
                self.step.criterion(self.model(x)).backward()
            self.opt.step()
            self.opt.zero_grad(set_to_none=True)
        self.cpu += self.time.thread_time() - began

    def segments(self, steps, count, one_sample=False):
        for _ in range(count):
            self.train(steps, one_sample)
            self.dist.all_reduce(self.data)

    def ddp_steps(self, count):
        """Wall seconds for `count` DDP training steps on every rank from a common start
        (the slowest rank's), and the CPU seconds this thread spent on them, summed over
        the ranks: DDP's averaging syncs them."""
        self.dist.barrier()
        began, t0 = self.time.thread_time(), self.time.perf_counter()
        for _ in range(count):
            self.step.criterion(self.ddp(self.step.example)).backward()
            self.ddp_opt.step()
            self.ddp_opt.zero_grad(set_to_none=True)
        wall, cpu = self.time.perf_counter() - t0, self.time.thread_time() - began
        return self.reduce(wall, self.dist.ReduceOp.MAX), self.reduce(cpu, self.dist.ReduceOp.SUM)

    def reduce(self, value, op):
        t = self.torch.tensor([value], dtype=self.torch.float64)
        self.dist.all_reduce(t, op=op)
        return float(t[0])

    def together(self, steps, count, one_sample=False):
        """Wall seconds for every rank's segments from a common start (the slowest
        rank's), and the CPU seconds their steps took, summed over the ranks."""
        self.dist.barrier()
        self.cpu = 0.0
        t0 = self.time.perf_counter()
        self.segments(steps, count, one_sample)
        wall = self.time.perf_counter() - t0
        return self.reduce(wall, self.dist.ReduceOp.MAX), self.reduce(self.cpu, self.dist.ReduceOp.SUM)

    def turn(self, runs):
        """One training step of each (DDP model, optimizer) of `runs` in turn: each
        one's wall seconds on this rank, from the end of the one before (a DDP step
        ends when every rank's gradients are in)."""
        took = []
        t0 = self.time.perf_counter()
        for model, opt in runs:
            self.step.criterion(model(self.step.example)).backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            t1 = self.time.perf_counter()
            took.append(t1 - t0)
            t0 = t1
        return took

    def alone(self, steps, one_sample=False):
        """Wall seconds for rank 0's `steps` with the others waiting, on the core the
        description timed its step on (``alone_core``) if given."""
        self.dist.barrier()
        t0 = self.time.perf_counter()
        if self.dist.get_rank() == 0:
            allowed = os.sched_getaffinity(0)
            if self.alone_core is not None:
                os.sched_setaffinity(0, {self.alone_core})
            try:
                self.train(steps, one_sample)
            finally:
                os.sched_setaffinity(0, allowed)
        wall = self.time.perf_counter() - t0
        return self.reduce(wall, self.dist.ReduceOp.MAX)


def _measure(rank, ranks, cores):
    """The intervals' figures as the C++ probe keeps them: per segment, the best time
    alone, the median shared CPU time, the mean cost a collective adds."""
    import statistics
    rank.segments(1, 5)  # warm: links, pages, the allocator
    intervals = [i for i in _INTERVALS if not i[3] or rank.step.example.shape[0] > 1]  # one sample: "short" is it
    alone = {name: float("inf") for name, _, _, _ in intervals}
    shared = {name: [] for name, _, _, _ in intervals}
    per_sync = {name: 0.0 for name, _, _, _ in intervals}
    if rank.ddp is not None:
        rank.ddp_steps(3)  # warm: the reducer's buckets
        per_sync[_DDP_INTERVAL[0]] = 0.0
    for _ in range(_ROUNDS):
        for name, steps, count, one_sample in intervals:
            alone[name] = min(alone[name], rank.alone(steps * count, one_sample) / count)
            wall, cpu = rank.together(steps, count, one_sample)
            shared[name].append(cpu / ranks / count)
            per_sync[name] += (wall - cpu / min(cores, ranks)) / count / _ROUNDS
        if rank.ddp is not None:
            name, count = _DDP_INTERVAL
            wall, cpu = rank.ddp_steps(count)
            per_sync[name] += (wall - cpu / min(cores, ranks)) / count / _ROUNDS
    return alone, {k: statistics.median(v) for k, v in shared.items()}, per_sync


def _hooks_added(rank, comm_hooks):
    """Wall seconds each of ``comm_hooks`` (spec -> function(ddp, group)) adds to a DDP
    step of the model over the ranks' group, every rank training: steps of DDP
    without a hook and with each in turn; the median over turns of each hook's step
    less the plain one's in the same turn, averaged over the ranks."""
    import copy
    import statistics
    from torch.nn.parallel import DistributedDataParallel

    def ddp(register=None):
        m = DistributedDataParallel(copy.deepcopy(rank.model))
        if register is not None:
            register(m, None)  # None: the default group, these ranks
        return m, rank.step.optimizer(m.parameters())
    hooks = sorted(comm_hooks.items())
    runs = [ddp()] + [ddp(register) for _, register in hooks]
    warm = rank.turn(runs)  # buckets, the hooks' state
    fit = int(_HOOK_BUDGET_SECONDS / max(rank.reduce(sum(warm), rank.dist.ReduceOp.MAX), 1e-9))
    turns = int(rank.reduce(max(_HOOK_MIN_TURNS, min(_HOOK_TURNS, fit)), rank.dist.ReduceOp.MIN))
    added = [[] for _ in hooks]
    for _ in range(turns):
        took = rank.turn(runs)
        for k, t in enumerate(took[1:]):
            added[k].append(t - took[0])
    n = rank.dist.get_world_size()
    return {spec: max(0.0, rank.reduce(statistics.median(a), rank.dist.ReduceOp.SUM) / n)
            for (spec, _), a in zip(hooks, added)}


def _figures(alone, shared, per_sync, samples):
    """hostccl-plan's raw probe figures (planner/crowding_probe.h, HostSharing), and
    the slowdown of a step of `samples` one-sample passes ("micro"; "short" for one)."""
    per_compute = max(0.0, per_sync["long"] / alone["long"])
    micro = "micro" if "micro" in alone else "short"
    one_step = per_sync.get(_DDP_INTERVAL[0], per_sync["short"])  # a step's sync as the model trains
    return {"compute_slowdown": max(1.0, shared["short"] / alone["short"]),
            "compute_slowdown_one_sample": max(1.0, shared[micro] / alone[micro]),
            "samples": samples,
            "sync_base_seconds": max(0.0, one_step - per_compute * alone["short"]),
            "sync_per_compute": per_compute,
            "sync_short_compute_seconds": alone["short"],
            "sync_floor_seconds": per_sync["none"]}


def _probe_process(index, ranks, cores, backend, port, step, comm_hooks, alone_core, data_parallel, out):
    from datetime import timedelta
    import torch
    import torch.distributed as dist
    torch.set_num_threads(1)  # a rank per core's share, as the training ranks
    if backend in ("hostccl", "hccl"):
        import hostccl.torch  # noqa: F401  registers the backend
    # A bounded wait: a process that failed to start leaves the others waiting here
    # (torch's default is 30 minutes).
    dist.init_process_group(backend, init_method="tcp://127.0.0.1:%d" % port, rank=index, world_size=ranks,
                            timeout=timedelta(seconds=120))
    try:
        rank = _Rank(step, alone_core, data_parallel)
        result = _figures(*_measure(rank, ranks, cores), samples=step.example.shape[0])
        result["sync_measured_with"] = "ddp steps" if data_parallel else "a step and an allreduce"
        if comm_hooks:
            result["compression_overhead_seconds"] = _hooks_added(rank, comm_hooks)
        if index == 0:
            with open(out, "w") as f:
                json.dump(result, f)
    finally:
        dist.destroy_process_group()


def require_picklable(*parts):
    """ValueError unless ``parts`` (the step's module, example, loss, target, optimizer,
    comm hooks) pickle: the probe's processes are spawned and get them so."""
    import pickle
    try:
        pickle.dumps(parts)
    except Exception as e:
        raise ValueError("host sharing: the module, example, loss, optimizer and comm hooks must be picklable "
                         "(they go to spawned processes): %s" % e) from e


def probe_host_sharing(step, ranks, cores=None, backend="hostccl", comm_hooks=None, alone_core=None,
                       data_parallel=False):
    """The model file's ``host_sharing``: ``ranks`` processes of ``step`` (planner._Step,
    picklable: they are spawned) on this host's ``cores`` (default: the cores this
    process may use), under ``backend``; with ``comm_hooks`` (spec -> picklable
    function(ddp, group)) what each adds to a DDP step there. ``alone_core``: the core
    the model's times were taken on, where the steps alone run too, so that the
    slowdown is the shared CPU over those times (cores need not be alike: on this
    test machine one vCPU ran the example's step 12-50 % slower than the other for
    minutes at a time; unpinned, the steps alone would be read against either).
    ``data_parallel``: the model trains under DDP; a sync's fixed cost is then read
    from DDP steps (_DDP_INTERVAL)."""
    import torch.multiprocessing as mp
    cores = cores or len(os.sched_getaffinity(0))
    if ranks < 2:
        raise ValueError("host sharing: needs at least 2 ranks, not %d" % ranks)
    require_picklable(step.module, step.example, step.loss, step.target, step.optimizer, comm_hooks)
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "sharing.json")
        mp.start_processes(_probe_process, args=(ranks, cores, backend, _free_port(), step, comm_hooks, alone_core,
                                                 data_parallel, out),
                           nprocs=ranks, join=True, start_method="spawn")
        with open(out) as f:
            figures = json.load(f)
    figures.update({"ranks_per_host": ranks, "cores": cores, "backend": backend})
    return figures
