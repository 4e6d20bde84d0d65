#include "algorithms/direct/process_board.h"

#include <fmt/format.h>

#include <map>
#include <utility>

#include "transports/doorbell.h"

namespace hostccl {

namespace {
// A waiter rechecks the deadline and the communicator's failure this often.
constexpr int kSleepSliceUs = 10 * 1000;
// Spinning this many polls (~10-20 us) catches a barrier whose last rank is
// running on another core, without the sleep and wake-up's system calls.
constexpr int kSpinPolls = 2000;

struct Registry {
    std::mutex mutex;
    std::map<std::pair<uint64_t, uint32_t>, std::weak_ptr<ProcessBoard>> boards;
};
Registry& registry() {
    static Registry* r = new Registry;  // never destroyed: ranks may outlive static destruction
    return *r;
}

inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}
}  // namespace

std::shared_ptr<ProcessBoard> ProcessBoard::join(uint64_t commId, uint32_t size) {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    // Boards of destroyed communicators go when a new one is made: the map stays as
    // small as the number of live communicators.
    for (auto it = r.boards.begin(); it != r.boards.end();) it = it->second.expired() ? r.boards.erase(it) : std::next(it);
    std::weak_ptr<ProcessBoard>& slot = r.boards[{commId, size}];
    std::shared_ptr<ProcessBoard> board = slot.lock();
    if (!board) {
        board = std::make_shared<ProcessBoard>(size);
        slot = board;
    }
    return board;
}

ProcessBoard::ProcessBoard(uint32_t size)
    : size_(size),
      entries_(size, nullptr),
      arrivedAt_(new std::atomic<uint64_t>[size]),
      announced_(new Announced[size]) {
    for (uint32_t r = 0; r < size; ++r) arrivedAt_[r].store(0, std::memory_order_relaxed);
}

void ProcessBoard::announce(uint32_t rank, const transport::MsgTag& op) {
    Announced& a = announced_[rank];
    const uint32_t v = a.version.load(std::memory_order_relaxed);
    a.version.store(v + 1, std::memory_order_relaxed);
    a.what.store(uint64_t(op.kind) | uint64_t(op.coll) << 8 | uint64_t(op.dtype) << 16 | uint64_t(op.redop) << 24 |
                     uint64_t(op.root) << 32,
                 std::memory_order_release);
    a.seq.store(op.seq, std::memory_order_release);
    a.count.store(op.count, std::memory_order_release);
    a.version.store(v + 2, std::memory_order_release);
}

bool ProcessBoard::announced(uint32_t rank, transport::MsgTag* op) const {
    const Announced& a = announced_[rank];
    for (int tries = 0; tries < 64; ++tries) {
        const uint32_t v = a.version.load(std::memory_order_acquire);
        if (v == 0) return false;  // nothing announced yet
        const uint64_t what = a.what.load(std::memory_order_acquire);
        const uint64_t seq = a.seq.load(std::memory_order_acquire);
        const uint64_t count = a.count.load(std::memory_order_acquire);
        if ((v & 1) != 0 || a.version.load(std::memory_order_relaxed) != v) {
            cpuRelax();
            continue;
        }
        op->kind = static_cast<transport::MsgKind>(what & 0xff);
        op->coll = static_cast<CollType>((what >> 8) & 0xff);
        op->dtype = static_cast<uint8_t>((what >> 16) & 0xff);
        op->redop = static_cast<uint8_t>((what >> 24) & 0xff);
        op->root = static_cast<uint32_t>(what >> 32);
        op->seq = seq;
        op->count = count;
        op->index = 0;
        return true;
    }
    return false;  // being rewritten all along: the next look will do
}

