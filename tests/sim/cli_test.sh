#!/usr/bin/env bash
# hostccl-sim as users run it: a sweep with every candidate writes a CSV and an HTML
# page; a printed platform reads back; bad input of every kind exits non-zero with
# the field named and writes nothing.
set -euo pipefail
sim=$1 perf=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "sim_command_line: $*"; exit 1; }

"$sim" -n 64,16,64 -c allreduce,alltoall -b 64K,1M -a all --csv "$dir/out.csv" --html "$dir/out.html" > "$dir/out.txt" \
    || { cat "$dir/out.txt"; fail "the sweep failed"; }
grep -q '^collective,ranks,hosts,bytes,algorithm,selected,fastest,time_us,model_us' "$dir/out.csv" || fail "CSV header missing"
# Every row carries the selector's own estimate beside the simulated time.
[ "$(awk -F, 'NR > 1 && !($9 > 0)' "$dir/out.csv" | wc -l)" -eq 0 ] || fail "a row has no cost-model estimate"
# Each (ranks, collective, size) point has exactly one selected row.
[ "$(awk -F, 'NR > 1 && $6 == 1' "$dir/out.csv" | wc -l)" -eq 8 ] || fail "expected 8 selected rows"
[ "$(awk -F, 'NR > 1 && $7 == 1' "$dir/out.csv" | wc -l)" -eq 8 ] || fail "expected 8 fastest rows"
# Scaling efficiency: 1 at the fewest ranks an algorithm ran at in the sweep (run first whatever
# the order given, each count once), else busbw over busbw there for the same collective, size
# and algorithm.
awk -F, 'NR > 1 && $2 == 16 { base[$1 "," $4 "," $5] = $11; if ($12 != "1.0000") bad = bad " " $0 }
         NR > 1 && $2 == 64 { k = $1 "," $4 "," $5; want = !(k in base) ? 1 : base[k] > 0 ? $11 / base[k] : 0
                              if (want == 0 || $12 - want > 0.001 || want - $12 > 0.001) bad = bad " " $0 }
         END { if (bad != "") { print "wrong scaling efficiency:" bad; exit 1 } }' "$dir/out.csv" \
    || fail "scaling efficiency is not busbw over busbw at the fewest ranks"
grep -q '<svg' "$dir/out.html" && grep -q '<polyline' "$dir/out.html" || fail "HTML has no plot"
! grep -q '<script' "$dir/out.html" || fail "the page must open offline, without scripts"

"$sim" --data -n 24 --ranks-per-host 8 -c allgather,reducescatter -b 4K -a all > "$dir/data.txt" || { cat "$dir/data.txt"; fail "data run failed"; }
[ "$(grep -cE ' yes +[0-9.]+$' "$dir/data.txt")" -ge 6 ] || { cat "$dir/data.txt"; fail "data run did not check results"; }

"$sim" --print-platform --hosts 3 --nic-GBps 1.25 --hosts-per-leaf 2 --oversubscription 2 > "$dir/platform.json"
"$sim" --platform "$dir/platform.json" -b 1M > "$dir/replay.txt" || fail "a printed platform does not read back"
grep -q '^allreduce  *24  *3 ' "$dir/replay.txt" || { cat "$dir/replay.txt"; fail "the platform's 3 x 8 ranks were not used"; }

