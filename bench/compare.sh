#!/usr/bin/env bash
# hostccl against Open MPI, MPICH and Gloo, back to back on this machine.
# Per configuration and collective: busbw at 64 MiB and time at the smallest size
# (8 B; 8 B per rank for the gathered collectives), the best peer, the ratios, and
# hostccl's busbw as a fraction of memcpy bandwidth measured in the same run. Small
# sizes: the median of 9 runs per library, and hostccl's p90/median across them.
# Over TCP also the raw limit in the same run (bench/peers/tcp_raw: as many process
# pairs across the two hosts as there are ranks per host, several streams, both
# directions at once and one way) and, per collective, the bytes it must move across the hosts in each
# direction per call over its 64 MiB time, against that limit.
# The run ends with one verdict line per requirement of issue 19 (met, or missed by how
# much): 8 B at most Open MPI's time on shared memory and the best peer's over TCP,
# p90/median at most 1.3, over TCP at 64 MiB at least 0.8x the raw limit and the best
# peer, and on shared memory at 64 MiB no more than 5 % below the baseline (by default
# bench/compare-baseline.md, the output of an earlier full run: --out writes one).
#   bash bench/compare.sh [--quick] [--configs shm|tcp|all] [--collectives "allgather ..."]
#                         [--small-runs N] [--out FILE] [--baseline FILE]
# Configurations: shared memory (2 and 4 ranks on this host); TCP between two "hosts"
# (2 and 4 ranks): the root namespace and a network namespace joined by veth
# (root only; skipped with the reason otherwise). Peers are installed and built here
# (never by the default build or tests).
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
quick=0 out="" configs=all only="" runs_wanted="" baseline=bench/compare-baseline.md
while [ $# -gt 0 ]; do
    case $1 in
        --quick) quick=1 ;;
        --out) out=$2; shift ;;
        --configs) configs=$2; shift ;;  # shm, tcp or all
        --collectives) only=$2; shift ;;  # e.g. "allgather broadcast" (default: all seven)
        --small-runs) runs_wanted=$2; shift ;;  # runs per small size (default 9; --quick 3)
        --baseline) baseline=$2; shift ;;  # an earlier run's output: 64 MiB shared-memory figures
        *) echo "unknown argument $1"; exit 2 ;;
    esac
    shift
done

packages=(openmpi-bin libopenmpi-dev mpich libmpich-dev libgloo-dev)
missing=()
for p in "${packages[@]}"; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
    echo "installing ${missing[*]}"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null || exit 1
fi
bash scripts/setup-deps.sh && bash scripts/build.sh >/dev/null || exit 1
cmake -S bench/peers -B build-peers >/dev/null && cmake --build build-peers -j2 >/dev/null || exit 1
perf=$root/build/bench/perf peers=$root/build-peers
logs=$(mktemp -d /tmp/hostccl-compare.XXXXXX)
collectives=(allreduce allgather reducescatter broadcast reduce alltoall barrier)
[ -n "$only" ] && read -r -a collectives <<< "$only"
large=$((64 << 20)); iters_large=10; iters_small=500; small_runs=9
[ $quick -eq 1 ] && { large=$((4 << 20)); iters_large=3; iters_small=50; small_runs=3; }
[ -n "$runs_wanted" ] && small_runs=$runs_wanted

memcpy=$("$peers/memcpy_bw" | awk '{print $(NF-3)}')

