#!/usr/bin/env bash
# The selector against every algorithm forced (issue 4's benchmark): for each
# configuration and collective, at every size from 8 B to 64 MiB, the time of the
# selector's choice beside the best time any forced algorithm reached, and their ratio.
#   bash bench/selector_sweep.sh [--quick] [--configs "shm2 shm4 ..."] [--out FILE]
# Configurations (thread ranks of one process, started by the perf tools' -p):
#   shm2 shm4 shm8   shared memory on this host
#   tcp2 tcp4        HOSTCCL_TRANSPORT=tcp: every pair over TCP (loopback)
#   hosts2x4         HOSTCCL_HOST_ID=a,a,a,a,b,b,b,b: two emulated hosts, shared memory
#                    inside each, TCP between them
# Every run is done twice and the faster kept (this VM's run-to-run noise is larger
# than the 10 % being checked). Per-size rows go to the raw log; the summary gives,
# per collective, the worst ratio and every size where the choice is > 10 % slower.
set -uo pipefail
cd "$(dirname "$0")/.."
quick=0 out="" configs="shm2 shm4 shm8 tcp2 tcp4 hosts2x4"
while [ $# -gt 0 ]; do
    case $1 in
        --quick) quick=1 ;;
        --out) out=$2; shift ;;
        --configs) configs=$2; shift ;;
        *) echo "unknown argument $1"; exit 2 ;;
    esac
    shift
done
bash scripts/setup-deps.sh && bash scripts/build.sh >/dev/null || exit 1
perf=build/bench/perf
logs=$(mktemp -d /tmp/hostccl-sweep.XXXXXX)
repeats=2; small_iters="-n 30 -w 10"; large_iters="-n 4 -w 1"
[ $quick -eq 1 ] && { repeats=1; small_iters="-n 10 -w 5"; large_iters="-n 2 -w 1"; }

# The families HCCL_ALGO can force for each collective (HCCL's names where it has them).
families() {
    case $1 in
        allreduce) echo "ring H-D_R recursive-doubling fullmesh NHR" ;;
        allgather) echo "ring H-D_R NB fullmesh" ;;
        reducescatter) echo "ring H-D_R fullmesh" ;;
        broadcast) echo "binomial H-D_R fullmesh" ;;
        reduce) echo "binomial fullmesh" ;;
        alltoall) echo "pairwise fullmesh" ;;
    esac
}
# Whether a family can run in a configuration (direct needs one host; the
# hierarchical one, several).
applies() {
    case $2 in
        fullmesh) [[ $1 == shm* ]] ;;
        NHR) [[ $1 == hosts* ]] ;;
        *) true ;;
    esac
}
config_env() {
    case $1 in
        shm*) echo "-p ${1#shm}" ;;
        tcp*) echo "-p ${1#tcp} TRANSPORT" ;;
        hosts2x4) echo "-p 8 HOSTS" ;;
    esac
}

# sweep CONFIG COLL FAMILY: "size time" lines, the best over the repeats.
sweep() {
    local config=$1 coll=$2 family=$3 spec ranks envs=()
    spec=$(config_env "$config")
    ranks=$(echo "$spec" | awk '{print $2}')
    [[ $spec == *TRANSPORT* ]] && envs+=(HOSTCCL_TRANSPORT=tcp)
    [[ $spec == *HOSTS* ]] && envs+=(HOSTCCL_HOST_ID=a,a,a,a,b,b,b,b)
    [ "$family" != auto ] && envs+=("HCCL_ALGO=$coll=level0:NA;level1:$family")
    for k in $(seq $repeats); do
        env -u HCCL_ALGO -u HOSTCCL_DIRECT_MIN_BYTES "${envs[@]}" "$perf/${coll}_perf" -p "$ranks" -c 0 -b 8 -e 2M -f 4 $small_iters
        env -u HCCL_ALGO -u HOSTCCL_DIRECT_MIN_BYTES "${envs[@]}" "$perf/${coll}_perf" -p "$ranks" -c 0 -b 8M -e 64M -f 2 $large_iters
    done 2>/dev/null | awk '$1 ~ /^[0-9]+$/ { t = $6 + 0; if (!($1 in best) || t < best[$1]) best[$1] = t }
                           END { for (s in best) print s, best[s] }' | sort -n
}

summary() {
    echo "Command: \`bash bench/selector_sweep.sh$([ $quick -eq 1 ] && echo ' --quick')\` on $(date -u +%Y-%m-%d), $(nproc) cores."
    echo "Per collective: sizes 8 B to 64 MiB; ratio = time of the selector's choice / best forced time (1.00 = it picked the best)."
    for config in $configs; do
        echo; echo "### $config"; echo
        echo "| collective | sizes | within 10 % | worst ratio (size) | sizes > 10 % slower: ratio |"
        echo "|---|---|---|---|---|"
        for coll in allreduce allgather reducescatter broadcast reduce alltoall; do
            sweep "$config" "$coll" auto >"$logs/$config.$coll.auto"
            local forced=()
            for f in $(families $coll); do
                applies "$config" "$f" || continue
                sweep "$config" "$coll" "$f" >"$logs/$config.$coll.$f"
                forced+=("$f")
            done
            # size auto best best-name ratio, per size
            for f in "${forced[@]}"; do awk -v f="$f" '{print $1, $2, f}' "$logs/$config.$coll.$f"; done |
                awk 'NR == FNR { auto[$1] = $2; next }
                     { if (!($1 in best) || $2 < best[$1]) { best[$1] = $2; name[$1] = $3 } }
                     END { for (s in auto) if (s in best) printf "%s %.2f %.2f %s %.3f\n", s, auto[s], best[s], name[s], auto[s] / best[s] }' \
                    "$logs/$config.$coll.auto" - | sort -n >"$logs/$config.$coll.rows"
            awk -v c="$coll" '{ n++; if ($5 <= 1.10) ok++; if ($5 > worst) { worst = $5; ws = $1 }
                                if ($5 > 1.10) bad = bad sprintf("%s%s B (%s %.1f vs %s %.1f us): %.2f", bad == "" ? "" : "; ", $1, "auto", $2, $4, $3, $5) }
                              END { printf "| %s | %d | %d | %.2f (%s B) | %s |\n", c, n, ok, worst, ws, bad == "" ? "-" : bad }' \
                "$logs/$config.$coll.rows"
        done
    done
}

summary | tee "${out:-/dev/null}"
echo "raw tables (per configuration and collective: size, auto us, best forced us, its family, ratio): $logs"
