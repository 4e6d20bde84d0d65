#!/usr/bin/env bash
# The simulator against measured runs (issue 17's validation): for each layout,
# collective, algorithm and size, the time the perf tools measure with the algorithm
# forced by HCCL_ALGO, and the time hostccl-sim predicts for the same algorithm on
# the platform --probe measured for that layout. Prints one row per point with the
# error, then the share of points within 15 %.
#   bash bench/sim/validate.sh [--ranks "2 4 8"] [--sizes "64K 1M 64M"] [--out FILE]
# Layouts: ranks as threads of one process on this host (-p N). Times: the perf
# tool's out-of-place average, best of 3 runs.
set -uo pipefail
cd "$(dirname "$0")/../.."
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

# collective:HCCL_ALGO family:the simulator's name for it
points="allreduce:ring:ring allreduce:H-D_R:halving-doubling allreduce:recursive-doubling:recursive-doubling
allgather:ring:ring allgather:H-D_R:halving-doubling reducescatter:ring:ring reducescatter:H-D_R:halving-doubling
broadcast:binomial:binomial broadcast:H-D_R:scatter-allgather alltoall:pairwise:pairwise alltoall:NB:bruck"

bytes() { case $1 in *K) echo $((${1%K} * 1024)) ;; *M) echo $((${1%M} * 1048576)) ;; *) echo "$1" ;; esac; }

# measured <coll> <family> <ranks> <size>: the best average time (us) of 3 runs
measured() {
    local best="" t
    for _ in 1 2 3; do
        t=$(HCCL_ALGO="$1=level0:NA;level1:$2" "$perf/${1}_perf" -p "$3" -b "$4" -e "$4" -n 5 -w 2 2>/dev/null |
            awk '$1 ~ /^[0-9]+$/ { print $6; exit }')
        [ -n "$t" ] && { [ -z "$best" ] || awk -v a="$t" -v b="$best" 'BEGIN { exit !(a < b) }'; } && best=$t
    done
    echo "${best:-nan}"
}

printf "%-14s %5s %9s %-20s %12s %12s %8s\n" collective ranks bytes algorithm measured_us predicted_us error | tee "$logs/table"
for n in $ranks_list; do
    "$sim" --probe --probe-ranks "$n" > "$logs/platform.$n.json" || { echo "probe of $n ranks failed"; exit 1; }
    for point in $points; do
        IFS=: read -r coll family name <<< "$point"
        for size in $sizes; do
            b=$(bytes "$size")
            m=$(measured "$coll" "$family" "$n" "$b")
            p=$("$sim" --platform "$logs/platform.$n.json" -n "$n" --ranks-per-host "$n" -c "$coll" -b "$b" -a "$name" |
                awk -v c="$coll" '$1 == c { print $7; exit }')
            err=$(awk -v m="$m" -v p="$p" 'BEGIN { if (m == "nan" || p == "" || m == 0) print "nan"; else printf "%+.1f%%", (p - m) / m * 100 }')
            printf "%-14s %5s %9s %-20s %12s %12s %8s\n" "$coll" "$n" "$b" "$name" "$m" "${p:-nan}" "$err" | tee -a "$logs/table"
        done
    done
done
awk 'NR > 1 && $7 != "nan" { v = $7; sub(/%/, "", v); if (v < 0) v = -v; total++; if (v <= 15) ok++ }
     END { printf "within 15 %%: %d of %d points\n", ok, total }' "$logs/table" | tee -a "$logs/table"
[ -n "$out" ] && cp "$logs/table" "$out"
echo "platforms and table: $logs"