# Field of the first data row of a table: 6 = out-of-place time (us), 8 = busbw.
# Small sizes run $small_runs times (suffixes .1 .2 ...): their median is taken.
field() {
    if [ -f "$1" ]; then awk -v f="$2" '$1 ~ /^[0-9]+$/ { print $f; exit }' "$1"; return; fi
    runs_of "$1" "$2" | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'
}
runs_of() {  # every run's value of field $2, sorted
    local k
    for k in $(seq 1 "$small_runs"); do awk -v f="$2" '$1 ~ /^[0-9]+$/ { print $f; exit }' "$1.$k" 2>/dev/null; done | sort -g
}
# p90 / median of the runs' times (1.00: every run alike)
spread() {
    runs_of "$1" 6 | awk '{ v[NR] = $1 } END { if (!NR) exit; m = v[int((NR + 1) / 2)]; p = v[int(NR * 0.9 + 0.999)]; if (m > 0) printf "%.2f", p / m }'
}
small_size() { case $1 in allgather|reducescatter|alltoall) echo $((8 * $2)) ;; *) echo 8 ;; esac; }
# A peer that takes longer than this for one run shows no value (it timed out).
run_timeout=${HOSTCCL_COMPARE_TIMEOUT:-120}
port() { echo $((20000 + RANDOM % 12000)); }
# Every library gets the same warm-up: 100 calls of a small size (hostccl's first
# few dozen calls after init are slow), 2 of a large one.
warmup_for() { if [ "$1" -ge 1048576 ]; then echo 2; else echo 100; fi; }

# run_<library> NAME RANKS TRANSPORT COLLECTIVE SIZE ITERS: writes the table to $logs/NAME.
# Ranks go round-robin over the hosts in $hosts ("" = this namespace).
in_host() { local h=$1; shift; if [ -z "$h" ]; then "$@"; else "$root/bench/netns_agent.sh" "$h" "$(printf '%q ' "$@")"; fi; }
host_of() { local r=$1 n=$2; [ "$tcp_split" = 1 ] && [ $r -ge $((n / 2)) ] && echo "$nsB" || echo ""; }

run_hostccl() {
    local name=$1 n=$2 transport=$3 coll=$4 size=$5 iters=$6 p pids=()
    p=$(port)
    for r in $(seq 0 $((n - 1))); do
        in_host "$(host_of $r $n)" env RANK=$r WORLD_SIZE=$n LOCAL_RANK=$r HOSTCCL_ROOT_ADDR=$root_ip:$p \
            $( [ "$transport" = tcp ] && [ "$tcp_split" = 0 ] && echo HOSTCCL_TRANSPORT=tcp ) \
            timeout $run_timeout "$perf/${coll}_perf" -b $size -e $size -n $iters -w $(warmup_for $size) >"$logs/$name.$r" 2>&1 &
        pids+=($!)
    done
    wait "${pids[@]}"; mv "$logs/$name.0" "$logs/$name"
}
run_openmpi() {
    local name=$1 n=$2 transport=$3 coll=$4 size=$5 iters=$6
    local btl=self,vader; [ "$transport" = tcp ] && btl=self,tcp,vader
    local args=(--allow-run-as-root --oversubscribe --mca btl $btl)
    if [ "$tcp_split" = 1 ]; then  # one launcher daemon per emulated host (netns_agent.sh)
        printf 'localhost slots=%d\n%s slots=%d\n' $((n / 2)) "$nsB" $((n / 2)) >"$logs/hosts.openmpi"
        # Each daemon binds its ranks from core 0 up, so the two "hosts" would stack
        # their ranks on the same cores of this one machine (4 ms per 8-byte call: a
        # busy-polling rank holds the core for a whole time slice): no binding.
        # Two ranks per emulated host are four on two cores: let Open MPI yield while it
        # polls, as --oversubscribe does on one host (MPICH has no such switch).
        args+=(--bind-to none --mca mpi_yield_when_idle 1 --mca pml ob1 --hostfile "$logs/hosts.openmpi" --mca plm_rsh_agent "$root/bench/netns_agent.sh"
               --mca oob_tcp_if_include $subnet --mca btl_tcp_if_include $subnet)
        timeout $run_timeout mpirun.openmpi "${args[@]}" -np $n "$peers/mpi_perf_openmpi" $coll -b $size -e $size -n $iters -w $(warmup_for $size) >"$logs/$name" 2>&1
    else
        [ "$transport" = tcp ] && args=(--allow-run-as-root --oversubscribe --mca pml ob1 --mca btl self,tcp)
        timeout $run_timeout mpirun.openmpi "${args[@]}" -np $n "$peers/mpi_perf_openmpi" $coll -b $size -e $size -n $iters -w $(warmup_for $size) >"$logs/$name" 2>&1
    fi
}
run_mpich() {
    local name=$1 n=$2 transport=$3 coll=$4 size=$5 iters=$6
    # Debian's MPICH is ch4:ucx, and UCX uses shared memory between processes of one
    # machine even across network namespaces: over TCP it is pinned to TCP on the
    # veth devices (this also puts same-host pairs on TCP).
    local env=(); [ "$transport" = tcp ] && env=(env UCX_TLS=tcp,self UCX_NET_DEVICES=${tcp_devices:-lo})
    if [ "$tcp_split" = 1 ]; then
        printf 'localhost:%d\n%s:%d\n' $((n / 2)) "$nsB" $((n / 2)) >"$logs/hosts.mpich"
        timeout $run_timeout "${env[@]}" mpiexec.mpich -launcher ssh -launcher-exec "$root/bench/netns_agent.sh" -f "$logs/hosts.mpich" \
            -genvall -iface "$vethA" -n $n "$peers/mpi_perf_mpich" $coll -b $size -e $size -n $iters -w $(warmup_for $size) \
            $( [ "$size" -ge 1048576 ] && echo --no-finalize ) >"$logs/$name" 2>&1
    else
        timeout $run_timeout "${env[@]}" mpiexec.mpich -n $n "$peers/mpi_perf_mpich" $coll -b $size -e $size -n $iters -w $(warmup_for $size) >"$logs/$name" 2>&1
    fi
}
run_gloo() {
    local name=$1 n=$2 coll=$4 size=$5 iters=$6 store pids=()
    store=$(mktemp -d /tmp/hostccl-gloo.XXXXXX)
    for r in $(seq 0 $((n - 1))); do
        local h; h=$(host_of $r $n)
        local ip=127.0.0.1; [ "$tcp_split" = 1 ] && { [ -n "$h" ] && ip=$ipB || ip=$ipA; }
        in_host "$h" timeout $run_timeout "$peers/gloo_perf" $coll --rank $r --size $n --store "$store" --host $ip \
            -b $size -e $size -n $iters -w $(warmup_for $size) >"$logs/$name.$r" 2>&1 &
        pids+=($!)
    done
    wait "${pids[@]}"; mv "$logs/$name.0" "$logs/$name"; rm -rf "$store"
}

