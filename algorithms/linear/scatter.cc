#include "algorithms/linear/scatter.h"

#include <cstring>

namespace hostccl {

HcclResult LinearScatter::run(Context& ctx) const {
    const CollArgs& a = ctx.args();
    const size_t bytes = a.count * ctx.elemSize();
    char* out = static_cast<char*>(a.recvBuf);
    if (ctx.rank() != a.root) {
        ctx.recv(a.root, out, bytes);
        return ctx.waitAll();
    }
    const char* in = static_cast<const char*>(a.sendBuf);
    for (uint32_t p = 0; p < ctx.size(); ++p)
        if (p != a.root) ctx.send(p, in + p * bytes, bytes);
    const char* own = in + a.root * bytes;
    if (own != out && bytes > 0) ctx.copy(out, own, bytes);
    return ctx.waitAll();
}

}  // namespace hostccl
