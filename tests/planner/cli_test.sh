#!/usr/bin/env bash
# hostccl-plan as users run it: train_mlp describes its model, the planner ranks the
# plans for a cluster given on the command line, in a rank table or probed here, and
# writes a plan file that reads back; bad input of every kind exits 2 naming the
# field and writes nothing.
set -euo pipefail
plan=$1 mlp=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "plan_command_line: $*"; exit 1; }
py=/usr/bin/python3

"$mlp" --describe-model "$dir/mlp.json" --blocks 3 --hidden 512 || fail "train_mlp --describe-model failed"
"$plan" --model "$dir/mlp.json" --global-batch 256 --hosts 2 --ranks-per-host 4 --cores 2 --gflops 50 \
    --top 5 -o "$dir/plan.json" > "$dir/out.txt" || { cat "$dir/out.txt"; fail "planning failed"; }
grep -q '^   1  dp' "$dir/out.txt" || { cat "$dir/out.txt"; fail "no ranked table"; }
[ "$(grep -cE '^ +[0-9]+  dp' "$dir/out.txt")" -eq 5 ] || { cat "$dir/out.txt"; fail "--top 5 did not print 5 plans"; }
grep -q '2 hosts x 4 ranks' "$dir/out.txt" || fail "the cluster is not 2 hosts x 4 ranks"
# The report: a bar per top plan, offline (no scripts).
"$plan" --model "$dir/mlp.json" --global-batch 256 --hosts 2 --ranks-per-host 4 --cores 2 --gflops 50 --top 7 \
    --html "$dir/report.html" > /dev/null || fail "--html failed"
grep -q '<svg' "$dir/report.html" && ! grep -q '<script' "$dir/report.html" || fail "the report has no plot or needs scripts"
grep -q 'a compressed plan above an exact one only when the exact one is predicted more than 5 % slower' "$dir/report.html" \
    || fail "the report does not say how it ranks compressors"
[ "$(grep -o '<text x="4" y="[0-9]*">[0-9]*\. dp' "$dir/report.html" | wc -l)" -eq 7 ] || fail "the report does not show 7 plans"
grep -q '^# ranked by predicted step, but a compressed plan above an exact one only when the exact one is predicted more than 5 % slower' \
    "$dir/out.txt" || { cat "$dir/out.txt"; fail "the ranking's rule for compressors is not printed"; }
