#!/usr/bin/env bash
# torchrun (torch 2.x) starts the DDP example on hostccl across two network-namespace
# hosts, two workers each, meeting through torchrun's c10d rendezvous. Then the same job
# again with one worker killed once the first checkpoint is written: torchrun restarts
# the workers (--max-restarts 1), they go on from the checkpoint, and the job must end
# with the undisturbed run's parameters. Nothing of hostccl may
# outlive a job: no worker process, no /dev/shm segment, no socket listening in a host.
# First allreduce_perf as the workers (--no-python), checked.
#   torchrun_elastic.sh <python of a torch 2.x venv> <PYTHONPATH tree for it> <example> <allreduce_perf>
# Needs root (ip netns); exits 77 with the reason when it cannot run.
set -uo pipefail
same_parameters=$(realpath "$(dirname "$0")/../python/same_parameters.py")
py=$1 tree=$2 example=$3 perf=$4
torchrun=$(dirname "$py")/torchrun
[ "$(id -u)" -eq 0 ] || { echo "SKIPPED: needs root for network namespaces"; exit 77; }
[ -x "$torchrun" ] || { echo "SKIPPED: no torchrun beside $py (scripts/setup-torch.sh makes the venv)"; exit 77; }

tag=tre$$ dir=$(mktemp -d /tmp/hostccl-elastic-XXXXXX)
down() {
    for h in 0 1; do
        ip netns pids "$tag$h" 2>/dev/null | xargs -r kill -9 2>/dev/null
        ip netns del "$tag$h" 2>/dev/null
    done
    ip link del "${tag}0" 2>/dev/null
    rm -rf "$dir"
}
trap down EXIT
# Two hosts: a veth pair between two namespaces, 10.239.0.1 and .2.
for h in 0 1; do ip netns add "$tag$h" || exit 1; ip -n "$tag$h" link set lo up; done
ip link add "${tag}0" netns "${tag}0" type veth peer name "${tag}1" netns "${tag}1" || exit 1
for h in 0 1; do
    ip -n "$tag$h" addr add "10.239.0.$((h + 1))/24" dev "$tag$h" && ip -n "$tag$h" link set "$tag$h" up || exit 1
done

shm_before=$(ls /dev/shm | grep -c "^hostccl-")
# Every gradient summed in the same order in both runs, so that they must end bit for bit
# alike: one algorithm (left to choose, each communicator picks by the costs its init
# measures), and the example's own fixed buckets (--no-overlap) rather than DDP's, whose
# layout changes after the first step of every start (DDP rebuilds its buckets in the
# order gradients arrived), a resumed run's included.
algo="level0:NA;level1:ring"
steps=300
# torchrun_on_both <name> <torchrun args...>: torchrun on both hosts, 2 workers each,
# meeting through its c10d rendezvous on host 0; each host's output in $dir/<name>.<host>.
# is_host: torchrun guesses which host serves the rendezvous from the machine's name,
# which every namespace shares.
torchrun_on_both() {
    local name=$1 port=$((20000 + RANDOM % 12000)) pids=() h status=0
    shift
    for h in 0 1; do
        ip netns exec "$tag$h" env PYTHONPATH="$tree" OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 HCCL_ALGO="$algo" \
            timeout 600 "$torchrun" --nnodes 2 --nproc-per-node 2 --rdzv-backend c10d \
            --rdzv-endpoint "10.239.0.1:$port" --rdzv-id "$name$$" --local-addr "10.239.0.$((h + 1))" \
            --rdzv-conf "is_host=$([ $h -eq 0 ] && echo true || echo false)" \
            --monitor-interval 1 "$@" >"$dir/$name.$h" 2>&1 &
        pids+=($!)
    done
    for p in "${pids[@]}"; do wait "$p" || status=1; done
    return $status
}

# run <name> [kill]: the DDP example on both hosts; with "kill", one worker of host 1 is
# killed once the first checkpoint exists.
run() {
    local name=$1 kill=${2:-} job
    rm -f "$dir/$name.pt"
    torchrun_on_both "$name" --max-restarts 1 "$example" --backend hostccl --steps $steps --batch 8 --width 8 --no-overlap \
        --print-every 50 --checkpoint "$dir/$name.pt" --checkpoint-every 20 &
    job=$!
    if [ "$kill" = kill ]; then
        for _ in $(seq 600); do [ -f "$dir/$name.pt" ] && break; sleep 0.2; done
        victim=$(ip netns pids "${tag}1" | while read -r p; do
            grep -qa -- "--checkpoint" "/proc/$p/cmdline" 2>/dev/null && ! grep -qa torchrun "/proc/$p/cmdline" && echo "$p"
        done | head -1)
        if [ -n "$victim" ] && kill -9 "$victim"; then
            local killed
            killed=$(date +%s.%N)
            echo "$name: killed worker pid $victim after the first checkpoint"
            # torchrun notices the death, stops the others, starts them all again, and they
            # meet and load the checkpoint: how long until they train again.
            for _ in $(seq 1200); do grep -qs "resumed from" "$dir/$name".[01] && break; sleep 0.1; done
            echo "$name: workers restarted and resumed from the checkpoint $(awk -v s="$killed" -v e="$(date +%s.%N)" \
                'BEGIN { printf "%.1f s", e - s }') after the kill"
        fi
    fi
    wait $job
}

status=0
started=$(date +%s.%N)
if torchrun_on_both perf --no-python "$perf" -b 8 -e 4M -f 8 -n 5 -w 1 &&
    grep -q "Out of bounds values : 0 OK" "$dir"/perf.*; then
    echo "torchrun --no-python allreduce_perf, 2 hosts x 2: ok ($(awk -v s="$started" -v e="$(date +%s.%N)" \
        'BEGIN { printf "%.1f s", e - s }'))"
else
    echo "torchrun --no-python allreduce_perf: FAILED"; cat "$dir"/perf.[01]; status=1
fi
started=$(date +%s.%N)
run plain || { echo "undisturbed job: FAILED"; cat "$dir"/plain.[01]; status=1; }
echo "undisturbed job: $(awk -v s="$started" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f s", e - s }')"
run elastic kill || { echo "restarted job: FAILED"; cat "$dir"/elastic.[01]; status=1; }
grep -h "resumed from .* at step" "$dir"/elastic.[01] ||
    { echo "restarted job: no worker resumed from the checkpoint"; cat "$dir"/elastic.[01]; status=1; }
for name in plain elastic; do
    echo "$name: rank 0 ran on host $(grep -l "parameters digest" "$dir/$name".[01] | sed 's/.*\.//')"
done
# The last checkpoint of each run holds its final parameters.
if compared=$("$py" "$same_parameters" "$dir/plain.pt" "$dir/elastic.pt" 0); then
    echo "restarted job ends with the undisturbed job's parameters: ok ($compared)"
else
    echo "parameters: FAILED ($compared)"; status=1
fi
# Nothing outlives the jobs: processes in the hosts, shared memory, listening sockets.
for h in 0 1; do
    left=$(ip netns pids "$tag$h" | wc -l)
    listening=$(ip netns exec "$tag$h" ss -Htln | wc -l)
    [ "$left" -eq 0 ] && [ "$listening" -eq 0 ] || { echo "host $h: $left processes, $listening listening sockets left"; status=1; }
done
shm_after=$(ls /dev/shm | grep -c "^hostccl-")
[ "$shm_after" -le "$shm_before" ] || { echo "/dev/shm: $shm_before hostccl segments before, $shm_after after"; ls -la /dev/shm; status=1; }
[ $status -eq 0 ] && echo "torchrun elastic: ok"
exit $status
