# The validation scripts' shared steps (sourced): which plans to run, a table row per
# plan (predicted against the median measured) and the two verdicts. Needs $py.

# choose_plans PLAN_FILE: the first 5 plans' ranks, then 5 spread evenly over the rest;
# every plan's with PLAN_CHOICE=all (narrow the search: every plan runs `runs` times).
choose_plans() {
    $py - "$1" "${PLAN_CHOICE:-spread}" <<'PY'
import json, sys
ranks = [p["rank"] for p in json.load(open(sys.argv[1]))["plans"]]
if sys.argv[2] == "all":
    print("\n".join(map(str, ranks)))
    sys.exit()
top, rest = ranks[:5], ranks[5:]
spread = [rest[round(i * (len(rest) - 1) / 4)] for i in range(5)] if len(rest) >= 5 else rest
for r in top + sorted(set(spread)):
    print(r)
PY
}

# described MODEL_FILE: what hostccl.planner.describe_module measured, one line, so
# that a slow spell of the machine during it shows in the log.
described() {
    $py - "$1" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
core = m.get("timed_on_core", {})
steps = ", ".join("core %s %.2f ms" % (c, t * 1e3) for c, t in sorted(core.get("step_seconds", {}).items()))
print("# described: a step %s (timed on core %s); step overhead %.3f ms, micro-batch overhead %.3f ms; host sharing %s"
      % (steps or "not timed per core", core.get("core", "-"), m.get("step_overhead_seconds", 0) * 1e3,
         m.get("micro_batch_overhead_seconds", 0) * 1e3, json.dumps(m.get("host_sharing"))))
PY
}

# plan_row PLAN_FILE RANK TIMES...: "| rank | label | predicted | median | runs | error |"
plan_row() {
    $py - "$@" <<'PY'
import json, statistics, sys
p = json.load(open(sys.argv[1]))["plans"][int(sys.argv[2]) - 1]
t = sorted(float(x) for x in sys.argv[3:])
m, pred = statistics.median(t), p["predicted"]["step_ms"]
print(f"| {p['rank']} | {p['label']} | {pred:.2f} | {m:.2f} | {' '.join(f'{x:.2f}' for x in t)} | {100 * (pred / m - 1):+.0f} % |")
PY
}

# verdicts ROWS_FILE: within 20 % for >= 80 % of the plans; the first choice within 10 % of the fastest.
verdicts() {
    $py - "$1" <<'PY'
import sys
rows = [l.split("|") for l in open(sys.argv[1])]
pred = [float(r[3]) for r in rows]; meas = [float(r[4]) for r in rows]; rank = [int(r[1]) for r in rows]
within = sum(abs(p / m - 1) <= 0.2 for p, m in zip(pred, meas))
first = meas[rank.index(min(rank))]
print(f"\npredicted within 20 % of measured: {within} of {len(rows)} ({100 * within / len(rows):.0f} %; requirement 80 %): "
      f"{'met' if within >= 0.8 * len(rows) else 'missed'}")
print(f"first choice measured {first:.2f} ms, fastest measured {min(meas):.2f} ms ({100 * (first / min(meas) - 1):.0f} % slower; "
      f"requirement within 10 %): {'met' if first <= 1.1 * min(meas) else 'missed'}")
PY
}

# run_plans PLAN_FILE RUNS ROWS_FILE STEP_FN: the chosen plans, each run RUNS times by
# STEP_FN (called with the plan's rank; prints one step time in ms), a table row each
# (also appended to ROWS_FILE), then the verdicts. The runs go round the plans (every
# plan once, then again): a slow spell of a shared machine meets every plan alike
# instead of all of one plan's runs.
run_plans() {
    # Underscored names: bash's locals are seen by STEP_FN, and the scripts' own
    # variables (n, k, times) must stay theirs.
    local _file=$1 _runs=$2 _rows=$3 _step=$4 _plan _run _ms
    local -A _times
    mapfile -t _chosen < <(choose_plans "$_file")
    for ((_run = 0; _run < _runs; _run++)); do
        for _plan in "${_chosen[@]}"; do
            _ms=$("$_step" "$_plan") || exit 1
            _times[$_plan]+=" $_ms"
        done
        echo "# round $((_run + 1)) of $_runs done" >&2
    done
    echo "| plan rank | plan | predicted ms | measured ms (median of $_runs) | runs | error |"
    echo "|---|---|---|---|---|---|"
    for _plan in "${_chosen[@]}"; do
        # shellcheck disable=SC2086  # the times, one word each
        plan_row "$_file" "$_plan" ${_times[$_plan]} | tee -a "$_rows"
    done
    verdicts "$_rows"
}
