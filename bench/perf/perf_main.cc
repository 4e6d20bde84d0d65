// One perf tool: which collective it measures is fixed at build time
// (HOSTCCL_PERF_OP), so allreduce_perf, allgather_perf, ... share this file.
#include <cstdio>

#include "bench/perf/perf_harness.h"

int main(int argc, char** argv) {
    const hostccl::perf::PerfOp* op = hostccl::perf::findPerfOp(HOSTCCL_PERF_OP);
    if (op == nullptr) {
        std::fprintf(stderr, "unknown collective %s\n", HOSTCCL_PERF_OP);
        return 2;
    }
    return hostccl::perf::runPerf(*op, argc, argv);
}
