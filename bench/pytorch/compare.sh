#!/usr/bin/env bash
# torch.distributed on hostccl against Gloo, back to back in one run (issue 18's table):
#   - dist.all_reduce: busbw at 64 MiB and time at 8 B, 2 and 4 processes, on one host
#     (shared memory) and across two "hosts" (this network namespace and another one,
#     joined by veth: TCP; root only, skipped with the reason otherwise);
#   - the c10d layer's cost: hostccl's own allreduce_perf (processes, the same sizes)
#     against dist.all_reduce on hostccl;
#   - DDP step time of examples/pytorch/ddp_train.py at 2 and 4 processes, with the
#     compute-only step (no gradient communication) for the communication's share;
#   - on torch 2.x, FSDP2 step time of examples/pytorch/fsdp2_transformer.py, with the
#     step of every rank alone (--compute-only) for the communication's share;
#   hostccl both with torch's allocator and with hostccl.torch.use_shareable_memory();
#   all of it under each torch generation: Debian's 1.13 and the torch 2.x venvs of
#   scripts/setup-torch.sh (2.15.0, 2.7.1), each in its own section.
#   bash bench/pytorch/compare.sh [--quick] [--torch VERSION] [--out FILE]
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$PWD quick=0 out="" only=""
while [ $# -gt 0 ]; do
    case $1 in
        --quick) quick=1 ;;
        --torch) only=$2; shift ;;
        --out) out=$2; shift ;;
        *) echo "unknown argument $1"; exit 2 ;;
    esac
    shift
done
bash scripts/setup-deps.sh || exit 1
venvs=$(bash scripts/setup-torch.sh) || exit 1
bash scripts/build.sh -DHOSTCCL_TORCH_PYTHONS="$(paste -sd';' <<<"$venvs")" >/dev/null || exit 1
# "python|package tree|torch version" per torch, Debian's first.
torches=()
for python in /usr/bin/python3 $venvs; do
    version=$("$python" -c 'import torch; print(torch.__version__.split("+")[0])' 2>/dev/null) || continue
    tree=$root/build/python
    [ "$python" = /usr/bin/python3 ] || tree=$root/build/python-torch${version%.*}
    [ -z "$only" ] || [ "$version" = "$only" ] || [ "${version%.*}" = "$only" ] || continue
    torches+=("$python|$tree|$version")