# The plan file: every plan a split of 8 ranks with tensor parallelism inside a host,
# fastest first (a compressed plan's step counted 5 % longer), its parts adding up to
# the step; stages begin only where the model allows (train_mlp: never between a
# block's two matrices).
$py - "$dir/plan.json" <<'PY' || { head -c 3000 "$dir/plan.json"; fail "the plan file is wrong"; }
import json, sys
doc = json.load(open(sys.argv[1]))
plans = doc["plans"]
assert doc["ranks"] == 8 and doc["global_batch"] == 256 and len(plans) > 20, (doc["ranks"], len(plans))
assert doc["compression_min_gain_pct"] == 5, doc["compression_min_gain_pct"]
ranking = [p["predicted"]["step_ms"] * (1.0 if p["compression"] == "none" else 1.05) for p in plans]
assert ranking == sorted(ranking), "not ranked"
for i, p in enumerate(plans):
    assert p["rank"] == i + 1
    assert p["dp"] * p["tp"] * p["pp"] == 8 and 4 % p["tp"] == 0, p
    q = p["predicted"]
    parts = q["compute_ms"] + q["tp_ms"] + q["p2p_ms"] + q["bubble_ms"] + q["dp_exposed_ms"] + q["optimizer_ms"]
    assert q["optimizer_ms"] > 0, p  # element-wise rates measured: the optimizer's pass costs something
    assert abs(parts - q["step_ms"]) <= 1e-9 * q["step_ms"] + 1e-12, p
    assert len(p["stage_starts"]) == p["pp"] and p["stage_starts"][0] == 0, p
    assert all(s == 0 or s % 2 == 1 for s in p["stage_starts"]), p  # embed, or a block's first matrix
    assert (256 // p["dp"]) % p["micro_batches"] == 0, p
    assert p["lossy"] == (p["compression"] in ("sign",) or p["compression"].startswith("topk")), p
PY

# --compression-min-gain 0: the same search, ranked by predicted step alone, and no rule
# printed. (Which plans are listed once as equivalent rests on the measured rates.)
"$plan" --model "$dir/mlp.json" --global-batch 256 --hosts 2 --ranks-per-host 4 --cores 2 --gflops 50 \
    --compression-min-gain 0 --top 5 -o "$dir/by_time.json" > "$dir/by_time.txt" || fail "--compression-min-gain 0 failed"
! grep -q '^# ranked by predicted step, but' "$dir/by_time.txt" || fail "a ranking rule printed with --compression-min-gain 0"
$py - "$dir/plan.json" "$dir/by_time.json" <<'PY' || fail "--compression-min-gain 0 did not rank by time alone"
import json, sys
ruled, by_time = (json.load(open(path)) for path in sys.argv[1:])
steps = [p["predicted"]["step_ms"] for p in by_time["plans"]]
assert by_time["compression_min_gain_pct"] == 0 and steps == sorted(steps), steps[:10]
assert by_time["considered"] == ruled["considered"], (by_time["considered"], ruled["considered"])
PY

# train_mlp trains with a plan: the first, and one with pipeline stages (its cut as planned).
"$plan" --model "$dir/mlp.json" --global-batch 64 --ranks-per-host 4 --cores 2 --gflops 50 --compression none,fp16 \
    -o "$dir/four.json" > /dev/null || fail "planning 4 ranks failed"
first=$($py -c 'import json,sys; p=json.load(open(sys.argv[1]))["plans"][0]; print(p["tp"], p["pp"], p["micro_batches"], p["compression"])' "$dir/four.json")
read -r tp pp mb comp <<<"$first"
want="tp=$tp pp=$pp micro_batches=$mb compression=$comp"
out=$("$mlp" --ranks 4 --batch 64 --blocks 3 --hidden 512 --steps 3 --quiet --plan "$dir/four.json" 2>&1) \
    || { echo "$out"; fail "train_mlp --plan failed"; }
grep -q "$want" <<<"$out" || { echo "$out"; fail "train_mlp did not take the plan ($want)"; }
# ... and reports the planner's prediction against its own step.
$py - "$dir/four.json" "$out" <<'PY' || fail "train_mlp --plan: no prediction against its step: $out"
import json, re, sys
want = json.load(open(sys.argv[1]))["plans"][0]["predicted"]["step_ms"]
line = re.search(r"^plan: predicted_step_ms=([0-9.]+) measured_step_ms=([0-9.]+) prediction_error_pct=([-+][0-9.]+)$",
                 sys.argv[2], re.M)
assert line, "no plan: line"
predicted, measured, error = map(float, line.groups())
step = float(re.search(r" step_ms=([0-9.]+)", sys.argv[2]).group(1))  # the summary's
assert abs(predicted - want) <= 0.005 and abs(measured - step) <= 0.005, (predicted, want, measured, step)
assert abs(error - 100 * (want / step - 1)) <= 0.1 + 0.01 * abs(error), (error, want, step)
PY
read -r staged spp smb < <($py -c 'import json,sys
p = next(p for p in json.load(open(sys.argv[1]))["plans"] if p["pp"] > 1)
print(p["rank"], p["pp"], p["micro_batches"])' "$dir/four.json")
out=$("$mlp" --ranks 4 --batch 64 --blocks 3 --hidden 512 --steps 3 --quiet --plan "$dir/four.json:$staged" 2>&1) \
    || { echo "$out"; fail "train_mlp with staged plan $staged failed"; }
grep -q "pp=$spp micro_batches=$smb" <<<"$out" || { echo "$out"; fail "train_mlp did not take staged plan $staged"; }
set +e
out=$("$mlp" --ranks 4 --plan "$dir/four.json:100000" 2>&1); rc=$?
set -e
[ $rc -eq 2 ] && grep -q "no plan 100000" <<<"$out" || fail "a missing plan number: status $rc: $out"

# Measured compute (OpenBLAS here) and a cluster from an HCCL rank table: 2 servers of 2.
cat > "$dir/table.json" <<'JSON'
{"status":"completed","version":"1.0","server_count":"2","server_list":[
  {"server_id":"n0","device":[{"device_id":"0","device_ip":"192.168.1.8","rank_id":"0"},
                              {"device_id":"1","device_ip":"192.168.1.9","rank_id":"1"}]},
  {"server_id":"n1","device":[{"device_id":"0","device_ip":"192.168.1.10","rank_id":"2"},
                              {"device_id":"1","device_ip":"192.168.1.11","rank_id":"3"}]}]}
JSON
"$plan" --model "$dir/mlp.json" --global-batch 64 --rank-table "$dir/table.json" --compression none > "$dir/table.txt" \
    || { cat "$dir/table.txt"; fail "planning from a rank table failed"; }
grep -q '2 hosts x 2 ranks' "$dir/table.txt" || { cat "$dir/table.txt"; fail "the rank table's 2 x 2 was not used"; }
grep -q 'sgemm on one core' "$dir/table.txt" || { cat "$dir/table.txt"; fail "the GEMM rate was not measured"; }
grep -qF 'slower than alone (beyond sharing cores) (not measured)' "$dir/table.txt" \
    || { cat "$dir/table.txt"; fail "host sharing neither probed nor given, yet not said so"; }

# Probed here: 2 ranks as threads.
"$plan" --model "$dir/mlp.json" --global-batch 32 --probe --probe-ranks 2 --gflops 50 > "$dir/probe.txt" \
    || { cat "$dir/probe.txt"; fail "planning with --probe failed"; }
grep -q '1 hosts x 2 ranks' "$dir/probe.txt" || { cat "$dir/probe.txt"; fail "the probe's 2 ranks were not used"; }
# 3 ranks on this 2-core machine: host sharing and the crowded host's sync cost measured.
"$plan" --model "$dir/mlp.json" --global-batch 48 --probe --probe-ranks 3 --cores 2 --gflops 50 > "$dir/crowd.txt" \
    || { cat "$dir/crowd.txt"; fail "planning 3 crowded ranks failed"; }
grep -qE '^# ranks sharing a host compute [0-9.]+x slower than alone \(beyond sharing cores\)$' "$dir/crowd.txt" \
    || { cat "$dir/crowd.txt"; fail "host sharing was not measured"; }
grep -qE '^# crowded hosts \(3 ranks on 2 cores\): each collective costs [0-9.]+ us more between compute phases \(in full from [0-9]+ us of compute since the last, [0-9.]+ us with none\) and [0-9.]+ % of the compute since the last; a pipeline [0-9.]+ us per hand-off filling and draining$' "$dir/crowd.txt" \
    || { cat "$dir/crowd.txt"; fail "the crowded host's sync and hand-off costs are not reported"; }
# Under a launcher (2 emulated hosts of 2 processes, each host given 1 core): the
# cluster and the hosts' sharing probed with the job's own processes (the pipeline's
# hand-offs across the hosts); rank 0 plans and writes the file.
port=$((20000 + RANDOM % 12000)) pids=()
for r in 0 1 2 3; do
    env RANK=$r WORLD_SIZE=4 LOCAL_RANK=$((r % 2)) HOSTCCL_HOST_ID=host$((r / 2)) HOSTCCL_ROOT_ADDR=127.0.0.1:$port \
        "$plan" --model "$dir/mlp.json" --global-batch 32 --probe --cores 1 --gflops 50 -o "$dir/launched.json" \
        > "$dir/launched.$r" 2>&1 &
    pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || { cat "$dir"/launched.*; fail "planning under a launcher failed"; }; done
grep -q '^# cluster: 2 hosts x 2 ranks' "$dir/launched.0" || { cat "$dir/launched.0"; fail "the launched job's hosts were not found"; }
grep -qE '^# crowded hosts \(2 ranks on 1 cores\): each collective costs [0-9.]+ us more.*; a pipeline [0-9.]+ us per hand-off' "$dir/launched.0" \
    || { cat "$dir/launched.0"; fail "the launched job's processes did not measure the hosts' sharing"; }
[ -s "$dir/launched.json" ] && ! grep -q '^#' "$dir"/launched.[123] || { cat "$dir"/launched.*; fail "another rank planned too, or nobody wrote the plan"; }
# The same costs given: reported as given and written into the plan file.
"$plan" --model "$dir/mlp.json" --global-batch 48 --hosts 1 --ranks-per-host 4 --cores 2 --gflops 50 --elementwise-GBps 40 \
    --sync-us 100 --sync-per-compute 0.05 --handoff-us 1000 --sync-ramp-us 2500 --sync-floor-us 40 --pooled-cores -o "$dir/given.json" > "$dir/given.txt" \
    || { cat "$dir/given.txt"; fail "planning with given crowding costs failed"; }
grep -q 'costs 100.0 us more between compute phases (in full from 2500 us of compute since the last, 40.0 us with none) and 5.00 % of the compute since the last; a pipeline 1000.0 us per hand-off' \
    "$dir/given.txt" || { cat "$dir/given.txt"; fail "the given crowding costs were not used"; }
/usr/bin/python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); got = [d[k] for k in ("sync_extra_us", "sync_extra_per_compute", "handoff_us", "sync_ramp_us", "sync_floor_us")]; assert all(abs(g - w) < 1e-9 * w for g, w in zip(got, (100, 0.05, 1000, 2500, 40))), got' \
    "$dir/given.json" || fail "the plan file does not carry the crowding costs"
grep -q "^# cluster: .*; the hosts' cores pooled (one machine)$" "$dir/given.txt" \
    || { cat "$dir/given.txt"; fail "--pooled-cores was not reported"; }
/usr/bin/python3 -c 'import json, sys; assert json.load(open(sys.argv[1]))["cores_pooled"] is True' "$dir/given.json" \
    || fail "the plan file does not say the cores were pooled"
/usr/bin/python3 -c 'import json, sys; assert json.load(open(sys.argv[1]))["cores_pooled"] is False' "$dir/launched.json" \
    || fail "a plan without --pooled-cores says the cores were pooled"
# Measured with the model's own processes (the model file's host_sharing, as
# hostccl.planner.describe_module(host_sharing=4) writes it): used for hosts of 4
# ranks on 2 cores, converted as the probe's figures are; not for other hosts.
$py - "$dir/mlp.json" "$dir/shared.json" 0.002 <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m["host_sharing"] = {"ranks_per_host": 4, "cores": 2, "compute_slowdown": 2.0, "sync_base_seconds": float(sys.argv[3]),
                     "sync_per_compute": 0.4, "sync_short_compute_seconds": 0.001, "sync_floor_seconds": 0.0015,
                     "compression_overhead_seconds": {"fp16": 0.003}, "compute_slowdown_one_sample": 1.25, "samples": 12}
json.dump(m, open(sys.argv[2], "w"))
PY
$py - "$dir/shared.json" "$dir/shared2.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1])); m["host_sharing"]["sync_base_seconds"] += 0.001
json.dump(m, open(sys.argv[2], "w"))
PY
flat=(--global-batch 48 --hosts 1 --cores 2 --gflops 50 --elementwise-GBps 40)
for f in shared shared2; do
    "$plan" --model "$dir/$f.json" "${flat[@]}" --ranks-per-host 4 -o "$dir/$f.plan.json" > "$dir/$f.txt" \
        || { cat "$dir/$f.txt"; fail "planning with the model's host sharing failed"; }
done
grep -qF "# ranks sharing a host compute 2.00x slower than alone (beyond sharing cores) with micro-batches of 12 samples, 1.25x with one (measured with the model's own processes: the model file's host_sharing)" \
    "$dir/shared.txt" || { cat "$dir/shared.txt"; fail "the model's host sharing was not used"; }
$py -c 'import json, sys; d = json.load(open(sys.argv[1])); assert d["compute_slowdown_one_sample"] == 1.25, d["compute_slowdown_one_sample"]' \
    "$dir/shared.plan.json" || fail "the plan file does not carry the one-sample slowdown"
grep -qF "# ... and on these hosts, every rank training (measured with the model's own processes, used instead): fp16 3.00 ms" \
    "$dir/shared.txt" || { cat "$dir/shared.txt"; fail "the comm hooks measured with the model's processes were not used"; }
# Per second of the plan's compute (a rank's half core, 2x slower): 0.4 x 0.5 / 2; the
# short interval's 1 ms on an idle core is 4 ms of it; no hand-off measured.
grep -qE '^# crowded hosts \(4 ranks on 2 cores\): each collective costs [0-9.]+ us more between compute phases \(in full from 4000 us of compute since the last, [0-9.]+ us with none\) and 10.00 % of the compute since the last; a pipeline 0.0 us per hand-off' \
    "$dir/shared.txt" || { cat "$dir/shared.txt"; fail "the model's sync costs were not converted as the probe's"; }
# The op's own time comes off: 1 ms more measured is exactly 1 ms more charged.
$py -c 'import json, sys; a, b = (json.load(open(f)) for f in sys.argv[1:]); d = b["sync_extra_us"] - a["sync_extra_us"]
assert abs(d - 1000) < 1e-6 and 0 < a["sync_extra_us"] < 2000 and a["compute_slowdown"] == 2.0, (a["sync_extra_us"], d)' \
    "$dir/shared.plan.json" "$dir/shared2.plan.json" || fail "the model's sync cost is not charged less the op"
"$plan" --model "$dir/shared.json" "${flat[@]}" --ranks-per-host 4 --compute-slowdown 3 > "$dir/given3.txt" \
    && grep -q '^# ranks sharing a host compute 3.00x slower than alone (beyond sharing cores) (measured' "$dir/given3.txt" \
    || { cat "$dir/given3.txt"; fail "--compute-slowdown does not override the model's"; }
"$plan" --model "$dir/shared.json" "${flat[@]}" --ranks-per-host 3 > "$dir/other.txt" \
    && grep -q '^# ranks sharing a host compute 1.00x slower than alone (beyond sharing cores) (not measured)$' "$dir/other.txt" \
    && ! grep -q '^# ... and on these hosts' "$dir/other.txt" \
    || { cat "$dir/other.txt"; fail "the model's sharing of 4 ranks was used for hosts of 3"; }
# Emulated hosts pooling one machine's cores (2 hosts x 2 ranks on 2 cores) share
# them as one host of 4 ranks: the model's figures measured so fit; without
# --pooled-cores each host's 2 ranks on 1 core are another measure.
pair=(--global-batch 48 --hosts 2 --ranks-per-host 2 --cores 1 --gflops 50 --elementwise-GBps 40 --net-GBps 0.1)
"$plan" --model "$dir/shared.json" "${pair[@]}" --pooled-cores > "$dir/pooled.txt" \
    && grep -qF "compute 2.00x slower than alone (beyond sharing cores) with micro-batches of 12 samples, 1.25x with one (measured with the model's own processes" "$dir/pooled.txt" \
    || { cat "$dir/pooled.txt"; fail "the model's sharing of 4 ranks on 2 cores was not used for 2 pooled hosts of 2"; }
"$plan" --model "$dir/shared.json" "${pair[@]}" > "$dir/apart.txt" \
    && grep -q '^# ranks sharing a host compute 1.00x slower than alone (beyond sharing cores) (not measured)$' "$dir/apart.txt" \
    || { cat "$dir/apart.txt"; fail "the model's sharing of 4 ranks was used for hosts of 2 apart"; }
rm -f "$dir/bad.json"
if "$plan" --model "$dir/mlp.json" --global-batch 48 --sync-per-compute -1 -o "$dir/bad.json" > "$dir/bad.txt" 2>&1; then
    fail "a negative --sync-per-compute was accepted"
fi
grep -q -- '--sync-per-compute' "$dir/bad.txt" || { cat "$dir/bad.txt"; fail "the error does not name --sync-per-compute"; }
[ ! -e "$dir/bad.json" ] || fail "a refused plan wrote its file"

# Weak scaling to 4 and 16 hosts of 4: every strategy's best plan per rank count, its
# efficiency against one rank (above 0, at most 1 give or take rounding), and where each
# strategy stops scaling.
"$plan" --model "$dir/mlp.json" --global-batch 64 --ranks-per-host 4 --gflops 50 --elementwise-GBps 40 \
    --net-GBps 1.25 --nic-GBps 1.25 --compression none --buckets 25M --scale-ranks 16,64 > "$dir/scale.txt" \
    || { cat "$dir/scale.txt"; fail "--scale-ranks failed"; }
[ "$(grep -cE '^ +(16|64)  dp' "$dir/scale.txt")" -eq 8 ] || { cat "$dir/scale.txt"; fail "not 4 strategies at each of 2 rank counts"; }
awk '/^ +(16|64)  dp/ && NF >= 4 { e = $NF; if (!(e > 0 && e <= 1.001)) bad = bad "\n" $0 } END { if (bad != "") { print "efficiency out of range:" bad; exit 1 } }' \
    "$dir/scale.txt" || fail "scaling efficiency out of range"
[ "$(grep -c '^# dp.*\(stops scaling at\|efficiency 0.5 or more\)' "$dir/scale.txt")" -eq 4 ] || { cat "$dir/scale.txt"; fail "no verdict per strategy"; }

# Bad input: exit 2, the field named, no plan file.
bad() {  # expected-text args...
    local want=$1; shift
    rm -f "$dir/bad.json"
    set +e
    "$plan" "$@" -o "$dir/bad.json" > "$dir/bad.out" 2> "$dir/bad.err"
    local rc=$?
    set -e
    [ $rc -eq 2 ] || { cat "$dir/bad.out" "$dir/bad.err"; fail "exit $rc, not 2, for: $*"; }
    grep -qF -- "$want" "$dir/bad.err" || { cat "$dir/bad.err"; fail "no '$want' in the error for: $*"; }
    [ ! -e "$dir/bad.json" ] && [ ! -e "$dir/bad.json.tmp" ] || fail "a plan file was written for: $*"
}
$py - "$dir/mlp.json" "$dir/broken.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1])); del m["layers"][2]["forward_flops"]
json.dump(m, open(sys.argv[2], "w"))
PY
ok=(--global-batch 64 --hosts 2 --ranks-per-host 2 --gflops 50)
bad "layers[2].forward_flops: missing" --model "$dir/broken.json" "${ok[@]}"
bad "cannot read $dir/none.json" --model "$dir/none.json" "${ok[@]}"
bad "--memory-limit: no plan fits in 1.0 KiB per rank; the leanest" --model "$dir/mlp.json" "${ok[@]}" --memory-limit 1K
bad "--memory-limit: 'lots' is not a size" --model "$dir/mlp.json" "${ok[@]}" --memory-limit lots
bad "--global-batch must be at least 1" --model "$dir/mlp.json" --global-batch 0 --gflops 50
bad "compression 'zip'" --model "$dir/mlp.json" "${ok[@]}" --compression none,zip
bad "--buckets: '0' is not a size above 0" --model "$dir/mlp.json" "${ok[@]}" --buckets 0
bad "--overlap: 'sometimes'" --model "$dir/mlp.json" "${ok[@]}" --overlap sometimes
bad "--scale-ranks: '7' is not a rank count that is a multiple of 2" --model "$dir/mlp.json" "${ok[@]}" --scale-ranks 8,7
bad "--compression-min-gain: 150 is not a percentage from 0 to 100" --model "$dir/mlp.json" "${ok[@]}" --compression-min-gain 150
bad "--tp: '0' is not a degree from 1" --model "$dir/mlp.json" "${ok[@]}" --tp 0
# A cluster whose hosts have no link between them.
echo '{"hosts": 2, "ranks_per_host": 2, "shm": {"alpha_us": 1, "bandwidth_GBps": 4}, "reduce_GBps": 4, "copy_GBps": 4}' \
    > "$dir/nolinks.json"
bad "net" --model "$dir/mlp.json" --global-batch 64 --platform "$dir/nolinks.json" --gflops 50
bad "--net-GBps must be greater than 0" --model "$dir/mlp.json" "${ok[@]}" --net-GBps 0
echo '{"layers": [{"params": 10, "forward_flops": 20, "activation_bytes": 8}]}' > "$dir/one.json"
bad "no dp x tp x pp split of 8 ranks works" --model "$dir/one.json" --global-batch 3 --hosts 2 --ranks-per-host 4 --gflops 50
echo "plan_command_line: all cases passed"
