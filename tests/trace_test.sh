#!/usr/bin/env bash
# HOSTCCL_TRACE writes one valid Chrome trace per rank (ops with seq and comm in
# their args, and their steps), and the merge script combines them.
set -uo pipefail
tool=$1 merge=$2
command -v python3 >/dev/null || { echo "SKIPPED: python3 is needed to read the JSON"; exit 77; }
dir=$(mktemp -d /tmp/hostccl-trace.XXXXXX)
trap 'rm -rf "$dir"' EXIT
HOSTCCL_TRACE=$dir/run "$tool" -p 3 -b 8 -e 64K -f 64 -n 2 -w 1 >/dev/null || { echo "perf tool failed"; exit 1; }
ls "$dir"/run.*.rank*.json >/dev/null 2>&1 || { echo "no trace files in $dir"; exit 1; }
[ "$(ls "$dir"/run.*.rank*.json | wc -l)" -eq 3 ] || { echo "expected 3 trace files"; ls "$dir"; exit 1; }
python3 - "$dir" <<'PY' || exit 1
import glob, json, sys
for path in glob.glob(sys.argv[1] + "/run.*.rank*.json"):
    trace = json.load(open(path))
    ops = [e for e in trace["traceEvents"] if e.get("cat") == "op"]
    steps = [e for e in trace["traceEvents"] if e.get("cat") == "transfer"]
    assert ops and steps, f"{path}: no ops or steps"
    assert all("seq" in e["args"] and "comm" in e["args"] and e["dur"] >= 0 for e in ops), path
    seqs = [e["args"]["seq"] for e in ops]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs), f"{path}: sequence numbers not increasing"
print("per-rank traces ok")
PY
python3 "$merge" -o "$dir/merged.json" "$dir"/run.*.rank*.json || exit 1
python3 -c "import json,sys; t=json.load(open(sys.argv[1])); assert len({e['pid'] for e in t['traceEvents']}) == 3" "$dir/merged.json" \
    && echo "merged trace ok"

# The trace names the algorithm each op ran: recursive doubling for 8 B, the direct
# algorithm for 1 MiB on shared memory, the ring once direct access is turned off.
# The cost model's numbers are pinned: a probe on a loaded machine may rank the
# candidates differently, and this checks the trace, not the selector.
export HOSTCCL_COST_MODEL="shm=2us/4GBps tcp=30us/0.125GBps reduce=8GBps copy=8GBps"
algorithms() {  # prints "<count>:<algorithm>" per op of rank 0's trace
    python3 - "$1" <<'PY'
import json, sys
ops = [e["args"] for e in json.load(open(sys.argv[1]))["traceEvents"] if e.get("cat") == "op"]
print(" ".join(sorted({f"{a['count']}:{a['algorithm']}" for a in ops})))
PY
}
rm -f "$dir"/*.json
env -u HOSTCCL_DIRECT_MIN_BYTES -u HCCL_ALGO HOSTCCL_TRACE=$dir/alg "$tool" -p 2 -b 8 -e 1M -f 131072 -n 1 -w 0 >/dev/null || { echo "perf tool failed"; exit 1; }
got=$(algorithms "$(ls "$dir"/alg.*.rank0.json)")
[ "$got" = "262144:direct 2:recursive-doubling" ] || { echo "algorithms with direct access: $got"; exit 1; }
env -u HCCL_ALGO HOSTCCL_DIRECT_MIN_BYTES=-1 HOSTCCL_TRACE=$dir/ring "$tool" -p 2 -b 1M -e 1M -n 1 -w 0 >/dev/null || exit 1
got=$(algorithms "$(ls "$dir"/ring.*.rank0.json)")
[ "$got" = "262144:ring" ] || { echo "algorithms without direct access: $got"; exit 1; }
echo "algorithm names ok"

# HCCL_ALGO forces the family, whatever the size.
HCCL_ALGO="level0:NA;level1:H-D_R" HOSTCCL_TRACE=$dir/hd "$tool" -p 3 -b 8 -e 8 -n 1 -w 0 >/dev/null || exit 1
got=$(algorithms "$(ls "$dir"/hd.*.rank0.json)")
[ "$got" = "2:halving-doubling" ] || { echo "algorithms with HCCL_ALGO=H-D_R: $got"; exit 1; }
HCCL_ALGO="allreduce=level1:ring" HOSTCCL_TRACE=$dir/fring "$tool" -p 3 -b 8 -e 8 -n 1 -w 0 >/dev/null || exit 1
got=$(algorithms "$(ls "$dir"/fring.*.rank0.json)")
[ "$got" = "2:ring" ] || { echo "algorithms with HCCL_ALGO=ring: $got"; exit 1; }
echo "forced algorithms ok"
