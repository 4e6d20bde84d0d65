// The nccl-tests-style driver shared by the perf tools: command line, one rank
// per thread, size sweep, timing with events on each rank's stream, exact
// verification, and the result table. A tool describes its collective with a
// PerfOp and calls runPerf().
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "hccl/hccl.h"

namespace hostccl::perf {

struct PerfOptions {
    uint64_t minBytes = 32 << 20, maxBytes = 32 << 20;
    uint64_t stepBytes = 1 << 20;
    double stepFactor = 1;  // > 1: multiply
    int iters = 20, warmup = 5, check = 1;
    int root = 0;
    uint32_t nranks = 1;
    HcclDataType dtype = HCCL_DATA_TYPE_FP32;
    HcclReduceOp op = HCCL_REDUCE_SUM;
};

struct Buffers {
    void* send;
    void* recv;
    uint64_t count;  // the count argument of the API call
};

struct PerfOp {
    const char* name;
    bool reduces;
    bool hasRoot;
    // The API's count for a size of `elems` elements, and how many elements each buffer holds.
    std::function<uint64_t(uint64_t elems, uint32_t n)> countFor;
    std::function<uint64_t(uint64_t count, uint32_t n)> sendElems, recvElems;
    // nccl-tests' algbw -> busbw factor.
    std::function<double(uint32_t n)> busFactor;
    std::function<HcclResult(const Buffers&, const PerfOptions&, HcclComm, aclrtStream)> call;
    // Fills rank r's send buffer; returns the number of wrong elements in its receive buffer.
    std::function<void(void* send, uint64_t count, uint32_t rank, const PerfOptions&)> fill;
    std::function<uint64_t(const void* recv, uint64_t count, uint32_t rank, const PerfOptions&)> verify;
};

// Parses argv, runs the sweep, prints the table; exit status non-zero on any error
// or wrong value.
int runPerf(const PerfOp& op, int argc, char** argv);

}  // namespace hostccl::perf
