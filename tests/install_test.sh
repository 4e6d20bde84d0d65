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
