"""hostccl.planner: a module described exactly (parameters, FLOPs, activation and
element-wise bytes per sample, measured times), hostccl-plan run on it from Python,
and a bad model refused with the field named."""

import json
import os
import tempfile

import pytest
import torch
import torch.nn as nn

import hostccl.planner as planner


def small():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))


def test_describe_module_counts_each_layer_exactly():
    spec = planner.describe_module(small(), torch.randn(5, 8), name="small")
    assert spec["name"] == "small" and spec["dtype_bytes"] == 4
    layers = spec["layers"]
    assert [l["name"] for l in layers] == ["0", "1", "2"]
    assert [l["params"] for l in layers] == [8 * 16 + 16, 0, 16 * 4 + 4]
    assert [l["forward_flops"] for l in layers] == [2 * 8 * 16, 0, 2 * 16 * 4]
    assert [l["activation_bytes"] for l in layers] == [16 * 4, 16 * 4, 4 * 4]
    assert layers[1]["elementwise_bytes"] == 2 * 16 * 4  # ReLU reads and writes its 16 floats
    assert all(l["forward_seconds"] > 0 and l["backward_seconds"] >= 0 for l in layers)


def test_convolution_flops_per_output_position():
    conv = nn.Sequential(nn.Conv2d(3, 6, 3, padding=1), nn.Flatten(), nn.Linear(6 * 4 * 4, 2))
    spec = planner.describe_module(conv, torch.randn(2, 3, 4, 4), timed=False)
    assert spec["layers"][0]["forward_flops"] == 2 * 3 * 9 * 6 * 16
    assert "forward_seconds" not in spec["layers"][0]


def test_plan_from_python_ranks_the_plans():
    result = planner.plan(planner.describe_module(small(), torch.randn(4, 8)), global_batch=16,
                          extra_args=["--hosts", "1", "--ranks-per-host", "2", "--gflops", "10", "--tp", "1"])
    plans = result["plans"]
    assert plans and all(p["dp"] * p["tp"] * p["pp"] == 2 and p["tp"] == 1 for p in plans)
    # Fastest first, a compressed plan's step counted 5 % longer (--compression-min-gain).
    ranking = [p["predicted"]["step_ms"] * (1.0 if p["compression"] == "none" else 1.05) for p in plans]
    assert ranking == sorted(ranking)


def test_a_bad_model_is_refused_with_the_field_named():
    spec = planner.describe_module(small(), torch.randn(4, 8), timed=False)
    del spec["layers"][2]["activation_bytes"]
    with pytest.raises(RuntimeError, match=r"layers\[2\]\.activation_bytes: missing"):
        planner.plan(spec, global_batch=16, extra_args=["--ranks-per-host", "2", "--gflops", "10"])


def test_a_module_without_known_flops_is_refused():
    with pytest.raises(ValueError, match="no layer"):
        planner.describe_module(nn.Sequential(nn.ReLU()), torch.randn(2, 3))


def test_a_whole_step_is_timed_and_its_overhead_charged():
    model = small()
    before = [p.detach().clone() for p in model.parameters()]
    made = []

    def adam(params):
        made.append(True)
        return torch.optim.Adam(params, lr=0.1)
    spec = planner.describe_module(model, torch.randn(4, 8), optimizer=adam, slowest_core=False)
    assert made == [True]  # one step timed (with slowest_core, one more on each core first)
    assert spec["step_overhead_seconds"] > 0  # a loss, Adam's step and autograd's own work at least
    assert all(torch.equal(a, b) for a, b in zip(before, model.parameters()))  # timed on a copy
    assert "step_overhead_seconds" not in planner.describe_module(model, torch.randn(4, 8), timed=False)
    # One rank: the measured overhead is the step's optimizer part, exactly.
    spec["step_overhead_seconds"] = 0.5
    one = ["--hosts", "1", "--ranks-per-host", "1", "--gflops", "10"]
    best = planner.plan(spec, global_batch=16, extra_args=one)["plans"][0]["predicted"]
    assert best["optimizer_ms"] == pytest.approx(500.0, abs=1e-6)
    spec["step_overhead_seconds"] = -1
    with pytest.raises(RuntimeError, match=r"step_overhead_seconds: must be at least 0"):
        planner.plan(spec, global_batch=16, extra_args=one)


