// The transport interface. An algorithm posts sends and receives on Links and
// waits for them (transports/progress.h); it never knows what carries a Link.
// Every message travels with a header naming the op it belongs to, so a receiver
// detects ranks that disagree (different op, count, dtype, root or sequence) at the
// first message and reports both sides instead of hanging or corrupting data.
#pragma once

#include <poll.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/coll_type.h"
#include "common/reduce.h"
#include "hccl/hccl_types.h"
#include "transports/doorbell.h"
#include "transports/link_class.h"
#include "transports/shared_region.h"

namespace hostccl::transport {

enum class MsgKind : uint8_t { Collective = 1, PointToPoint = 2 };

// What both ends of a message must agree on.
struct MsgTag {
    MsgKind kind = MsgKind::Collective;
    CollType coll = CollType::AllReduce;
    uint8_t dtype = 0;
    uint8_t redop = 0;
    uint32_t root = 0;
    uint64_t seq = 0;    // collective: comm-wide op number; p2p: per-pair message number
    uint64_t count = 0;  // the op's count (0 for the V variants, whose blocks differ)
    uint32_t index = 0;  // k-th message of this op between this pair in this direction
};

// "AllReduce seq 3 (count 12, int32, sum)": the op a tag belongs to.
std::string describeOp(const MsgTag& t);
// The same with the message's index and size.
std::string describeTag(const MsgTag& t, uint64_t bytes);
// Both tags belong to the same op (whatever the message index).
bool sameOp(const MsgTag& a, const MsgTag& b);
// The message received is the one posted: same op, same index, same size.
inline bool sameMessage(const MsgTag& got, uint64_t gotBytes, const MsgTag& want, uint64_t wantBytes) {
    return sameOp(got, want) && got.index == want.index && gotBytes == wantBytes;
}

struct WireHeader {
    uint32_t magic;
    uint8_t kind;
    uint8_t coll;
    uint8_t dtype;
    uint8_t redop;
    uint32_t root;
    uint32_t index;
    uint64_t commId;
    uint64_t seq;
    uint64_t count;
    uint64_t bytes;
};
static_assert(sizeof(WireHeader) == 48, "wire layout");

constexpr uint32_t kWireMagic = 0x4843434c;  // "HCCL"

WireHeader makeHeader(uint64_t commId, const MsgTag& tag, uint64_t bytes);
MsgTag tagOf(const WireHeader& h);
// Empty when `got` matches what the receiver posted; otherwise a sentence naming
// both sides' values.
std::string headerMismatch(const WireHeader& got, uint64_t commId, const MsgTag& want, uint64_t wantBytes);

class Link;

// What a link has carried, for live monitoring (monitor/). One thread at a time
// runs a communicator's ops, so only that thread writes (add() is a load and a store,
// no locked instruction); any thread may read.
struct LinkCounters {
    std::atomic<uint64_t> sentBytes{0}, receivedBytes{0}, sends{0}, receives{0};
    // Bulk receives timed from their first byte to their last (network links only:
    // shared memory moves a message in one pass, there is no first byte to time from).
    std::atomic<uint64_t> timedBytes{0}, timedNs{0};
    static void add(std::atomic<uint64_t>& c, uint64_t v) {
        c.store(c.load(std::memory_order_relaxed) + v, std::memory_order_relaxed);
    }
};

// One posted send or receive. A receive with `reduce` set combines on arrival:
// dst = reduce(local, incoming), one pass over memory.
struct Transfer {
    enum class Dir : uint8_t { Send, Recv };
    Dir dir = Dir::Send;
    Link* link = nullptr;
    const void* src = nullptr;  // send
    void* dst = nullptr;        // recv
    size_t bytes = 0;
    const void* local = nullptr;  // recv-reduce operand
    ReduceFn reduce = nullptr;
    size_t elemSize = 1;
    MsgTag tag;

    // Progress, owned by the link.
    size_t moved = 0;
    uint64_t directSeq = 0;  // shm single copy: completes when the peer has acked this
    bool headerDone = false;
    bool complete = false;
    HcclResult error = HCCL_SUCCESS;
    std::string errorText;
};

class Link {
public:
    Link(uint32_t peer, uint64_t commId) : peer_(peer), commId_(commId) {}
    virtual ~Link() = default;
    Link(const Link&) = delete;
    Link& operator=(const Link&) = delete;

