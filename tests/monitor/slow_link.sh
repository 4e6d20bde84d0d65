#!/usr/bin/env bash
# A slow link, found for real: three emulated hosts (network namespaces on one bridge),
# one rank each; host C's link is shaped with tc tbf to 200 Mbit/s. The ranks run 8 MiB
# allreduces with their monitoring endpoints on; hostccl-status, asked of rank 0's
# endpoint, must report a slow link at rank 2 (host C) and no slow link between others. (The init probe measures through the shaped link too, so the cost model
# itself expects the slow rate: the job's rule, a link below half the median of its
# transport's links, is what names it.) Exits 77 (ctest: skipped) with the reason
# when namespaces or tc are missing.
#   slow_link.sh <monitor_worker> <hostccl-status>
set -uo pipefail
worker=$1 status=$2

skip() { echo "SKIPPED: $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "needs root to create network namespaces"
command -v ip >/dev/null || skip "iproute2 (ip) is not installed"
command -v tc >/dev/null || skip "tc (iproute2) is not installed"

tag=hsl$$ br=hsl$$br
hosts=(a b c)
cleanup() {
    for h in "${hosts[@]}"; do ip netns del "$tag$h" 2>/dev/null; done
    ip link del "$br" 2>/dev/null
    rm -f /tmp/$tag-*
}
trap cleanup EXIT
ip link add "$br" type bridge 2>/dev/null || skip "cannot create a bridge"
ip link set "$br" up
for i in 0 1 2; do
    h=${hosts[$i]} ns=$tag${hosts[$i]}
    ip netns add "$ns" 2>/dev/null || skip "cannot create network namespaces here (ip netns add failed)"
    ip link add "$tag${h}0" type veth peer name "$tag${h}1" || skip "cannot create a veth pair"
    ip link set "$tag${h}1" master "$br" && ip link set "$tag${h}1" up
    ip link set "$tag${h}0" netns "$ns"
    ip -n "$ns" addr add 10.233.0.$((i + 1))/24 dev "$tag${h}0"
    ip -n "$ns" link set "$tag${h}0" up && ip -n "$ns" link set lo up
done
# Host C sends at 200 Mbit/s (25 MB/s): every byte rank 2 sends crosses this shaper.
ip netns exec "${tag}c" tc qdisc add dev "${tag}c0" root tbf rate 200mbit burst 64kb latency 400ms ||
    skip "tc tbf is not available"

port=$((20000 + RANDOM % 10000)) metrics=$((30000 + RANDOM % 10000))
pids=()
for r in 0 1 2; do
    ns=$tag${hosts[$r]}
    HOSTCCL_METRICS_PORT=$metrics HOSTCCL_METRICS_INTERVAL_MS=250 HOSTCCL_DIAGNOSE=1 \
        timeout 240 ip netns exec "$ns" "$worker" 10.233.0.1:$port $r 3 40 $((2 << 20)) -1 0 4000 \
        >/tmp/$tag-out-$r 2>&1 &
    pids+=($!)
done
# Poll until both forms name it: early in the job (the init probe's bytes and the
# first op) a link sits near the rule's threshold and one query may judge it slow
# while the next, a moment later, does not.
found="" text=""
for _ in $(seq 1 150); do
    sleep 0.4
    view=$(ip netns exec "${tag}a" "$status" 10.233.0.1:$metrics --json 2>/dev/null) || true
    text=$(ip netns exec "${tag}a" "$status" 10.233.0.1:$metrics 2>&1) || true
    echo "$view" | grep -q '"kind": "slow_link"' && echo "$text" | grep -q "slow link: rank 2 (" && { found=$view; break; }
done
fail=0
for i in 0 1 2; do
    wait "${pids[$i]}" || { echo "rank $i failed:"; cat /tmp/$tag-out-$i; fail=1; }
done
[ -n "$found" ] || { echo "no slow link reported; last status:"; echo "$text"; cat /tmp/$tag-out-*; exit 1; }
echo "$text"
# Every slow link named has rank 2 (host C), the shaped one, at one end.
pairs=$(echo "$found" | /usr/bin/python3 -c '
import json, sys
views = json.load(sys.stdin)
print(" ".join("%d-%d" % (f["rank"], f["peer"]) for v in views for f in v["findings"] if f["kind"] == "slow_link"))') || fail=1
[ -n "$pairs" ] || { echo "no slow link in the job view"; fail=1; }
echo "slow links reported (rank-peer): $pairs"
for p in $pairs; do
    case $p in 2-*|*-2) ;; *) echo "a slow link $p without rank 2, the shaped one"; fail=1 ;; esac
done
echo "$text" | grep -q "slow link: rank 2 (" || { echo "hostccl-status does not name a link of rank 2"; fail=1; }
exit $fail