# The described clusters shipped with the benchmarks read and run.
for described in "$(dirname "$0")"/../../bench/sim/platforms/*.json; do
    "$sim" --platform "$described" -n 64 -b 1M > "$dir/described.txt" || { cat "$dir/described.txt"; fail "$described does not run"; }
done

# Calibrated from reality: a probe of ranks as threads here (with its bulk rates from
# memory), and a saved description.
"$sim" --probe --probe-ranks 3 > "$dir/probed.json" || fail "--probe failed"
grep -q '"ranks_per_host": 3' "$dir/probed.json" || { cat "$dir/probed.json"; fail "the probe's layout is not 3 ranks"; }
grep -q '"bulk"' "$dir/probed.json" && grep -q '"curve"' "$dir/probed.json" || { cat "$dir/probed.json"; fail "the probe has no bulk rates"; }
"$sim" --platform "$dir/probed.json" -b 64K > /dev/null || fail "the probed platform does not read back"
# A step inside the host is timed through real ops (an 8-byte ring allreduce), which
# cost more than the init probe's idle shift; a single copy is no faster than a memcpy.
/usr/bin/python3 - "$dir/probed.json" <<'PY' || { cat "$dir/probed.json"; fail "the probe's shm alpha or rate is implausible"; }
import json, sys
p = json.load(open(sys.argv[1]))
shm = p["shm"]
assert 0.05 <= shm["alpha_us"] <= 1000, shm
assert shm["bandwidth_GBps"] <= p["copy_GBps"] * 1.0001, (shm, p["copy_GBps"])
PY
# Across two emulated hosts (TCP over loopback) the probe also times exchanges and
# writes TCP's CPU share, in cache and in bulk (the CPU time its one-way flows took,
# more where exchanges run slower), within 0..1, and a step between them.
HOSTCCL_HOST_ID=a,b "$sim" --probe --probe-ranks 2 > "$dir/hosts.json" || fail "--probe across two hosts failed"
/usr/bin/python3 - "$dir/hosts.json" <<'PY' || { cat "$dir/hosts.json"; fail "the two-host probe has no TCP cpu share"; }
import json, sys
j = json.load(open(sys.argv[1]))
assert j["hosts"] == 2 and j["net"]["kind"] == "tcp", j
assert 0 < j["net"]["cpu_share"] <= 1 and 0 < j["bulk"]["net_cpu_share"] <= 1, j
# and a step between the hosts, timed through an 8-byte ring over every rank
assert 0.05 <= j["net"].get("step_us", 0) <= 100000, j["net"]
assert j["shm"].get("step_us") == j["net"]["step_us"], j
PY
"$sim" --platform "$dir/hosts.json" -c allgather -b 64M > /dev/null || fail "the two-host probe does not read back"
"$perf" -p 2 -b 8 -e 8 -n 1 -w 0 --topology > "$dir/describe.txt"
"$sim" --describe "$dir/describe.txt" --print-platform > "$dir/described.json" || fail "--describe failed"
grep -q '"ranks_per_host": 2' "$dir/described.json" || { cat "$dir/described.json"; fail "the description's layout is not 2 ranks"; }

bad() {  # bad <what the message must name> <args...>
    local want=$1
    shift
    rm -f "$dir/bad.csv"
    if "$sim" "$@" --csv "$dir/bad.csv" > "$dir/bad.out" 2> "$dir/bad.err"; then fail "accepted: $*"; fi
    grep -q -- "$want" "$dir/bad.err" || { cat "$dir/bad.err"; fail "'$*' does not say '$want'"; }
    [ ! -e "$dir/bad.csv" ] || fail "'$*' wrote a CSV"
}
echo '{"hosts": 2, "ranks_per_host": 4, "shm": {"alpha_us": 1, "bandwidth_GBps": 6}, "net": {"alpha_us": -3, "bandwidth_GBps": 1}, "reduce_GBps": 4, "copy_GBps": 8}' > "$dir/negative.json"
echo '{"hosts": 2, "shm": {"alpha_us": 1, "bandwidth_GBps": 6}, "reduce_GBps": 4, "copy_GBps": 8}' > "$dir/missing.json"
bad "net.alpha_us" --platform "$dir/negative.json"
bad "ranks_per_host' is missing" --platform "$dir/missing.json"
bad "cannot read" --platform "$dir/nonexistent.json"
bad "--ranks: '0'" -n 0
bad "--ranks: '12'" -n 12
bad "--sizes: '1Q'" -b 1Q
bad "--sizes: '99999999999G'" -b 99999999999G
bad "unknown collective 'allsum'" -c allsum
bad "--nic-GBps" --nic-GBps -1
bad "--cores must be a whole number, or a part of one core below 1" --cores 2.5
echo "no description here" > "$dir/junk.txt"
bad "no 'N ranks on M hosts' line" --describe "$dir/junk.txt"
echo "sim_command_line: passed"