done
[ ${#torches[@]} -gt 0 ] || { echo "no torch matches --torch $only"; exit 2; }
# One compute thread per process for both backends (torch's OpenMP and OpenBLAS pools
# would otherwise spin on cores the other processes need).
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
# glibc returns large freed blocks to the kernel and maps them afresh: every training
# step then page-faults its activations in again, and which way a run goes swings
# its step time from 11 to 55 ms (one process, no communication). Both backends run
# with the heap kept (what jemalloc or tcmalloc would also give).
export MALLOC_MMAP_THRESHOLD_=4294967296 MALLOC_TRIM_THRESHOLD_=4294967296
logs_root=$(mktemp -d /tmp/hostccl-torch-compare.XXXXXX)
large=64M iters_small=2000 iters_large=20 steps=100
[ $quick -eq 1 ] && { large=4M; iters_small=200; iters_large=3; steps=20; }
port() { echo $((20000 + RANDOM % 12000)); }

# Two emulated hosts: ranks in the upper half run in namespace $nsB (bench/netns_agent.sh).
split=0 ipA=127.0.0.1 nsB="" vethA=""
in_host() { local h=$1; shift; if [ -z "$h" ]; then "$@"; else "$root/bench/netns_agent.sh" "$h" "$(printf '%q ' "$@")"; fi; }
host_of() { [ "$split" = 1 ] && [ "$1" -ge $(($2 / 2)) ] && echo "$nsB" || echo ""; }
# Gloo picks its interface by the host name, which the emulated host cannot resolve.
ifname_of() { [ "$split" = 1 ] && { [ -n "$(host_of "$1" "$2")" ] && echo "${vethA}b0" || echo "$vethA"; } || echo lo; }

# hostccl's root info (torch's path) advertises an interface: on the emulated hosts, the veth
# (as Gloo's is named above); on one host the default.
socket_ifname() { [ "$split" = 1 ] && echo "HCCL_SOCKET_IFNAME==$(ifname_of "$1" "$2")"; }

# launch NAME N COMMAND...: one process per rank with env:// variables; rank 0's output in $logs/NAME.
launch() {
    local name=$1 n=$2 p pids=()
    shift 2
    p=$(port)
    for r in $(seq 0 $((n - 1))); do
        in_host "$(host_of $r $n)" env RANK=$r WORLD_SIZE=$n LOCAL_RANK=$r MASTER_ADDR=$ipA MASTER_PORT=$p \
            HOSTCCL_ROOT_ADDR=$ipA:$p GLOO_SOCKET_IFNAME="$(ifname_of $r $n)" $(socket_ifname $r $n) PYTHONPATH="$PYTHONPATH" \
            timeout 600 "$@" >"$logs/$name.$r" 2>&1 &
        pids+=($!)
    done
    local failed=0
    for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
    [ $failed -eq 0 ] || { echo "$name failed:" >&2; cat "$logs/$name".* >&2; }
    mv "$logs/$name.0" "$logs/$name"
}

# Rows of the tables: "bytes time_us busbw" from the torch bench; allreduce_perf's out-of-place columns.
torch_row() { awk -v b="$2" '$1 == b { print $0 }' "$logs/$1"; }  # bytes us GB/s pipe_us pipe_GB/s
# allreduce_perf's in-place columns (time, busbw): dist.all_reduce reduces in place.
perf_row() { awk -v b="$2" '$1 == b { print $1, $10, $12 }' "$logs/$1"; }
bytes_of() { case $1 in *M) echo $(( ${1%M} << 20 )) ;; *) echo "$1" ;; esac; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.2f", a / b; else print "-" }'; }

allreduce_config() {  # allreduce_config LABEL N
    local label=$1 n=$2 tag=$3
    for backend in hostccl gloo; do
        launch "$tag.$backend" $n $python bench/pytorch/allreduce_bench.py --backend $backend --sizes 8,$large \
            --iters-small $iters_small --iters-large $iters_large
    done
    launch "$tag.shareable" $n $python bench/pytorch/allreduce_bench.py --backend hostccl --sizes 8,$large \
        --iters-small $iters_small --iters-large $iters_large --shareable-memory
    # hostccl's own tool as processes (the same transport choice), for the c10d layer's cost.
    launch "$tag.perf_small" $n build/bench/perf/allreduce_perf -b 8 -e 8 -n $iters_small -w 100
    launch "$tag.perf_large" $n build/bench/perf/allreduce_perf -b $large -e $large -n $iters_large -w 2
    local big; big=$(bytes_of $large)
    local hs_us gs_us hl_bw gl_bw hsp_us hlp_bw ps_us pl_bw sl_bw slp_bw
    read -r _ hs_us _ hsp_us _ <<<"$(torch_row $tag.hostccl 8)"
    read -r _ _ sl_bw _ slp_bw <<<"$(torch_row $tag.shareable $big)"
    read -r _ gs_us _ <<<"$(torch_row $tag.gloo 8)"
    read -r _ _ hl_bw _ hlp_bw <<<"$(torch_row $tag.hostccl $big)"
    read -r _ _ gl_bw _ <<<"$(torch_row $tag.gloo $big)"
    read -r _ ps_us _ <<<"$(perf_row $tag.perf_small 8)"
    read -r _ _ pl_bw <<<"$(perf_row $tag.perf_large $big)"
    printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$label" "$hl_bw" "$sl_bw" "$gl_bw" \
        "$(ratio "$hl_bw" "$gl_bw")" "$(ratio "$sl_bw" "$gl_bw")" "$hs_us" "$gs_us" "$(ratio "$gs_us" "$hs_us")" \
        >>"$logs/allreduce.md"
    printf '| %s | %s | %s | %s | %s | %s |\n' "$label" "$hlp_bw" "$slp_bw" "$pl_bw" "$hsp_us" "$ps_us" >>"$logs/overhead.md"
}

ddp_config() {  # ddp_config N
    # Each mode runs three times, interleaved; the fastest run's median counts.
    local n=$1
    for round in 1 2 3; do
        for mode in hostccl shareable gloo compute; do
            local args=(--backend hostccl --steps $steps --print-every 1000 --batch $batch)
            [ $mode = gloo ] && args=(--backend gloo --steps $steps --print-every 1000 --batch $batch)
            [ $mode = shareable ] && args+=(--shareable-memory)
            [ $mode = compute ] && args+=(--no-sync)
            $python examples/pytorch/ddp_train.py --spawn $n --port "$(port)" "${args[@]}" >"$logs/ddp.$n.$mode.$round" 2>&1 ||
                { echo "ddp $mode at $n failed:" >&2; cat "$logs/ddp.$n.$mode.$round" >&2; }
        done
    done
    best() { cat "$logs/ddp.$n.$1".* | grep -o 'median step [0-9.]*' | awk '{print $3}' | sort -g | head -1; }
    runs() { cat "$logs/ddp.$n.$1".* | grep -o 'median step [0-9.]*' | awk '{printf "%s%s", sep, $3; sep=", "}'; }
    local h s g c share
    h=$(best hostccl) s=$(best shareable) g=$(best gloo) c=$(best compute)
    share=$(awk -v g="$g" -v c="$c" 'BEGIN { if (g > 0) printf "%.0f %%", 100 * (g - c) / g; else print "-" }')
    printf '| %d | %d | %s | %s | %s | %s | %s | %s | %s | %s / %s / %s / %s |\n' $n $batch "$h" "$s" "$g" \
        "$(ratio "$g" "$h")" "$(ratio "$g" "$s")" "$c" "$share" \
        "$(runs hostccl)" "$(runs shareable)" "$(runs gloo)" "$(runs compute)" >>"$logs/ddp.md"
}

fsdp_config() {  # fsdp_config N: FSDP2 steps, three interleaved runs per mode, the fastest's median
    local n=$1
    for round in 1 2 3; do
        for mode in hostccl gloo compute; do
            local args=(--spawn $n --backend hostccl --steps $steps --batch $fbatch --width $fwidth --layers 4)
            [ $mode = gloo ] && args[3]=gloo
            [ $mode = compute ] && args+=(--compute-only)
            $python examples/pytorch/fsdp2_transformer.py "${args[@]}" >"$logs/fsdp.$n.$mode.$round" 2>&1 ||
                { echo "fsdp2 $mode at $n failed:" >&2; tail -20 "$logs/fsdp.$n.$mode.$round" >&2; }
        done
    done
    best() { cat "$logs/fsdp.$n.$1".* | grep -o 'median step [0-9.]*' | awk '{print $3}' | sort -g | head -1; }
    local h g c share
    h=$(best hostccl) g=$(best gloo) c=$(best compute)
    share=$(awk -v g="$g" -v c="$c" 'BEGIN { if (g > 0) printf "%.0f %%", 100 * (g - c) / g; else print "-" }')
    printf '| %d | %d x %d | %s | %s | %s | %s | %s |\n' $n $fwidth $fbatch "$h" "$g" "$(ratio "$g" "$h")" "$c" "$share" \
        >>"$logs/fsdp.md"
}

host_b_up() {  # the second emulated host, once (root only)
    [ -n "$nsB" ] && return 0
    [ "$(id -u)" -eq 0 ] || return 1
    local tag=tcmp$$
    ip netns add ${tag}b 2>/dev/null || return 1
    nsB=${tag}b vethA=${tag}a
    trap 'ip netns del "$nsB" 2>/dev/null; ip link del "$vethA" 2>/dev/null' EXIT
    ip link add "$vethA" type veth peer name ${vethA}b0 && ip link set ${vethA}b0 netns "$nsB"
    ip addr add 10.237.0.1/24 dev "$vethA" && ip link set "$vethA" up
    ip -n "$nsB" addr add 10.237.0.2/24 dev ${vethA}b0 && ip -n "$nsB" link set ${vethA}b0 up && ip -n "$nsB" link set lo up
}

bench_torch() {  # the tables of one torch: $python with $PYTHONPATH
    allreduce_config "shared memory, 2 processes" 2 shm2
    allreduce_config "shared memory, 4 processes" 4 shm4
    if host_b_up; then
        split=1 ipA=10.237.0.1
        allreduce_config "TCP, two namespaces, 2 processes (1 per host)" 2 tcp2
        allreduce_config "TCP, two namespaces, 4 processes (2 per host)" 4 tcp4
        split=0 ipA=127.0.0.1
    else
        echo "| TCP between network namespaces | skipped: needs root and ip netns | | | | | |" >>"$logs/allreduce.md"
    fi
    # Batch 32, the example's default, then 8: the same gradients against a quarter of the compute.
    for batch in 32 8; do
        ddp_config 2
        ddp_config 4
    done
    if [ "${version%%.*}" -ge 2 ]; then
        # A transformer of 4 blocks, width 256 (3.2 M parameters), 8 and 2 sequences a rank.
        fwidth=256
        for fbatch in 8 2; do
            fsdp_config 2
            fsdp_config 4
        done
    fi
}

section() {  # the tables of one torch, as markdown
    echo "## torch.distributed on torch $version: hostccl against Gloo ($(date -u +%Y-%m-%d), $(nproc --all) cores)"
    echo
    echo "dist.all_reduce of float32, SUM, each op waited for before the next (as programs call it):"
    echo "busbw (GB/s) at $large, time (us) at 8 B, the slowest rank's."
    echo
    echo "hostccl with torch's allocator, then with hostccl.torch.use_shareable_memory() (\"shareable\")."
    echo
    echo "| configuration | hostccl busbw | shareable busbw | Gloo busbw | ratio | ratio (shareable) | hostccl 8 B us | Gloo 8 B us | Gloo / hostccl |"
    echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
    cat "$logs/allreduce.md"
    echo
    echo "The c10d layer's cost: dist.all_reduce(async_op=True) on hostccl, $iters_small (8 B) or $iters_large ($large)"
    echo "ops issued and the last waited for, against hostccl's allreduce_perf in place (processes, the same"
    echo "transport, its buffers from aclrtMalloc), which times its loop the same way."
    echo
    echo "| configuration | torch busbw | torch busbw (shareable) | allreduce_perf busbw | torch 8 B us | allreduce_perf 8 B us |"
    echo "| --- | --- | --- | --- | --- | --- |"
    cat "$logs/overhead.md"
    echo
    echo "DDP step (examples/pytorch/ddp_train.py: a CNN of 824 thousand parameters, the batch per process as"
    echo "given, one bucket; rank 0's median ms over $steps steps after 10 warm-up, the fastest of three runs);"
    echo "compute = the same steps without gradient communication; share = Gloo's communication share of its"
    echo "step; then every run."
    echo
    echo "| processes | batch | hostccl ms | shareable ms | Gloo ms | Gloo / hostccl | Gloo / shareable | compute ms | communication share (Gloo) | runs: hostccl / shareable / Gloo / compute |"
    echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
    cat "$logs/ddp.md"
    [ -f "$logs/fsdp.md" ] || return 0
    echo
    echo "FSDP2 step (examples/pytorch/fsdp2_transformer.py, every block and the model sharded; rank 0's"
    echo "median ms over $steps steps after 3, the fastest of three runs); compute = every rank training"
    echo "alone (--compute-only), share = Gloo's communication share of its step."
    echo
    echo "| processes | width x sequences per rank | hostccl ms | Gloo ms | Gloo / hostccl | compute ms | communication share (Gloo) |"
    echo "| --- | --- | --- | --- | --- | --- | --- |"
    cat "$logs/fsdp.md"
}

for entry in "${torches[@]}"; do
    IFS='|' read -r python tree version <<<"$entry"
    export PYTHONPATH=$tree
    logs=$logs_root/torch-$version
    mkdir -p "$logs"
    bench_torch
    section >"$logs/section.md"
done
cat "$logs_root"/torch-*/section.md | tee ${out:+"$out"}
echo "logs: $logs_root"
