// The flight recorder: per communicator, a ring of its last ops (HOSTCCL_FLIGHT_
// RECORDER_SIZE) with what each was (seq, collective, dtype, count, op, root, peer),
// where it got to (queued, running, done, failed), the algorithm, the result and
// wall-clock timestamps. When the communicator fails, is aborted or destroyed after a
// failure, and on SIGUSR1, the ring is written as JSON to HOSTCCL_FLIGHT_RECORDER_DIR,
// one file per rank; scripts/flight_recorder.py reads all ranks' files and names the
// first op where they diverge and the ranks that never arrived.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
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
    // Every field is a whole word: a slot is copied a word at a time, and a load of a
    // word that narrower stores just wrote waits for them to reach the cache instead
    // of taking their values on the way (store forwarding).
    enum class State : uint64_t { Queued, Running, Done, Failed };
    // What the caller knew when it queued the op.
    struct Entry {
        uint64_t type = uint64_t(CollType::AllReduce);
        uint64_t dtype = HCCL_DATA_TYPE_FP32;
        uint64_t op = HCCL_REDUCE_SUM;
        uint64_t root = 0, peer = 0;
        uint64_t anySource = 0;  // a receive from any source: `peer` unknown when queued
        uint64_t count = 0;      // V forms: the sum of this rank's send counts
        int64_t queuedUs = 0;
    };
    // What the thread running the op wrote (none yet: it has not started).
    struct Progress {
        uint64_t seq = 0;
        State state = State::Queued;
        int64_t result = HCCL_SUCCESS;
        const char* algorithm = "";
        int64_t culprit = -1;
        int64_t startedUs = 0, endedUs = 0;
    };
    // One entry, written by one thread at a time without a lock and read by a dump as a
    // seqlock: the tag (the op's id) is cleared before the words are written and set
    // after them, and a reader keeps what it read only when it saw that tag before and
    // after. An op costs its caller one atomic add (its id) and plain stores, and the
    // running thread plain stores; the two halves sit in separate arrays, so the caller's
    // lines and the runner's never cross cores.
    template <class T>
    class Slot {
    public:
        void write(uint64_t tag, const T& value);
        bool read(uint64_t tag, T* out) const;  // false: not that op's, or being written
        uint64_t tag() const { return tag_.load(std::memory_order_acquire); }

    private:
        static constexpr size_t kWords = (sizeof(T) + 7) / 8;
        std::atomic<uint64_t> tag_{0};
        std::atomic<uint64_t> words_[kWords] = {};
    };

    // Both arrays hold a power of two of entries (at least the capacity asked for), so an
    // op finds its entry with a mask: a division per lookup, three per op, measured as a
    // tenth of a one-rank 8-byte op. A dump shows the last `capacity_` ops.
    size_t index(uint64_t id) const { return size_t(id) & mask_; }
    // Read-only once built, read by the callers and the running thread alike.
    size_t capacity_;
    uint64_t mask_;
    std::vector<Slot<Entry>> ring_;
    std::vector<Slot<Progress>> progress_;
    // The running op's progress as started() wrote it, so ended() need not read it back
    // (the running thread's alone: one op of a communicator runs at a time).
    uint64_t runningId_ = 0;
    Progress running_;
    // The callers' counter, alone on its line: beside the arrays' pointers, every op's
    // add pulled the line from the running thread that had just read them, and back.
    alignas(64) std::atomic<uint64_t> next_{1};
};

// SIGUSR1 asks for a dump of every live communicator; installed when
// HOSTCCL_FLIGHT_RECORDER_DIR is set and the program has no SIGUSR1 handler of its own.
void installFlightRecorderSignal();
// True once per SIGUSR1 received (polled by the health monitor's thread).
bool takeFlightRecorderRequest();

}  // namespace hostccl
