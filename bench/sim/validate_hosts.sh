#!/usr/bin/env bash
# The simulator against measured runs across emulated hosts (issue 17's validation):
# HOSTS network namespaces joined by a bridge, each link shaped to RATE each way with
# tc tbf (or unshaped), RANKS_PER_HOST processes per host started with launcher
# variables. Per collective, algorithm (forced with HCCL_ALGO; the hierarchical ones
# too) and size: rank 0's measured time (best of 3) and hostccl-sim's prediction on
# the platform --probe measured on the same layout unshaped, with the shaper's rate as
# the NIC bandwidth. Needs root (ip netns, tc).
#   bash bench/sim/validate_hosts.sh [--hosts "2 4"] [--ranks-per-host 4] [--rates "1gbit none"]
#                                    [--sizes "64K 1M 64M"] [--out FILE]
set -uo pipefail
cd "$(dirname "$0")/../.."
source bench/sim/common.sh
hosts_list="2 4" per_host=4 rates="1gbit none" sizes="64K 1M 64M" out=""
while [ $# -gt 0 ]; do
    case $1 in
        --hosts) hosts_list=$2; shift ;;
        --ranks-per-host) per_host=$2; shift ;;
        --rates) rates=$2; shift ;;
        --sizes) sizes=$2; shift ;;
        --out) out=$2; shift ;;
        *) echo "unknown argument $1"; exit 2 ;;
    esac
    shift
done
[ "$(id -u)" -eq 0 ] || { echo "skipped: needs root for ip netns and tc"; exit 0; }
bash scripts/setup-deps.sh && bash scripts/build.sh >/dev/null || exit 1
root=$PWD perf=$PWD/build/bench/perf sim=$PWD/build/tools/sim/hostccl-sim
logs=$(mktemp -d /tmp/hostccl-simhosts.XXXXXX)
hosts_tag=sv$$
source bench/emulated_hosts.sh
trap emulated_hosts_down EXIT

# hosts <count> <rate>: namespaces $hosts_tag0.. at 10.236.0.1.., each veth shaped both ways
hosts() {
    emulated_hosts_up "$1" "$2" || exit 1
}

# launch <n> <program...>: one process per rank on its host; rank 0's output on stdout
launch() {
    local n=$1
    shift
    emulated_launch "$n" "$per_host" "$logs" "$@"
    cat "$logs/rank.0"
}

measure_once() {  # <coll> <family> <bytes>
    read -r n _ <<< "$layout"
    launch "$n" env HCCL_ALGO="$1=level0:NA;level1:$2" "$perf/${1}_perf" -b "$3" -e "$3" $(iterations "$3") |
        awk '$1 ~ /^[0-9]+$/ { print $6; exit }'
}

# The platform is probed on the unshaped hosts: its links are the stack's own rates,
# and a shaper is the hosts' NIC rate (a flow measured through tbf is the shaper's
# rate, partly its burst, not the flow's).
header | tee "$logs/table"
for h in $hosts_list; do
    n=$((h * per_host)) layout="$((h * per_host)) $per_host" platform=$logs/platform.$h.json
    # The emulated hosts share this machine's cores: each gets its part (below one
    # core, one core at that part of its speed).
    cores=(--cores "$(awk -v n="$(nproc)" -v h="$h" 'BEGIN { c = n / h; if (c >= 1) c = int(c); printf "%g", c }')")
    hosts "$h" none
    launch "$n" "$sim" --probe > "$platform"
    grep -q '"hosts"' "$platform" || { cat "$platform" "$logs"/rank.*; echo "probe on $h hosts failed"; exit 1; }
    for rate in $rates; do
        nic=()
        [ "$rate" != none ] && nic=(--nic-GBps "$(awk -v r="$rate" 'BEGIN { v = r + 0; if (r ~ /gbit/) v *= 1e9; else if (r ~ /mbit/) v *= 1e6; printf "%g", v / 8e9 }')")
        hosts "$h" "$rate"
        echo "# $h hosts x $per_host ranks, ${cores[1]} cores each, rate $rate" | tee -a "$logs/table"
        for point in $points $hierarchical_points; do
            IFS=: read -r coll family name <<< "$point"
            for size in $sizes; do
                b=$(bytes "$size")
                row "$coll" "$name" "$b" "$(best_of_3 measure_once "$coll" "$family" "$b")" \
                    "$(predict "$coll" "$name" "$b" "${nic[@]}" "${cores[@]}")" | tee -a "$logs/table"
            done
        done
    done
done
summary "$logs/table" | tee -a "$logs/table"
[ -n "$out" ] && cp "$logs/table" "$out"
echo "platforms, table and rank logs: $logs"
