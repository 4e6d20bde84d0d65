// Reduction kernels next to memcpy (Google Benchmark). Rates are bytes of one
// vector per second, so a kernel at memcpy's rate costs one copy's time:
//   build/bench/micro/reduce_kernels_bench [--benchmark_filter=fp32]
#include <benchmark/benchmark.h>

#include <cstring>
#include <vector>

#include "common/datatype.h"
#include "common/reduce.h"

namespace {

constexpr size_t kBytes = 16 << 20;  // beyond the caches: memory-bound like a large collective

void memcpyBench(benchmark::State& state) {
    std::vector<char> a(kBytes, 1), b(kBytes);
    for (auto _ : state) {
        std::memcpy(b.data(), a.data(), kBytes);
        benchmark::DoNotOptimize(b.data());
    }
    state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(kBytes));
}

// dst = a (op) b, in place in a as the ring's reduce-on-arrival does; the kernel
// dispatched for this CPU, or (`portable`) the plain loop it replaces.
void reduceBench(benchmark::State& state, HcclDataType t, HcclReduceOp op, bool portable) {
    const size_t n = kBytes / hostccl::dtypeSize(t);
    std::vector<char> a(kBytes, 0), b(kBytes, 0);
    hostccl::ReduceFn fn = portable ? hostccl::portableReduceFunction(t, op) : hostccl::reduceFunction(t, op);
    for (auto _ : state) {
        fn(a.data(), a.data(), b.data(), n);
        benchmark::DoNotOptimize(a.data());
    }
    state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(kBytes));
}

void registerAll() {
    benchmark::RegisterBenchmark("memcpy/16MiB", memcpyBench)->Unit(benchmark::kMicrosecond);
    for (HcclDataType t : {HCCL_DATA_TYPE_INT8, HCCL_DATA_TYPE_INT16, HCCL_DATA_TYPE_INT32, HCCL_DATA_TYPE_INT64,
                           HCCL_DATA_TYPE_UINT8, HCCL_DATA_TYPE_UINT16, HCCL_DATA_TYPE_UINT32, HCCL_DATA_TYPE_UINT64,
                           HCCL_DATA_TYPE_INT128, HCCL_DATA_TYPE_FP16, HCCL_DATA_TYPE_BFP16, HCCL_DATA_TYPE_FP32,
                           HCCL_DATA_TYPE_FP64})
        for (HcclReduceOp op : {HCCL_REDUCE_SUM, HCCL_REDUCE_PROD, HCCL_REDUCE_MAX, HCCL_REDUCE_MIN}) {
            std::string name = std::string("reduce/") + hostccl::dtypeName(t) + "/" + hostccl::reduceOpName(op);
            benchmark::RegisterBenchmark(name.c_str(), reduceBench, t, op, false)->Unit(benchmark::kMicrosecond);
        }
    // The half types' CPU-specific kernels against their portable loops.
    for (HcclDataType t : {HCCL_DATA_TYPE_FP16, HCCL_DATA_TYPE_BFP16}) {
        std::string name = std::string("reduce-portable/") + hostccl::dtypeName(t) + "/sum";
        benchmark::RegisterBenchmark(name.c_str(), reduceBench, t, HCCL_REDUCE_SUM, true)->Unit(benchmark::kMicrosecond);
    }
}

}  // namespace

int main(int argc, char** argv) {
    registerAll();
    benchmark::Initialize(&argc, argv);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
