#!/usr/bin/env bash
# Flight recorder end to end: dumps on failure (a killed rank, a mismatched count) and
# on SIGUSR1, and scripts/flight_recorder.py naming the divergence and the ranks that
# never arrived.   flight_recorder_test.sh <fault_worker> <allreduce_perf> <flight_recorder.py>
set -u
worker=$1 perf=$2 analyse=$3
work=$(mktemp -d /tmp/hostccl-flight.XXXXXX)
trap 'rm -rf "$work"' EXIT
failures=0
check() {  # check <description> <file> <regex>
    if grep -Eq "$3" "$2"; then echo "ok: $1"; else echo "FAILED: $1 (no /$3/ in $2)"; cat "$2"; failures=$((failures + 1)); fi
}

run_job() {  # run_job <scenario> <dir>: 4 ranks, victim rank 2
    mkdir -p "$2"
    for r in 0 1 2 3; do
        HOSTCCL_FLIGHT_RECORDER_DIR=$2 "$worker" "$2/root" $r 4 "$1" 2 "$2" &
    done
    wait
}

# A rank killed inside an op: the survivors dump; rank 2 has no dump and never
# finished seq 21.
run_job kill "$work/kill"
ls "$work/kill"/hostccl-flight.*.json > "$work/kill.files" 2>&1
check "three survivors dumped" "$work/kill.files" "rank3.json"
python3 "$analyse" "$work/kill" > "$work/kill.out" 2>&1
check "the dead rank has no dump" "$work/kill.out" "no dump from rank 2"
check "ranks that never arrived are named" "$work/kill.out" "never arrived at seq [0-9]+: .*rank 2 \(no dump\)"
check "the failure names rank 2" "$work/kill.out" "rank 0 \(failure\): HCCL_E_REMOTE blaming rank 2"
check "no false divergence" "$work/kill.out" "no divergence"

# Rank 2 calls its 21st allreduce with half the count. (A rank that hears of the
# failure before it calls the 21st never starts it: the analysis says so.)
run_job mismatch "$work/mismatch"
python3 "$analyse" "$work/mismatch" > "$work/mismatch.out" 2>&1
check "the first divergence names both sides" "$work/mismatch.out" \
      "first divergence at seq 21: (ranks? [0-9, ]+: AllReduce int32 count 4194304 max; rank 2: AllReduce int32 count 2097152 max|rank 2: AllReduce int32 count 2097152 max; ranks? 3: AllReduce int32 count 4194304 max)$"
for r in 0 1 2 3; do
    check "rank $r failed with HCCL_E_PARA" "$work/mismatch.out" "rank $r \((failure|destroyed after a failure)\): HCCL_E_PARA"
done

# SIGUSR1 while ranks run: every live communicator dumps, and the dump is JSON
# with completed ops.
mkdir -p "$work/usr1"
HOSTCCL_FLIGHT_RECORDER_DIR=$work/usr1 "$perf" -p 2 -b 8 -e 256M -f 2 -n 100 -w 1 -c 0 > "$work/usr1.log" 2>&1 &
pid=$!
sleep 1.5
kill -USR1 $pid
sleep 1
kill $pid 2>/dev/null
wait $pid 2>/dev/null
python3 - "$work/usr1" > "$work/usr1.out" 2>&1 <<'PY'
import glob, json, sys
for f in sorted(glob.glob(sys.argv[1] + "/hostccl-flight.*.json")):
    d = json.load(open(f))
    done = sum(1 for op in d["ops"] if op["state"] == "done")
    print(f"rank {d['rank']} reason {d['reason']} ops {len(d['ops'])} done {done}")
PY
check "SIGUSR1 dumps rank 0" "$work/usr1.out" "rank 0 reason SIGUSR1 ops [0-9]+ done [1-9]"
check "SIGUSR1 dumps rank 1" "$work/usr1.out" "rank 1 reason SIGUSR1 ops [0-9]+ done [1-9]"

[ $failures -eq 0 ] && echo "flight recorder: all checks passed"
exit $((failures > 0))
