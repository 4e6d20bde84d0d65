# Sourced by bench/compare.sh for --sweep: every collective at every size from 8 B to
# 256 MiB (steps of 4x), one run per library and size, and per configuration one table
# of hostccl's time against the best peer's at each size. Uses compare.sh's runners
# (run_<library>), best_peer, field, small_size and verdict.

sweep_sizes=(8 32 128 512 2048 8192 32768 131072 524288 2097152 8388608 33554432 134217728 268435456)
[ "$quick" -eq 1 ] && sweep_sizes=(8 512 32768 1048576)

# About 256 MiB moved per run: 5 iterations at 64 MiB and up, 500 below 512 KiB.
sweep_iters() { local i=$(((256 << 20) / $1)); [ $i -lt 5 ] && i=5; [ $i -gt 500 ] && i=500; echo $i; }

human_size() {
    awk -v b="$1" 'BEGIN { split("B KiB MiB GiB", u, " "); k = 1
        while (b >= 1024 && b % 1024 == 0 && k < 4) { b /= 1024; k++ }
        printf "%d %s", b, u[k] }'
}

# The size a collective runs at for sweep size $2 with $3 ranks: the gathered and
# scattered ones need at least 8 B per rank.
sweep_size() {  # collective size ranks
    local least; least=$(small_size "$1" "$3")
    [ "$2" -lt "$least" ] && echo "$least" || echo "$2"
}

# A table cell: the best peer's time over hostccl's at that size (above 1.00x hostccl
# is faster; at a given size the busbw ratio is the same number) and which peer.
sweep_cell() {  # collective size
    local ht bt btn
    ht=$(field "$logs/hostccl.$1.s$2" 6)
    read -r bt btn <<< "$(best_peer "$1" "s$2" 6 lower)"
    awk -v h="${ht:-0}" -v b="$bt" -v n="$btn" 'BEGIN {
        if (h <= 0) printf "-"; else if (b <= 0) printf "hostccl only"; else printf "%.2fx %s", b / h, n }'
}

# One verdict per collective: hostccl at least the best peer's busbw at every size
# from 64 KiB up, or the sizes where it is not and by how much.
sweep_verdict() {  # collective ranks
    local coll=$1 s size ratio misses="" checked=0
    for s in "${sweep_sizes[@]}"; do
        size=$(sweep_size "$coll" "$s" "$2")
        [ "$size" -ge 65536 ] || continue
        ratio=$(sweep_cell "$coll" "$size" | awk '{ print $1 + 0 }')
        [ "$ratio" = 0 ] && continue
        checked=$((checked + 1))
        awk -v r="$ratio" 'BEGIN { exit !(r < 1) }' && misses+="${misses:+, }$(human_size "$size") ${ratio}x"
    done
    verdict "busbw >= 1.0x the best peer's at every size from 64 KiB" "$label" "$coll" "$checked sizes" \
        "$([ $checked -eq 0 ] && echo "n/a (no figure)" || { [ -z "$misses" ] && echo met || echo "missed at $misses"; })"
}

run_sweep_config() {  # label ranks transport
    local label=$1 n=$2 transport=$3 coll s size lib row
    label_dir=$(echo "$label" | tr -c 'a-zA-Z0-9\n' '_')
    local colls=(); for coll in "${collectives[@]}"; do [ "$coll" != barrier ] && colls+=("$coll"); done
    for coll in "${colls[@]}"; do
        for s in "${sweep_sizes[@]}"; do
            size=$(sweep_size "$coll" "$s" "$n")
            [ -f "$logs/hostccl.$coll.s$size" ] && continue  # two sweep sizes below 8 B per rank
            for lib in hostccl "${peer_libs[@]}"; do
                "run_$lib" "$lib.$coll.s$size" "$n" "$transport" "$coll" "$size" "$(sweep_iters "$size")"
            done
        done
    done
    echo; echo "### $label: every size"; echo
    echo "Best peer's time / hostccl's at each size (above 1.00x hostccl is faster), and that peer; gathered collectives at least 8 B per rank."
    echo
    printf '| size |'; printf ' %s |' "${colls[@]}"; echo
    printf '|---|'; printf -- '---|%.0s' "${colls[@]}"; echo
    for s in "${sweep_sizes[@]}"; do
        row="| $(human_size "$s") |"
        for coll in "${colls[@]}"; do row+=" $(sweep_cell "$coll" "$(sweep_size "$coll" "$s" "$n")") |"; done
        echo "$row"
    done
    for coll in "${colls[@]}"; do sweep_verdict "$coll" "$n"; done
    mkdir -p "$logs/$label_dir" && mv "$logs"/*.s[0-9]* "$logs/$label_dir/" 2>/dev/null
    return 0
}
