#!/usr/bin/env bash
# hostccl-plan against measured steps across emulated hosts: HOSTS network namespaces
# on a bridge, each link shaped to RATE each way with tc tbf (bench/emulated_hosts.sh),
# PER_HOST train_mlp processes on each started with launcher variables. hostccl-plan
# --probe runs under the same launch (the cluster's links, and the hosts' sharing of
# their cores measured with the job's processes; with one rank a host, the cluster
# probed by hostccl-sim --probe and the sharing by thread ranks here), the hosts given
# their part of this machine's cores; then the first 5 plans and 5 spread over the
# rest run 3 times each, as bench/planner/validate.sh does on one host. With
# --example ddp the model is the PyTorch DDP example's CNN (described with its loss and
# comm hooks and, with as many of its processes as the job, what they cost each other
# on these cores; planned --tp 1 --pp 1 --overlap on, trained with --plan; global batch 64
# unless given), as bench/planner/validate_ddp.sh does on one host. Needs root (ip
# netns, tc).
#   bash bench/planner/validate_hosts.sh [--hosts 2] [--rate 1gbit] [--per-host 2] [--batch 256] [--steps 15] [--runs 3]
#                                        [--example mlp|ddp]
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$PWD hosts=2 rate=1gbit per_host=2 batch= steps= runs=3 example=mlp
model=(--width 256 --hidden 1024 --blocks 4)
while [ $# -gt 0 ]; do
    case $1 in
        --hosts) hosts=$2; shift 2 ;;
        --rate) rate=$2; shift 2 ;;
        --per-host) per_host=$2; shift 2 ;;
        --batch) batch=$2; shift 2 ;;
        --steps) steps=$2; shift 2 ;;
        --runs) runs=$2; shift 2 ;;
        --example) example=$2; shift 2 ;;
        *) echo "validate_hosts.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
[[ $hosts =~ ^[2-9]$ ]] || { echo "validate_hosts.sh: --hosts must be 2-9" >&2; exit 2; }
[[ $example =~ ^(mlp|ddp)$ ]] || { echo "validate_hosts.sh: --example must be mlp or ddp" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "skipped: needs root for ip netns and tc"; exit 0; }
build=${HOSTCCL_BUILD:-$root/build}
mlp=$build/examples/train_mlp plan=$build/tools/plan/hostccl-plan sim=$build/tools/sim/hostccl-sim py=/usr/bin/python3
ddp=$root/examples/pytorch/ddp_train.py plan_only=()
if [ "$example" = ddp ]; then
    batch=${batch:-64} steps=${steps:-40} model=(--width 8) plan_only=(--tp 1 --pp 1 --overlap on)
    # Steady step times on CPUs, as validate_ddp.sh runs them.
    export PYTHONPATH=$build/python OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MALLOC_MMAP_THRESHOLD_=4294967296 MALLOC_TRIM_THRESHOLD_=4294967296
fi
batch=${batch:-256} steps=${steps:-15}
source "$root/bench/planner/common.sh"
hosts_tag=vh$$
source "$root/bench/emulated_hosts.sh"
dir=$(mktemp -d /tmp/hostccl-plan-hosts.XXXXXX)
trap 'emulated_hosts_down; rm -rf "$dir"' EXIT
emulated_hosts_up "$hosts" "$rate" || exit 1
n=$((hosts * per_host))

# onHosts OUT program args...: n ranks, PER_HOST to a host; rank 0's output in OUT.
onHosts() {
    local out=$1 rc=0
    shift
    emulated_launch "$n" "$per_host" "$dir" env OPENBLAS_NUM_THREADS=1 "$@" || rc=1
    cp "$dir/rank.0" "$out"
    return $rc
}

if [ "$example" = ddp ]; then
    # The job's torch processes share this machine's cores (the hosts pool them):
    # what they cost each other is measured with as many of the model's processes.
    "$py" "$ddp" --describe-model "$dir/model.json" "${model[@]}" --batch $((batch / n)) --host-sharing "$n" || exit 1
    described "$dir/model.json"
else
    "$mlp" --describe-model "$dir/model.json" "${model[@]}"
fi
# This machine's cores, shared by the emulated hosts (not nproc: it reads OMP_NUM_THREADS).
cores=$(awk -v c="$(getconf _NPROCESSORS_ONLN)" -v n="$hosts" 'BEGIN { h = c / n; printf "%g", (h >= 1 ? int(h) : h) }')
if [ "$per_host" -gt 1 ]; then
    # The planner probes the cluster and each host's sharing of its cores with the
    # job's own processes, every host at once, as a user's launch would.
    onHosts "$dir/plan.txt" "$plan" --model "$dir/model.json" --global-batch "$batch" --probe --cores "$cores" \
        --pooled-cores "${plan_only[@]}" --top 10 -o "$dir/plan.json" || { cat "$dir"/rank.*; exit 1; }
else
    # A host of one rank shares its cores with no rank of its own, but these hosts
    # share this machine's: thread ranks here, as many as the job, stand in for it.
    onHosts "$dir/platform.json" "$sim" --probe || { cat "$dir"/rank.*; exit 1; }
    local_out=$("$plan" --model "$dir/model.json" --global-batch "$batch" --probe --probe-ranks "$n" --top 1)
    sync=$(sed -n 's/.* costs \([0-9.]*\) us more.*/\1/p' <<<"$local_out")
    per_compute=$(sed -n 's/.* and \([0-9.]*\) % of the compute since the last.*/\1/p' <<<"$local_out")
    handoff=$(sed -n 's/.* a pipeline \([0-9.]*\) us per hand-off.*/\1/p' <<<"$local_out")
    ramp=$(sed -n 's/.* (in full from \([0-9.]*\) us of compute since the last, .*/\1/p' <<<"$local_out")
    floor=$(sed -n 's/.* us of compute since the last, \([0-9.]*\) us with none).*/\1/p' <<<"$local_out")
    slow=$(sed -n 's/^# ranks sharing a host compute \([0-9.]*\)x.*/\1/p' <<<"$local_out")
    "$plan" --model "$dir/model.json" --global-batch "$batch" --platform "$dir/platform.json" --cores "$cores" --pooled-cores \
        --sync-floor-us "${floor:-0}" --sync-us "${sync:-0}" --sync-per-compute "$(awk -v p="${per_compute:-0}" 'BEGIN { print p / 100 }')" \
        --handoff-us "${handoff:-0}" --sync-ramp-us "${ramp:-0}" --compute-slowdown "${slow:-1}" "${plan_only[@]}" --top 10 \
        -o "$dir/plan.json" > "$dir/plan.txt"
fi
grep '^#' "$dir/plan.txt"
step_ms() {
    if [ "$example" = ddp ]; then
        onHosts "$dir/out" "$py" "$ddp" "${model[@]}" --steps "$steps" --warmup 10 --plan "$dir/plan.json:$1" \
            || { cat "$dir"/rank.* >&2; return 1; }
        sed -n 's/.*median step \([0-9.]*\) ms.*/\1/p' "$dir/out" | head -1
        return
    fi
    onHosts "$dir/out" "$mlp" --batch "$batch" "${model[@]}" --lr 0.005 --steps "$steps" --quiet --plan "$dir/plan.json:$1" \
        || { cat "$dir"/rank.* >&2; return 1; }
    sed -n 's/.* step_ms=\([0-9.]*\).*/\1/p' "$dir/out"
}
run_plans "$dir/plan.json" "$runs" "$dir/rows" step_ms
