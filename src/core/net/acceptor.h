// The process-wide listener for peer links. One thread accepts connections, reads
// each one's Hello (bounded by a short deadline, so a silent connection cannot stall
// it for long) and files it by (comm, to-rank, from-rank). A communicator claims the
// connections it expects and runs the secret check itself, because the peer may
// connect before this process has even created that communicator.
#pragma once

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "core/net/handshake.h"
#include "core/net/socket.h"

namespace hostccl::net {

class Acceptor {
public:
    static Acceptor& instance();  // starts the listener on first use
    uint16_t port() const { return port_; }
    bool ok() const { return listener_.valid(); }
    const std::string& startError() const { return startError_; }

    // Waits for a connection whose Hello names (commId, toRank, fromRank, purpose).
    Fd claim(uint64_t commId, uint32_t toRank, uint32_t fromRank, Purpose purpose, Deadline deadline, Hello* hello);

private:
    Acceptor();
    void run();
    void readHelloAsync(Fd fd);
    void purgeStale();

    struct Pending {
        Hello hello;
        Fd fd;
        Deadline::Clock::time_point arrived;
    };

    Fd listener_;
    uint16_t port_ = 0;
    std::string startError_;
    std::mutex mutex_;
    std::condition_variable arrived_;
    std::deque<Pending> pending_;
    int reading_ = 0;
    std::thread thread_;
};

}  // namespace hostccl::net
