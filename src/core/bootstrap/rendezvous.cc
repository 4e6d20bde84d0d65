#include "core/bootstrap/rendezvous.h"
#include "core/bootstrap/rendezvous_wire.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <condition_variable>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "common/detached_thread.h"
#include "common/env.h"
#include "common/log.h"
#include "common/thread_name.h"
#include "core/comm_settings.h"
#include "core/net/acceptor.h"
#include "core/net/handshake.h"
#include "core/net/whitelist.h"

namespace hostccl::bootstrap {

namespace {

constexpr auto kStepTimeout = std::chrono::milliseconds(3000);  // per-connection handshake bound

net::Fd bindServer(const RendezvousSpec& spec, std::string* err) {
    if (spec.port != 0) return net::listenTcp(spec.bindIp, spec.port, err);
    int64_t base = env::getInt("HCCL_IF_BASE_PORT", 0, 65520);
    if (base == 0) return net::listenTcp(spec.bindIp, 0, err);
    for (int64_t p = base; p < base + 32; ++p) {  // HCCL reserves 32 ports from the base
        net::Fd fd = net::listenTcp(spec.bindIp, static_cast<uint16_t>(p), err);
        if (fd.valid()) return fd;
    }
    return net::Fd();
}

// The server's state for one rendezvous. The accept loop hands each connection
// to a short-lived thread for its handshake (bounded in time and in number), so a
// silent or slow client cannot delay the ranks behind it.
class Server : public std::enable_shared_from_this<Server> {
public:
    Server(RendezvousSpec spec, net::Fd listener) : spec_(std::move(spec)), listener_(std::move(listener)) {}

    void serve() {
        nameThisThread("hccl-rendezvous");
        int64_t timeoutSec = env::getInt("HCCL_CONNECT_TIMEOUT", 1, 7200) + 20;
        Deadline deadline = Deadline::afterSeconds(timeoutSec);
        while (!settled() && !deadline.expired()) {
            pollfd fds[2] = {{listener_.get(), POLLIN, 0}, {wake_.get(), POLLIN, 0}};
            if (::poll(fds, 2, deadline.remainingMs(1000)) <= 0 || !(fds[0].revents & POLLIN)) continue;
            int fd = ::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC);
            if (fd >= 0) startHandshake(net::Fd(fd));
        }
        // Handshakes still running belong to strangers (every rank is in) or are
        // moot (timed out); they end on their own and keep this object alive.
        std::lock_guard<std::mutex> lock(mutex_);
        if (failed_) {
            // every rank was told when it registered or when the failure came
        } else if (nRanks_ != 0 && joined_ == nRanks_) {
            broadcastTable();
        } else {
            std::string why = fmt::format("rendezvous timed out after {} s with {} of {} ranks", timeoutSec, joined_,
                                          nRanks_);
            log::error("{}", why);
            for (auto& c : conns_)
                if (c.valid()) sendStatus(c.get(), status(HCCL_E_TIMEOUT, why));
        }
    }

    // After a rank reported that it cannot join: waits (bounded) until every rank
    // has been told, so the process hosting this server does not end it first.
    void awaitFailureSpread(Deadline deadline) {
        std::unique_lock<std::mutex> lock(mutex_);
        while (failed_ && told_ < nRanks_ && !deadline.expired())
            toldMore_.wait_until(lock, std::min(deadline.at(), Deadline::after(std::chrono::milliseconds(100)).at()));
    }

private:
    static constexpr int kMaxConcurrentHandshakes = 256;

    // Every rank is in, or, after a rank reported that it cannot join, every rank
    // has been told so.
    bool settled() {
        std::lock_guard<std::mutex> lock(mutex_);
        return nRanks_ != 0 && (failed_ ? told_ >= nRanks_ : joined_ == nRanks_);
    }

    void startHandshake(net::Fd fd) {
        if (!net::whitelistAdmits(net::peerIp(fd.get()))) {
            log::warn("rendezvous: dropped a connection from {}: not in HCCL_WHITELIST_FILE", net::peerIp(fd.get()));
            return;
        }
        {
            std::lock_guard<std::mutex> lock(mutex_);
            if (active_ >= kMaxConcurrentHandshakes) {
                log::warn("rendezvous: too many pending connections; dropped one from {}", net::peerIp(fd.get()));
                return;
            }
            ++active_;
        }
        auto self = shared_from_this();
        startDetached([self, fd = std::move(fd)]() mutable {
            self->admit(std::move(fd));
            std::lock_guard<std::mutex> lock(self->mutex_);
            --self->active_;
        });
    }

