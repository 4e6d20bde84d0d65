// allreduce_perf: HcclAllReduce across local ranks, nccl-tests style.
#include "bench/perf/perf_harness.h"
#include "common/datatype.h"
#include "tests/support/values.h"

using namespace hostccl;
using namespace hostccl::perf;

int main(int argc, char** argv) {
    PerfOp op;
    op.name = "allreduce_perf";
    op.reduces = true;
    op.hasRoot = false;
    op.countFor = [](uint64_t elems, uint32_t) { return elems; };
    op.sendElems = [](uint64_t count, uint32_t) { return count; };
    op.recvElems = [](uint64_t count, uint32_t) { return count; };
    op.busFactor = [](uint32_t n) { return n > 1 ? 2.0 * (n - 1) / n : 0.0; };
    op.call = [](const Buffers& b, const PerfOptions& o, HcclComm c, aclrtStream s) {
        return HcclAllReduce(b.send, b.recv, b.count, o.dtype, o.op, c, s);
    };
    op.fill = [](void* send, uint64_t count, uint32_t rank, const PerfOptions& o) {
        for (uint64_t i = 0; i < count; ++i) test::store(o.dtype, send, i, test::input(o.op, rank, i));
    };
    op.verify = [](const void* recv, uint64_t count, uint32_t, const PerfOptions& o) {
        uint64_t wrong = 0;
        uint32_t n = o.nranks;
        for (uint64_t i = 0; i < count; ++i) wrong += test::load(o.dtype, recv, i) != test::reduced(o.op, n, i);
        return wrong;
    };
    return runPerf(op, argc, argv);
}
