#include "transports/link.h"

#include <fmt/format.h>

#include "common/datatype.h"

namespace hostccl::transport {

std::string describeTag(const MsgTag& t, uint64_t bytes) {
    std::string what = fmt::format("{} {} {}", collName(t.coll), t.kind == MsgKind::PointToPoint ? "msg" : "seq",
                                   t.seq);
    what += fmt::format(" (count {}, {}", t.count, dtypeName(static_cast<HcclDataType>(t.dtype)));
    if (t.coll == CollType::AllReduce || t.coll == CollType::Reduce || t.coll == CollType::ReduceScatter ||
        t.coll == CollType::ReduceScatterV)
        what += fmt::format(", {}", reduceOpName(static_cast<HcclReduceOp>(t.redop)));
    if (t.coll == CollType::Broadcast || t.coll == CollType::Reduce || t.coll == CollType::Scatter)
        what += fmt::format(", root {}", t.root);
    what += fmt::format(", message {}, {} bytes)", t.index, bytes);
    return what;
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

std::string headerMismatch(const WireHeader& got, uint64_t commId, const MsgTag& want, uint64_t wantBytes) {
    if (got.magic != kWireMagic) return "peer sent a malformed frame (bad magic)";
    if (got.commId != commId) return fmt::format("peer sent a frame of another communicator ({:x})", got.commId);
    MsgTag theirs;
    theirs.kind = static_cast<MsgKind>(got.kind);
    theirs.coll = static_cast<CollType>(got.coll);
    theirs.dtype = got.dtype;
    theirs.redop = got.redop;
    theirs.root = got.root;
    theirs.seq = got.seq;
    theirs.count = got.count;
    theirs.index = got.index;
    bool same = theirs.kind == want.kind && theirs.coll == want.coll && theirs.dtype == want.dtype &&
                theirs.redop == want.redop && theirs.root == want.root && theirs.seq == want.seq &&
                theirs.count == want.count && theirs.index == want.index && got.bytes == wantBytes;
    if (same) return "";
    return fmt::format("operation mismatch: this rank expects {} but the peer sent {}", describeTag(want, wantBytes),
                       describeTag(theirs, got.bytes));
}

char* Link::mapPeerRegion(const SharedRegion&, std::string* why) {
    *why = std::string("a ") + kind() + " link cannot share memory";
    return nullptr;
}

}  // namespace hostccl::transport
