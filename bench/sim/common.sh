# Shared by validate.sh (ranks as threads here) and validate_hosts.sh (ranks as
# processes on network-namespace hosts): the points, the prediction and the table.
# The caller defines measure <coll> <family> <bytes> and sets $sim, $logs, $platform
# and $layout ("ranks ranks_per_host").

# collective:HCCL_ALGO family:the simulator's name for it
points="allreduce:ring:ring allreduce:H-D_R:halving-doubling allreduce:recursive-doubling:recursive-doubling
allgather:ring:ring allgather:H-D_R:halving-doubling reducescatter:ring:ring reducescatter:H-D_R:halving-doubling
broadcast:binomial:binomial broadcast:H-D_R:scatter-allgather alltoall:pairwise:pairwise alltoall:NB:bruck"
hierarchical_points="allreduce:NHR:hierarchical allgather:NHR:hierarchical reducescatter:NHR:hierarchical
broadcast:NHR:hierarchical"

# iterations <bytes>: the perf tool's -n and -w for a size. Small ops need many: the
# first iterations after init pay page faults and wake-ups worth 100x their work.
iterations() {
    if [ "$1" -le 1048576 ]; then echo "-n 100 -w 20"; elif [ "$1" -le 16777216 ]; then echo "-n 20 -w 5"; else echo "-n 5 -w 2"; fi
}

bytes() { case $1 in *K) echo $((${1%K} * 1024)) ;; *M) echo $((${1%M} * 1048576)) ;; *) echo "$1" ;; esac; }

# predict <coll> <name> <bytes> [overrides...]: hostccl-sim's time (us) on $platform
predict() {
    local coll=$1 name=$2 b=$3
    shift 3
    read -r n per_host <<< "$layout"
    "$sim" --platform "$platform" -n "$n" --ranks-per-host "$per_host" -c "$coll" -b "$b" -a "$name" "$@" |
        awk -v c="$coll" '$1 == c && $7 ~ /^[0-9.]+$/ { print $7; exit }'
}

header() { printf "%-14s %5s %6s %9s %-20s %12s %12s %8s\n" collective ranks hosts bytes algorithm measured_us predicted_us error; }

# row <coll> <name> <bytes> <measured> <predicted>
row() {
    read -r n per_host <<< "$layout"
    local err
    err=$(awk -v m="$4" -v p="$5" 'BEGIN { if (m == "nan" || p == "" || m == 0) print "nan"; else printf "%+.1f%%", (p - m) / m * 100 }')
    printf "%-14s %5s %6s %9s %-20s %12s %12s %8s\n" "$1" "$n" $((n / per_host)) "$3" "$2" "$4" "${5:-nan}" "$err"
}

summary() {  # summary <table>: how many points are within 15 %
    awk 'NR > 1 && $8 != "nan" && $8 ~ /%$/ { v = $8; sub(/%/, "", v); v = v + 0; if (v < 0) v = -v; total++; if (v <= 15) ok++ }
         END { printf "within 15 %%: %d of %d points\n", ok, total }' "$1"
}

# best_of_3 <command...>: the smallest of three outputs (the command prints one number)
best_of_3() {
    local best="" t
    for _ in 1 2 3; do
        t=$("$@")
        [ -n "$t" ] && { [ -z "$best" ] || awk -v a="$t" -v b="$best" 'BEGIN { exit !(a < b) }'; } && best=$t
    done
    echo "${best:-nan}"
}
