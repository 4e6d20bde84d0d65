#!/usr/bin/env bash
# The simulator against measured runs (issue 17's validation), ranks as threads of
# one process on this host (-p N): for each collective, algorithm (forced with
# HCCL_ALGO) and size, the perf tool's time (out-of-place average, best of 3 runs)
# and hostccl-sim's prediction on the platform --probe measured for that layout.
# bench/sim/validate_hosts.sh does the same across network-namespace hosts.
#   bash bench/sim/validate.sh [--ranks "2 4 8"] [--sizes "64K 1M 64M"] [--out FILE]
set -uo pipefail
cd "$(dirname "$0")/../.."
source bench/sim/common.sh
ranks_list="2 4 8" sizes="64K 1M 64M" out=""
while [ $# -gt 0 ]; do
    case $1 in
        --ranks) ranks_list=$2; shift ;;
        --sizes) sizes=$2; shift ;;
        --out) out=$2; shift ;;
        *) echo "unknown argument $1"; exit 2 ;;
    esac
    shift
done
bash scripts/setup-deps.sh && bash scripts/build.sh >/dev/null || exit 1
perf=build/bench/perf sim=build/tools/sim/hostccl-sim
logs=$(mktemp -d /tmp/hostccl-simval.XXXXXX)

measure_once() {  # <coll> <family> <ranks> <bytes>
    HCCL_ALGO="$1=level0:NA;level1:$2" "$perf/${1}_perf" -p "$3" -b "$4" -e "$4" $(iterations "$4") 2>/dev/null |
        awk '$1 ~ /^[0-9]+$/ { print $6; exit }'
}

header | tee "$logs/table"
for n in $ranks_list; do
    platform=$logs/platform.$n.json layout="$n $n"
    "$sim" --probe --probe-ranks "$n" > "$platform" || { echo "probe of $n ranks failed"; exit 1; }
    for point in $points; do
        IFS=: read -r coll family name <<< "$point"
        for size in $sizes; do
            b=$(bytes "$size")
            row "$coll" "$name" "$b" "$(best_of_3 measure_once "$coll" "$family" "$n" "$b")" "$(predict "$coll" "$name" "$b")" |
                tee -a "$logs/table"
        done
    done
done
summary "$logs/table" | tee -a "$logs/table"
[ -n "$out" ] && cp "$logs/table" "$out"
echo "platforms and table: $logs"
