// The nccl-tests-style driver shared by the perf tools: command line, ranks,
// size sweep, timing with events on each rank's stream, exact verification and
// the result table. Each tool is one PerfOp (perf_ops.cc) handed to runPerf().
#pragma once

#include <cstdint>
#include <string>

#include "bench/perf/perf_memory.h"
#include "hccl/hccl.h"

namespace hostccl::perf {

struct PerfOptions {
    uint64_t minBytes = 32 << 20, maxBytes = 32 << 20;
    uint64_t stepBytes = 1 << 20;
    double stepFactor = 1;  // > 1: multiply
    int iters = 20, warmup = 5, check = 1;
    int cycles = 1;  // -N: each size measured this many times, a row each (nccl-tests' run_cycles)
    uint32_t root = 0;
    uint32_t nranks = 1;
    HcclDataType dtype = HCCL_DATA_TYPE_FP32;
    HcclReduceOp op = HCCL_REDUCE_SUM;
    bool hcclTestTable = false;  // print HCCL Test's columns instead of nccl-tests'
    bool topology = false;       // print the communicator's description first (# lines)
    MemoryMode memory = MemoryMode::Malloc;  // --memory: where buffers come from
};

// Element counts of one call: the API's count argument and what each buffer holds.
struct Layout {
    uint64_t count = 0;
    uint64_t sendElems = 0;
    uint64_t recvElems = 0;
};

struct PerfOp {
    const char* name;
    bool reduces;
    bool hasRoot;
    bool inPlace;  // false: HCCL requires distinct buffers (the in-place columns read n/a)
    Layout (*layout)(uint64_t elems, uint32_t n);
    double (*busFactor)(uint32_t n);  // nccl-tests' algbw -> busbw factor
    // Where send and receive sit inside one buffer when run in place.
    void (*placeInPlace)(char* buf, const Layout& l, uint32_t rank, size_t elemSize, void** send, void** recv);
    HcclResult (*call)(void* send, void* recv, const Layout& l, const PerfOptions& o, uint32_t rank, HcclComm comm,
                       aclrtStream stream);
    void (*fill)(void* send, void* recv, const Layout& l, uint32_t rank, const PerfOptions& o);
    // Wrong elements on this rank.
    uint64_t (*verify)(const void* send, const void* recv, const Layout& l, uint32_t rank, const PerfOptions& o);
};

const PerfOp* findPerfOp(const std::string& name);

int runPerf(const PerfOp& op, int argc, char** argv);

}  // namespace hostccl::perf
