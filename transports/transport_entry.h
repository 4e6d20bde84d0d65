// What a transport exports to the link factory: one entry per transport folder,
// listed in transports/transport_table.cc. The factory (link_negotiation.h) walks
// the table in order; the lower rank of a pair offers the first transport this
// pair wants that it can set up, the higher rank answers yes or no, and a "no"
// moves both to the next entry. TCP is the last entry and always agrees, so a
// pair always ends with a link. A new transport is a folder with its link and its
// entry, and a row in the table (and, if its links cost unlike any existing class,
// a row in transports/link_class.h).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "common/deadline.h"
#include "common/error.h"
#include "common/net/socket.h"
#include "transports/link.h"
#include "transports/link_class.h"

namespace hostccl::transport {

// The two ranks of a pair as a transport sees them: enough to decide whether it
// is wanted and to build its link.
struct PairEnds {
    uint32_t selfRank = 0, peerRank = 0;
    std::string selfIp, peerIp;
    uint32_t selfPid = 0, peerPid = 0;
    bool sameHost = false;
    bool sameProcess = false;  // threads of one process (also on one host)
    uint64_t commId = 0;
    uint32_t commSize = 0;
    bool offering() const { return selfRank < peerRank; }
};

// One side's half of a transport between its offer (or acceptance) and its link.
class PendingLink {
public:
    virtual ~PendingLink() = default;
    // Carried with the offer to the peer (at most 62 bytes), e.g. a segment name.
    virtual std::string payload() const { return {}; }
    // The peer answered the offer, yes or no: release what only the answer needed.
    virtual void answered() {}
    // Both ends agreed: the link over `fd`. Null with `why` if it cannot be made; then
    // `fd` must still be usable (the factory falls back to TCP over it), unless this
    // is the last transport of the table.
    virtual std::unique_ptr<Link> connect(net::Fd& fd, Deadline deadline, std::string* why) = 0;
};

struct TransportEntry {
    const char* name;     // as HOSTCCL_TRANSPORT names it, and in logs
    char tag;             // the offer's first byte on the wire; unique in the table
    LinkClass linkClass;  // the cost model's class of its links
    HcclResult failCode;  // init's result when it is forced (HOSTCCL_TRANSPORT) and fails
    // Whether the pair wants it when no transport is forced.
    bool (*wanted)(const PairEnds& ends);
    // The offering (lower) rank's half; null with `why` when it cannot be set up here.
    std::unique_ptr<PendingLink> (*offer)(const PairEnds& ends, std::string* why);
    // The answering rank's half, from the offer's payload; null with `why` to decline.
    std::unique_ptr<PendingLink> (*accept)(const PairEnds& ends, const std::string& payload, std::string* why);
    // Optional: both ends of a pair of threads of one process, without a connection.
    bool (*inProcessPair)(const PairEnds& ends, std::unique_ptr<Link>* mine, std::unique_ptr<Link>* theirs,
                          std::string* why) = nullptr;
};

}  // namespace hostccl::transport
