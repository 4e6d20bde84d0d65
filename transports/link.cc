#include "transports/link.h"

#include <fmt/format.h>

#include "common/datatype.h"

namespace hostccl::transport {

namespace {
// "AllReduce seq 3 (count 12, int32, sum" without the closing parenthesis.
std::string opFields(const MsgTag& t) {
    std::string what = fmt::format("{} {} {}", collName(t.coll), t.kind == MsgKind::PointToPoint ? "msg" : "seq",
                                   t.seq);
    what += fmt::format(" (count {}, {}", t.count, dtypeName(static_cast<HcclDataType>(t.dtype)));
    if (isReduction(t.coll)) what += fmt::format(", {}", reduceOpName(static_cast<HcclReduceOp>(t.redop)));
    if (hasRoot(t.coll)) what += fmt::format(", root {}", t.root);
    return what;
}
}  // namespace

std::string describeOp(const MsgTag& t) { return opFields(t) + ")"; }

std::string describeTag(const MsgTag& t, uint64_t bytes) {
    return opFields(t) + fmt::format(", message {}, {} bytes)", t.index, bytes);
}

bool sameOp(const MsgTag& a, const MsgTag& b) {
    return a.kind == b.kind && a.coll == b.coll && a.dtype == b.dtype && a.redop == b.redop && a.root == b.root &&
           a.seq == b.seq && a.count == b.count;
}

WireHeader makeHeader(uint64_t commId, const MsgTag& tag, uint64_t bytes) {
    WireHeader h{};
    h.magic = kWireMagic;
    h.kind = static_cast<uint8_t>(tag.kind);
    h.coll = static_cast<uint8_t>(tag.coll);
    h.dtype = tag.dtype;
    h.redop = tag.redop;
    h.root = tag.root;
    h.index = tag.index;
    h.commId = commId;
    h.seq = tag.seq;
    h.count = tag.count;
    h.bytes = bytes;
    return h;
}

MsgTag tagOf(const WireHeader& h) {
    MsgTag t;
    t.kind = static_cast<MsgKind>(h.kind);
    t.coll = static_cast<CollType>(h.coll);
    t.dtype = h.dtype;
    t.redop = h.redop;
    t.root = h.root;
    t.seq = h.seq;
    t.count = h.count;
    t.index = h.index;
    return t;
}

std::string headerMismatch(const WireHeader& got, uint64_t commId, const MsgTag& want, uint64_t wantBytes) {
    if (got.magic != kWireMagic) return "peer sent a malformed frame (bad magic)";
    if (got.commId != commId) return fmt::format("peer sent a frame of another communicator ({:x})", got.commId);
    const MsgTag theirs = tagOf(got);
    if (sameMessage(theirs, got.bytes, want, wantBytes)) return "";
    return fmt::format("operation mismatch: this rank expects {} but the peer sent {}", describeTag(want, wantBytes),
                       describeTag(theirs, got.bytes));
}

char* Link::mapPeerRegion(const SharedRegion&, std::string* why) {
    *why = std::string("a ") + kind() + " link cannot share memory";
    return nullptr;
}

}  // namespace hostccl::transport
