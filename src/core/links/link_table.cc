#include "core/links/link_table.h"

#include <map>
#include <thread>

#include "common/log.h"
#include "core/comm_settings.h"
#include "core/link_factory.h"
#include "core/net/acceptor.h"

namespace hostccl {

namespace {
constexpr auto kHandshakeStep = std::chrono::milliseconds(3000);  // an incoming peer proves itself within this
constexpr auto kWaitSlice = std::chrono::milliseconds(100);        // a failure is noticed within this
// Connection setups one rank runs at once ahead of an all-to-all: enough to hide a
// network round trip per peer, few enough that 256 ranks of one host (each with as
// many incoming setups on the listener's handler threads) stay far from the
// machine's thread and pid limits (the design allows at most 128).
constexpr size_t kConnectAheadWindow = 32;
// How long a dial made moot by the peer's winning connection still waits for the
// peer's answer (its refusal comes in microseconds from a live peer): dropping it
// sooner would have the peer warn of a connection cut mid-handshake.
constexpr auto kMootDialGrace = std::chrono::milliseconds(1000);

// The link tables of this process by (communicator, rank), for in-process pairing.
struct Directory {
    std::mutex mutex;
    std::condition_variable arrived;
    std::map<std::pair<uint64_t, uint32_t>, LinkTable*> tables;
};
Directory& directory() {
    static Directory* d = new Directory;  // outlives every communicator
    return *d;
}

// A link refused for want of the transport both ends were told to use (RDMA forced,
// no device on one of them) is refused however often it is dialed, and dialing again
// only races the peer's own attempts (its answer then reads as a second claim on the
// rank). Other failures (a socket dropped or refused) are dialed again.
bool finalFailure(HcclResult rc) { return rc == HCCL_E_ROCE_CONNECT; }
}  // namespace

LinkTable::LinkTable(Identity identity, const std::vector<PeerInfo>& peers,
                     std::function<std::string(uint32_t)> nameOf, const CommFailure* failure)
    : identity_(std::move(identity)),
      peers_(peers),
      nameOf_(std::move(nameOf)),
      failure_(failure),
      links_(peers.size()),
      ready_(new std::atomic<transport::Link*>[peers.size()]),
      state_(peers.size(), State::Idle),
      dialMoot_(new std::atomic<bool>[peers.size()]),
      lastError_(peers.size()),
      refused_(peers.size(), HCCL_SUCCESS) {
    for (size_t p = 0; p < peers.size(); ++p) {
        ready_[p].store(nullptr, std::memory_order_relaxed);
        dialMoot_[p].store(false, std::memory_order_relaxed);
    }
}

LinkTable::~LinkTable() {
    if (ticket_ != 0) net::Acceptor::instance().unserve(ticket_);  // no handler runs after this
    if (!registered_) return;
    std::lock_guard<std::mutex> lock(directory().mutex);  // no pairing holds us after this
    directory().tables.erase({identity_.commId, identity_.rank});
}

void LinkTable::open() {
    ticket_ = net::Acceptor::instance().serve(identity_.commId, identity_.rank, net::Purpose::PeerLink,
                                              [this](net::Fd fd, const net::Hello& h) { onIncoming(std::move(fd), h); });
    std::lock_guard<std::mutex> lock(directory().mutex);
    // A second communicator claiming this (comm, rank) in one process is a rank that
    // joined twice: it gets no in-process pairings (its dials are refused as duplicates).
    registered_ = directory().tables.emplace(std::make_pair(identity_.commId, identity_.rank), this).second;
    directory().arrived.notify_all();
}

ErrorSite LinkTable::site(uint32_t peer) const {
    ErrorSite s;
    s.comm = identity_.comm;
    s.rank = identity_.rank;
    s.peer = peer;
    s.op = "connect";
    return s;
}

bool LinkTable::inProcessPair(uint32_t peer) const { return pairsInProcess(peers_[identity_.rank], peers_[peer]); }

HcclResult LinkTable::connectAll(Deadline deadline) {
    for (uint32_t p = 0; p < peers_.size(); ++p) {
        if (p == identity_.rank) continue;
        HcclResult code = HCCL_SUCCESS;
        std::string why;
        if (get(p, deadline, &code, &why) == nullptr) return fail(code, site(p), "{}", why);
    }
    return HCCL_SUCCESS;
}

transport::Link* LinkTable::existing(uint32_t peer) const {
    return peer < links_.size() ? ready_[peer].load(std::memory_order_acquire) : nullptr;
}

void LinkTable::connectAheadToAll(Deadline deadline) {
    std::vector<uint32_t> missing;
    for (uint32_t p = 0; p < peers_.size(); ++p)
        if (p != identity_.rank && !existing(p) && !inProcessPair(p)) missing.push_back(p);
    if (missing.size() < 2) return;
    std::atomic<size_t> next{0};
    auto worker = [&] {
        for (size_t i; (i = next.fetch_add(1)) < missing.size() && !failure_->failed();) {
            HcclResult code = HCCL_SUCCESS;
            std::string why;
            get(missing[i], deadline, &code, &why);  // a failure shows again when the op posts
        }
    };
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> pool;
    const size_t workers = std::min(missing.size(), kConnectAheadWindow);
    for (size_t w = 0; w < workers; ++w) pool.emplace_back(worker);
    for (std::thread& t : pool) t.join();
    log::debug("comm {} rank {}: connected ahead to {} peers, {} at a time, in {:.1f} ms", identity_.comm,
               identity_.rank, missing.size(), workers,
               std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
}

bool LinkTable::unclaimedBefore(uint64_t seq, uint32_t* peer, transport::WireHeader* h) const {
    std::lock_guard<std::mutex> lock(mutex_);
    for (uint32_t p = 0; p < links_.size(); ++p)
        if (links_[p] && links_[p]->unclaimedHeader(h) && h->kind == uint8_t(transport::MsgKind::Collective) &&
            h->seq < seq) {
            *peer = p;
            return true;
        }
    return false;
}

void LinkTable::forEach(const std::function<void(transport::Link&)>& fn) const {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& l : links_)
        if (l) fn(*l);
}

transport::Link* LinkTable::get(uint32_t peer, Deadline opDeadline, HcclResult* code, std::string* why) {
    Deadline deadline = connectDeadline();  // finite, whatever the op's bound
    if (opDeadline.at() < deadline.at()) deadline = opDeadline;
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
        if (links_[peer]) return links_[peer].get();
        if (refused_[peer] != HCCL_SUCCESS) {
            *code = refused_[peer];
            *why = lastError_[peer];
            return nullptr;
        }
        if (state_[peer] == State::Idle) {
            state_[peer] = State::Dialing;
            dialMoot_[peer].store(false, std::memory_order_relaxed);
            lock.unlock();
            std::string err;
            HcclResult rc = inProcessPair(peer) ? pairInProcess(peer, deadline, &err) : dial(peer, deadline, &err);
            lock.lock();
            if (links_[peer]) return links_[peer].get();
            if (finalFailure(rc)) refuse(peer, rc, err);
            if (rc == HCCL_SUCCESS && state_[peer] == State::Dialing) state_[peer] = State::Waiting;  // theirs won
            // Theirs is on its way, or failed after stopping ours (then dial again).
            if (!finalFailure(rc) && (rc == HCCL_SUCCESS || state_[peer] == State::Accepting || dialMoot_[peer].load()))
                continue;
            state_[peer] = State::Idle;
            if (failure_->failed()) {  // the dial was abandoned: the failure is the cause
                CommFailure::Record r = failure_->record();
                rc = r.code;
                err = r.text;
            }
            *code = rc;
            *why = err;
            return nullptr;
        }
        if (failure_->failed()) {  // the peer may never come: the communicator is done
            CommFailure::Record r = failure_->record();
            *code = r.code;
            *why = r.text;
            if (state_[peer] == State::Waiting) state_[peer] = State::Idle;
            return nullptr;
        }
        changed_.wait_until(lock, std::min(deadline.at(), Deadline::after(kWaitSlice).at()));
        if (deadline.expired() && !links_[peer]) {
            *code = HCCL_E_TIMEOUT;
            *why = fmt::format("{} did not complete the connection within HCCL_CONNECT_TIMEOUT{}", nameOf_(peer),
                               lastError_[peer].empty() ? "" : " (last attempt: " + lastError_[peer] + ")");
            if (state_[peer] == State::Waiting) state_[peer] = State::Idle;
            return nullptr;
        }
    }
}