    // What joins the pair (the cost model's class); kind() names it in logs and status,
    // where links outside the classes (an unconnected one, a simulated one) say so.
    virtual LinkClass linkClass() const = 0;
    virtual const char* kind() const { return linkClassName(linkClass()); }
    // Queues a transfer; transfers in one direction complete in posting order.
    virtual void post(Transfer* t) = 0;
    // Advances queued transfers without blocking; true if any byte moved.
    virtual bool progress() = 0;
    // A file descriptor to poll while waiting, and the events wanted (0: nothing pending).
    virtual int pollFd() const = 0;
    virtual short pollEvents() const = 0;
    // Every descriptor to poll while waiting, with its events (a link of several
    // sockets has one each); false when the link has none.
    virtual bool appendPollFds(std::vector<pollfd>* fds) const {
        if (pollFd() < 0) return false;
        fds->push_back(pollfd{pollFd(), pollEvents(), 0});
        return true;
    }
    // Fails every pending and future transfer (abort, destroy).
    virtual void shutdown(HcclResult code, const std::string& why) = 0;
    // The op that posted the pending transfers failed and is returning: they are
    // dropped (failed) and the link is done, but the peer is not told, so it keeps
    // waiting for the failure's own notice and names its cause rather than this rank.
    // Whatever the peer could still read from the op's buffers is taken back.
    virtual void abandon(HcclResult code, const std::string& why) { shutdown(code, why); }
    // Blocking without a socket: read activityStamp() before a progress pass; if that
    // pass moved nothing, beginSleep(stamp) announces a sleep and gives the word to
    // sleep on (transports/doorbell.h), or returns false when the peer acted since
    // the stamp (then don't sleep). endSleep() follows every beginSleep that returned
    // true. Links that cannot do this return false and the caller backs off.
    virtual uint32_t activityStamp() const { return 0; }
    virtual bool canSleep() const { return false; }
    virtual bool beginSleep(uint32_t /*stamp*/, SleepWord* /*word*/) { return false; }
    virtual void endSleep() {}
    // Wakes this side's waiter if it sleeps on the link (any thread may call it).
    virtual void wakeWaiter() {}
    // Whether a transfer that has begun and cannot move now waits for the kernel
    // (a full socket buffer, the rest of a payload on the wire) rather than for a
    // peer that is about to act: then waiting blocks in poll at once.
    virtual bool kernelPaced() const { return false; }
    // Memory sharing with the peer (same host): where the peer's described region
    // can be read and written from this process. Links that cannot share memory
    // return nullptr and say why.
    virtual bool sharesMemory() const { return false; }
    virtual char* mapPeerRegion(const SharedRegion& r, std::string* why);
    // The header of a message that has arrived and that no posted receive waits for
    // (the op thread asks between its posts; a receive from any source asks which
    // peer sent one). Links that cannot look without consuming say false.
    virtual bool unclaimedHeader(WireHeader* /*h*/) const { return false; }
    // The kernel's smoothed round-trip time of the link's connection, microseconds
    // (the least of its sockets'), -1 when the transport has no such figure. Any
    // thread may ask (live monitoring's, while ops run).
    virtual double roundTripUs() const { return -1; }

    uint32_t peer() const { return peer_; }
    uint64_t commId() const { return commId_; }
    // How errors name the peer: "rank 3 (host h 10.0.0.2, pid 42)".
    const std::string& peerName() const { return peerName_; }
    void setPeerName(std::string name) { peerName_ = std::move(name); }
    LinkCounters& counters() { return counters_; }
    const LinkCounters& counters() const { return counters_; }
    uint64_t nextP2pSendSeq() { return ++p2pSent_; }
    uint64_t nextP2pRecvSeq() { return ++p2pReceived_; }
    // The index of the next message of collective op `seq` in one direction (the
    // counts restart with each op: nothing per op costs more than the links it uses).
    uint32_t nextCollectiveIndex(bool send, uint64_t seq) {
        if (indexSeq_ != seq) {
            indexSeq_ = seq;
            sentInOp_ = receivedInOp_ = 0;
        }
        return send ? sentInOp_++ : receivedInOp_++;
    }

private:
    const uint32_t peer_;
    const uint64_t commId_;
    std::string peerName_ = "rank " + std::to_string(peer_);
    LinkCounters counters_;
    uint64_t p2pSent_ = 0;
    uint64_t p2pReceived_ = 0;
    uint64_t indexSeq_ = UINT64_MAX;
    uint32_t sentInOp_ = 0, receivedInOp_ = 0;
};

}  // namespace hostccl::transport
