# Emulated hosts for the benchmarks (sourced): network namespaces joined by a bridge,
# each host's link shaped to a rate each way with tc tbf (or unshaped), and processes
# started on them with launcher variables. Needs root (ip netns, tc). The caller sets
# $hosts_tag (a prefix unique to the run) before calling, and tears down on exit:
#   trap emulated_hosts_down EXIT
#   emulated_hosts_up 4 1gbit        # hosts ${hosts_tag}0.. at 10.236.0.1..
#   emulated_launch 8 2 DIR program args...
emulated_hosts_made=0

emulated_hosts_down() {
    local h
    for h in $(seq 0 $((emulated_hosts_made - 1))); do
        ip netns del "$hosts_tag$h" 2>/dev/null
        ip link del "$hosts_tag$h" 2>/dev/null
    done
    ip link del "${hosts_tag}br" 2>/dev/null
    emulated_hosts_made=0
}

# emulated_hosts_up <count> <rate|none>: a fresh set of hosts (any earlier set removed).
emulated_hosts_up() {
    local h ns
    emulated_hosts_down
    ip link add "${hosts_tag}br" type bridge && ip link set "${hosts_tag}br" up || return 1
    for h in $(seq 0 $(($1 - 1))); do
        ns=$hosts_tag$h
        ip netns add "$ns" && emulated_hosts_made=$((h + 1)) || return 1
        ip link add "$ns" type veth peer name "${ns}p" && ip link set "${ns}p" netns "$ns" &&
            ip link set "$ns" master "${hosts_tag}br" && ip link set "$ns" up &&
            ip -n "$ns" addr add 10.236.0.$((h + 1))/24 dev "${ns}p" &&
            ip -n "$ns" link set "${ns}p" up && ip -n "$ns" link set lo up || return 1
        if [ "$2" != none ]; then
            tc qdisc add dev "$ns" root tbf rate "$2" burst 256kb latency 50ms &&
                ip netns exec "$ns" tc qdisc add dev "${ns}p" root tbf rate "$2" burst 256kb latency 50ms || return 1
        fi
    done
}

# emulated_launch <ranks> <per host> <dir> <program...>: one process per rank, PER_HOST
# to a host in rank order, rank 0's meeting point on host 0; each rank's output in
# DIR/rank.R. Fails when any rank does.
emulated_launch() {
    local n=$1 per_host=$2 dir=$3 port=$((20000 + RANDOM % 12000)) pids=() rc=0 r
    shift 3
    for r in $(seq 0 $((n - 1))); do
        ip netns exec "$hosts_tag$((r / per_host))" env RANK=$r WORLD_SIZE=$n LOCAL_RANK=$((r % per_host)) \
            HOSTCCL_ROOT_ADDR=10.236.0.1:$port timeout 600 "$@" > "$dir/rank.$r" 2>&1 &
        pids+=($!)
    done
    for r in "${pids[@]}"; do wait "$r" || rc=1; done
    return $rc
}
