#!/usr/bin/env bash
# Installs the build into a temporary prefix and builds a program against it the
# three ways users do: plain g++ -lhccl -lascendcl, pkg-config, and find_package.
set -euo pipefail
build=$1 src=$2
prefix=$(mktemp -d /tmp/hostccl-install.XXXXXX)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
prog=$src/examples/hccl_allreduce/main.cc

g++ -std=c++14 "$prog" -I"$prefix/include" -L"$prefix/lib" -lhccl -lascendcl -pthread -o "$prefix/plain"
LD_LIBRARY_PATH=$prefix/lib "$prefix/plain" | grep -q "all 4 ranks ok"
echo "plain g++: ok"

PKG_CONFIG_PATH=$prefix/lib/pkgconfig g++ -std=c++14 "$prog" $(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --cflags --libs hccl) -pthread -o "$prefix/viapc"
LD_LIBRARY_PATH=$prefix/lib "$prefix/viapc" | grep -q "all 4 ranks ok"
echo "pkg-config: ok"

mkdir -p "$prefix/consumer"
cat > "$prefix/consumer/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.20)
project(consumer CXX)
find_package(hostccl REQUIRED)
add_executable(consumer $prog)
target_link_libraries(consumer PRIVATE hostccl::hccl)
CMAKE
cmake -S "$prefix/consumer" -B "$prefix/consumer/build" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$prefix/consumer/build" >/dev/null
LD_LIBRARY_PATH=$prefix/lib "$prefix/consumer/build/consumer" | grep -q "all 4 ranks ok"
echo "find_package: ok"

# The C++ API and the training layer (C++20): two ranks average a gradient through
# the bucketer, built with nothing but the installed headers and libraries.
cat > "$prefix/cxx.cc" <<'CXX'
#include <hostccl/bucketing.hpp>
#include <atomic>
#include <cstdio>
#include <thread>
int main() {
    HcclRootInfo root = hostccl::Communicator::createRootInfo();
    std::atomic<int> ok{0};
    auto rank = [&](uint32_t r) {
        hostccl::Communicator comm(root, 2, r, {.device = int32_t(r)});
        std::vector<float> grad(1000, float(r));
        hostccl::GradientBucketer buckets(comm);
        buckets.add(grad);
        buckets.ready(0);
        buckets.waitAll();
        if (grad == std::vector<float>(1000, 0.5f)) ++ok;
    };
    std::thread a(rank, 0), b(rank, 1);
    a.join();
    b.join();
    std::printf(ok == 2 ? "cxx api ok\n" : "cxx api WRONG\n");
    return ok == 2 ? 0 : 1;
}
CXX
g++ -std=c++20 "$prefix/cxx.cc" -I"$prefix/include" -L"$prefix/lib" -lhostccl_training -lhccl -lascendcl -pthread \
    -o "$prefix/cxx"
LD_LIBRARY_PATH=$prefix/lib "$prefix/cxx" | grep -q "cxx api ok"
echo "C++ API and training layer: ok"

# The simulator is installed beside the perf tools and runs from there.
sim_out=$("$prefix/bin/hostccl-sim" --data -n 16 -c allreduce -b 64K)
grep -qE "allreduce +16 +2 .* yes +[0-9.]+$" <<< "$sim_out" || { echo "$sim_out"; exit 1; }
echo "hostccl-sim: ok"

# So is the planner: a two-layer model on 2 hosts x 2 ranks, ranked.
echo '{"layers": [{"params": 4096, "forward_flops": 8192, "activation_bytes": 256, "tp": "column"},
                  {"params": 4096, "forward_flops": 8192, "activation_bytes": 256, "tp": "row"}]}' > "$prefix/model.json"
plan_out=$("$prefix/bin/hostccl-plan" --model "$prefix/model.json" --global-batch 64 --hosts 2 --ranks-per-host 2 --gflops 20)
grep -qE "^ +1  dp" <<< "$plan_out" || { echo "$plan_out"; exit 1; }
echo "hostccl-plan: ok"
