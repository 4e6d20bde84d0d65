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


def _time_layers(module, example, leaves, repeats=5):
    """Seconds per sample each leaf's forward takes, and the whole backward's, on one
    thread (a rank computes on one core): the best of ``repeats`` after a warm-up."""
    import time
    import torch
    batch = example.shape[0]
    started, spent, hooks = {}, {}, []
    for qualified, mod in leaves:
        def pre(m, inputs, q=qualified):
            started[q] = time.perf_counter()

        def post(m, inputs, output, q=qualified):
            spent[q] = min(spent.get(q, 1e9), time.perf_counter() - started[q])
        hooks += [mod.register_forward_pre_hook(pre), mod.register_forward_hook(post)]
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    backward = 1e9
    try:
        for _ in range(repeats + 1):
            out = module(example)
            if not out.requires_grad:  # nothing to train: no backward to time
                backward = 0.0
                continue
            t0 = time.perf_counter()
            out.float().sum().backward()
            backward = min(backward, time.perf_counter() - t0)
            module.zero_grad(set_to_none=True)
    finally:
        torch.set_num_threads(threads)
        for h in hooks:
            h.remove()
    return {q: t / batch for q, t in spent.items()}, backward / batch


def _time_step(module, example, optimizer, repeats=5):
    """On one thread, on a copy of ``module`` (its parameters are left as they were),
    the best of ``repeats`` after a warm-up: seconds of a whole training step (forward,
    a loss, backward, the optimizer's step, gradients cleared) on ``example``, and of a
    forward and backward on an eighth of it and on all of it. Returns the step's
    seconds, a forward and backward's, and the fixed cost of one (their time at no
    batch, from the two sizes), which every micro-batch pays again."""
    import copy
    import time
    import torch
    twin = copy.deepcopy(module)
    opt = optimizer(twin.parameters())
    batch = example.shape[0]
    small = example[:max(1, batch // 8)]
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    step = passes_small = passes_all = 1e9
    try:
        for _ in range(repeats + 1):
            t0 = time.perf_counter()
            twin(example).float().sum().backward()
            t1 = time.perf_counter()
            opt.step()
            opt.zero_grad(set_to_none=True)
            t2 = time.perf_counter()
            twin(small).float().sum().backward()
            t3 = time.perf_counter()
            twin.zero_grad(set_to_none=True)
            step, passes_all, passes_small = min(step, t2 - t0), min(passes_all, t1 - t0), min(passes_small, t3 - t2)
    finally:
        torch.set_num_threads(threads)
    b = small.shape[0]
    fixed = 0.0 if b == batch else (batch * passes_small - b * passes_all) / (batch - b)
    return step, passes_all, min(max(0.0, fixed), 0.9 * passes_all)  # some of a pass grows with its batch


# The backends describe_module(data_parallel=...) can time DDP over ("hccl" is hostccl).
_DATA_PARALLEL_BACKENDS = ("hostccl", "hccl", "gloo")


def _one_rank_group(backend):
    """A process group of this process alone (one of _DATA_PARALLEL_BACKENDS), apart
    from the default group (which may not exist, or may span other processes)."""
    from datetime import timedelta
    import torch.distributed as dist
    if backend == "gloo":
        return dist.ProcessGroupGloo(dist.HashStore(), 0, 1, timedelta(seconds=60))
    from hostccl.torch import ProcessGroupHostccl
    return ProcessGroupHostccl(dist.HashStore(), 0, 1, timedelta(seconds=60))


def _time_data_parallel(module, example, optimizer, backend, repeats=15):
    """On one thread: seconds DistributedDataParallel adds to a training step of a
    copy of ``module`` (its reducer's autograd hooks, bucket views and the work
    objects of its collectives) over a one-rank group of ``backend``. Steps with and
    without it alternate (a change on the machine meets both); the best of each."""
    import copy
    import time
    import torch
    from torch.nn.parallel import DistributedDataParallel
    plain = copy.deepcopy(module)
    wrapped = DistributedDataParallel(copy.deepcopy(module), process_group=_one_rank_group(backend))
    runs = [(plain, optimizer(plain.parameters())), (wrapped, optimizer(wrapped.parameters()))]
    best = [1e9, 1e9]
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        for _ in range(repeats + 1):
            for k, (m, opt) in enumerate(runs):
                t0 = time.perf_counter()
                m(example).float().sum().backward()
                opt.step()
                opt.zero_grad(set_to_none=True)
                best[k] = min(best[k], time.perf_counter() - t0)
    finally:
        torch.set_num_threads(threads)
    return max(0.0, best[1] - best[0])


def describe_module(module, example, name=None, optimizer_state_per_param=0, timed=True, optimizer=None,
                    data_parallel=None):
    """The model as hostccl-plan reads it (a dict), from one forward pass on ``example``.
    ``timed``: also measure each layer's forward on one thread and the backward
    (shared out in proportion to the forwards), per sample: hostccl-plan then uses
    these times instead of its GEMM and element-wise rates, which know nothing of a
    framework's own costs; and a whole step with ``optimizer`` (a function of the
    parameters returning a ``torch.optim`` optimizer; SGD with momentum by default),
    whose time beyond the layers' (the loss, the optimizer, the framework's per-step
    work) becomes the model's ``step_overhead_seconds``, and the fixed cost of a
    forward and backward (timed at two batch sizes) its ``micro_batch_overhead_seconds``,
    taken out of the layers' per-sample times. ``data_parallel`` ("hostccl", "hccl"
    or "gloo"; with ``timed``): the model will train under DistributedDataParallel
    with that backend; what DDP adds to a step (timed with a one-rank group of it,
    the default group left alone) joins ``step_overhead_seconds``."""
    import torch
    if data_parallel is not None and data_parallel not in _DATA_PARALLEL_BACKENDS:
        raise ValueError("describe_module: data_parallel must be 'hostccl', 'hccl' or 'gloo', not %r" % (data_parallel,))
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
    if timed:
        forward, backward = _time_layers(module, example, leaves)
        total = sum(forward.values()) or 1.0
        for layer in layers:
            f = forward.get(layer["name"], 0.0)
            layer["forward_seconds"] = f
            layer["backward_seconds"] = backward * f / total
    dtype_bytes = next((p.element_size() for p in module.parameters()), 4)
    spec = {"name": name or type(module).__name__, "dtype_bytes": int(dtype_bytes),
            "optimizer_state_per_param": optimizer_state_per_param, "layers": layers}
    if timed and any(p.requires_grad for p in module.parameters()):
        if optimizer is None:
            optimizer = lambda params: torch.optim.SGD(params, lr=1e-3, momentum=0.9)  # noqa: E731
        layers_alone = batch * sum(l.get("forward_seconds", 0.0) + l.get("backward_seconds", 0.0) for l in layers)
        step, passes, fixed = _time_step(module, example, optimizer)
        spec["step_overhead_seconds"] = max(0.0, step - passes)
        if data_parallel is not None:
            spec["step_overhead_seconds"] += _time_data_parallel(module, example, optimizer, data_parallel)
        spec["micro_batch_overhead_seconds"] = fixed
        # The layers' times scaled to what a sample costs beyond the fixed part (the
        # hooks see the layers only, not the framework's work between them).
        keep = (passes - fixed) / layers_alone if layers_alone > 0 else 1.0
        for layer in layers:
            for key in ("forward_seconds", "backward_seconds"):
                if key in layer:
                    layer[key] *= keep
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
    returns its plan file as a dict (``["plans"]`` fastest first). ``probe_ranks``: measure
    this host with that many thread ranks; else pass the cluster in ``extra_args``
    (e.g. ``["--hosts", "2", "--ranks-per-host", "4"]``). Raises RuntimeError with the
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