def test_every_micro_batch_pays_the_fixed_cost_of_a_pass():
    spec = planner.describe_module(small(), torch.randn(16, 8))
    assert spec["micro_batch_overhead_seconds"] > 0  # autograd's per-call work, at least
    # Measured at each size a plan's micro-batch may have; the whole batch's is the
    # step's own figure (a plan of one micro-batch sums to the measured step).
    table = spec["micro_batch_overhead_by_samples"]
    assert sorted(table, key=int) == ["1", "2", "4", "8", "16"] and all(t >= 0 for t in table.values())
    assert table["16"] == pytest.approx(spec["micro_batch_overhead_seconds"], abs=1e-12)
    # One rank, 16 samples: 16 one-sample micro-batches pay the one-sample figure 16
    # times, one micro-batch the 16-sample figure once, 2 of 8 samples the figure
    # between them.
    spec["micro_batch_overhead_by_samples"] = {"1": 0.01, "16": 0.002}
    spec["step_overhead_seconds"] = 0.0
    one = ["--hosts", "1", "--ranks-per-host", "1", "--gflops", "10", "--max-micro-batches", "16"]
    plans = planner.plan(spec, global_batch=16, extra_args=one)["plans"]
    compute = {p["micro_batches"]: p["predicted"]["compute_ms"] for p in plans}
    assert compute[16] - compute[1] == pytest.approx(16 * 10.0 - 2.0, rel=1e-6)
    assert compute[2] - compute[1] == pytest.approx(2 * (10.0 - 8.0 * 7 / 15) - 2.0, rel=1e-6)
    # Without the table, the one figure for every size.
    del spec["micro_batch_overhead_by_samples"]
    spec["micro_batch_overhead_seconds"] = 0.01
    plans = planner.plan(spec, global_batch=16, extra_args=one)["plans"]
    compute = {p["micro_batches"]: p["predicted"]["compute_ms"] for p in plans}
    assert compute[16] - compute[1] == pytest.approx(15 * 10.0, rel=1e-6)


def test_the_fixed_cost_by_size_is_the_passes_departure_from_a_line():
    # Passes of 1, 2 and 4 samples; 1.5 ms a sample beyond the fixed 1 ms: the
    # 4-sample figure is the fixed part, the others what their passes took more or
    # less than the line through it.
    assert planner._pass_sizes(4) == [1, 2, 4] and planner._pass_sizes(6) == [1, 2, 4, 6]
    assert planner._pass_sizes(1) == [1]
    table = planner._overhead_by_samples({1: 0.0004, 2: 0.0005, 4: 0.0009}, 0.0015, 0.001)
    assert table == pytest.approx({"4": 0.001, "2": 0.0036, "1": 0.005}, abs=1e-15)
    assert planner._overhead_by_samples({1: 0.0001, 4: 0.01}, 0.0015, 0.001)["1"] == 0.0  # never below none