report_line() {  # collective, then per library the two logs
    local coll=$1
    local hb ht best_b=0 best_bn=- best_t=0 best_tn=-
    hb=$(field "$logs/hostccl.$coll.large" 8); ht=$(field "$logs/hostccl.$coll.small" 6)
    local hs; hs=$(spread "$logs/hostccl.$coll.small")
    for lib in openmpi mpich gloo; do
        local b t
        b=$(field "$logs/$lib.$coll.large" 8); t=$(field "$logs/$lib.$coll.small" 6)
        if [ -n "$b" ] && awk -v a="$b" -v m="$best_b" 'BEGIN{exit !(a>m)}'; then best_b=$b; best_bn=$lib; fi
        if [ -n "$t" ] && { [ "$best_tn" = - ] || awk -v a="$t" -v m="$best_t" 'BEGIN{exit !(a<m)}'; }; then best_t=$t; best_tn=$lib; fi
    done
    local ompi; ompi=$(field "$logs/openmpi.$coll.small" 6)
    awk -v c="$coll" -v hb="${hb:-0}" -v bb="$best_b" -v bn="$best_bn" -v ht="${ht:-0}" -v bt="$best_t" -v tn="$best_tn" -v m="$memcpy" \
        -v hs="${hs:-?}" -v om="${ompi:-0}" \
        'BEGIN { if (c == "barrier") printf "| %-13s | %7s | %7s %-7s | %6s | %5s ", c, "-", "-", "", "-", "-"
                 else printf "| %-13s | %7.2f | %7.2f %-7s | %5.2fx | %5.2f ", c, hb, bb, bn, (bb>0?hb/bb:0), (m>0?hb/m:0)
                 printf "| %9.2f | %4s | %9.2f %-7s | %6.2fx | %6.2fx |\n", ht, hs, bt, tn, (ht>0?bt/ht:0), (ht>0?om/ht:0) }'
    small_verdicts "$coll" "$ht" "$hs" "$ompi" "$best_t" "$best_tn" "$hb"
}

