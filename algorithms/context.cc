#include "algorithms/context.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "common/datatype.h"
#include "common/fast_tls.h"
#include "common/trace/trace.h"
#include "transports/failed_link.h"
#include "transports/progress.h"

namespace hostccl {

using transport::MsgKind;
using transport::MsgTag;
using transport::Transfer;

namespace {
OpStorage& threadStorage() {
    thread_local OpStorage s;
    return s;
}

// Ops run one at a time per stream thread, so per-thread storage is never shared. The
// storage itself is too large for initial-exec TLS (common/fast_tls.h), so each op
// would reach it through __tls_get_addr; a pointer to it is not.
OpStorage& storageOf(const CommView& comm) {
    if (comm.storage != nullptr) return *comm.storage;
    HOSTCCL_FAST_TLS thread_local OpStorage* mine = nullptr;
    if (mine == nullptr) mine = &threadStorage();
    return *mine;
}
}  // namespace

Context::Context(const CommView& comm, const CollArgs& args, Deadline deadline, CommFailure* failure)
    : comm_(comm),
      args_(args),
      deadline_(deadline),
      failure_(failure),
      elemSize_(dtypeSize(args.dtype)),
      reduce_(isReduction(args.type) ? reduceFunction(args.dtype, args.op) : nullptr),
      posted_(storageOf(comm).posted),
      pending_(storageOf(comm).pending) {
    posted_.clear();
}

void setHosts(CommView* view, std::vector<uint32_t> nodeOf) {
    uint32_t nodes = 0;
    for (uint32_t h : nodeOf) nodes = std::max(nodes, h + 1);
    std::vector<std::vector<uint32_t>> ranks(nodes);
    for (uint32_t r = 0; r < nodeOf.size(); ++r) ranks[nodeOf[r]].push_back(r);
    view->nodes = nodes;
    view->nodeOf = std::make_shared<const std::vector<uint32_t>>(std::move(nodeOf));
    view->hostRanks = std::make_shared<const std::vector<std::vector<uint32_t>>>(std::move(ranks));
}

uint64_t Context::opBytes() const { return hostccl::opBytes(args_, elemSize_); }

bool Context::sizesAgreed() const {
    return algoOpOf(args_.type) != AlgoOp::AlltoAll || args_.type == CollType::AlltoAll ||
           args_.agreedCount.has_value();
}

ErrorSite Context::site() const {
    ErrorSite s;
    s.comm = comm_.name;
    s.rank = comm_.rank;
    s.op = collName(args_.type);
    s.seq = isPointToPoint(args_.type) ? 0 : comm_.seq;
    return s;
}

MsgTag Context::opTag() const {
    MsgTag t;
    t.kind = MsgKind::Collective;
    t.coll = args_.type;
    t.dtype = static_cast<uint8_t>(args_.dtype);
    t.redop = isReduction(args_.type) ? static_cast<uint8_t>(args_.op) : 0;
    t.root = hasRoot(args_.type) ? args_.root : 0;
    t.seq = comm_.seq;
    t.count = isVariable(args_.type) ? 0 : args_.count;
    return t;
}

void Context::copy(void* dst, const void* src, size_t bytes) {
    if (bytes == 0) return;
    // memmove: in-place ops' regions may overlap.
    if (comm_.driver == nullptr || comm_.driver->movesData()) std::memmove(dst, src, bytes);
    if (comm_.driver != nullptr) comm_.driver->localWork(transport::Driver::Work::Copy, bytes);
}

void Context::reduce(void* dst, const void* a, const void* b, size_t count) {
    if (count == 0) return;
    if (comm_.driver == nullptr || comm_.driver->movesData()) reduce_(dst, a, b, count);
    if (comm_.driver != nullptr) comm_.driver->localWork(transport::Driver::Work::Reduce, count * elemSize_);
}

std::string Context::strayMessage() const {
    uint32_t peer = 0;
    transport::WireHeader h{};
    if (comm_.links == nullptr || !comm_.links->unclaimedBefore(comm_.seq, &peer, &h)) return "";
    return fmt::format("rank {} sent {}, which no op of this rank received", peer,
                       transport::describeTag(transport::tagOf(h), h.bytes));
}

MsgTag Context::collectiveTag(const Transfer& transfer) {
    MsgTag t = opTag();
    t.index = transfer.link->nextCollectiveIndex(transfer.dir == Transfer::Dir::Send, comm_.seq);
    return t;
}

// The link to `peer`, connected now if this is the first message between the two;
// a peer that cannot be reached gets a link that fails what is posted on it, so the
// error surfaces from waitAll like any transfer's.
transport::Link* Context::linkTo(uint32_t peer) {
    if (transport::Link* l = comm_.links->existing(peer)) return l;
    HcclResult code = HCCL_SUCCESS;
    std::string why;
    if (transport::Link* l = comm_.links->get(peer, deadline_, &code, &why)) return l;
    unreachable_.push_back(std::make_unique<transport::FailedLink>(peer, comm_.commId, code, why));
    return unreachable_.back().get();
}

void Context::connectAheadToAll() { comm_.links->connectAheadToAll(deadline_); }

Transfer& Context::post(uint32_t peer, Transfer::Dir dir) {
    posted_.emplace_back();
    Transfer& t = posted_.back();
    t.dir = dir;
    t.link = linkTo(peer);
    return t;
}

void Context::send(uint32_t peer, const void* buf, size_t bytes) {
    Transfer& t = post(peer, Transfer::Dir::Send);
    t.src = buf;
    t.bytes = bytes;
    t.tag = collectiveTag(t);
    t.link->post(&t);
}

void Context::recv(uint32_t peer, void* buf, size_t bytes) {
    Transfer& t = post(peer, Transfer::Dir::Recv);
    t.dst = buf;
    t.bytes = bytes;
    t.tag = collectiveTag(t);
    t.link->post(&t);
}

void Context::recvReduce(uint32_t peer, void* dst, const void* local, size_t bytes) {
    Transfer& t = post(peer, Transfer::Dir::Recv);
    t.dst = dst;
    t.local = local;
    t.bytes = bytes;
    t.reduce = reduce_;
    t.elemSize = elemSize_;
    t.tag = collectiveTag(t);
    t.link->post(&t);
}

static MsgTag p2pTag(uint64_t seq, uint64_t count, HcclDataType dtype) {
    MsgTag t;
    t.kind = MsgKind::PointToPoint;
    t.coll = CollType::Send;  // both ends name the pair's traffic the same way
    t.dtype = static_cast<uint8_t>(dtype);
    t.seq = seq;
    t.count = count;
    return t;
}

void Context::sendP2p(uint32_t peer, const void* buf, uint64_t count, HcclDataType dtype) {
    Transfer& t = post(peer, Transfer::Dir::Send);
    t.src = buf;
    t.bytes = count * dtypeSize(dtype);
    t.tag = p2pTag(t.link->nextP2pSendSeq(), count, dtype);
    t.link->post(&t);
}

void Context::recvP2p(uint32_t peer, void* buf, uint64_t count, HcclDataType dtype) {
    Transfer& t = post(peer, Transfer::Dir::Recv);
    t.dst = buf;
    t.bytes = count * dtypeSize(dtype);
    t.tag = p2pTag(t.link->nextP2pRecvSeq(), count, dtype);
    t.link->post(&t);
}

bool Context::pointToPointSender(uint32_t from, uint32_t* peer) {
    if (comm_.driver != nullptr || comm_.links == nullptr) return false;
    for (uint32_t i = 0; i < comm_.size; ++i) {
        const uint32_t p = (from + i) % comm_.size;
        transport::Link* l = p == comm_.rank ? nullptr : comm_.links->existing(p);
        if (l == nullptr) continue;
        l->progress();  // RDMA gathers its arrived slots here
        transport::WireHeader h{};
        if (l->unclaimedHeader(&h) && h.kind == uint8_t(MsgKind::PointToPoint) && h.commId == comm_.commId) {
            *peer = p;
            return true;
        }
    }
    return false;
}

HcclResult Context::waitAll() {
    pending_.clear();
    for (Transfer& t : posted_) pending_.push_back(&t);
    auto start = comm_.tracer ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
    HcclResult rc = comm_.driver != nullptr ? comm_.driver->waitAll(pending_) : waitHere();
    if (comm_.tracer) traceStep(start);
    if (rc != HCCL_SUCCESS) abandonUnfinished(rc);
    posted_.clear();
    return rc;
}

// The transport's wait. Monitored (OpWatch): the links count what is posted, the op's
// first wait also times how long the others took to arrive, and every one tells the
// monitor what it waits for.
HcclResult Context::waitHere() {
    if (comm_.watch == nullptr) return transport::waitAll(pending_, deadline_, failure_, site(), comm_.crowded);
    for (const Transfer* t : pending_) {
        transport::LinkCounters& c = t->link->counters();
        const bool send = t->dir == Transfer::Dir::Send;
        transport::LinkCounters::add(send ? c.sentBytes : c.receivedBytes, t->bytes);
        transport::LinkCounters::add(send ? c.sends : c.receives, 1);
    }
    transport::WaitWatch w;
    w.timeArrival = waits_++ == 0;
    w.waitingOn = &comm_.watch->waitingOn;
    w.progress = &comm_.watch->progress;
    HcclResult rc = transport::waitAll(pending_, deadline_, failure_, site(), comm_.crowded, &w);
    if (w.timeArrival) {
        comm_.watch->arrivalNs = w.waitedNs;
        comm_.watch->latePeer = w.lastPeer;
    }
    return rc;
}

// A failed op returns at once and its caller may free the buffers it named: every
// link still holding one of its transfers is abandoned, which drops them from its
// queues and takes back what a peer could still be about to read from those buffers.
// The peer is not told (it learns the failure's cause from the notice, instead of
// blaming this rank); the communicator is failed anyway, its links carry nothing more.
void Context::abandonUnfinished(HcclResult rc) {
    for (Transfer& t : posted_)
        if (!t.complete) t.link->abandon(rc, fmt::format("rank {} gave up this link when its {} failed", comm_.rank,
                                                         collName(args_.type)));
}

// One trace event per step: which peers, which direction, how many bytes.
void Context::traceStep(std::chrono::steady_clock::time_point start) const {
    std::string transfers;
    for (const Transfer& t : posted_)
        transfers += fmt::format("{}{} {} {}B", transfers.empty() ? "" : ", ",
                                 t.dir == Transfer::Dir::Send ? "send to" : "recv from", t.link->peer(), t.bytes);
    comm_.tracer->step(start, std::chrono::steady_clock::now(),
                       fmt::format(R"("op":"{}","seq":{},"transfers":"{}")", collName(args_.type), comm_.seq, transfers));
}

void Context::traceMeeting(std::chrono::steady_clock::time_point start, const char* what) const {
    if (comm_.tracer == nullptr) return;
    comm_.tracer->step(start, std::chrono::steady_clock::now(),
                       fmt::format(R"("op":"{}","seq":{},"transfers":"{}")", collName(args_.type), comm_.seq, what));
}

char* Context::scratch(size_t bytes) {
    if (comm_.scratch->size() < bytes) comm_.scratch->resize(bytes);
    return comm_.scratch->data();
}

}  // namespace hostccl