def test_what_ddp_adds_to_a_step_joins_its_overhead(monkeypatch):
    # The timings pinned: the step's overhead is what the step has beyond its passes
    # plus what DDP adds, exactly; each comm hook's figure goes in by its compression.
    monkeypatch.setattr(planner, "_time_step", lambda step, repeats=15: (0.010, 0.007, 0.001))
    monkeypatch.setattr(planner, "_time_passes", lambda step, repeats=15: {1: 0.0004, 2: 0.0005, 4: 0.0009})
    monkeypatch.setattr(planner, "_data_parallel_costs",
                        lambda step, backend, hooks: (0.0025, {k: 0.001 for k in hooks or {}}, 0.0005))
    hooks = {"fp16": lambda ddp, group: None, "topk:0.05": lambda ddp, group: None}
    spec = planner.describe_module(small(), torch.randn(4, 8), data_parallel="gloo", comm_hooks=hooks)
    # DDP's cost under no_sync goes with every micro-batch, the rest of it once a step.
    assert spec["step_overhead_seconds"] == pytest.approx(0.003 + 0.0025 - 0.0005, abs=1e-12)
    assert spec["micro_batch_overhead_seconds"] == pytest.approx(0.001 + 0.0005, abs=1e-12)
    assert spec["micro_batch_overhead_by_samples"] == pytest.approx({"4": 0.0015, "2": 0.0041, "1": 0.0055}, abs=1e-12)
    assert spec["compression_overhead_seconds"] == {"fp16": 0.001, "topk:0.05": 0.001}
    assert spec["data_parallel_in_step_overhead"] is True  # its bucket copies are in there: not charged again
    plain = planner.describe_module(small(), torch.randn(4, 8))
    assert "data_parallel_in_step_overhead" not in plain
    assert plain["step_overhead_seconds"] == pytest.approx(0.003, abs=1e-12)
    assert plain["micro_batch_overhead_seconds"] == pytest.approx(0.001, abs=1e-12)
    assert plain["micro_batch_overhead_by_samples"] == pytest.approx({"4": 0.001, "2": 0.0036, "1": 0.005}, abs=1e-12)
    assert "compression_overhead_seconds" not in plain
    with pytest.raises(ValueError, match=r"data_parallel must be 'hostccl', 'hccl' or 'gloo', not 'nccl'"):
        planner.describe_module(small(), torch.randn(4, 8), data_parallel="nccl")
    with pytest.raises(ValueError, match=r"comm_hooks are timed under DDP: give data_parallel"):
        planner.describe_module(small(), torch.randn(4, 8), comm_hooks=hooks)
    for bad in ("none", "lz4", "topk:2"):
        with pytest.raises(ValueError, match=r"comm_hooks: '%s' is not a compression" % bad):
            planner.describe_module(small(), torch.randn(4, 8), data_parallel="gloo", comm_hooks={bad: None})


def _sgd_step(model, example):
    return planner._Step(model, example, None, None, lambda params: torch.optim.SGD(params, lr=1e-3))


@pytest.mark.parametrize("backend", ["hostccl", "gloo"])
def test_ddp_and_its_hooks_are_timed_on_a_group_of_their_own(backend):
    import torch.distributed as dist
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
    from hostccl.torch import hooks as hostccl_hooks
    registered = []

    def fp16(ddp, group):
        registered.append(group.size())
        ddp.register_comm_hook(group, default_hooks.fp16_compress_hook)

    def sign(ddp, group):
        registered.append(group.size())
        ddp.register_comm_hook(hostccl_hooks.CompressionState("sign", group), hostccl_hooks.compressed_hook)
    hooks = {"fp16": fp16, "sign": sign} if backend == "hostccl" else {"fp16": fp16}
    model = small()
    before = [p.detach().clone() for p in model.parameters()]
    added, hooked, per_pass = planner._data_parallel_costs(_sgd_step(model, torch.randn(4, 8)), backend, hooks)
    assert 0.0 <= added < 0.1 and 0.0 <= per_pass < 0.1
    assert sorted(hooked) == sorted(hooks) and all(0.0 <= s < 0.1 for s in hooked.values())
    assert registered == [1] * len(hooks)  # each hook registered once, on the one-rank group
    assert not dist.is_initialized()  # no default group made or needed
    assert all(torch.equal(a, b) for a, b in zip(before, model.parameters()))  # timed on copies


def test_the_step_is_timed_with_the_callers_loss_on_matching_targets():
    seen = []

    def loss(output, target):
        seen.append((output.shape[0], tuple(target.tolist())))
        return nn.functional.cross_entropy(output, target)
    target = torch.tensor([0, 1, 2, 3])
    spec = planner.describe_module(small(), torch.randn(4, 8), loss=loss, target=target, slowest_core=False)
    assert spec["step_overhead_seconds"] >= 0
    # Whole batches with all the targets, and the smaller passes with the first ones.
    assert set(seen) == {(4, (0, 1, 2, 3)), (2, (0, 1)), (1, (0,))}
    # Without a target the loss gets the output alone.
    outputs = []
    planner.describe_module(small(), torch.randn(4, 8), loss=lambda out: outputs.append(out.shape) or out.sum(),
                            slowest_core=False)
    assert set(outputs) == {torch.Size([4, 4]), torch.Size([2, 4]), torch.Size([1, 4])}


