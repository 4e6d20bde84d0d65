// The flight recorder: per communicator, a ring of its last ops (HOSTCCL_FLIGHT_
// RECORDER_SIZE) with what each was (seq, collective, dtype, count, op, root, peer),
// where it got to (queued, running, done, failed), the algorithm, the result and
// wall-clock timestamps. When the communicator fails, is aborted or destroyed after a
// failure, and on SIGUSR1, the ring is written as JSON to HOSTCCL_FLIGHT_RECORDER_DIR,
// one file per rank; scripts/flight_recorder.py reads all ranks' files and names the
// first op where they diverge and the ranks that never arrived.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "algorithms/coll_args.h"
#include "hccl/hccl_types.h"

namespace hostccl {

class FlightRecorder {
public:
    // Null when HOSTCCL_FLIGHT_RECORDER_SIZE is 0.
    static std::unique_ptr<FlightRecorder> fromEnv();
    explicit FlightRecorder(size_t capacity);

    // API thread: the op was enqueued; returns its id (ids start at 1).
    uint64_t queued(const CollArgs& a);
    // Stream thread (`nowUs`: wall clock, microseconds, read once for every watcher of the op).
    void started(uint64_t id, uint64_t seq, int64_t nowUs);
    void ended(uint64_t id, HcclResult rc, const char* algorithm, int64_t culprit, int64_t nowUs);
    static int64_t wallUs();

    struct Identity {
        std::string comm;
        uint64_t commId;
        uint32_t rank, size;
        std::string host;
        uint32_t pid;
    };
    // The ring as JSON, oldest op first, with who dumped it, why, and the failure.
    std::string json(const Identity& who, const std::string& reason, HcclResult code, int64_t culprit,
                     const std::string& failure) const;
    // Writes json(...) to <HOSTCCL_FLIGHT_RECORDER_DIR>/hostccl-flight.<comm>.rank<r>.json;
    // returns the path, "" when no directory is configured or writing failed (logged).
    std::string dump(const Identity& who, const std::string& reason, HcclResult code, int64_t culprit,
                     const std::string& failure) const;

private:
    enum class State : uint8_t { Queued, Running, Done, Failed };
    // What the caller knew when it queued the op.
    struct Entry {
        uint64_t id = 0;
        CollType type = CollType::AllReduce;
        HcclDataType dtype = HCCL_DATA_TYPE_FP32;
        HcclReduceOp op = HCCL_REDUCE_SUM;
        uint32_t root = 0, peer = 0;
        bool anySource = false;  // a receive from any source: `peer` unknown when queued
        uint64_t count = 0;  // V forms: the sum of this rank's send counts
        int64_t queuedUs = 0;
    };
    // What the stream's thread wrote when the op ran (state Queued: it has not).
    struct Progress {
        uint64_t id = 0;
        uint64_t seq = 0;
        State state = State::Queued;
        HcclResult result = HCCL_SUCCESS;
        const char* algorithm = "";
        int64_t culprit = -1;
        int64_t startedUs = 0, endedUs = 0;
    };
    Progress* progressOf(uint64_t id);  // null once overwritten

    // The caller's half and the stream's half live in separate arrays behind separate
    // locks: one lock and one array shared by the two threads cost a contended lock
    // and a cache line crossing cores three times per op. A dump takes both. Each half
    // starts a cache line of its own.
    alignas(64) mutable std::mutex queuedMutex_;
    std::vector<Entry> ring_;
    uint64_t next_ = 1;
    alignas(64) mutable std::mutex progressMutex_;
    std::vector<Progress> progress_;
};

// SIGUSR1 asks for a dump of every live communicator; installed when
// HOSTCCL_FLIGHT_RECORDER_DIR is set and the program has no SIGUSR1 handler of its own.
void installFlightRecorderSignal();
// True once per SIGUSR1 received (polled by the health monitor's thread).
bool takeFlightRecorderRequest();

}  // namespace hostccl
