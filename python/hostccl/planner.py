"""hostccl's planner from Python: describe a ``torch.nn.Module`` the way ``hostccl-plan``
reads a model, and run the planner on it (docs/planner.md).

    import hostccl.planner as planner
    spec = planner.describe_module(model, example_batch)    # one forward pass, with hooks
    planner.write_model("model.json", spec)
    result = planner.plan("model.json", global_batch=256, probe_ranks=4)
    best = result["plans"][0]                               # dp, tp, pp, micro_batches, ...

``describe_module`` runs one forward pass on ``example`` (a batch: its first dimension is
the batch size) with a hook on every leaf module. A layer is a leaf module with a
forward: its own parameters, its forward FLOPs per sample (``nn.Linear``: 2 x in x out
per row it sees; ``nn.Conv1d/2d/3d``: 2 x in-channels / groups x kernel x out-channels
per output position; anything else: none), its output bytes per sample, and for layers
without FLOPs the bytes they read and write as element-wise work. Every layer is
``replicated`` (a plain module has no tensor-parallel split) and a stage may begin at
any of them. With ``timed`` (the default) each layer also carries its forward and
backward seconds per sample, measured on one thread.
"""

import json
import os
import shutil
import subprocess
import tempfile

__all__ = ["describe_module", "write_model", "plan", "plan_binary"]