# The bytes a collective of `size` must move from one host to the other (in each
# direction; broadcast and reduce: one way) when n ranks are split evenly over two hosts:
# allreduce the whole vector (half reduced each way, then the sums back), broadcast and
# reduce the whole vector toward the root's host or away from it, the
# gathered / scattered collectives the other host's half, alltoall each rank's blocks
# for the other host's n/2 ranks.
cut_bytes() {  # collective ranks size
    case $1 in
        allreduce|broadcast|reduce) echo "$3" ;;
        allgather|reducescatter) echo $(($3 / 2)) ;;
        alltoall) echo $(($3 * $2 / 4)) ;;
    esac
}

# The raw TCP limit between the two hosts with n/2 process pairs, each pair `streams`
# connections; both ways at once, or only toward host B (oneway). Prints GB/s per
# direction: the sum of what host B's processes received per second.
raw_tcp() {  # ranks streams [--oneway]
    local pairs=$(($1 / 2)) p pids=() i
    p=$(port)
    for i in $(seq 0 $((pairs - 1))); do
        in_host "$nsB" timeout $run_timeout "$peers/tcp_raw" --listen $((p + i)) --streams "$2" --mib 512 ${3:-} >"$logs/raw.b.$i" 2>&1 &
        pids+=($!)
    done
    sleep 0.3
    for i in $(seq 0 $((pairs - 1))); do
        timeout $run_timeout "$peers/tcp_raw" --connect "$ipB:$((p + i))" --streams "$2" --mib 512 ${3:-} >"$logs/raw.a.$i" 2>&1 &
        pids+=($!)
    done
    wait "${pids[@]}"
    cat "$logs"/raw.b.* | awk '{ s += $5 } END { printf "%.3f", s }'
    rm -f "$logs"/raw.[ab].*
}
best_raw() {  # ranks [--oneway]: the best of 1, 2 and 4 streams per pair, each twice
    local best=0 s k r
    for s in 1 2 4; do for k in 1 2; do
        r=$(raw_tcp "$1" $s ${2:-})
        awk -v a="$r" -v b="$best" 'BEGIN { exit !(a > b) }' && best=$r
    done; done
    echo "$best"
}

# Per collective over TCP: hostccl's bytes across the hosts per second at the large
# size against the raw limit (both ways at once; broadcast and reduce one way), and the best peer's.
raw_lines() {  # ranks both_ways_GBps one_way_GBps
    local n=$1 coll
    echo
    echo "Raw TCP limit between the hosts ($((n / 2)) process pairs, best of 1, 2 and 4 streams each): $2 GB/s per direction both ways at once, $3 GB/s one way."
    echo
    echo "| collective | bytes across per direction | hostccl GB/s | of raw | best peer GB/s | requirement (>= 0.8x raw, >= best peer) |"
    echo "|---|---|---|---|---|---|"
    for coll in "${collectives[@]}"; do
        [ $coll = barrier ] && continue
        local cut t raw=$2 best=0 lib pt line
        cut=$(cut_bytes $coll $n $large)
        case $coll in broadcast|reduce) raw=$3 ;; esac
        t=$(field "$logs/$label_dir/hostccl.$coll.large" 6)
        for lib in openmpi mpich gloo; do
            pt=$(field "$logs/$label_dir/$lib.$coll.large" 6)
            [ -n "$pt" ] && awk -v a="$pt" -v b="$best" 'BEGIN { exit !(b == 0 || a < b) }' && best=$pt
        done
        line=$(awk -v c=$coll -v cut=$cut -v t="${t:-0}" -v raw="$raw" -v pt="$best" 'BEGIN {
            h = t > 0 ? cut / t / 1e3 : 0; p = pt > 0 ? cut / pt / 1e3 : 0; r = raw > 0 ? h / raw : 0
            printf "| %-13s | %d MiB | %6.3f | %5.2fx | %6.3f | %s |\n", c, cut / 1048576, h, r, p, (r >= 0.8 && h >= p ? "met" : "not met") }')
        echo "$line"
        echo "$line" | awk -F'|' -v l="$label" -v c=$coll '{ gsub(/[ x]/, "", $5); gsub(/ /, "", $4); gsub(/ /, "", $6)
            need = $4 + 0 > 0 ? 0.8 * $4 / $5 : 0; if ($6 + 0 > need) need = $6 + 0
            v = ($5 + 0 >= 0.8 && $4 + 0 >= $6 + 0) ? "met" : sprintf("missed by %.0f %%", 100 * (1 - ($4 + 0) / need))
            printf "| 64 MiB over TCP >= 0.8x raw and >= best peer | %s | %s | %s GB/s, %sx raw, best peer %s | %s |\n", l, c, $4, $5, $6, v }' >>"$logs/verdicts"
    done
}

