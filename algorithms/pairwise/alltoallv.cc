#include "algorithms/pairwise/alltoallv.h"

#include <cstring>

namespace hostccl {

HcclResult PairwiseAlltoAllV::run(Context& ctx) const {
    const CollArgs& a = ctx.args();
    const uint32_t n = ctx.size(), r = ctx.rank();
    const size_t es = ctx.elemSize();
    const char* in = static_cast<const char*>(a.sendBuf);
    char* out = static_cast<char*>(a.recvBuf);
    if (a.sendCounts[r] > 0) std::memmove(out + a.recvDispls[r] * es, in + a.sendDispls[r] * es, a.sendCounts[r] * es);
    for (uint32_t s = 1; s < n; ++s) {
        uint32_t to = (r + s) % n, from = (r + n - s) % n;
        ctx.send(to, in + a.sendDispls[to] * es, a.sendCounts[to] * es);
        ctx.recv(from, out + a.recvDispls[from] * es, a.recvCounts[from] * es);
    }
    return ctx.waitAll();
}

}  // namespace hostccl
