#include "algorithms/direct/peer_windows.h"

#include <cstring>

#include "common/stream_copy.h"

namespace hostccl {

using transport::SharedRegion;

namespace {
// An empty region needs no mapping; anything else must be mappable by the other
// processes unless every rank is a thread of this one.
bool shareable(const Context& ctx, const SharedRegion& r) {
    return r.bytes == 0 || ctx.singleProcess() || transport::mappableByOtherProcesses(r);
}
}  // namespace

HcclResult PeerWindows::open(Context& ctx, size_t regionsPerPeer, bool canJoin, const Describe& describe) {
    const uint32_t n = ctx.size();
    const size_t msg = messageBytes(regionsPerPeer);
    regionsPerPeer_ = regionsPerPeer;
    sent_.assign(msg * n, 0);
    received_.assign(msg * n, 0);
    std::vector<SharedRegion> regions(regionsPerPeer);
    for (uint32_t p = 0; p < n; ++p) {
        if (p == ctx.rank()) continue;
        describe(p, regions.data());
        for (const SharedRegion& r : regions) canJoin = canJoin && shareable(ctx, r);
        std::memcpy(sent_.data() + p * msg + sizeof(Header), regions.data(), regionsPerPeer * sizeof(SharedRegion));
    }
    for (uint32_t p = 0; p < n; ++p) {
        if (p == ctx.rank()) continue;
        Header h{canJoin ? 1u : 0u, static_cast<uint32_t>(regionsPerPeer)};
        std::memcpy(sent_.data() + p * msg, &h, sizeof h);
        ctx.send(p, sent_.data() + p * msg, msg);
        ctx.recv(p, received_.data() + p * msg, msg);
    }
    HOSTCCL_CHECK(ctx.waitAll());
    usable_ = canJoin;
    for (uint32_t p = 0; p < n; ++p) {
        Header h;
        std::memcpy(&h, received_.data() + p * msg, sizeof h);
        if (p != ctx.rank()) usable_ = usable_ && h.canJoin == 1;
    }
    return HCCL_SUCCESS;
}

SharedRegion PeerWindows::received(uint32_t peer, size_t i) const {
    SharedRegion r;
    const char* at = received_.data() + peer * messageBytes(regionsPerPeer_) + sizeof(Header) + i * sizeof r;
    std::memcpy(&r, at, sizeof r);
    return r;
}

char* PeerWindows::region(Context& ctx, uint32_t peer, size_t i) {
    SharedRegion r = received(peer, i);
    if (r.bytes == 0) return nullptr;
    std::string why;
    char* p = ctx.mapPeerRegion(peer, r, &why);
    if (p == nullptr) fail(fmt::format("cannot map rank {}'s buffer: {}", peer, why));
    return p;
}

void PeerWindows::fail(std::string why) {
    if (failure_.empty()) failure_ = std::move(why);
}

HcclResult PeerWindows::close(Context& ctx) {
    streamCopyFence();  // every streamed store lands before a peer hears "done"
    const uint32_t n = ctx.size();
    const char failed = failure_.empty() ? 0 : 1;
    std::vector<char> status(n, 0);
    for (uint32_t p = 0; p < n; ++p) {
        if (p == ctx.rank()) continue;
        ctx.send(p, &failed, 1);
        ctx.recv(p, &status[p], 1);
    }
    HOSTCCL_CHECK(ctx.waitAll());
    if (!failure_.empty()) return hostccl::fail(HCCL_E_INTERNAL, ctx.site(), "direct algorithm: {}", failure_);
    for (uint32_t p = 0; p < n; ++p)
        if (status[p] != 0)
            return hostccl::fail(HCCL_E_INTERNAL, ctx.site(), "direct algorithm: rank {} failed (see its log)", p);
    return HCCL_SUCCESS;
}

}  // namespace hostccl