// Both ends at once, under both tables' locks: whichever rank gets here first
// builds the pair, the other finds its link ready.
HcclResult LinkTable::pairInProcess(uint32_t peer, Deadline deadline, std::string* why) {
    Directory& d = directory();
    std::unique_lock<std::mutex> dirLock(d.mutex);
    const auto key = std::make_pair(identity_.commId, peer);
    while (d.tables.count(key) == 0) {
        if (failure_->failed()) {
            *why = failure_->record().text;
            return failure_->code();
        }
        if (deadline.expired()) {
            *why = fmt::format("{} (a thread of this process) never created its communicator", nameOf_(peer));
            return HCCL_E_TIMEOUT;
        }
        d.arrived.wait_until(dirLock, std::min(deadline.at(), Deadline::after(kWaitSlice).at()));
    }
    LinkTable* other = d.tables[key];
    std::scoped_lock both(mutex_, other->mutex_);
    if (links_[peer]) return HCCL_SUCCESS;
    std::unique_ptr<transport::Link> mine, theirs;
    if (!makeInProcessPair(peers_[identity_.rank], peers_[peer], identity_.commId, &mine, &theirs, why))
        return HCCL_E_MEMORY;
    install(peer, std::move(mine));
    other->install(identity_.rank, std::move(theirs));
    return HCCL_SUCCESS;
}

