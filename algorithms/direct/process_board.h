// Where the ranks of one communicator that are threads of one process meet for the
// direct algorithms, instead of a handshake over links.
//
// Over links, a direct algorithm sends every peer a description of its buffers and
// a "done" at the end: a link per pair, which with ranks as threads is n(n-1)/2 pairs
// of ring memory (tens of GB at 1024 ranks). Threads of one process can simply look:
// each rank publishes one pointer (to what lets a peer find its buffers), the board's
// barrier makes sure every rank has (open), and a second barrier makes sure no rank
// still reads another's buffers when it returns (close). One board per communicator
// per process, O(n) words whatever the op.
//
// Every rank also announces each op it starts (direct or not), so the first rank
// at a barrier can tell a peer that is merely late from one that went to another
// op: the peer runs a different op at the same sequence number, or has gone past
// this one without coming to the board (it ran it with another algorithm). Both
// are ranks that disagree, which links would have shown at the first message.
//
// A barrier one rank gives up on (timeout, the communicator failing) breaks the
// board for good: the ranks that did arrive leave it too, and every later use fails
// at once with the first reason (an op that failed leaves the communicator failed).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/comm_failure.h"
#include "common/deadline.h"
#include "common/error.h"
#include "transports/link.h"

namespace hostccl {

class ProcessBoard {
public:
    // The board of communicator `commId` with `size` ranks in this process, made by
    // the first of its ranks to ask and kept while any of them holds it.
    static std::shared_ptr<ProcessBoard> join(uint64_t commId, uint32_t size);

    explicit ProcessBoard(uint32_t size);
    uint32_t size() const { return size_; }

    // A rank's published pointer. Written before the rank arrives at a barrier, read
    // by peers after it (the barrier orders the two) until the next barrier.
    void publish(uint32_t rank, const void* entry) { entries_[rank] = entry; }
    const void* entry(uint32_t rank) const { return entries_[rank]; }

    // The op `rank` starts (any collective, before it runs): one writer per rank.
    void announce(uint32_t rank, const transport::MsgTag& op);

    // How a rank waits at a barrier.
    struct Waiting {
        Deadline deadline = Deadline::never();
        const CommFailure* failure = nullptr;
        bool mayGiveUp = true;  // false: wait whatever happens (peers are reading this rank's buffers)
        bool spin = true;       // spin briefly before sleeping (not when ranks outnumber cores)
        const transport::MsgTag* op = nullptr;  // the waiter's op: checked against the missing ranks' ops
    };
    // The first failure any rank reports for op `seq` (for the ranks that did not see
    // it themselves: every rank then names the same cause).
    void report(uint64_t seq, HcclResult code, const std::string& why);
    bool reported(uint64_t seq, HcclResult* code, std::string* why);

    // Arrives with `flag` and waits for every rank. On success `*flagged` is how many
    // ranks arrived with their flag set. Else `*why` says who did not arrive or what
    // broke the board, and the code is the original failure's.
    HcclResult arrive(uint32_t rank, bool flag, const Waiting& how, uint32_t* flagged, std::string* why);

private:
    static constexpr uint64_t kOne = uint64_t(1) << 32;  // a barrier completed, in state_
    HcclResult wait(uint64_t generation, uint32_t rank, bool flag, bool sentinel, const Waiting& how, uint32_t* flagged,
                    std::string* why);
    // Leaves an unfinished barrier, breaking the board; success if it finished meanwhile.
    HcclResult leave(uint64_t generation, uint32_t rank, bool flag, HcclResult code, std::string reason,
                     uint32_t* flagged, std::string* why);
    void breakWith(uint64_t generation, HcclResult code, std::string reason);
    std::string missingRanks(uint64_t generation) const;
    bool announced(uint32_t rank, transport::MsgTag* op) const;
    std::string elsewhere(uint64_t generation, uint32_t rank, const transport::MsgTag& mine) const;
    HcclResult brokenResult(std::string* why);

    const uint32_t size_;
    std::vector<const void*> entries_;

    // Arrival is one fetch_add, without a lock: hundreds of threads woken together
    // by one barrier arrive at the next at once, and a lock convoys them.
    std::atomic<uint64_t> state_{0};     // barriers completed << 32 | ranks arrived at the one under way
    std::atomic<uint32_t> flagged_{0};   // flags raised at the barrier under way
    std::atomic<uint32_t> word_{0};      // barriers completed (low bits): what waiters sleep on
    std::atomic<uint32_t> lastFlagged_{0};
    std::unique_ptr<std::atomic<uint64_t>[]> arrivedAt_;  // per rank: the barrier it last arrived at (1-based)

    // Per rank, the op it announced: a sequence lock (odd version: being written);
    // the fields are stored with release and loaded with acquire, so a reader that
    // sees any of a write's fields also sees its odd version when it rechecks.
    struct alignas(64) Announced {
        std::atomic<uint32_t> version{0};
        std::atomic<uint64_t> what{0};  // kind, coll, dtype, redop, root
        std::atomic<uint64_t> seq{0};
        std::atomic<uint64_t> count{0};
    };
    std::unique_ptr<Announced[]> announced_;

    std::atomic<bool> broken_{false};
    std::mutex brokenMutex_;  // the first breaking reason (written once) and the op failure report below
    HcclResult brokenCode_ = HCCL_SUCCESS;
    std::string brokenWhy_;
    uint64_t reportSeq_ = 0;  // under brokenMutex_ too
    HcclResult reportCode_ = HCCL_SUCCESS;
    std::string reportWhy_;
};

}  // namespace hostccl