# Verdicts, one line each (requirement, configuration, collective, figure, verdict),
# collected in $logs/verdicts and printed at the end.
verdict() { printf '| %s | %s | %s | %s | %s |\n' "$@" >>"$logs/verdicts"; }
judge() {  # value limit lower|higher: "met" or "missed by N %" (n/a without both numbers)
    awk -v v="$1" -v l="$2" -v d="$3" 'BEGIN {
        if (v == "" || l == "" || v + 0 <= 0 || l + 0 <= 0) { print "n/a (no figure)"; exit }
        if (d == "lower") print (v + 0 <= l + 0 ? "met" : sprintf("missed by %.0f %%", 100 * (v / l - 1)))
        else print (v + 0 >= l + 0 ? "met" : sprintf("missed by %.0f %%", 100 * (1 - v / l))) }'
}
# hostccl's 64 MiB busbw for a configuration and collective in the baseline run's tables.
baseline_busbw() {  # label collective
    [ -f "$baseline" ] || return 0
    awk -v l="### $1" -v c="$2" '$0 == l { sect = 1; next } /^###/ { sect = 0 } sect && $1 == "|" && $2 == c { print $4; exit }' "$baseline"
}
# The baseline run's memcpy figure (how fast this machine was that day).
baseline_memcpy() { [ -f "$baseline" ] && awk '/^memcpy of 64 MiB/ { print $(NF-3); exit }' "$baseline"; }
small_verdicts() {  # collective time spread open_mpi_time best_peer_time best_peer busbw
    local coll=$1 ht=$2 hs=$3 om=$4 bt=$5 bn=$6 hb=$7 base
    if [ "$transport" = shm ]; then
        verdict "8 B <= 1.0x Open MPI's time" "$label" "$coll" "$ht us, Open MPI ${om:-?} us" "$(judge "$ht" "$om" lower)"
    else
        verdict "8 B <= 1.0x the best peer's time" "$label" "$coll" "$ht us, $bn $bt us" "$(judge "$ht" "$bt" lower)"
    fi
    verdict "8 B p90/median <= 1.3 over $small_runs runs" "$label" "$coll" "$hs" "$(judge "$hs" 1.3 lower)"
    [ "$transport" = shm ] && [ "$coll" != barrier ] || return 0
    base=$(baseline_busbw "$label" "$coll")
    if [ -z "$base" ]; then
        verdict "64 MiB busbw >= 0.95x the baseline" "$label" "$coll" "$hb GB/s" "n/a (no baseline figure in $baseline)"
    else
        verdict "64 MiB busbw >= 0.95x the baseline" "$label" "$coll" "$hb GB/s (memcpy $memcpy), baseline $base (memcpy $(baseline_memcpy))" \
            "$(judge "$hb" "$(awk -v b="$base" 'BEGIN { print 0.95 * b }')" higher)"
    fi
}