void LinkTable::install(uint32_t peer, std::unique_ptr<transport::Link> link) {
    link->setPeerName(nameOf_(peer));
    ready_[peer].store(link.get(), std::memory_order_release);
    links_[peer] = std::move(link);
    state_[peer] = State::Ready;
    lastError_[peer].clear();
    changed_.notify_all();
}

// HCCL_SUCCESS with no link installed: the peer's own connection won (or already
// exists); the caller waits for it.
HcclResult LinkTable::dial(uint32_t peer, Deadline deadline, std::string* why) {
    const PeerInfo& info = peers_[peer];
    std::string err;
    const net::Hello hello = net::makeHello(net::Purpose::PeerLink, identity_.commId, identity_.rank, peer);
    net::Fd fd;
    char verdict = 0;
    {
        net::CancelScope moot(&dialMoot_[peer], kMootDialGrace, failure_->failedFlag());
        fd = net::dialProven(net::Endpoint{info.ip, info.port}, identity_.secret, hello, deadline, &err);
        if (!fd.valid() || !net::recvAll(fd.get(), &verdict, 1, deadline, &err)) {
            *why = fmt::format("data link to {}: {}", nameOf_(peer), err);
            return HCCL_E_TCP_CONNECT;
        }
    }
    if (verdict == kLose) return HCCL_SUCCESS;
    if (verdict == kDuplicate) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (state_[peer] != State::Dialing) return HCCL_SUCCESS;  // it took our peer's connection meanwhile
        *why = fmt::format("{} already holds a link from rank {}: two processes claim that rank", nameOf_(peer),
                           identity_.rank);
        return HCCL_E_INTERNAL;
    }
    if (verdict != kAccept) {
        *why = fmt::format("{} answered the link request with garbage", nameOf_(peer));
        return HCCL_E_TCP_CONNECT;
    }
    std::unique_ptr<transport::Link> link;
    HcclResult rc = makeLink(peers_[identity_.rank], info, identity_.commId, commSize(), std::move(fd), deadline, site(peer), &link);
    if (rc != HCCL_SUCCESS) {
        *why = fmt::format("setting up the link to {} failed ({})", nameOf_(peer), resultName(rc));
        return rc;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    install(peer, std::move(link));
    return HCCL_SUCCESS;
}

// When both ranks dial, the higher rank's connection is the one both keep.
LinkTable::Verdict LinkTable::decide(uint32_t peer) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (links_[peer] || state_[peer] == State::Accepting) return kDuplicate;
    if (state_[peer] == State::Dialing && peer < identity_.rank) return kLose;
    if (state_[peer] == State::Dialing) dialMoot_[peer].store(true, std::memory_order_release);
    state_[peer] = State::Accepting;
    return kAccept;
}

// On a listener handler thread: this rank's op thread is never involved.
void LinkTable::onIncoming(net::Fd fd, const net::Hello& hello) {
    const uint32_t peer = hello.fromRank;
    if (peer >= peers_.size() || peer == identity_.rank) {
        log::warn("comm {} rank {}: dropped a link request naming rank {} (not a peer)", identity_.comm,
                  identity_.rank, peer);
        return;
    }
    std::string err;
    Deadline step = Deadline::after(kHandshakeStep);
    if (!net::serverHandshake(fd.get(), identity_.secret, hello, step, &err)) {
        log::warn("{}: dropped a connection claiming to be rank {} from {}: {}", describe(site(peer)), peer,
                  net::peerIp(fd.get()), err);
        return;
    }
    const Verdict verdict = decide(peer);
    if (verdict == kDuplicate)
        log::warn("{}: refused a second link from {} (from {}): the pair is already connected", describe(site(peer)),
                  nameOf_(peer), net::peerIp(fd.get()));
    const bool sent = net::sendAll(fd.get(), &verdict, 1, step, &err);
    if (verdict != kAccept) return;
    std::unique_ptr<transport::Link> link;
    HcclResult rc = sent ? makeLink(peers_[identity_.rank], peers_[peer], identity_.commId, commSize(), std::move(fd),
                                    connectDeadline(), site(peer), &link)
                         : HCCL_E_TCP_CONNECT;
    std::lock_guard<std::mutex> lock(mutex_);
    if (rc == HCCL_SUCCESS) {
        install(peer, std::move(link));
        return;
    }
    if (finalFailure(rc)) {
        refuse(peer, rc, fmt::format("setting up the link from {} failed ({})", nameOf_(peer), resultName(rc)));
        return;
    }
    lastError_[peer] = sent ? std::string("link setup failed: ") + resultName(rc) : "verdict not sent: " + err;
    state_[peer] = State::Idle;  // a waiter dials itself next
    changed_.notify_all();
}

// Under mutex_: the peer's link failed for good; its waiters return `rc`.
void LinkTable::refuse(uint32_t peer, HcclResult rc, const std::string& why) {
    if (refused_[peer] == HCCL_SUCCESS) {  // the first cause is the one to name
        refused_[peer] = rc;
        lastError_[peer] = why;
    }
    if (state_[peer] != State::Dialing) state_[peer] = State::Idle;
    changed_.notify_all();
}

}  // namespace hostccl
