#include "algorithms/direct/peer_windows.h"

#include <chrono>
#include <cstring>

#include "common/datatype.h"
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

const SymmetricWindow* PeerWindows::commonWindow(const Context& ctx, const std::vector<Range>& ranges) {
    const SymmetricWindows* windows = ctx.windows();
    if (windows == nullptr || windows->empty()) return nullptr;  // the common case: one atomic load
    const SymmetricWindow* common = nullptr;
    for (const Range& r : ranges) {
        if (r.bytes == 0) continue;
        const SymmetricWindow* w = windows->find(r.p, r.bytes);
        if (w == nullptr || (common != nullptr && w != common)) return nullptr;
        common = w;
    }
    return common != nullptr && common->shareable ? common : nullptr;
}

HcclResult PeerWindows::open(Context& ctx, size_t regionsPerPeer, bool canJoin, Describe describe) {
    regionsPerPeer_ = regionsPerPeer;
    rank_ = ctx.rank();
    describe_ = std::move(describe);
    if (ctx.board() != nullptr) return openOnBoard(ctx, canJoin);
    const uint32_t n = ctx.size();
    const size_t msg = messageBytes(regionsPerPeer);
    windows_ = ctx.windows();
    sent_.assign(msg * n, 0);
    received_.assign(msg * n, 0);
    std::vector<Range> ranges(regionsPerPeer * n, Range{nullptr, 0});
    for (uint32_t p = 0; p < n; ++p)
        if (p != ctx.rank()) describe_(p, ranges.data() + p * regionsPerPeer);
    // Inside one registered window: offsets into it, nothing to look up.
    const SymmetricWindow* window = commonWindow(ctx, ranges);
    if (window != nullptr && log::logger().should_log(spdlog::level::debug))
        log::debug("{}: buffers in symmetric window {}: offsets sent, nothing described", hostccl::describe(ctx.site()), window->id);
    for (uint32_t p = 0; p < n; ++p) {
        if (p == ctx.rank()) continue;
        for (size_t i = 0; i < regionsPerPeer; ++i) {
            const Range& range = ranges[p * regionsPerPeer + i];
            SharedRegion r{};
            if (window != nullptr) {
                r.address = range.bytes == 0 ? 0 : static_cast<uint64_t>(static_cast<const char*>(range.p) - window->base);
                r.bytes = range.bytes;
            } else {
                r = transport::describeRegion(range.p, range.bytes);
                canJoin = canJoin && shareable(ctx, r);
            }
            std::memcpy(sent_.data() + p * msg + sizeof(Header) + i * sizeof r, &r, sizeof r);
        }
    }
    for (uint32_t p = 0; p < n; ++p) {
        if (p == ctx.rank()) continue;
        Header h{canJoin ? 1u : 0u, static_cast<uint32_t>(regionsPerPeer), window != nullptr ? window->id : 0};
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

// A region as sent, or rebuilt from the peer's window and the offset it sent.
SharedRegion PeerWindows::received(uint32_t peer, size_t i) const {
    const char* message = received_.data() + peer * messageBytes(regionsPerPeer_);
    Header h;
    std::memcpy(&h, message, sizeof h);
    SharedRegion r;
    std::memcpy(&r, message + sizeof(Header) + i * sizeof r, sizeof r);
    if (h.window == 0 || r.bytes == 0) return r;
    const SymmetricWindow* w = windows_ != nullptr ? windows_->byId(h.window) : nullptr;
    const uint64_t offset = r.address, bytes = r.bytes;
    if (w == nullptr || peer >= w->ranks.size() || offset > w->size || bytes > w->size - offset) {
        r = SharedRegion{};  // maps to nothing: region() records why
        r.bytes = bytes;
        return r;
    }
    r = w->ranks[peer];
    r.address += offset;
    r.allocationOffset += offset;
    r.bytes = bytes;
    return r;
}

char* PeerWindows::region(Context& ctx, uint32_t peer, size_t i) {
    if (board_ != nullptr) {
        const Range r = fromBoard(peer, i);
        return r.bytes == 0 ? nullptr : const_cast<char*>(static_cast<const char*>(r.p));
    }
    SharedRegion r = received(peer, i);
    if (r.bytes == 0) return nullptr;
    if (r.address == 0) {
        fail(fmt::format("rank {} used a symmetric window this rank does not hold, or a range outside it", peer));
        return nullptr;
    }
    std::string why;
    char* p = ctx.mapPeerRegion(peer, r, &why);
    if (p == nullptr) fail(fmt::format("cannot map rank {}'s buffer: {}", peer, why));
    return p;
}

void PeerWindows::fail(std::string why, HcclResult code) {
    if (!failure_.empty()) return;
    failure_ = std::move(why);
    failureCode_ = code;
}

HcclResult PeerWindows::close(Context& ctx) {
    streamCopyFence();  // every streamed store lands before a peer hears "done"
    if (board_ != nullptr) return closeOnBoard(ctx);
    const uint32_t n = ctx.size();
    const char failed = failure_.empty() ? 0 : 1;
    std::vector<char> status(n, 0);
    for (uint32_t p = 0; p < n; ++p) {
        if (p == ctx.rank()) continue;
        ctx.send(p, &failed, 1);
        ctx.recv(p, &status[p], 1);
    }
    HOSTCCL_CHECK(ctx.waitAll());
    if (!failure_.empty()) return hostccl::fail(failureCode_, ctx.site(), "direct algorithm: {}", failure_);
    for (uint32_t p = 0; p < n; ++p)
        if (status[p] != 0)
            return hostccl::fail(HCCL_E_INTERNAL, ctx.site(), "direct algorithm: rank {} failed (see its log)", p);
    return HCCL_SUCCESS;
}

// The board's barrier stands for the exchange of descriptions: a rank that cannot
// join raises its flag, and every rank sees the same count.
HcclResult PeerWindows::openOnBoard(Context& ctx, bool canJoin) {
    board_ = ctx.board();
    published_ = Published{ctx.opTag(), regionsPerPeer_, &describe_};
    board_->publish(rank_, &published_);
    uint32_t refused = 0;
    std::string why;
    const ProcessBoard::Waiting how{ctx.deadline(), ctx.failure(), true, !ctx.crowded(), &published_.tag};
    const auto start = ctx.tracing() ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
    const HcclResult rc = board_->arrive(rank_, !canJoin, how, &refused, &why);
    ctx.traceMeeting(start, "every rank's buffers published on the process board");
    if (rc != HCCL_SUCCESS) {
        ctx.failure()->raise(rc, -1, "direct algorithm, meeting the other ranks: " + why);  // the cause, named
        return hostccl::fail(rc, ctx.site(), "direct algorithm, meeting the other ranks: {}", why);
    }
    usable_ = refused == 0;
    if (usable_) sameOpAs((rank_ + 1) % ctx.size());
    // Ranks that disagreed on an earlier op without exchanging anything that showed
    // it (two roots of a broadcast) left a message nobody received; over links the
    // next receive names it, here nothing is received, so look. Every peer has
    // passed the barrier, so whatever its earlier ops sent eagerly has landed.
    const std::string stray = ctx.strayMessage();
    if (!stray.empty())
        fail(fmt::format("operation mismatch: rank {} runs {} but {}", rank_, transport::describeOp(published_.tag), stray),
             HCCL_E_PARA);
    return HCCL_SUCCESS;
}

// A peer's describe function, called on this thread: it reads only that peer's
// arguments, which stay put until the peer has passed close().
PeerWindows::Range PeerWindows::fromBoard(uint32_t peer, size_t i) {
    constexpr size_t kMaxRegions = 4;  // more than any direct algorithm offers
    Range ranges[kMaxRegions] = {};
    if (!sameOpAs(peer) || regionsPerPeer_ > kMaxRegions || i >= regionsPerPeer_) return Range{nullptr, 0};
    (*static_cast<const Published*>(board_->entry(peer))->describe)(rank_, ranges);
    return ranges[i];
}


bool PeerWindows::sameOpAs(uint32_t peer) {
    const Published& theirs = *static_cast<const Published*>(board_->entry(peer));
    const transport::MsgTag &a = theirs.tag, &b = published_.tag;
    if (transport::sameOp(a, b) && theirs.regions == regionsPerPeer_) return true;
    fail(fmt::format("operation mismatch: rank {} runs {} but rank {} runs {}", rank_, transport::describeOp(b), peer,
                     transport::describeOp(a)),
         HCCL_E_PARA);
    return false;
}

// Every rank waits here until none reads another's buffers any more, whatever the
// deadline: a rank past open() only copies (bounded work) before it arrives, and
// one leaving early would let its caller free buffers a peer is still reading.
HcclResult PeerWindows::closeOnBoard(Context& ctx) {
    uint32_t failed = 0;
    std::string why;
    const ProcessBoard::Waiting how{ctx.deadline(), ctx.failure(), false, !ctx.crowded()};
    if (!failure_.empty()) board_->report(published_.tag.seq, failureCode_, failure_);
    const auto start = ctx.tracing() ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
    const HcclResult rc = board_->arrive(rank_, !failure_.empty(), how, &failed, &why);
    ctx.traceMeeting(start, "every rank done with the others' buffers (process board)");
    if (rc != HCCL_SUCCESS) return hostccl::fail(rc, ctx.site(), "direct algorithm, leaving: {}", why);
    // The cause becomes the communicator's failure, as a link's error would.
    HcclResult code = failureCode_;
    if (failure_.empty() && failed > 0 && board_->reported(published_.tag.seq, &code, &why))
        failure_ = fmt::format("{} of {} ranks failed, the first with: {}", failed, ctx.size(), why);
    if (!failure_.empty()) {
        ctx.failure()->raise(code, -1, "direct algorithm: " + failure_);
        return hostccl::fail(code, ctx.site(), "direct algorithm: {}", failure_);
    }
    if (failed > 0)
        return hostccl::fail(HCCL_E_INTERNAL, ctx.site(), "direct algorithm: {} of {} ranks failed (see their logs)",
                             failed, ctx.size());
    return HCCL_SUCCESS;
}

}  // namespace hostccl
