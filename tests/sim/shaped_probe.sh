#!/usr/bin/env bash
# hostccl-sim --probe across two emulated hosts of two ranks each (network namespaces
# on a bridge, each host's link shaped to 2 Gbit/s each way with tc tbf): the shaper
# is the host's limit, so two flows out of one host together get one flow's rate,
# which the probe must write as the NIC rate; and a TCP flow at that rate keeps its
# ends' cores busy only a small part of its time, which it must write as the cpu
# share (it once wrote 0.5, where each end measures about 0.1 or less: a host of half
# a core then simulated every such flow twice as slow as the wire). Exits 77 (ctest:
# skipped) with the reason when namespaces or tc are missing.
#   shaped_probe.sh <hostccl-sim>
set -uo pipefail
sim=$1
root=$(cd "$(dirname "$0")/../.." && pwd)

skip() { echo "SKIPPED: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
[ "$(id -u)" -eq 0 ] || skip "needs root to create network namespaces"
command -v ip >/dev/null && command -v tc >/dev/null || skip "iproute2 (ip, tc) is not installed"

hosts_tag=tsp$$
source "$root/bench/emulated_hosts.sh"
dir=$(mktemp -d)
trap 'emulated_hosts_down; rm -rf "$dir"' EXIT
emulated_hosts_up 2 2gbit || skip "cannot create namespace hosts with a tc tbf shaper here"
emulated_launch 4 2 "$dir" "$sim" --probe || { cat "$dir"/rank.*; fail "the probe across two shaped hosts failed"; }
/usr/bin/python3 - "$dir/rank.0" <<'PY' || { cat "$dir/rank.0"; fail "the shaped hosts' probe is wrong"; }
import json, sys
text = open(sys.argv[1]).read()
j = json.loads(text[text.index("{"):])
net = j["net"]
assert j["hosts"] == 2 and j["ranks_per_host"] == 2 and net["kind"] == "tcp", j
flow, nic = net["bandwidth_GBps"], net["nic_GBps"]
# 2 Gbit/s is 0.25 GB/s: one flow near it, and the host's two flows together too
assert 0.15 <= flow <= 0.3, net
assert 0.6 * flow <= nic <= 1.4 * flow, net
assert 0 < net["cpu_share"] < 0.5 and 0 < j["bulk"]["net_cpu_share"] < 0.5, (net, j["bulk"])
print(f"one flow {flow:.3f} GB/s, a host's flows together {nic:.3f} GB/s, cpu share {net['cpu_share']:.3f} "
      f"(bulk {j['bulk']['net_cpu_share']:.3f})")
PY
echo "shaped hosts' probe: NIC and cpu share as measured"
