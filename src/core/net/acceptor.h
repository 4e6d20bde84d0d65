// The process-wide listener for peer links. One thread accepts connections, reads
// each one's Hello (bounded by a short deadline, so a silent connection cannot stall
// it for long) and files it by (comm, to-rank, from-rank). A communicator either
// claims the connections it expects or serves every connection for one of its ranks
// and purpose with a handler (links opened on demand, failure notices); either way
// it runs the secret check itself, because the peer may connect before this process
// has even created that communicator.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <map>
#include <tuple>
#include <unordered_map>

#include "common/recent_keys.h"
#include "core/net/handshake.h"
#include "common/net/socket.h"

namespace hostccl::net {

class Acceptor {
public:
    static Acceptor& instance();  // starts the listener on first use
    uint16_t port() const { return port_; }
    bool ok() const { return listener_.valid(); }
    const std::string& startError() const { return startError_; }

    // Waits for a connection whose Hello names (commId, toRank, fromRank, purpose).
    Fd claim(uint64_t commId, uint32_t toRank, uint32_t fromRank, Purpose purpose, Deadline deadline, Hello* hello);

    // Hands every connection whose Hello names (commId, toRank, purpose), those
    // already waiting included, to `handler` on a thread of its own (at most
    // kMaxHandlers run at once; beyond that a connection is dropped, its dialer
    // sees a closed socket). Returns the ticket that ends the service.
    using Handler = std::function<void(Fd fd, const Hello& hello)>;
    uint64_t serve(uint64_t commId, uint32_t toRank, Purpose purpose, Handler handler);
    // When this returns, no handler of `ticket` runs or will run.
    void unserve(uint64_t ticket);

private:
    using ServiceKeyT = std::tuple<uint64_t, uint32_t, uint16_t>;  // comm, to-rank, purpose
    Acceptor();
    void run();
    void readHelloAsync(Fd fd);
    void purgeStale();

    struct Pending {
        Hello hello;
        Fd fd;
        Deadline::Clock::time_point arrived;
    };
    // A claim() asleep until its connection arrives. Each has its own condition
    // variable: a thousand thread ranks waiting for their tables would otherwise all
    // wake at every arrival (n^2 wake-ups at creation).
    struct Waiter {
        uint32_t fromRank;
        std::condition_variable wake;
        Fd fd;
        Hello hello{};
    };
    // Hands `fd` to a claim waiting for it (mutex_ held); false when none waits.
    bool handToWaiter(const Hello& hello, Fd& fd);
    struct Service {
        uint64_t commId;
        uint32_t toRank;
        uint16_t purpose;
        Handler handler;
        int running = 0;
        bool ended = false;
    };
    // The service a Hello is for, or null (mutex_ held).
    std::shared_ptr<Service> serviceFor(const Hello& h);
    // Runs the handler on this thread, accounted so unserve() can wait for it.
    void runHandler(const std::shared_ptr<Service>& s, Fd fd, const Hello& hello);
    bool reserveHandler(const std::shared_ptr<Service>& s);  // mutex_ held

    Fd listener_;
    uint16_t port_ = 0;
    std::string startError_;
    std::mutex mutex_;
    std::deque<Pending> pending_;
    std::multimap<ServiceKeyT, Waiter*> waiters_;  // by (comm, to-rank, purpose)
    int reading_ = 0;
    int handling_ = 0;
    uint64_t nextTicket_ = 1;
    std::unordered_map<uint64_t, std::shared_ptr<Service>> services_;  // by ticket
    std::map<ServiceKeyT, std::shared_ptr<Service>> byKey_;
    // Notice services that ended (a destroyed communicator's rank): a notice for one
    // of them is turned away at once instead of kept.
    RecentKeys<ServiceKeyT> ended_{65536};
    std::condition_variable handlerDone_;
    std::thread thread_;
};

}  // namespace hostccl::net
