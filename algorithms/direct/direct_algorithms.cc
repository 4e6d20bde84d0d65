#include "algorithms/direct/direct_algorithms.h"

#include <algorithm>
#include <cstring>

#include "algorithms/blocks.h"
#include "algorithms/direct/peer_windows.h"
#include "common/stream_copy.h"

namespace hostccl {


namespace {
// Non-temporal stores pay once every rank's input and output together outgrow half
// the last-level cache; below that, the rank that reads a result next finds it in
// cache, and plain stores win (measured: 2 ranks, 2 MiB allreduce 25 % faster).
// Decided once per op (`outgrowsCache`), not per copy.
bool outgrowsCache(const Context& ctx) {
    static const size_t cache = lastLevelCacheBytes();
    return 2 * uint64_t(ctx.size()) * ctx.opBytes() >= cache / 2;
}

void copyOut(bool stream, void* dst, const void* src, size_t bytes) {
    if (stream)
        streamCopy(dst, src, bytes);
    else
        std::memcpy(dst, src, bytes);
}

// Out of place, reduced pieces this size stay in L1 while they are streamed to every output.
constexpr size_t kSegmentBytes = 32 * 1024;

// In place, the copies out land on lines just read: the piece and every input's segment
// of it must then still be in L1, a quarter of a 32-48 KiB L1d shared by the n inputs and
// the piece, as a power of two from 1 to 8 KiB. Measured (allreduce_perf 64 MiB in place,
// processes, 2 cores) against 32 KiB: 2 ranks 4 KiB 8.3-13.3 GB/s against 7.1-8.5,
// 4 ranks 2 KiB 4.6-5.3 against 4.2-4.5, 8 ranks 1 KiB 3.9-4.0 against 2.8-3.1. Out of
// place, the non-temporal copies to n outputs want the long pieces (4 ranks, 2 KiB:
// 2.5 GB/s against 4.0-4.3).
size_t inPlaceSegmentBytes(size_t inputs) {
    constexpr size_t kBudget = 12 * 1024, kMin = 1024, kMax = 8 * 1024;
    size_t bytes = kMax;
    while (bytes > kMin && bytes * (inputs + 1) > kBudget) bytes /= 2;
    return bytes;
}

// In place the reduce waits on memory once the ranks' buffers outgrow the cache: asking
// for every input's lines this many pieces ahead keeps loads in flight across the 4 KiB
// page boundaries of shared memory, where the hardware prefetcher stops. Measured
// (allreduce_perf 64 MiB in place, 4 processes, 2 cores, six interleaved runs): median
// 5.8 GB/s against 5.3; 2 and 8 ranks within their noise.
constexpr size_t kPrefetchPieces = 4;

void prefetchForWrite(const char* p, size_t bytes) {
    for (size_t b = 0; b < bytes; b += 64) __builtin_prefetch(p + b, 1, 3);
}

// In place (an output is one of the inputs), every line written was just read and
// sits in cache: a non-temporal store to it must first evict it, which made a 64 MiB
// allreduce of 2 processes in place 1.5x slower than the ring (4.5-4.8 GB/s against
// 6.7-7.3, allreduce_perf's in-place columns); plain stores leave it to be written back.
bool writesOverInputs(const std::vector<const char*>& in, const std::vector<char*>& out) {
    for (const char* o : out)
        if (std::find(in.begin(), in.end(), o) != in.end()) return true;
    return false;
}

// out[k] = in[0] (op) in[1] (op) ... for `count` elements, every input read once and
// every output written once, through an L1-sized piece of scratch.
void reduceToAll(Context& ctx, const std::vector<const char*>& in, const std::vector<char*>& out, uint64_t count) {
    const bool inPlace = writesOverInputs(in, out), big = outgrowsCache(ctx);
    const bool stream = big && !inPlace, prefetch = big && inPlace;
    const size_t es = ctx.elemSize(), pieceBytes = inPlace ? inPlaceSegmentBytes(in.size()) : kSegmentBytes;
    const uint64_t step = pieceBytes / es, end = count * es;
    char* piece = ctx.scratch(pieceBytes);
    const ReduceFn reduce = ctx.reduceFn();
    for (uint64_t off = 0; off < count; off += step) {
        const uint64_t n = std::min(step, count - off);
        const size_t at = off * es, ahead = at + kPrefetchPieces * pieceBytes;
        if (prefetch && ahead < end)
            for (const char* i : in) prefetchForWrite(i + ahead, std::min(pieceBytes, end - ahead));
        reduce(piece, in[0] + at, in[1] + at, n);
        for (size_t j = 2; j < in.size(); ++j) reduce(piece, piece, in[j] + at, n);
        for (char* o : out) copyOut(stream, o + at, piece, n * es);
    }
}

// A peer's region that must hold exactly `bytes`; nullptr (failure recorded) if not.
const char* expectRegion(Context& ctx, PeerWindows& w, uint32_t peer, uint64_t bytes) {
    if (w.regionBytes(peer, 0) != bytes) {
        w.fail(fmt::format("rank {} offers {} bytes where this rank expects {} (counts differ between ranks)", peer,
                           w.regionBytes(peer, 0), bytes));
        return nullptr;
    }
    return w.region(ctx, peer, 0);
}

// Results of one buffer written over another are only safe when the two are the
// same buffer (in place) or disjoint: peers read inputs while others write outputs.
bool sameOrDisjoint(const void* a, size_t an, const void* b, size_t bn) { return a == b || !overlaps(a, an, b, bn); }
}  // namespace

HcclResult DirectAlgorithm::fallBack(Context& ctx) const {
    log::debug("{}: some rank's buffers cannot be shared (not aclrtMalloc memory, or overlapping); running {}",
               describe(ctx.site()), fallback_.name());
    ctx.handOver(fallback_.name());
    return fallback_.run(ctx);
}

HcclResult DirectAllReduce::run(Context& ctx) const {
    const CollArgs& a = ctx.args();
    const uint32_t n = ctx.size(), me = ctx.rank();
    const size_t es = ctx.elemSize(), bytes = a.count * es;
    PeerWindows w;
    HOSTCCL_CHECK(w.open(ctx, 2, sameOrDisjoint(a.sendBuf, bytes, a.recvBuf, bytes), [&](uint32_t, PeerWindows::Range* r) {
        r[0] = {a.sendBuf, bytes};
        r[1] = {a.recvBuf, bytes};
    }));
    if (!w.usable()) return fallBack(ctx);
    const Block mine = evenBlocks(a.count, n)[me];
    if (mine.count == 0) return w.close(ctx);
    std::vector<const char*> in(n);
    std::vector<char*> out(n);
    for (uint32_t p = 0; p < n; ++p) {
        in[p] = p == me ? static_cast<const char*>(a.sendBuf) : w.region(ctx, p, 0);
        out[p] = p == me ? static_cast<char*>(a.recvBuf) : w.region(ctx, p, 1);
        if (in[p] == nullptr || out[p] == nullptr) return w.close(ctx);  // reported by close
        in[p] += mine.offset * es;
        out[p] += mine.offset * es;
    }
    reduceToAll(ctx, in, out, mine.count);
    return w.close(ctx);
}

HcclResult DirectAllGather::run(Context& ctx) const {
    const CollArgs& a = ctx.args();
    const uint32_t n = ctx.size(), me = ctx.rank();
    const size_t es = ctx.elemSize();
    const BlockLayout blocks = layoutFrom(a.recvCounts, a.recvDispls);
    char* out = static_cast<char*>(a.recvBuf);
    const size_t ownBytes = blocks[me].count * es;
    char* ownSlot = out + blocks[me].offset * es;
    const bool canJoin = a.sendBuf == ownSlot || !overlaps(a.sendBuf, ownBytes, out, layoutEnd(blocks) * es);
    PeerWindows w;
    HOSTCCL_CHECK(w.open(ctx, 1, canJoin,
                         [&](uint32_t, PeerWindows::Range* r) { r[0] = {a.sendBuf, ownBytes}; }));
    if (!w.usable()) return fallBack(ctx);
    const bool stream = outgrowsCache(ctx);
    if (a.sendBuf != ownSlot) copyOut(stream, ownSlot, a.sendBuf, ownBytes);
    for (uint32_t k = 1; k < n; ++k) {
        const uint32_t p = (me + k) % n;  // ranks start on different peers
        const uint64_t bytes = blocks[p].count * es;
        if (const char* src = expectRegion(ctx, w, p, bytes)) copyOut(stream, out + blocks[p].offset * es, src, bytes);
    }
    return w.close(ctx);
}

HcclResult DirectReduceScatter::run(Context& ctx) const {
    const CollArgs& a = ctx.args();
    const uint32_t n = ctx.size(), me = ctx.rank();
    const size_t es = ctx.elemSize();
    const BlockLayout blocks = layoutFrom(a.sendCounts, a.sendDispls);
    const char* in = static_cast<const char*>(a.sendBuf);
    char* out = static_cast<char*>(a.recvBuf);
    const Block mine = blocks[me];
    const size_t outBytes = mine.count * es;
    const bool canJoin = out == in + mine.offset * es || !overlaps(out, outBytes, in, layoutEnd(blocks) * es);
    PeerWindows w;
    HOSTCCL_CHECK(w.open(ctx, 1, canJoin, [&](uint32_t p, PeerWindows::Range* r) {
        r[0] = {in + blocks[p].offset * es, blocks[p].count * es};
    }));
    if (!w.usable()) return fallBack(ctx);
    std::vector<const char*> inputs(n);
    for (uint32_t p = 0; p < n; ++p) {
        inputs[p] = p == me ? in + mine.offset * es : expectRegion(ctx, w, p, outBytes);
        if (inputs[p] == nullptr && outBytes > 0) return w.close(ctx);
    }
    if (mine.count > 0) reduceToAll(ctx, inputs, {out}, mine.count);
    return w.close(ctx);
}

HcclResult DirectAlltoAllV::run(Context& ctx) const {
    const CollArgs& a = ctx.args();
    const uint32_t n = ctx.size(), me = ctx.rank();
    const size_t es = ctx.elemSize();
    const char* in = static_cast<const char*>(a.sendBuf);
    char* out = static_cast<char*>(a.recvBuf);
    const uint64_t sendEnd = layoutEnd(layoutFrom(a.sendCounts, a.sendDispls));
    const uint64_t recvEnd = layoutEnd(layoutFrom(a.recvCounts, a.recvDispls));
    PeerWindows w;
    HOSTCCL_CHECK(w.open(ctx, 1, !overlaps(in, sendEnd * es, out, recvEnd * es), [&](uint32_t p, PeerWindows::Range* r) {
        r[0] = {in + a.sendDispls[p] * es, a.sendCounts[p] * es};
    }));
    if (!w.usable()) return fallBack(ctx);
    const bool stream = outgrowsCache(ctx);
    copyOut(stream, out + a.recvDispls[me] * es, in + a.sendDispls[me] * es, a.sendCounts[me] * es);
    for (uint32_t k = 1; k < n; ++k) {
        const uint32_t p = (me + k) % n;
        const uint64_t bytes = a.recvCounts[p] * es;
        if (const char* src = expectRegion(ctx, w, p, bytes)) copyOut(stream, out + a.recvDispls[p] * es, src, bytes);
    }
    return w.close(ctx);
}

// Every rank copies one block of the root's buffer into every receiver that offers its
// buffer, so the copying runs on every rank's core at once (on 2 ranks the root and the
// receiver each copy half) instead of on each receiver's alone. A receiver whose buffer
// the other processes cannot map offers none and copies all of it itself.
HcclResult DirectBroadcast::run(Context& ctx) const {
    const CollArgs& a = ctx.args();
    const uint32_t n = ctx.size(), me = ctx.rank();
    const bool root = me == a.root;
    const size_t es = ctx.elemSize(), bytes = a.count * es;
    char* buf = static_cast<char*>(a.recvBuf);
    const bool offers = root || ctx.singleProcess() || transport::mappableByOtherProcesses(transport::describeRegion(buf, bytes));
    PeerWindows w;
    HOSTCCL_CHECK(w.open(ctx, 1, true, [&](uint32_t, PeerWindows::Range* r) {
        r[0] = offers ? PeerWindows::Range{buf, bytes} : PeerWindows::Range{nullptr, 0};
    }));
    if (!w.usable()) return fallBack(ctx);
    const char* src = root ? buf : expectRegion(ctx, w, a.root, bytes);
    if (src == nullptr) return w.close(ctx);
    const bool stream = outgrowsCache(ctx);
    if (!offers) copyOut(stream, buf, src, bytes);
    const Block mine = evenBlocks(a.count, n)[me];
    for (uint32_t q = 0; q < n && mine.count > 0; ++q) {
        if (q == a.root || (q == me && !offers) || (q != me && w.regionBytes(q, 0) == 0)) continue;
        char* dst = q == me ? buf : const_cast<char*>(expectRegion(ctx, w, q, bytes));
        if (dst == nullptr) return w.close(ctx);
        copyOut(stream, dst + mine.offset * es, src + mine.offset * es, mine.count * es);
    }
    return w.close(ctx);
}

HcclResult DirectReduce::run(Context& ctx) const {
    const CollArgs& a = ctx.args();
    const uint32_t n = ctx.size(), me = ctx.rank();
    const bool root = me == a.root;
    const size_t es = ctx.elemSize(), bytes = a.count * es;
    const bool canJoin = !root || sameOrDisjoint(a.sendBuf, bytes, a.recvBuf, bytes);
    PeerWindows w;
    HOSTCCL_CHECK(w.open(ctx, 2, canJoin, [&](uint32_t, PeerWindows::Range* r) {
        r[0] = {a.sendBuf, bytes};
        r[1] = root ? PeerWindows::Range{a.recvBuf, bytes} : PeerWindows::Range{nullptr, 0};  // only the root's is written
    }));
    if (!w.usable()) return fallBack(ctx);
    const Block mine = evenBlocks(a.count, n)[me];
    if (mine.count == 0) return w.close(ctx);
    std::vector<const char*> in(n);
    for (uint32_t p = 0; p < n; ++p) {
        in[p] = p == me ? static_cast<const char*>(a.sendBuf) : w.region(ctx, p, 0);
        if (in[p] == nullptr) return w.close(ctx);
        in[p] += mine.offset * es;
    }
    char* out = root ? static_cast<char*>(a.recvBuf) : w.region(ctx, a.root, 1);
    if (out == nullptr) return w.close(ctx);
    reduceToAll(ctx, in, {out + mine.offset * es}, mine.count);
    return w.close(ctx);
}

// Costs: the opening and closing handshakes, the windows' setup (describing the
// buffers, finding the mappings; on 2 ranks it measured about four message
// start-ups; threads of one process describe nothing), then one pass over memory.
namespace {
Linear handshakes(const CostModel& model) {
    const Linear setup{model.inProcess() ? 0 : 4 * model.params().of(LinkClass::Shm).alpha, 0};
    return 2.0 * model.directHandshake() + setup;
}
double others(const CostModel& model) { return double(model.ranks() - 1) / model.ranks(); }
}  // namespace

Linear DirectAllReduce::cost(const CostModel& model) const {
    return handshakes(model) + model.reduce(others(model)) + model.copy(1.0);
}
Linear DirectAllGather::cost(const CostModel& model) const { return handshakes(model) + model.copy(others(model)); }
Linear DirectReduceScatter::cost(const CostModel& model) const {
    return handshakes(model) + model.reduce(others(model)) + model.copy(1.0 / model.ranks());
}
Linear DirectAlltoAllV::cost(const CostModel& model) const { return handshakes(model) + model.copy(others(model)); }
// Each rank copies its block to every other receiver: (n-1)/n of the buffer per rank.
Linear DirectBroadcast::cost(const CostModel& model) const { return handshakes(model) + model.copy(others(model)); }
Linear DirectReduce::cost(const CostModel& model) const { return handshakes(model) + model.reduce(others(model)); }

}  // namespace hostccl
