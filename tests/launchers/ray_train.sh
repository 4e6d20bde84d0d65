#!/usr/bin/env bash
# Ray Train across two network-namespace hosts: a Ray head on host 1 (10.240.0.1), a
# worker node on host 2, and the DDP example trained by TorchTrainer with
# TorchConfig(backend="hostccl"), 4 workers (2 a host), then with Gloo: the same
# parameters. The training function holds no hostccl code: torch's backend autoload
# registers it in every Ray worker. No hostccl shared memory may be left behind.
#   ray_train.sh <python of a torch 2.x venv with ray[train]> <PYTHONPATH tree for it>
# Needs root (ip netns) and Ray in that venv (scripts/setup-torch.sh installs it beside
# the newest torch); exits 77 with the reason otherwise.
set -uo pipefail
same_parameters=$(realpath "$(dirname "$0")/../python/same_parameters.py")
py=$1 tree=$(realpath "$2")
src=$(realpath "$(dirname "$0")/../..")
ray=$(dirname "$py")/ray
[ "$(id -u)" -eq 0 ] || { echo "SKIPPED: needs root for network namespaces"; exit 77; }
[ -x "$ray" ] && "$py" -c "import ray.train.torch" 2>/dev/null ||
    { echo "SKIPPED: no Ray Train beside $py (scripts/setup-torch.sh installs ray[train] beside the newest torch)"; exit 77; }
for v in $(compgen -e | grep -E '^(HOSTCCL_|HCCL_|MASTER_(ADDR|PORT)$|RANK$|WORLD_SIZE$|LOCAL_RANK$|RAY_)'); do unset "$v"; done

tag=hry$$ subnet=10.240.0 dir=$(mktemp -d /tmp/hostccl-ray-XXXXXX)
down() {
    local h
    for h in 1 2; do
        ip netns pids "$tag$h" 2>/dev/null | xargs -r kill -9 2>/dev/null
        ip netns del "$tag$h" 2>/dev/null
        ip link del "$tag$h" 2>/dev/null
    done
    ip link del "${tag}br" 2>/dev/null
    rm -rf "$dir"
}
trap down EXIT
ip link add "${tag}br" type bridge && ip link set "${tag}br" up || exit 1
for h in 1 2; do
    ns=$tag$h
    ip netns add "$ns" && ip link add "$ns" type veth peer name "${ns}p" && ip link set "${ns}p" netns "$ns" &&
        ip link set "$ns" master "${tag}br" && ip link set "$ns" up &&
        ip -n "$ns" addr add "$subnet.$h/24" dev "${ns}p" && ip -n "$ns" link set "${ns}p" up &&
        ip -n "$ns" link set lo up || exit 1
done
seconds_since() { awk -v s="$1" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f s", e - s }'; }
# Gloo takes its address from the host name, which no namespace resolves: it is told the
# interface (hostccl finds the address that reaches the other hosts by itself).
on_host() {
    local h=$1; shift
    ip netns exec "$tag$h" env PYTHONPATH="$tree" OMP_NUM_THREADS=1 GLOO_SOCKET_IFNAME="$tag${h}p" "$@"
}

shm_before=$(find /dev/shm -maxdepth 1 -name 'hostccl-*' | wc -l)
status=0
started=$(date +%s.%N)
# Each node keeps its sessions in a directory of its own (the hosts share one /tmp).
common=(--num-cpus 2 --disable-usage-stats --include-dashboard=false)
on_host 1 timeout 120 "$ray" start --head --port 6379 --node-ip-address "$subnet.1" --temp-dir "$dir/ray1" \
    "${common[@]}" >"$dir/head.log" 2>&1 || { echo "ray start --head failed"; cat "$dir/head.log"; exit 1; }
on_host 2 timeout 120 "$ray" start --address "$subnet.1:6379" --node-ip-address "$subnet.2" --temp-dir "$dir/ray2" \
    --num-cpus 2 --disable-usage-stats >"$dir/worker.log" 2>&1 || { echo "ray start (worker node) failed"; cat "$dir/worker.log"; exit 1; }
echo "Ray cluster, a head and a worker node on two namespace hosts: up in $(seconds_since "$started")"

for backend in hostccl gloo; do
    started=$(date +%s.%N)
    out=$(on_host 1 timeout 300 "$py" "$src/examples/pytorch/ray_train.py" --address "$subnet.1:6379" --workers 4 \
        --backend $backend --storage "$dir/results" -- --steps 12 --batch 8 --width 8 --print-every 4 \
        --checkpoint "$dir/ddp-$backend.pt" --checkpoint-every 12 2>&1)
    rc=$?
    summary=$(grep -m1 -o "$backend, 4 ranks, .*" <<<"$out")
    hosts=$(grep -o "ip=$subnet\.[12]" <<<"$out" | sort -u | wc -l)
    if [ $rc -eq 0 ] && [ -n "$summary" ] && [ "$hosts" -eq 2 ]; then
        echo "TorchTrainer, TorchConfig(backend=\"$backend\"), 4 workers on 2 hosts: ok ($(grep -o 'final loss [0-9.]*, median step [0-9.]* ms' <<<"$summary"), $(seconds_since "$started") with Ray's start of the workers)"
    else
        echo "TorchTrainer on $backend: FAILED (exit $rc, workers on $hosts hosts)"; tail -60 <<<"$out"; status=1
    fi
done
if compared=$("$py" "$same_parameters" "$dir/ddp-hostccl.pt" "$dir/ddp-gloo.pt" 1e-6); then
    echo "hostccl's parameters are Gloo's: ok ($compared)"
else
    echo "parameters against Gloo: FAILED ($compared)"
    status=1
fi

# The hosts' Ray processes end (not `ray stop`, which ends every Ray process of the machine);
# hostccl must have left no shared memory behind in its workers.
for h in 1 2; do ip netns pids "$tag$h" | xargs -r kill 2>/dev/null; done
for _ in $(seq 100); do [ -z "$(ip netns pids "${tag}1")$(ip netns pids "${tag}2")" ] && break; sleep 0.2; done
[ "$(find /dev/shm -maxdepth 1 -name 'hostccl-*' | wc -l)" -le "$shm_before" ] || { echo "hostccl shared memory left in /dev/shm"; status=1; }
[ $status -eq 0 ] && echo "Ray Train: ok"
exit $status