    // Proves the secret both ways and reads the rank's entry, or drops the
    // connection with a logged reason.
    void admit(net::Fd fd) {
        std::string err;
        Deadline step = Deadline::after(kStepTimeout);
        net::Hello hello{};
        WireEntry entry{};
        if (!net::readHello(fd.get(), &hello, step, &err) ||
            (hello.purpose != static_cast<uint16_t>(net::Purpose::Rendezvous) &&
             hello.purpose != static_cast<uint16_t>(net::Purpose::JoinFailure)) ||
            hello.commId != spec_.id || !net::serverHandshake(fd.get(), spec_.secret, hello, step, &err))
            return drop(fd, err);
        if (hello.purpose == static_cast<uint16_t>(net::Purpose::JoinFailure)) return takeFailure(fd, hello.fromRank);
        if (!net::recvAll(fd.get(), &entry, sizeof entry, step, &err)) return drop(fd, err);
        std::lock_guard<std::mutex> lock(mutex_);
        if (failed_) {  // the rendezvous cannot complete: this rank hears why at once
            sendStatus(fd.get(), failure_);
            ++told_;
            toldMore_.notify_all();
            wake();
            return;
        }
        std::string problem;
        if (checkEntry(entry, &problem)) problem = validate(entry);
        if (!problem.empty()) {
            log::error("rendezvous: rejected rank {}: {}", entry.rank, problem);
            sendStatus(fd.get(), status(HCCL_E_PARA, problem));
            return;
        }
        if (nRanks_ == 0) {
            nRanks_ = entry.nRanks;
            entries_.resize(nRanks_);
            conns_.resize(nRanks_);
        }
        entries_[entry.rank] = entry;
        conns_[entry.rank] = std::move(fd);
        if (++joined_ == nRanks_) wake();  // the table is complete
    }

    void wake() {
        uint64_t one = 1;
        (void)!::write(wake_.get(), &one, sizeof one);
    }

    // A rank that cannot join says why: every rank registered is told now, every
    // rank that registers later when it does.
    void takeFailure(const net::Fd& fd, uint32_t rank) {
        WireJoinFailure report{};
        std::string err;
        if (!net::recvAll(fd.get(), &report, sizeof report, Deadline::after(kStepTimeout), &err)) return;
        std::lock_guard<std::mutex> lock(mutex_);
        if (nRanks_ == 0 && report.nRanks > 0 && report.nRanks <= kMaxRanks) {
            nRanks_ = report.nRanks;
            entries_.resize(nRanks_);
            conns_.resize(nRanks_);
        }
        if (rank >= nRanks_ || report.nRanks != nRanks_) {
            log::warn("rendezvous: ignored a failure report naming rank {} of {}", rank, report.nRanks);
            return;
        }
        ++told_;  // the reporting rank knows
        if (failed_) return;
        failed_ = true;
        const std::string why =
            fmt::format("rank {} (from {}) could not join: {}", rank, net::peerIp(fd.get()), statusReason(report.status));
        log::error("rendezvous: {}", why);
        failure_ = status(statusCode(report.status), why);
        for (auto& c : conns_) {
            if (!c.valid()) continue;
            sendStatus(c.get(), failure_);
            c = net::Fd();
            ++told_;
        }
        toldMore_.notify_all();
        wake();
    }

    static void drop(const net::Fd& fd, const std::string& err) {
        log::warn("rendezvous: dropped a connection from {}: {}", net::peerIp(fd.get()),
                  err.empty() ? "wrong communicator or purpose" : err);
    }

    // What one entry cannot know: agreement with the entries before it.
    std::string validate(const WireEntry& e) const {
        if (nRanks_ != 0 && e.nRanks != nRanks_)
            return fmt::format("nRanks {} differs from the {} the first rank gave", e.nRanks, nRanks_);
        if (nRanks_ != 0 && conns_[e.rank].valid()) return fmt::format("rank {} joined twice", e.rank);
        return "";
    }

    // Every rank learns where its table comes from; only rank 0 gets it from here.
    void broadcastTable() {
        for (uint32_t r = 0; r < nRanks_; ++r) {
            std::string err;
            int fd = conns_[r].get();
            WireStatus ok = status(HCCL_SUCCESS, "");
            WireRoute route{r == 0 ? kFromServer : treeParent(r), 0};
            const Deadline step = Deadline::after(kStepTimeout);
            if (!net::sendAll(fd, &ok, sizeof ok, step, &err) || !net::sendAll(fd, &route, sizeof route, step, &err) ||
                (r == 0 && !net::sendAll(fd, entries_.data(), entries_.size() * sizeof(WireEntry), step, &err)))
                log::error("rendezvous: could not send the route or table to rank {}: {}", r, err);
            conns_[r] = net::Fd();  // done with it: the root holds no descriptor per rank from here on
        }
    }

    static void sendStatus(int fd, const WireStatus& s) {
        std::string err;
        net::sendAll(fd, &s, sizeof s, Deadline::after(kStepTimeout), &err);
    }