def test_timed_on_the_slowest_core_and_the_affinity_restored(monkeypatch):
    allowed = sorted(os.sched_getaffinity(0))
    if len(allowed) < 2:
        pytest.skip("one core in this process's affinity (%s): no slowest to choose" % allowed)
    slow = allowed[-1]
    pinned = []

    def fake_step(step, repeats=15):
        cores = os.sched_getaffinity(0)
        pinned.append(sorted(cores))
        if len(pinned) == 1:  # the first turn on the fastest core met a spell: one turn, not its figure
            return 0.005, 0.0009, 0.0001
        return (0.002 if cores == {slow} else 0.001), 0.0009, 0.0001
    monkeypatch.setattr(planner, "_time_step", fake_step)
    spec = planner.describe_module(small(), torch.randn(4, 8))
    assert spec["timed_on_core"]["core"] == slow
    assert spec["timed_on_core"]["step_seconds"] == {str(c): (0.002 if c == slow else 0.001) for c in allowed}
    # each core in turn, TURNS times, then the timings on the slowest
    assert pinned == [[c] for c in allowed] * planner._on_slowest_core.TURNS + [[slow]]
    assert sorted(os.sched_getaffinity(0)) == allowed
    assert "timed_on_core" not in planner.describe_module(small(), torch.randn(4, 8), slowest_core=False)


def test_host_sharing_figures_are_the_cpp_probes_arithmetic():
    from hostccl import sharing_probe
    alone = {"none": 0.0, "short": 0.002, "long": 0.008, "micro": 0.004}   # a segment on an idle core
    shared = {"none": 0.0, "short": 0.003, "long": 0.012, "micro": 0.005}  # its CPU with every rank computing
    per_sync = {"none": 0.0005, "short": 0.0014, "long": 0.004, "micro": 0.002}
    assert sharing_probe._figures(alone, shared, per_sync, samples=8) == pytest.approx({
        "compute_slowdown": 1.5,                 # 3 ms over 2 ms
        "compute_slowdown_one_sample": 1.25,     # the 8 samples one at a time: 5 ms over 4 ms
        "samples": 8,
        "sync_per_compute": 0.5,                 # 4 ms a collective after 8 ms of compute
        "sync_base_seconds": 0.0004,             # 1.4 ms after 2 ms, less 0.5 x 2 ms
        "sync_short_compute_seconds": 0.002,
        "sync_floor_seconds": 0.0005}, abs=1e-15)
    # Never below "no cost": a faster shared round, a long interval cheaper than its line.
    f = sharing_probe._figures(alone, {"none": 0, "short": 0.001, "long": 0, "micro": 0.001},
                               {"none": 0, "short": 0.0001, "long": 0.004}, samples=8)
    assert f["compute_slowdown"] == 1.0 and f["sync_base_seconds"] == 0.0 and f["compute_slowdown_one_sample"] == 1.0
    # An example of one sample: its steps are the one-sample steps (no "micro" interval).
    del alone["micro"], shared["micro"]
    assert sharing_probe._figures(alone, shared, per_sync, samples=1)["compute_slowdown_one_sample"] == 1.5
    # A model that trains under DDP: a sync's fixed part from its DDP steps (2.4 ms a
    # step beyond their CPU, less 0.5 x 2 ms), the rest as before.
    per_sync["ddp"] = 0.0024
    f = sharing_probe._figures(alone, shared, per_sync, samples=1)
    assert f["sync_base_seconds"] == pytest.approx(0.0014, abs=1e-15)
    assert (f["compute_slowdown"], f["sync_per_compute"], f["sync_floor_seconds"]) == (1.5, 0.5, 0.0005)


