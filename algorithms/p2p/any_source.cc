#include "algorithms/p2p/any_source.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "transports/progress.h"

namespace hostccl {

namespace {
// Nothing has arrived: yield a few times (a sender on this host is usually about to
// write), then sleep with back-off, so a rank waiting long leaves its core to others.
class Pause {
public:
    void operator()() {
        if (++rounds_ <= kYieldRounds) return std::this_thread::yield();
        std::this_thread::sleep_for(sleep_);
        sleep_ = std::min(sleep_ * 2, kMaxSleep);
    }

private:
    static constexpr int kYieldRounds = 64;
    static constexpr std::chrono::microseconds kMaxSleep{500};
    int rounds_ = 0;
    std::chrono::microseconds sleep_{20};
};
}  // namespace

HcclResult receiveFromAnySource(Context& ctx) {
    const CollArgs& a = ctx.args();
    ErrorSite site = ctx.site();
    if (ctx.size() < 2) return fail(HCCL_E_PARA, site, "a receive from any source needs another rank to send");
    // Looking from the rank after this one spreads the senders' turns.
    const uint32_t from = (ctx.rank() + 1) % ctx.size();
    uint32_t peer = 0;
    for (Pause pause; !ctx.pointToPointSender(from, &peer); pause()) {
        if (CommFailure* f = ctx.failure(); f != nullptr && f->failed()) return transport::endedByFailure(*f, site);
        if (ctx.deadline().expired()) {
            return transport::failWith(ctx.failure(), HCCL_E_TIMEOUT, site,
                                       fmt::format("rank {} timed out receiving from any source: no rank sent to it",
                                                   ctx.rank()));
        }
    }
    ctx.recvP2p(peer, a.recvBuf, a.count, a.dtype);
    const HcclResult rc = ctx.waitAll();
    if (rc == HCCL_SUCCESS) *a.anySource = peer;
    return rc;
}

}  // namespace hostccl
