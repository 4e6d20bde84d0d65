// A copy of what one communicator of this process has measured (comm_metrics.h and
// its links' counters), taken by the monitor's thread; everything the metrics text,
// the status JSON and the diagnosis read. Plain data: rendering and judging it needs
// no lock and no live communicator.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/bootstrap/peer_info.h"
#include "core/metrics/comm_metrics.h"

namespace hostccl::monitor {

struct OpTypeSnapshot {
    CollType type = CollType::AllReduce;
    uint64_t ops = 0, failed = 0, bytes = 0, durationUs = 0;
    std::array<uint64_t, kDurationBuckets> buckets{};  // per bucket, not cumulative
};

struct WaitSnapshot {
    uint32_t peer = 0;
    std::string who;  // "rank 3 (host h 10.0.0.2, pid 42)"
    uint64_t times = 0, waitedUs = 0, late = 0;
};

struct LinkSnapshot {
    uint32_t peer = 0;
    std::string who;
    std::string kind;  // "shm", "tcp", "rdma"
    uint64_t sentBytes = 0, receivedBytes = 0, sends = 0, receives = 0;
    uint64_t timedBytes = 0, timedNs = 0;  // bulk receives, first byte to last
    double expectedBytesPerSec = 0;        // the cost model's rate for the link's class (0: none)
    double roundTripUs = -1;               // the kernel's smoothed RTT (TCP), -1: none
    double expectedLatencyUs = 0;          // the cost model's start-up time (alpha) for the class
};

struct CommSnapshot {
    std::string comm;
    uint64_t commId = 0;
    uint32_t rank = 0, size = 0;
    std::string host;  // this rank's host id
    uint32_t pid = 0;
    int64_t takenUs = 0;  // wall clock
    std::vector<OpTypeSnapshot> ops;  // collectives that ran at least once
    CommMetrics::Running running;
    std::string waitingOnWho;  // running.waitingOn's name, "" when none
    uint64_t lastSeq = 0;
    uint64_t inflight = 0;  // enqueued and not finished
    bool failed = false;
    std::vector<RecentOp> recent;
    std::vector<WaitSnapshot> waits;
    std::vector<LinkSnapshot> links;
    uint64_t lateUs = 0;
    std::shared_ptr<const std::vector<PeerInfo>> peers;  // every rank's bootstrap entry (endpoints, names)
};

// Every live communicator of this process (core/comm.cc walks them).
std::vector<CommSnapshot> snapshotAll();

}  // namespace hostccl::monitor
