#!/usr/bin/env bash
# The sanitizer and fuzzing steps of the test command (scripts/test.sh runs this after
# the main suite). Each is bounded in time:
#   1. ASan+UBSan (clang) build of the library, the tests labelled "sanitize" and
#      "asan" and the libFuzzer targets; those tests run under it;
#   2. every fuzz target replays its regression inputs (tests/fuzz/regressions/, inputs
#      that once crashed) and fuzzes from its seeds for FUZZ_SECONDS (default 5);
#   3. TSan build; the tests labelled "sanitize" run under it.
# The 5- and 8-rank cases of the thread matrix are left to the main suite (they
# multiply the time, not the interleavings); the fault worker moves 4 MiB per op; the
# thread matrix runs one element type per size (tests/support/matrix.h).
# SANITIZE_STEPS=asan,fuzz,tsan picks steps. Both builds compile in unity batches of
# 12 sources with Ninja (on 2 cores the ASan+UBSan build takes 160 s this way, 320 s
# file by file); the main build (scripts/build.sh) stays file by file, so it alone
# proves every source includes what it uses. On 2 cores the whole script takes about
# 7 minutes, most of it compiling.
set -euo pipefail
cd "$(dirname "$0")/.."
steps=${SANITIZE_STEPS:-asan,fuzz,tsan}
fuzz_seconds=${FUZZ_SECONDS:-5}
if ! command -v clang++ >/dev/null; then
    echo "sanitize: skipped: clang++ is not installed (scripts/setup-deps.sh installs it)"
    exit 0
fi
tsan_targets="bad_input_test abort_shrink_test mismatch_test hostile_input_test collectives_test cxx_api_test"
asan_targets="unit_test peer_failure_test fault_worker training_test $tsan_targets"
skip_big='Matrix.*_(5|8)ranks'

build() {  # build <dir> <sanitizer> [cmake args] -- <targets>
    local dir=$1 sanitizer=$2
    shift 2
    local args=() 
    while [ "$1" != "--" ]; do args+=("$1"); shift; done
    shift
    local generator=()
    command -v ninja >/dev/null && [ ! -f "$dir/Makefile" ] && generator=(-G Ninja)
    CC=clang CXX=clang++ cmake "${generator[@]}" -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" -DHOSTCCL_WERROR=ON -DHOSTCCL_PCH=ON \
        -DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=12 -DHOSTCCL_SANITIZE="$sanitizer" -DHOSTCCL_CCACHE=OFF \
        "${args[@]}" >/dev/null
    cmake --build "$dir" -j2 --target "$@"
}

run_labelled() {  # run_labelled <dir> <label> <seconds>
    (cd "$1" && HOSTCCL_FAULT_TEST_COUNT=1048576 HOSTCCL_TEST_MATRIX_TYPES=one-per-size timeout "$3" ctest -L "$2" -E "$skip_big" -j2 --timeout 300 --output-on-failure)
}

if [[ $steps == *asan* || $steps == *fuzz* ]]; then
    start=$SECONDS
    build build-asan address -DHOSTCCL_FUZZ=ON -- $asan_targets fuzz_targets
    echo "sanitize: ASan+UBSan build took $((SECONDS - start)) s"
fi
if [[ $steps == *asan* ]]; then
    start=$SECONDS
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ASAN_OPTIONS=detect_leaks=1 run_labelled build-asan '^(sanitize|asan)$' 600
    echo "sanitize: tests under ASan+UBSan passed in $((SECONDS - start)) s"
fi
if [[ $steps == *fuzz* ]]; then
    for t in rank_table root_info bootstrap frames; do
        bin=build-asan/tests/fuzz/fuzz_$t
        regressions=tests/fuzz/regressions/$t
        if [ -n "$(ls -A "$regressions" 2>/dev/null)" ]; then
            "$bin" -runs=0 "$regressions"/* >/dev/null 2>&1 || { echo "sanitize: fuzz_$t fails a regression input"; "$bin" -runs=0 "$regressions"/*; exit 1; }
        fi
        corpus=$(mktemp -d)
        cp tests/fuzz/seeds/$t/* "$corpus"/ 2>/dev/null || true
        if ! "$bin" -max_total_time="$fuzz_seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
                -artifact_prefix="$corpus/" "$corpus" > "$corpus/log" 2>&1; then
            echo "sanitize: fuzz_$t found a failing input (keep it in $regressions/):"
            tail -40 "$corpus/log"
            ls "$corpus"/crash-* "$corpus"/timeout-* "$corpus"/oom-* 2>/dev/null
            exit 1
        fi
        echo "sanitize: fuzz_$t: $(grep -o 'number_of_executed_units: [0-9]*' "$corpus/log" | cut -d' ' -f2) inputs in ${fuzz_seconds} s, no failure"
        rm -rf "$corpus"
    done
fi
if [[ $steps == *tsan* ]]; then
    start=$SECONDS
    build build-tsan thread -- $tsan_targets
    echo "sanitize: TSan build took $((SECONDS - start)) s"
    start=$SECONDS
    TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 run_labelled build-tsan '^sanitize$' 600
    echo "sanitize: tests under TSan passed in $((SECONDS - start)) s"
fi