    RendezvousSpec spec_;
    net::Fd listener_;
    net::Fd wake_{::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)};
    std::mutex mutex_;
    int active_ = 0;
    uint32_t nRanks_ = 0;
    uint32_t joined_ = 0;
    bool failed_ = false;  // a rank reported that it cannot join
    WireStatus failure_{};
    uint32_t told_ = 0;  // ranks that know the rendezvous failed
    std::condition_variable toldMore_;
    std::vector<WireEntry> entries_;
    std::vector<net::Fd> conns_;
};

// The servers this process hosts, by rendezvous id (while they serve).
struct ServerDirectory {
    std::mutex mutex;
    std::map<uint64_t, std::weak_ptr<Server>> servers;
};
ServerDirectory& serverDirectory() {
    static ServerDirectory* d = new ServerDirectory;  // servers may outlive static destruction
    return *d;
}

}  // namespace

bool startRendezvousServer(const RendezvousSpec& spec, uint16_t* boundPort, std::string* err) {
    net::Fd listener = bindServer(spec, err);
    if (!listener.valid()) return false;
    *boundPort = net::boundPort(listener.get());
    auto server = std::make_shared<Server>(spec, std::move(listener));
    {
        ServerDirectory& d = serverDirectory();
        std::lock_guard<std::mutex> lock(d.mutex);
        for (auto it = d.servers.begin(); it != d.servers.end();)
            it = it->second.expired() ? d.servers.erase(it) : std::next(it);
        d.servers[spec.id] = server;
    }
    std::thread([server] { server->serve(); }).detach();
    return true;
}

void awaitRendezvousFailureSpread(uint64_t id, Deadline deadline) {
    std::shared_ptr<Server> server;
    {
        ServerDirectory& d = serverDirectory();
        std::lock_guard<std::mutex> lock(d.mutex);
        auto it = d.servers.find(id);
        if (it != d.servers.end()) server = it->second.lock();
    }
    if (server) server->awaitFailureSpread(deadline);
}

namespace {

// Above this many ranks, connections to the root are spread out in time (about
// kConnectsPerSecond), so its accept queue and handshake threads are never swamped.
constexpr uint32_t kStaggerAbove = 256;
constexpr double kConnectsPerSecond = 7000;

void staggerConnect(uint32_t rank, uint32_t nRanks) {
    if (nRanks <= kStaggerAbove) return;
    std::this_thread::sleep_for(std::chrono::microseconds(static_cast<int64_t>(rank * 1e6 / kConnectsPerSecond)));
}

// A table passed down the tree is proven by a MAC, under the job secret, of the Hello
// (with its fresh nonce) and the table's own keyed digest: one message, no round trip
// per hop, and the table (n entries) is hashed once per rank, not once per child.
uint64_t tableDigest(const Secret& secret, const std::vector<WireEntry>& wire) {
    return siphash24(secret, wire.data(), wire.size() * sizeof(WireEntry));
}

uint64_t tableMac(const Secret& secret, const net::Hello& hello, uint64_t digest) {
    char signed_[sizeof hello + sizeof digest];
    std::memcpy(signed_, &hello, sizeof hello);
    std::memcpy(signed_ + sizeof hello, &digest, sizeof digest);
    return siphash24(secret, signed_, sizeof signed_);
}

// The table from this rank's parent in the tree, which dials this rank's listener.
bool tableFromParent(uint64_t id, const Secret& secret, uint32_t rank, uint32_t parent, std::vector<WireEntry>* wire,
                     Deadline deadline, std::string* err) {
    for (;;) {
        net::Hello hello{};
        net::Fd fd = net::Acceptor::instance().claim(id, rank, parent, net::Purpose::Table, deadline, &hello);
        if (!fd.valid()) {
            *err = fmt::format("rank {} never passed the table on", parent);
            return false;
        }
        uint64_t mac = 0;
        if (net::recvAll(fd.get(), wire->data(), wire->size() * sizeof(WireEntry), deadline, err) &&
            net::recvAll(fd.get(), &mac, sizeof mac, deadline, err)) {
            if (mac == tableMac(secret, hello, tableDigest(secret, *wire))) return true;
            *err = "the table's proof of the job secret is wrong";
        }
        log::warn("rendezvous: dropped a table connection claiming rank {} from {}: {}", parent,
                  net::peerIp(fd.get()), *err);
    }
}

// Passes the table on to this rank's children, all at once, on threads of their own:
// the tree's depth (log8 n hops) is then the time to reach the last rank, and a slow
// child holds up only its own subtree, never this rank's own creation.
void forwardTable(uint64_t id, const Secret& secret, uint32_t rank, std::vector<WireEntry> wire) {
    auto shared = std::make_shared<const std::vector<WireEntry>>(std::move(wire));
    const uint64_t digest = tableDigest(secret, *shared);
    for (uint32_t c : treeChildren(rank, static_cast<uint32_t>(shared->size()))) {
        startDetached([=] {
            std::string err;
            const Deadline deadline = connectDeadline();
            const PeerInfo child = fromWire((*shared)[c]);
            net::Fd fd = net::connectTcp(net::Endpoint{child.ip, child.port}, deadline, &err);
            const net::Hello hello = net::makeHello(net::Purpose::Table, id, rank, c);
            const uint64_t mac = tableMac(secret, hello, digest);
            if (!fd.valid() || !net::sendAll(fd.get(), &hello, sizeof hello, deadline, &err) ||
                !net::sendAll(fd.get(), shared->data(), shared->size() * sizeof(WireEntry), deadline, &err) ||
                !net::sendAll(fd.get(), &mac, sizeof mac, deadline, &err))
                log::error("rendezvous: rank {} could not pass the table to rank {} ({}:{}): {}", rank, c, child.ip,
                           child.port, err);
        });
    }
}

}  // namespace

