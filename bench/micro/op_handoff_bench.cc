// What queuing costs: 8-byte ops on a one-rank communicator (nothing to wait for, so
// the time is the hand-off from the caller to whoever runs the op, and the op's own
// bookkeeping) and bare stream tasks (the queue alone), each either waited for at once,
// as torch's wait() does, or queued 400 at a time and waited for together, as
// allreduce_perf does. Ranks on other processes add their exchange on top:
//   build/bench/micro/op_handoff_bench [--benchmark_filter=op_then_wait]
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "hccl/hccl.h"

namespace {

constexpr int kQueued = 400;

struct OneRank {
    HcclComm comm = nullptr;
    aclrtStream stream = nullptr;
    std::vector<float> in = std::vector<float>(64, 1.0f), out = std::vector<float>(64, 0.0f);
    OneRank() {
        HcclRootInfo root;
        if (HcclGetRootInfo(&root) != HCCL_SUCCESS || HcclCommInitRootInfo(1, &root, 0, &comm) != HCCL_SUCCESS ||
            aclrtCreateStream(&stream) != ACL_SUCCESS) {
            std::fprintf(stderr, "op_handoff_bench: cannot create a one-rank communicator and a stream\n");
            std::exit(1);
        }
    }
    HcclResult op(const std::string& coll) {
        if (coll == "allreduce")
            return HcclAllReduce(in.data(), out.data(), 2, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, stream);
        if (coll == "broadcast") return HcclBroadcast(in.data(), 2, HCCL_DATA_TYPE_FP32, 0, comm, stream);
        if (coll == "allgather") return HcclAllGather(in.data(), out.data(), 2, HCCL_DATA_TYPE_FP32, comm, stream);
        return HcclAlltoAll(in.data(), 2, HCCL_DATA_TYPE_FP32, out.data(), 2, HCCL_DATA_TYPE_FP32, comm, stream);
    }
};

OneRank& oneRank() {
    static OneRank* r = new OneRank;  // streams may still run ops during exit
    return *r;
}

void opThenWait(benchmark::State& state, std::string coll) {
    OneRank& r = oneRank();
    for (auto _ : state) {
        if (r.op(coll) != HCCL_SUCCESS || aclrtSynchronizeStream(r.stream) != ACL_SUCCESS) state.SkipWithError("op failed");
    }
}

void queuedOps(benchmark::State& state, std::string coll) {
    OneRank& r = oneRank();
    for (auto _ : state) {
        for (int i = 0; i < kQueued; ++i) r.op(coll);
        if (aclrtSynchronizeStream(r.stream) != ACL_SUCCESS) state.SkipWithError("op failed");
    }
    state.SetItemsProcessed(int64_t(state.iterations()) * kQueued);
}

// A bare stream task through the runtime's C API (an 8-byte aclrtMemsetAsync): the
// queue alone (a waiting caller may run it when the last op queued let it).
void taskThenWait(benchmark::State& state) {
    OneRank& r = oneRank();
    for (auto _ : state) {
        aclrtMemsetAsync(r.out.data(), 8, 0, 8, r.stream);
        aclrtSynchronizeStream(r.stream);
    }
}

void queuedTasks(benchmark::State& state) {
    OneRank& r = oneRank();
    for (auto _ : state) {
        for (int i = 0; i < kQueued; ++i) aclrtMemsetAsync(r.out.data(), 8, 0, 8, r.stream);
        aclrtSynchronizeStream(r.stream);
    }
    state.SetItemsProcessed(int64_t(state.iterations()) * kQueued);
}

bool registerAll() {
    for (const char* coll : {"allreduce", "broadcast", "allgather", "alltoall"}) {
        benchmark::RegisterBenchmark((std::string("op_then_wait/") + coll).c_str(), opThenWait, coll)
            ->Unit(benchmark::kMicrosecond);
        benchmark::RegisterBenchmark((std::string("queued_ops/") + coll).c_str(), queuedOps, coll)
            ->Unit(benchmark::kMicrosecond);
    }
    benchmark::RegisterBenchmark("task_then_wait", taskThenWait)->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark("queued_tasks", queuedTasks)->Unit(benchmark::kMicrosecond);
    return true;
}
[[maybe_unused]] const bool registered = registerAll();

}  // namespace