def test_one_sample_steps_pass_at_most_eight_samples():
    """The probe's one-sample steps: every sample of a small example, the first 8 of a
    larger one (a 256-sample example would otherwise make 256 passes a step)."""
    from hostccl import sharing_probe

    class Counting(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = torch.nn.Parameter(torch.ones(3))
            self.rows = []

        def forward(self, x):
            self.rows.append(x.shape[0])
            return x * self.w

    for samples, passes in ((5, [1] * 5), (8, [1] * 8), (256, [1] * 8)):
        step = planner._Step(Counting(), torch.randn(samples, 3), None, None, lambda p: torch.optim.SGD(p, lr=0.1))
        rank = sharing_probe._Rank(step)
        rank.train(2, one_sample=True)
        assert step.module.rows == passes * 2
        step.module.rows.clear()
        rank.train(1)  # a whole step: the example at once
        assert step.module.rows == [samples]


def _fp16_hook(ddp, group):
    """A comm hook's registration the sharing probe's spawned processes can get (a
    module-level function pickles; a lambda does not)."""
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
    ddp.register_comm_hook(group, default_hooks.fp16_compress_hook)


def test_host_sharing_is_measured_by_the_models_own_processes_and_planned_with():
    cores = len(os.sched_getaffinity(0))
    spec = planner.describe_module(small(), torch.randn(4, 8), data_parallel="hostccl", host_sharing=2, slowest_core=False,
                                   comm_hooks={"fp16": _fp16_hook})
    h = spec["host_sharing"]
    assert (h["ranks_per_host"], h["cores"], h["backend"]) == (2, cores, "hostccl")
    assert h["compute_slowdown"] >= 1.0
    assert all(h[k] >= 0 for k in ("sync_base_seconds", "sync_per_compute", "sync_floor_seconds"))
    assert 0 < h["sync_short_compute_seconds"] < 0.1  # one training step of a tiny module
    assert h["samples"] == 4 and h["compute_slowdown_one_sample"] >= 1.0
    assert h["sync_measured_with"] == "ddp steps"  # the model trains under DDP: its syncs are DDP's
    # The hook timed there too, every rank training with it (a tiny model's fp16 casts).
    assert list(h["compression_overhead_seconds"]) == ["fp16"]
    assert 0 <= h["compression_overhead_seconds"]["fp16"] < 0.05
    # hostccl-plan takes it for hosts of 2 ranks on these cores, not for others
    # (figures no probe here would read, so that their use shows: 1.75x, a hook of 1 s).
    h["compute_slowdown"] = 1.75
    h["compression_overhead_seconds"]["fp16"] = 1.0
    cluster = ["--hosts", "1", "--cores", str(cores), "--gflops", "10", "--elementwise-GBps", "10", "--tp", "1",
               "--pp", "1", "--compression", "fp16"]
    used = planner.plan(spec, global_batch=16, extra_args=cluster + ["--ranks-per-host", "2"])
    assert used["compute_slowdown"] == 1.75
    assert used["plans"] and all(p["predicted"]["step_ms"] > 1000 for p in used["plans"])
    other = planner.plan(spec, global_batch=16, extra_args=cluster + ["--ranks-per-host", "4"])
    assert other["compute_slowdown"] == 1.0
    assert other["plans"] and all(p["predicted"]["step_ms"] < 1000 for p in other["plans"])


def test_host_sharing_refuses_what_it_cannot_measure():
    for bad in (1, 0, True, 2.5, "2"):
        with pytest.raises(ValueError, match=r"host_sharing is a rank count of at least 2"):
            planner.describe_module(small(), torch.randn(4, 8), host_sharing=bad)
    frozen = small().requires_grad_(False)
    with pytest.raises(ValueError, match=r"host_sharing times training steps: the module has nothing to train"):
        planner.describe_module(frozen, torch.randn(4, 8), host_sharing=2)
    with pytest.raises(ValueError, match=r"must be picklable \(they go to spawned processes\)"):
        planner.describe_module(small(), torch.randn(4, 8), host_sharing=2,
                                optimizer=lambda params: torch.optim.SGD(params, lr=0.1))
    with pytest.raises(ValueError, match=r"must be picklable \(they go to spawned processes\)"):
        planner.describe_module(small(), torch.randn(4, 8), host_sharing=2, data_parallel="hostccl",
                                comm_hooks={"fp16": lambda ddp, group: _fp16_hook(ddp, group)})