HcclResult joinRendezvous(const net::Endpoint& server, const Secret& secret, uint64_t id, uint32_t nRanks,
                          PeerInfo self, std::vector<PeerInfo>* table, Deadline deadline, const ErrorSite& site) {
    std::string err;
    staggerConnect(self.rank, nRanks);
    const net::Hello hello = net::makeHello(net::Purpose::Rendezvous, id, self.rank, net::kAnyRank);
    net::Fd fd = net::dialProven(server, secret, hello, deadline, &err);
    if (!fd.valid()) return fail(HCCL_E_TCP_CONNECT, site, "rendezvous at {}: {}", server.str(), err);
    if (self.ip.empty()) self.ip = net::localIp(fd.get());
    WireEntry mine = toWire(self, nRanks);
    WireStatus st{};
    if (!net::sendAll(fd.get(), &mine, sizeof mine, deadline, &err) ||
        !net::recvAll(fd.get(), &st, sizeof st, deadline, &err))
        return fail(err == "timed out" ? HCCL_E_TIMEOUT : HCCL_E_TCP_CONNECT, site,
                    "rendezvous at {}: waiting for the other ranks: {}", server.str(), err);
    if (st.code != HCCL_SUCCESS)
        return fail(statusCode(st), site, "rendezvous refused: {}", statusReason(st));
    WireRoute route{};
    if (!net::recvAll(fd.get(), &route, sizeof route, deadline, &err))
        return fail(HCCL_E_TCP_CONNECT, site, "rendezvous at {}: reading the route: {}", server.str(), err);
    std::vector<WireEntry> wire(nRanks);
    const bool direct = route.parent == kFromServer;
    if (!direct && route.parent != treeParent(self.rank))
        return fail(HCCL_E_INTERNAL, site, "rendezvous at {}: the route names rank {}, not this rank's parent {}",
                    server.str(), route.parent, treeParent(self.rank));
    if (direct ? !net::recvAll(fd.get(), wire.data(), wire.size() * sizeof(WireEntry), deadline, &err)
               : !tableFromParent(id, secret, self.rank, route.parent, &wire, deadline, &err))
        return fail(err == "timed out" ? HCCL_E_TIMEOUT : HCCL_E_TCP_CONNECT, site, "rendezvous: reading the table: {}",
                    err);
    table->clear();
    for (uint32_t r = 0; r < nRanks; ++r) {
        std::string why = "names another rank or size";
        if (!checkEntry(wire[r], &why) || wire[r].rank != r || wire[r].nRanks != nRanks)
            return fail(HCCL_E_INTERNAL, site, "rendezvous table entry {} is malformed: {}", r, why);
        table->push_back(fromWire(wire[r]));
    }
    forwardTable(id, secret, self.rank, std::move(wire));
    return HCCL_SUCCESS;
}

void reportJoinFailure(const net::Endpoint& server, const Secret& secret, uint64_t id, uint32_t nRanks, uint32_t rank,
                       HcclResult code, const std::string& why) {
    constexpr auto kReportBound = std::chrono::seconds(5);
    const Deadline deadline = Deadline::after(kReportBound);
    std::string err;
    const net::Hello hello = net::makeHello(net::Purpose::JoinFailure, id, rank, net::kAnyRank);
    net::Fd fd = net::dialProven(server, secret, hello, deadline, &err);
    WireJoinFailure report{status(code, why), nRanks, 0};
    if (!fd.valid() || !net::sendAll(fd.get(), &report, sizeof report, deadline, &err))
        log::warn("could not tell the rendezvous at {} that rank {} cannot join: {}", server.str(), rank, err);
}

}  // namespace hostccl::bootstrap
