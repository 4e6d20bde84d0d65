// What an algorithm works with: its rank among `size`, the op's arguments, and
// non-blocking send / receive / receive-and-reduce to any peer, completed by
// waitAll(). The context stamps every message with the op's tag so the receiver
// can check that both sides run the same op.
#pragma once

#include <atomic>
#include <chrono>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "algorithms/algo_override.h"
#include "algorithms/coll_args.h"
#include "common/comm_failure.h"
#include "common/deadline.h"
#include "common/error.h"
#include "transports/link.h"

namespace hostccl {

namespace transport {
class Driver;
}

// The communicator as an algorithm sees it.
struct OpStorage;
class Tracer;
class SelectorCosts;
class SymmetricWindows;
class ProcessBoard;

// The links to the peers, opened when first asked for (core/links/link_table.h).
class PeerLinks {
public:
    virtual ~PeerLinks() = default;
    // The link to `peer`, connected first if need be (bounded by `deadline` and by
    // HCCL_CONNECT_TIMEOUT); null, with `code` and `why`, when it cannot be had.
    virtual transport::Link* get(uint32_t peer, Deadline deadline, HcclResult* code, std::string* why) = 0;
    // The link if it is already connected, else null.
    virtual transport::Link* existing(uint32_t peer) const = 0;
    // Before an op that posts to every other rank: connects the missing links several
    // at a time rather than one after another as the posts come. Best effort: a peer
    // that cannot be had is left for the post, which reports it.
    virtual void connectAheadToAll(Deadline /*deadline*/) {}
    // A message of an earlier collective (sequence number below `seq`) that arrived
    // and that no op received: the sign that ranks disagreed on an op whose
    // disagreeing sides exchanged nothing. False when none can be seen.
    virtual bool unclaimedBefore(uint64_t /*seq*/, uint32_t* /*peer*/, transport::WireHeader* /*h*/) const {
        return false;
    }
};

// What live monitoring (monitor/) learns from an op's waits. The op's thread
// writes, the monitor's reads; null in a view nobody monitors (the simulator's).
struct OpWatch {
    std::atomic<int64_t> waitingOn{-1};  // the peer a sleeping wait waits for (-1: none)
    std::atomic<uint64_t> progress{0};   // bumped whenever a wait's pass moves bytes
    // The op's first wait (transport::WaitWatch): how long past spinning it waited
    // until every transfer had begun, and for which peer (0 and -1: it did not wait).
    uint64_t arrivalNs = 0;
    int64_t latePeer = -1;
};

struct CommView {
    uint32_t rank = 0;
    uint32_t size = 1;
    uint64_t commId = 0;
    std::string name;
    PeerLinks* links = nullptr;           // to every peer, on demand
    std::vector<char>* scratch = nullptr;  // grows on demand, owned by the communicator
    uint64_t seq = 0;                      // this op's collective sequence number
    bool sharedMemoryMesh = false;         // size > 1, every peer reachable through shared memory, and few
                                           // enough ranks that connecting every pair is cheap (direct algorithms)
    bool singleProcess = false;            // every rank is a thread of this process
    bool crowded = false;                  // this machine runs more of the comm's ranks than it has cores (emulated hosts share them)
    AlgoOverride algoOverride;             // HCCL_ALGO / hcclAlgo
    // Per rank: its host, numbered in order of lowest rank (shared: simulated ranks
    // would otherwise hold n copies of it).
    std::shared_ptr<const std::vector<uint32_t>> nodeOf;
    // Per host, its ranks in rank order (what the hierarchical algorithms group by).
    std::shared_ptr<const std::vector<std::vector<uint32_t>>> hostRanks;
    uint32_t nodes = 1;
    Tracer* tracer = nullptr;              // HOSTCCL_TRACE: records each step
    std::shared_ptr<SelectorCosts> costs;  // the selector's cost model (selector.h)
    const SymmetricWindows* windows = nullptr;  // HcclCommSymWinRegister's (direct/symmetric_windows.h)
    ProcessBoard* board = nullptr;  // singleProcess: where the direct algorithms meet (direct/process_board.h)
    OpWatch* watch = nullptr;       // live monitoring, when the communicator has it
    // The simulator's: who completes transfers (null: this thread polls the links),
    // and where an op keeps its transfers (null: per thread; simulated ranks share one).
    transport::Driver* driver = nullptr;
    OpStorage* storage = nullptr;
};

// Sets nodeOf, nodes and hostRanks from each rank's host number (hosts numbered 0..).
void setHosts(CommView* view, std::vector<uint32_t> nodeOf);

// Where an op keeps its transfers, reused from op to op.
struct OpStorage {
    std::deque<transport::Transfer> posted;  // stable addresses for the links
    std::vector<transport::Transfer*> pending;
};

class Context {
public:
    Context(const CommView& comm, const CollArgs& args, Deadline deadline, CommFailure* failure);