// A rank missing from barrier `generation` that runs another op at the waiter's
// sequence number, or has gone past it: empty when every missing rank is only late.
std::string ProcessBoard::elsewhere(uint64_t generation, uint32_t rank, const transport::MsgTag& mine) const {
    for (uint32_t r = 0; r < size_; ++r) {
        if (arrivedAt_[r].load(std::memory_order_relaxed) == generation + 1) continue;
        transport::MsgTag theirs;
        if (!announced(r, &theirs) || theirs.seq < mine.seq || transport::sameOp(theirs, mine)) continue;
        // A rank that went on after this barrier completed announced its next op:
        // the barrier's word has moved then (the completion happens before that).
        if (word_.load(std::memory_order_acquire) != static_cast<uint32_t>(generation)) return "";
        if (theirs.seq == mine.seq)
            return fmt::format("operation mismatch: rank {} runs {} but rank {} runs {}", rank,
                               transport::describeOp(mine), r, transport::describeOp(theirs));
        return fmt::format("operation mismatch: rank {} runs {} on the process board but rank {} went on to {} "
                           "without coming to it (it ran seq {} as another operation or with another algorithm)",
                           rank, transport::describeOp(mine), r, transport::describeOp(theirs), mine.seq);
    }
    return "";
}

HcclResult ProcessBoard::arrive(uint32_t rank, bool flag, const Waiting& how, uint32_t* flagged, std::string* why) {
    if (broken_.load(std::memory_order_acquire)) return brokenResult(why);
    // No rank can be at the next barrier before this one completes, so the flag and
    // the arrival both count towards the barrier under way.
    if (flag) flagged_.fetch_add(1, std::memory_order_relaxed);
    const uint64_t before = state_.load(std::memory_order_relaxed) / kOne;
    arrivedAt_[rank].store(before + 1, std::memory_order_relaxed);
    const uint64_t old = state_.fetch_add(1, std::memory_order_acq_rel);
    const uint64_t generation = old / kOne;
    if ((old % kOne) + 1 < size_) return wait(generation, rank, flag, old % kOne == 0, how, flagged, why);
    // The last to arrive completes the barrier for everyone.
    *flagged = flagged_.exchange(0, std::memory_order_relaxed);
    lastFlagged_.store(*flagged, std::memory_order_relaxed);
    state_.store((generation + 1) * kOne, std::memory_order_release);
    word_.store(static_cast<uint32_t>(generation + 1), std::memory_order_release);
    transport::wakeWord(&word_);
    return HCCL_SUCCESS;
}

// The first rank at a barrier is its sentinel: while it waits it looks, once per
// sleep slice, whether a missing rank went to another op (one rank scanning, so
// the cost does not grow with the waiters).
HcclResult ProcessBoard::wait(uint64_t generation, uint32_t rank, bool flag, bool sentinel, const Waiting& how,
                              uint32_t* flagged, std::string* why) {
    const uint32_t before = static_cast<uint32_t>(generation);
    auto done = [&] {
        if (word_.load(std::memory_order_acquire) == before) return false;
        *flagged = lastFlagged_.load(std::memory_order_relaxed);  // stays until this rank arrives again
        return true;
    };
    for (int i = 0; how.spin && i < kSpinPolls; ++i) {
        if (done()) return HCCL_SUCCESS;
        cpuRelax();
    }
    bool slept = false;  // a peer about to arrive is not yet looked at
    for (;;) {
        if (done()) return HCCL_SUCCESS;
        if (broken_.load(std::memory_order_acquire))
            return leave(generation, rank, flag, HCCL_SUCCESS, "", flagged, why);
        if (how.mayGiveUp && how.failure != nullptr && how.failure->failed()) {
            const CommFailure::Record r = how.failure->record();
            return leave(generation, rank, flag, r.code, r.text, flagged, why);
        }
        if (how.mayGiveUp && how.deadline.expired())
            return leave(generation, rank, flag, HCCL_E_TIMEOUT, "", flagged, why);
        if (sentinel && how.mayGiveUp && how.op != nullptr && slept) {
            std::string mismatch = elsewhere(generation, rank, *how.op);
            if (!mismatch.empty()) return leave(generation, rank, flag, HCCL_E_PARA, std::move(mismatch), flagged, why);
        }
        slept = true;
        const transport::SleepWord w{&word_, before};
        transport::sleepOnWords(&w, 1, std::min(kSleepSliceUs, how.deadline.remainingMs(kSleepSliceUs / 1000) * 1000 + 1000));
    }
}