run_config() {  # label ranks transport
    local label=$1 n=$2 transport=$3
    label_dir=$(echo "$label" | tr -c 'a-zA-Z0-9\n' '_')
    echo; echo "### $label"; echo
    echo "| collective | hostccl busbw GB/s | best peer busbw | hostccl/peer | hostccl/memcpy | hostccl time us | p90/median | best peer time | peer/hostccl time | Open MPI/hostccl time |"
    echo "|---|---|---|---|---|---|---|---|---|---|"
    for coll in "${collectives[@]}"; do
        local small; small=$(small_size $coll $n)
        for lib in hostccl openmpi mpich gloo; do
            [ $coll != barrier ] && "run_$lib" "$lib.$coll.large" $n $transport $coll $large $iters_large
            for k in $(seq 1 $small_runs); do
                "run_$lib" "$lib.$coll.small.$k" $n $transport $coll $small $iters_small
                # A peer's run that timed out (no row) would time out again: one is enough.
                [ $lib != hostccl ] && [ -z "$(awk '$1 ~ /^[0-9]+$/ { print; exit }' "$logs/$lib.$coll.small.$k" 2>/dev/null)" ] && break
            done
        done
        report_line $coll
        mkdir -p "$logs/$label_dir" && mv "$logs"/*."$coll".* "$logs/$label_dir/" 2>/dev/null
    done
    [ "$transport" = tcp ] && [ "$tcp_split" = 1 ] && raw_lines $n "$(best_raw $n)" "$(best_raw $n --oneway)"
    return 0
}

{
echo "Command: \`bash bench/compare.sh$([ $quick -eq 1 ] && echo ' --quick')\` on $(date -u +%Y-%m-%d), $(nproc) cores."
echo "memcpy of 64 MiB with every core copying: $memcpy GB/s per core. Large size: $((large >> 20)) MiB; times at 8 B (8 B per rank for gathered collectives)."
echo "Ratios: busbw hostccl/best peer (higher is better); time best peer/hostccl (higher is better). Small-size times: median of $small_runs runs; p90/median is hostccl's spread across them."
tcp_split=0 root_ip=127.0.0.1
if [ "$configs" != tcp ]; then
    run_config "shared memory, 2 ranks" 2 shm
    run_config "shared memory, 4 ranks on $(nproc) cores" 4 shm
fi
tag=hcmp$$ nsB=${tag}b vethA=${tag}a subnet=10.232.0.0/24 ipA=10.232.0.1 ipB=10.232.0.2
if [ "$configs" = shm ]; then
    :
elif [ "$(id -u)" -eq 0 ] && ip netns add "$nsB" 2>/dev/null; then
    trap 'ip netns del "$nsB" 2>/dev/null; ip link del "$vethA" 2>/dev/null' EXIT
    ip link add "$vethA" type veth peer name ${tag}b0 && ip link set ${tag}b0 netns "$nsB"
    ip addr add $ipA/24 dev "$vethA" && ip link set "$vethA" up
    ip -n "$nsB" addr add $ipB/24 dev ${tag}b0 && ip -n "$nsB" link set ${tag}b0 up && ip -n "$nsB" link set lo up
    tcp_split=1 root_ip=$ipA tcp_devices=$vethA,${tag}b0
    run_config "TCP between two network namespaces, 2 ranks (1 per host)" 2 tcp
    run_config "TCP between two network namespaces, 4 ranks (2 per host)" 4 tcp
else
    echo; echo "TCP between network namespaces: skipped (needs root and ip netns)."
fi
echo; echo "### Verdicts"; echo
echo "| requirement | configuration | collective | figure | verdict |"
echo "|---|---|---|---|---|"
cat "$logs/verdicts" 2>/dev/null
echo
awk -F'|' '{ v = $6; gsub(/^ +| +$/, "", v); if (v == "met") m++; else if (v ~ /^missed/) x++; else u++ }
    END { printf "Verdicts: %d met, %d missed, %d without a figure.\n", m, x, u }' "$logs/verdicts" 2>/dev/null
} | tee "${out:-/dev/null}"
echo "raw tables: $logs"