def _flops_per_sample(module, inputs, output, batch):
    import torch.nn as nn
    if isinstance(module, nn.Linear):
        rows = output.numel() // module.out_features  # every row the layer maps
        return 2.0 * module.in_features * module.out_features * rows / batch
    if isinstance(module, (nn.Conv1d, nn.Conv2d, nn.Conv3d)):
        kernel = 1
        for k in module.kernel_size:
            kernel *= k
        positions = output.numel() // module.out_channels
        return 2.0 * (module.in_channels // module.groups) * kernel * module.out_channels * positions / batch
    return 0.0


def _sgd_momentum(params):
    """describe_module's default optimizer (a module's function: the host-sharing probe
    sends the step to spawned processes, and a lambda does not pickle)."""
    import torch
    return torch.optim.SGD(params, lr=1e-3, momentum=0.9)


def _median(values):
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


class _Step:
    """What describe_module times: the module, a batch, the step's loss (a function
    of the output: the caller's loss on its targets, or the output's sum) and the
    optimizer (a function of the parameters; None: the module does not train)."""

    def __init__(self, module, example, loss, target, optimizer):
        self.module, self.example, self.optimizer = module, example, optimizer
        self.loss, self.target = loss, target

    def criterion(self, output):
        if self.loss is None:
            return output.float().sum()
        if self.target is None:
            return self.loss(output)
        return self.loss(output, self.target[:output.shape[0]])  # a batch's first rows, and theirs


def _time_layers(step, leaves, repeats=15):
    """Seconds per sample each leaf's forward takes, and the whole backward's, on one
    thread (a rank computes on one core): the median of ``repeats`` after a warm-up
    (a training step's typical time, which the planner predicts; the best of a few
    reads 10-15 % under it for a small model)."""
    import time
    import torch
    module, example = step.module, step.example
    batch = example.shape[0]
    started, spent, hooks = {}, {}, []
    for qualified, mod in leaves:
        def pre(m, inputs, q=qualified):
            started[q] = time.perf_counter()

        def post(m, inputs, output, q=qualified):
            spent.setdefault(q, []).append(time.perf_counter() - started[q])
        hooks += [mod.register_forward_pre_hook(pre), mod.register_forward_hook(post)]
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    backward = []
    try:
        for i in range(repeats + 1):
            if i == 1:  # the warm-up left out
                spent.clear()
                backward.clear()
            out = module(example)
            if not out.requires_grad:  # nothing to train: no backward to time
                backward.append(0.0)
                continue
            t0 = time.perf_counter()
            step.criterion(out).backward()
            backward.append(time.perf_counter() - t0)
            module.zero_grad(set_to_none=True)
    finally:
        torch.set_num_threads(threads)
        for h in hooks:
            h.remove()
    return {q: _median(t) / batch for q, t in spent.items()}, _median(backward) / batch


def _time_step(step, repeats=15):
    """On one thread, on a copy of the step's module (its parameters are left as they
    were), the median of ``repeats`` after a warm-up: seconds of a whole training step
    (forward, the loss, backward, the optimizer's step, gradients cleared) on the
    example, and of a forward and backward on one sample of it and on all of it.
    Returns the step's seconds, a forward and backward's, and the fixed cost of one
    (their time at no batch, from the two sizes), which every micro-batch pays again."""
    import copy
    import time
    import torch
    twin = copy.deepcopy(step.module)
    opt = step.optimizer(twin.parameters())
    example = step.example
    batch = example.shape[0]
    small = example[:1]
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    steps, passes_all, passes_small = [], [], []
    try:
        for _ in range(repeats + 1):
            t0 = time.perf_counter()
            step.criterion(twin(example)).backward()
            t1 = time.perf_counter()
            opt.step()
            opt.zero_grad(set_to_none=True)
            t2 = time.perf_counter()
            step.criterion(twin(small)).backward()
            t3 = time.perf_counter()
            twin.zero_grad(set_to_none=True)
            steps.append(t2 - t0)
            passes_all.append(t1 - t0)
            passes_small.append(t3 - t2)
    finally:
        torch.set_num_threads(threads)
    whole, all_, small_ = (_median(t[1:]) for t in (steps, passes_all, passes_small))  # the warm-up left out
    b = small.shape[0]
    fixed = 0.0 if b == batch else (batch * small_ - b * all_) / (batch - b)
    return whole, all_, min(max(0.0, fixed), 0.9 * all_)  # some of a pass grows with its batch


def _pass_sizes(batch):
    """The micro-batch sizes a pass is timed at: 1, 2, 4, ... below ``batch``, and it."""
    sizes, s = [], 1
    while s < batch:
        sizes.append(s)
        s *= 2
    return sizes + [batch]


def _time_passes(step, repeats=15):
    """On one thread, on a copy of the step's module: seconds of a forward and backward
    on the example's first s samples for each of _pass_sizes, in turn (a change on the
    machine meets them all), the median of ``repeats`` after a warm-up."""
    import copy
    import time
    import torch
    twin = copy.deepcopy(step.module)
    sizes = _pass_sizes(step.example.shape[0])
    took = {s: [] for s in sizes}
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        for i in range(repeats + 1):
            for s in sizes:
                t0 = time.perf_counter()
                step.criterion(twin(step.example[:s])).backward()
                t1 = time.perf_counter()
                twin.zero_grad(set_to_none=True)
                if i > 0:  # the warm-up left out
                    took[s].append(t1 - t0)
    finally:
        torch.set_num_threads(threads)
    return {s: _median(t) for s, t in took.items()}


def _overhead_by_samples(passes, per_sample, fixed):
    """The fixed cost a micro-batch of s samples pays beyond ``per_sample`` x s, from
    ``passes`` (samples -> seconds of a pass): ``fixed`` at the largest size (the
    step's own figure, so a plan of one micro-batch sums to the measured step) and
    the measured passes' departure from a line elsewhere (one sample cheaper, two
    dearer, for the example CNN)."""
    largest = max(passes)
    return {str(s): max(0.0, fixed + t - passes[largest] + (largest - s) * per_sample) for s, t in passes.items()}


def _is_compression(spec):
    """Whether hostccl-plan names a compressor so ("none" is DDP's default hook)."""
    if spec in ("fp16", "bf16", "sign", "topk"):
        return True
    kind, _, ratio = str(spec).partition(":")
    try:
        return kind == "topk" and 0 < float(ratio) <= 1
    except ValueError:
        return False


# The backends describe_module(data_parallel=...) can time DDP over ("hccl" is hostccl).
_DATA_PARALLEL_BACKENDS = ("hostccl", "hccl", "gloo")


def _one_rank_group(backend):
    """A process group of this process alone (one of _DATA_PARALLEL_BACKENDS), apart
    from the default group (which may not exist, or may span other processes)."""
    from datetime import timedelta
    import torch.distributed as dist
    from hostccl.torch import ProcessGroupHostccl, standalone_group
    store = dist.HashStore()
    if backend == "gloo":
        return standalone_group(dist.ProcessGroupGloo(store, 0, 1, timedelta(seconds=60)), store)
    return standalone_group(ProcessGroupHostccl(store, 0, 1, timedelta(seconds=60)), store)


# What _time_added spends at most, seconds (a model whose steps are long gets the
# fewest repeats), and its repeats' bounds: differences of a few percent of a step
# (a compressor's hook: 0.02-0.6 ms of a 1.3 ms step, read 0.02 and 0.20 ms for bf16
# with 15) need many.
_ADDED_BUDGET_SECONDS, _ADDED_MIN_REPEATS, _ADDED_MAX_REPEATS = 2.0, 15, 101


def _time_added(runs, step):
    """On one thread: seconds each of ``runs[1:]`` (models with their optimizers) adds
    to a training step over ``runs[0]``'s. Their steps alternate (a change on the
    machine meets them all); the median of the differences after a warm-up, as many
    as fit in about _ADDED_BUDGET_SECONDS."""
    def training_step(m, opt):
        def run():
            step.criterion(m(step.example)).backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
        return run
    return _time_added_work([training_step(m, opt) for m, opt in runs])


def _time_added_work(works):
    """On one thread: seconds each of ``works[1:]`` (functions doing one unit of work)
    adds over ``works[0]``, alternating, as _time_added times steps."""
    import time
    import torch
    added = [[] for _ in works[1:]]
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        i, repeats = 0, _ADDED_MIN_REPEATS
        while i <= repeats:
            took = []
            for work in works:
                t0 = time.perf_counter()
                work()
                took.append(time.perf_counter() - t0)
            if i == 0:  # the warm-up: how many the budget holds
                fit = int(_ADDED_BUDGET_SECONDS / max(sum(took), 1e-9))
                repeats = max(_ADDED_MIN_REPEATS, min(_ADDED_MAX_REPEATS, fit))
            else:
                for k, t in enumerate(took[1:]):
                    added[k].append(t - took[0])
            i += 1
    finally:
        torch.set_num_threads(threads)
    return [max(0.0, _median(a)) for a in added]


def _no_sync_pass_added(step, module, ddp):
    """Seconds a forward and backward of one sample under ``ddp.no_sync()`` takes more
    than on the plain ``module`` (a copy of the same): what DDP adds to each micro-batch
    but the last of a step, which accumulates its gradients without averaging (the
    example CNN: 0.05-0.08 ms a micro-batch on one core, 0.6 ms over 8 of them)."""
    one = step.example[:1]

    def plain():
        step.criterion(module(one)).backward()
        module.zero_grad(set_to_none=True)

    def quiet():
        with ddp.no_sync():
            step.criterion(ddp(one)).backward()
        ddp.zero_grad(set_to_none=True)
    return _time_added_work([plain, quiet])[0]


def _data_parallel_costs(step, backend, comm_hooks):
    """What DistributedDataParallel adds to a training step of a copy of the step's
    module over a one-rank group of ``backend`` (its reducer's autograd hooks, bucket views
    and the work objects of its collectives), what each of ``comm_hooks``
    (compression spec -> function(ddp, group) registering a comm hook) adds to that,
    and what it adds to a micro-batch under ``no_sync`` (_no_sync_pass_added)."""
    import copy
    from torch.nn.parallel import DistributedDataParallel
    group = _one_rank_group(backend)

    def run(register=None):
        m = copy.deepcopy(step.module)
        if register is not None:
            m = DistributedDataParallel(m, process_group=group)
            register(m, group)
        return m, step.optimizer(m.parameters())
    hooks = sorted((comm_hooks or {}).items())
    ddp_alone = run(lambda ddp, g: None)
    added = _time_added([run(), ddp_alone], step)[0]
    hooked = _time_added([ddp_alone] + [run(register) for _, register in hooks], step) if hooks else []
    per_pass = _no_sync_pass_added(step, run()[0], ddp_alone[0])
    return added, {spec: seconds for (spec, _), seconds in zip(hooks, hooked)}, per_pass


def _add_timings(spec, step, leaves, data_parallel, comm_hooks):
    """describe_module's measured fields (see there); a module that does not train
    (``step.optimizer`` None): the layers' forwards and the backward only."""
    layers = spec["layers"]
    batch = step.example.shape[0]
    forward, backward = _time_layers(step, leaves)
    total = sum(forward.values()) or 1.0
    for layer in layers:
        f = forward.get(layer["name"], 0.0)
        layer["forward_seconds"] = f
        layer["backward_seconds"] = backward * f / total
    if step.optimizer is None:
        return
    layers_alone = batch * sum(l["forward_seconds"] + l["backward_seconds"] for l in layers)
    whole, passes, fixed = _time_step(step)
    spec["step_overhead_seconds"] = max(0.0, whole - passes)
    per_pass = 0.0
    if data_parallel is not None:
        added, hooks, per_pass = _data_parallel_costs(step, data_parallel, comm_hooks)
        # What DDP adds to every micro-batch's pass goes with the micro-batches; the
        # rest (the averaging's own work) once a step.
        per_pass = min(per_pass, added)
        spec["step_overhead_seconds"] += added - per_pass
        # DDP's bucket copies are in it now: the planner does not charge them again.
        spec["data_parallel_in_step_overhead"] = True
        if hooks:
            spec["compression_overhead_seconds"] = hooks
    spec["micro_batch_overhead_seconds"] = fixed + per_pass
    if batch > 1:
        table = _overhead_by_samples(_time_passes(step), (passes - fixed) / batch, fixed)
        spec["micro_batch_overhead_by_samples"] = {s: t + per_pass for s, t in table.items()}
    # The layers' times scaled to what a sample costs beyond the fixed part (the
    # hooks see the layers only, not the framework's work between them).
    keep = (passes - fixed) / layers_alone if layers_alone > 0 else 1.0
    for layer in layers:
        layer["forward_seconds"] *= keep
        layer["backward_seconds"] *= keep


class _on_slowest_core:
    """Pins the calling thread to the slowest core it may run on (a training step of a
    copy of the module timed on each in turn) while timings run; ``as`` gives the core
    and each core's step seconds, or None (``pin`` false or one core). A data-parallel
    step goes at its slowest rank's pace, and cores need not be alike: on the 2-core
    test machine one ran the example CNN's step 12-50 % slower than the other, while
    sgemm ran alike on both."""

    TURNS = 5  # each core's pace: the median of this many turns

    def __init__(self, step, pin):
        self.allowed = sorted(os.sched_getaffinity(0)) if pin and hasattr(os, "sched_setaffinity") else []
        self.step = step

    def __enter__(self):
        if len(self.allowed) < 2:
            return None
        paces = {core: [] for core in self.allowed}
        try:
            # The cores in turn, a few times: a spell of the host's on one core (reads
            # of 1.9-2.4 ms against 1.5 here) meets one turn, not the core's figure.
            for _ in range(self.TURNS):
                for core in self.allowed:
                    os.sched_setaffinity(0, {core})
                    paces[core].append(_time_step(self.step, repeats=5)[0])
            paces = {core: _median(t) for core, t in paces.items()}
        except BaseException:
            os.sched_setaffinity(0, self.allowed)
            raise
        slowest = max(paces, key=paces.get)
        os.sched_setaffinity(0, {slowest})
        return {"core": slowest, "step_seconds": {str(c): paces[c] for c in self.allowed}}

    def __exit__(self, *exc):
        if len(self.allowed) >= 2:
            os.sched_setaffinity(0, self.allowed)
        return False


def describe_module(module, example, name=None, optimizer_state_per_param=0, timed=True, optimizer=None,
                    data_parallel=None, comm_hooks=None, slowest_core=True, loss=None, target=None,
                    host_sharing=None):
    """The model as hostccl-plan reads it (a dict), from one forward pass on ``example``.
    ``timed``: also measure each layer's forward on one thread and the backward
    (shared out in proportion to the forwards), per sample: hostccl-plan then uses
    these times instead of its GEMM and element-wise rates, which know nothing of a
    framework's own costs; and a whole step with ``optimizer`` (a function of the
    parameters returning a ``torch.optim`` optimizer; SGD with momentum by default),
    whose time beyond the layers' (the loss, the optimizer, the framework's per-step
    work) becomes the model's ``step_overhead_seconds``, and the fixed cost of a
    forward and backward (timed at the whole batch and at one sample) its
    ``micro_batch_overhead_seconds``,
    taken out of the layers' per-sample times; passes timed at 1, 2, 4, ... samples
    give it by size (``micro_batch_overhead_by_samples``: a pass's time is no line in
    its samples). ``loss``: the step's loss, a function
    of the module's output and (given) ``target``, sliced as ``example`` is (a
    ``torch.nn`` loss such as ``CrossEntropyLoss()``; by default the output's sum):
    a step's cost depends on it (the example CNN's backward takes 0.8 ms longer
    from cross entropy's gradients than from a sum's). Times are medians (a step's typical
    time, which the planner predicts), taken on the slowest core this process may run
    on (``slowest_core``; the model's ``timed_on_core`` names it with each core's
    step time). ``data_parallel`` ("hostccl", "hccl" or "gloo"; with ``timed``): the
    model will train under DistributedDataParallel with that backend; what DDP adds
    to a step (timed with a one-rank group of it, the default group left alone) joins
    ``step_overhead_seconds`` (``data_parallel_in_step_overhead``: its bucket copies
    are in there, not charged again by the planner's bucket model), and what it adds
    to a pass under ``no_sync`` (every micro-batch but a step's last) the micro-batch's
    fixed cost. ``comm_hooks`` (with
    ``data_parallel``): compression spec as hostccl-plan names it ("fp16", "bf16", "topk:0.01", "sign") -> a
    function(ddp, group) registering the DDP comm hook that trains with it; what each
    adds to a DDP step becomes ``compression_overhead_seconds[spec]``, which the
    planner charges instead of its own codec rates. ``host_sharing`` (with ``timed``,
    a module that trains): the ranks one host will run; that many spawned processes
    train copies of the step beside each other under a process group of
    ``data_parallel`` (default hostccl) and measure what they cost each other beyond
    sharing the cores (``hostccl.sharing_probe``; the module, example, loss and
    optimizer must pickle), as the model's ``host_sharing``: hostccl-plan uses it in
    place of its own probe's for hosts of as many ranks on as many cores (a framework's
    processes share a core far more dearly than the probe's sgemm threads); with
    ``comm_hooks`` (which must pickle too: objects or module-level functions, not
    lambdas) also what each adds to a DDP step there, every rank training, which the
    planner charges there instead of ``compression_overhead_seconds``."""
    import torch
    if data_parallel is not None and data_parallel not in _DATA_PARALLEL_BACKENDS:
        raise ValueError("describe_module: data_parallel must be 'hostccl', 'hccl' or 'gloo', not %r" % (data_parallel,))
    if comm_hooks and (data_parallel is None or not timed):
        raise ValueError("describe_module: comm_hooks are timed under DDP: give data_parallel (and timed)")
    if host_sharing is not None and (not timed or isinstance(host_sharing, bool) or not isinstance(host_sharing, int)
                                     or host_sharing < 2):
        raise ValueError("describe_module: host_sharing is a rank count of at least 2 (with timed), not %r" % (host_sharing,))
    if host_sharing is not None and not any(p.requires_grad for p in module.parameters()):
        raise ValueError("describe_module: host_sharing times training steps: the module has nothing to train")
    if host_sharing is not None:
        from hostccl.sharing_probe import require_picklable
        require_picklable(module, example, loss, target, optimizer or _sgd_momentum, comm_hooks)
    for compression in comm_hooks or {}:
        if not _is_compression(compression):
            raise ValueError("describe_module: comm_hooks: %r is not a compression hostccl-plan knows "
                             "(fp16, bf16, topk[:ratio], sign)" % (compression,))
    batch = example.shape[0]
    layers = []
    hooks = []

    def record(mod, qualified):
        def hook(m, inputs, output):
            if not torch.is_tensor(output):
                return
            params = sum(p.numel() for p in m.parameters(recurse=False))
            flops = _flops_per_sample(m, inputs, output, batch)
            out_bytes = output.numel() * output.element_size() // batch
            layer = {"name": qualified, "params": int(params), "forward_flops": float(flops),
                     "activation_bytes": int(out_bytes), "tp": "replicated"}
            if flops == 0:
                in_bytes = sum(t.numel() * t.element_size() for t in inputs if torch.is_tensor(t)) // batch
                layer["elementwise_bytes"] = int(in_bytes + out_bytes)
            layers.append(layer)
        return hook

    leaves = [(qualified or type(mod).__name__, mod) for qualified, mod in module.named_modules() if not list(mod.children())]
    for qualified, mod in leaves:
        hooks.append(mod.register_forward_hook(record(mod, qualified)))
    try:
        with torch.no_grad():
            module(example)
    finally:
        for h in hooks:
            h.remove()
    if not any(l["forward_flops"] > 0 for l in layers):
        raise ValueError("describe_module: no layer of this module has FLOPs hostccl-plan knows (Linear, Conv)")
    dtype_bytes = next((p.element_size() for p in module.parameters()), 4)
    spec = {"name": name or type(module).__name__, "dtype_bytes": int(dtype_bytes),
            "optimizer_state_per_param": optimizer_state_per_param, "layers": layers}
    if timed:
        optimizer = optimizer or _sgd_momentum
        trains = any(p.requires_grad for p in module.parameters())
        step = _Step(module, example, loss, target, optimizer if trains else None)
        with _on_slowest_core(step, trains and slowest_core) as pace:
            _add_timings(spec, step, leaves, data_parallel, comm_hooks)
        if pace:
            spec["timed_on_core"] = pace
        if host_sharing is not None:
            from hostccl.sharing_probe import probe_host_sharing
            spec["host_sharing"] = probe_host_sharing(step, host_sharing, backend=data_parallel or "hostccl",
                                                      comm_hooks=comm_hooks, alone_core=pace["core"] if pace else None,
                                                      data_parallel=data_parallel is not None)
    return spec


def write_model(path, spec):
    """Writes a describe_module() result as hostccl-plan's model file."""
    with open(path, "w") as f:
        json.dump(spec, f, indent=2)
        f.write("\n")


def plan_binary():
    """hostccl-plan: $HOSTCCL_PLAN, beside this package (build tree or install), or on PATH."""
    here = os.path.dirname(os.path.abspath(__file__))
    candidates = [os.environ.get("HOSTCCL_PLAN", ""),
                  os.path.join(here, "..", "..", "tools", "plan", "hostccl-plan"),    # <build>/python/hostccl
                  os.path.join(here, "..", "..", "..", "..", "bin", "hostccl-plan")]  # <prefix>/lib/python3.X/dist-packages/hostccl
    for c in candidates:
        if c and os.access(c, os.X_OK):
            return os.path.normpath(c)
    found = shutil.which("hostccl-plan")
    if found:
        return found
    raise FileNotFoundError("hostccl-plan not found: set HOSTCCL_PLAN or put it on PATH")


def plan(model, global_batch, probe_ranks=None, memory_limit=None, extra_args=()):
    """Runs hostccl-plan on ``model`` (a model file's path, or a describe_module() dict) and
    returns its plan file as a dict (``["plans"]`` ranked as the planner ranks them: fastest
    first, a compressed plan above an exact one only when clearly faster, see
    ``--compression-min-gain``). ``probe_ranks``: measure this host with that many thread
    ranks; else pass the cluster in ``extra_args`` (e.g. ``["--hosts", "2",
    "--ranks-per-host", "4"]``). Raises RuntimeError with the
    planner's message when it refuses the input."""
    with tempfile.TemporaryDirectory() as tmp:
        if isinstance(model, dict):
            path = os.path.join(tmp, "model.json")
            write_model(path, model)
            model = path
        out = os.path.join(tmp, "plan.json")
        cmd = [plan_binary(), "--model", str(model), "--global-batch", str(global_batch), "-o", out]
        if probe_ranks:
            cmd += ["--probe", "--probe-ranks", str(probe_ranks)]
        if memory_limit:
            cmd += ["--memory-limit", str(memory_limit)]
        cmd += list(extra_args)
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(done.stderr.strip() or "hostccl-plan exited %d" % done.returncode)
        with open(out) as f:
            return json.load(f)