// Takes this rank's arrival back unless the barrier completed meanwhile (the count
// can then never reach size_ for this barrier: every rank waiting on it leaves too).
HcclResult ProcessBoard::leave(uint64_t generation, uint32_t rank, bool flag, HcclResult code, std::string reason,
                               uint32_t* flagged, std::string* why) {
    if (code != HCCL_SUCCESS) breakWith(generation, code, std::move(reason));  // named before this rank counts as gone
    uint64_t s = state_.load(std::memory_order_acquire);
    for (;;) {
        // The last rank came meanwhile (or is completing the barrier): nothing to leave.
        if (s / kOne != generation || s % kOne >= size_) {
            while (word_.load(std::memory_order_acquire) == static_cast<uint32_t>(generation)) cpuRelax();
            *flagged = lastFlagged_.load(std::memory_order_relaxed);
            return HCCL_SUCCESS;
        }
        if (state_.compare_exchange_weak(s, s - 1, std::memory_order_acq_rel)) break;
    }
    if (flag) flagged_.fetch_sub(1, std::memory_order_relaxed);
    arrivedAt_[rank].store(generation, std::memory_order_relaxed);
    transport::wakeWord(&word_);  // the others waiting see the board broken and leave too
    return brokenResult(why);
}

void ProcessBoard::breakWith(uint64_t generation, HcclResult code, std::string reason) {
    std::lock_guard<std::mutex> lock(brokenMutex_);
    if (broken_.load(std::memory_order_relaxed)) return;  // the first reason stays
    brokenCode_ = code;
    brokenWhy_ = code == HCCL_E_TIMEOUT && reason.empty()
                     ? fmt::format("{} did not reach the op in time", missingRanks(generation))
                     : std::move(reason);
    broken_.store(true, std::memory_order_release);
}

// "rank 7", "ranks 3, 9 and 250 (of 1024)", "ranks 3, 9, 12, 40 and 96 more (of 1024)".
std::string ProcessBoard::missingRanks(uint64_t generation) const {
    constexpr size_t kNamed = 4;
    std::vector<uint32_t> missing;
    for (uint32_t r = 0; r < size_; ++r)
        if (arrivedAt_[r].load(std::memory_order_relaxed) != generation + 1) missing.push_back(r);
    if (missing.size() == 1) return fmt::format("rank {}", missing[0]);
    std::string names;
    for (size_t i = 0; i < missing.size() && i < kNamed; ++i)
        names += fmt::format("{}{}", i == 0 ? "" : (i + 1 == missing.size() ? " and " : ", "), missing[i]);
    if (missing.size() > kNamed) names += fmt::format(" and {} more", missing.size() - kNamed);
    return fmt::format("ranks {} (of {})", names, size_);
}

void ProcessBoard::report(uint64_t seq, HcclResult code, const std::string& why) {
    std::lock_guard<std::mutex> lock(brokenMutex_);
    if (reportCode_ != HCCL_SUCCESS && reportSeq_ == seq) return;  // the first stays
    reportSeq_ = seq;
    reportCode_ = code;
    reportWhy_ = why;
}

bool ProcessBoard::reported(uint64_t seq, HcclResult* code, std::string* why) {
    std::lock_guard<std::mutex> lock(brokenMutex_);
    if (reportCode_ == HCCL_SUCCESS || reportSeq_ != seq) return false;
    *code = reportCode_;
    *why = reportWhy_;
    return true;
}

HcclResult ProcessBoard::brokenResult(std::string* why) {
    std::lock_guard<std::mutex> lock(brokenMutex_);
    *why = brokenWhy_;
    return brokenCode_;
}

}  // namespace hostccl