    uint32_t rank() const { return comm_.rank; }
    uint32_t size() const { return comm_.size; }
    const CollArgs& args() const { return args_; }
    size_t elemSize() const { return elemSize_; }
    ReduceFn reduceFn() const { return reduce_; }
    ErrorSite site() const;
    bool sharedMemoryMesh() const { return comm_.sharedMemoryMesh; }
    bool singleProcess() const { return comm_.singleProcess; }
    bool crowded() const { return comm_.crowded; }
    uint32_t nodeOf(uint32_t rank) const { return (*comm_.nodeOf)[rank]; }
    const std::vector<std::vector<uint32_t>>& hostRanks() const { return *comm_.hostRanks; }
    uint32_t nodes() const { return comm_.nodes; }
    SelectorCosts* costs() const { return comm_.costs.get(); }
    const SymmetricWindows* windows() const { return comm_.windows; }
    ProcessBoard* board() const { return comm_.board; }
    Deadline deadline() const { return deadline_; }
    CommFailure* failure() const { return failure_; }
    // The bytes the op moves per rank (gathered collectives: the whole result;
    // scattered ones: the whole input), which is what decides between algorithms.
    // For HcclAlltoAllV, whose counts are each rank's own, this rank's bytes only.
    uint64_t opBytes() const;
    // Whether every rank computes the same opBytes() (false for HcclAlltoAllV): the
    // selector may weigh sizes only then.
    bool sizesAgreed() const;
    const std::string& commName() const { return comm_.name; }
    // The family HCCL_ALGO asks for this op (Auto: the selector decides).
    AlgoFamily forcedFamily() const { return comm_.algoOverride.forOp(algoOpOf(args_.type)); }
    // Where a peer's described region lies in this process (nullptr and `why` if
    // the link to that peer cannot share memory).
    char* mapPeerRegion(uint32_t peer, const transport::SharedRegion& r, std::string* why) const {
        transport::Link* l = comm_.links->existing(peer);
        if (l == nullptr) *why = "no link to rank " + std::to_string(peer);
        return l ? l->mapPeerRegion(r, why) : nullptr;
    }

    // Connects ahead to every other rank (PeerLinks::connectAheadToAll).
    void connectAheadToAll();
    void send(uint32_t peer, const void* buf, size_t bytes);
    void recv(uint32_t peer, void* buf, size_t bytes);
    // dst = local (op) incoming, reduced as the data arrives.
    void recvReduce(uint32_t peer, void* dst, const void* local, size_t bytes);
    // Point-to-point messages carry their own count and dtype.
    void sendP2p(uint32_t peer, const void* buf, uint64_t count, HcclDataType dtype);
    void recvP2p(uint32_t peer, void* buf, uint64_t count, HcclDataType dtype);
    // A peer whose next message this rank has not received is a point-to-point one:
    // every link connected so far is advanced once and looked at, from rank `from`
    // on. False when none is (yet), and always when simulated.
    bool pointToPointSender(uint32_t from, uint32_t* peer);

    // Waits for everything posted since the last waitAll.
    HcclResult waitAll();

    // An algorithm that hands the op to another (a direct algorithm falling back)
    // names it here, for the trace and the debug log.
    void handOver(const char* algorithm) { handedTo_ = algorithm; }
    const char* handedTo() const { return handedTo_; }

    // What every message of this op carries to name it (message index 0): two ranks
    // run the same op when their tags agree.
    transport::MsgTag opTag() const;
    // A message of an earlier op that no op of this rank received, named with its
    // sender; empty when none (PeerLinks::unclaimedBefore).
    std::string strayMessage() const;

    // HOSTCCL_TRACE: a step that is not a set of transfers (`what`: the direct
    // algorithms' meeting on the process board), from `start` to now.
    void traceMeeting(std::chrono::steady_clock::time_point start, const char* what) const;
    bool tracing() const { return comm_.tracer != nullptr; }

    // Scratch memory of at least `bytes`, valid until the op ends.
    char* scratch(size_t bytes);

    // Local work outside transfers (a simulator's clock counts it): dst = src, and
    // dst = a (op) b over `count` elements.
    void copy(void* dst, const void* src, size_t bytes);
    void reduce(void* dst, const void* a, const void* b, size_t count);

private:
    transport::Transfer& post(uint32_t peer, transport::Transfer::Dir dir);
    void abandonUnfinished(HcclResult rc);
    HcclResult waitHere();
    transport::Link* linkTo(uint32_t peer);
    transport::MsgTag collectiveTag(const transport::Transfer& t);
    void traceStep(std::chrono::steady_clock::time_point start) const;

    const CommView& comm_;
    const CollArgs& args_;
    Deadline deadline_;
    CommFailure* failure_;
    size_t elemSize_;
    ReduceFn reduce_;
    const char* handedTo_ = nullptr;
    uint32_t waits_ = 0;  // waitAll calls so far: the first one times the others' arrival
    // Stand-ins for peers that could not be connected: they fail what is posted on them.
    std::vector<std::unique_ptr<transport::Link>> unreachable_;
    // Storage reused from op to op on this thread: an op must not allocate per message.
    std::deque<transport::Transfer>& posted_;  // stable addresses for the links
    std::vector<transport::Transfer*>& pending_;
};

}  // namespace hostccl
