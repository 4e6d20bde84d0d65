#!/usr/bin/env bash
# Two emulated hosts: network namespaces joined by a veth pair, two ranks in each.
# Ranks in one namespace share memory; across namespaces they use TCP over the
# veth link, as on two machines. Runs the worker's bootstrap suite and a few matrix
# families. Exits 77 (ctest: skipped) with the reason when namespaces cannot be made.
set -uo pipefail
worker=$1
families=("" AllReduce AlltoAllV Broadcast RecvAny)

skip() { echo "SKIPPED: $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "needs root to create network namespaces"
command -v ip >/dev/null || skip "iproute2 (ip) is not installed"

tag=hc$$
nsA=${tag}a nsB=${tag}b
cleanup() { ip netns del "$nsA" 2>/dev/null; ip netns del "$nsB" 2>/dev/null; rm -f /tmp/$tag-*; }
trap cleanup EXIT
ip netns add "$nsA" 2>/dev/null || skip "cannot create network namespaces here (ip netns add failed)"
ip netns add "$nsB" || skip "cannot create a second network namespace"
ip link add ${tag}0 type veth peer name ${tag}1 || skip "cannot create a veth pair"
ip link set ${tag}0 netns "$nsA" && ip link set ${tag}1 netns "$nsB" || exit 1
ip -n "$nsA" addr add 10.231.0.1/24 dev ${tag}0 && ip -n "$nsB" addr add 10.231.0.2/24 dev ${tag}1 || exit 1
for ns in "$nsA" "$nsB"; do ip -n "$ns" link set lo up; done
ip -n "$nsA" link set ${tag}0 up && ip -n "$nsB" link set ${tag}1 up || exit 1

status=0
for family in "${families[@]}"; do
    file=/tmp/$tag-root-${family:-suite}
    pids=()
    for rank in 0 1 2 3; do
        ns=$nsA; [ $rank -ge 2 ] && ns=$nsB
        HOSTCCL_LOG_LEVEL=info timeout 300 ip netns exec "$ns" "$worker" rootinfo "$file" $rank 4 $family \
            >/tmp/$tag-out-$rank 2>&1 &
        pids+=($!)
    done
    for i in 0 1 2 3; do
        if ! wait "${pids[$i]}"; then
            echo "rank $i failed in ${family:-bootstrap suite}:"; cat /tmp/$tag-out-$i; status=1
        fi
    done
    if [ -z "$family" ]; then  # the ranks saw one shm peer (same namespace) and two TCP peers
        grep -h "rank 0/4" /tmp/$tag-out-0 | grep -q "links shm x1 tcp x2" || { echo "unexpected links:"; grep -h links /tmp/$tag-out-*; status=1; }
    fi
    echo "${family:-bootstrap suite}: $([ $status -eq 0 ] && echo ok || echo FAILED)"
done
exit $status
