#!/usr/bin/env bash
# README command 1: install what is needed, build, and run the main job: an
# allreduce benchmark across 4 local ranks that prints a result table.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-deps.sh
bash scripts/build.sh
./build/bench/perf/allreduce_perf -p 4 -b 8 -e 64M -f 4 "$@"
