#include "transports/progress.h"

#include <poll.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <thread>

#include "common/fast_tls.h"
#include "transports/yield_costs.h"

namespace hostccl::transport {

namespace {
constexpr int kPollSliceMs = 100;
constexpr int kSpinRounds = 64;    // fresh data usually arrives within a few microseconds
// Then give the core to a rank that can make progress, a few hundred times (about
// 300 us): with more ranks than cores the peer we wait for is usually runnable,
// and yielding to it costs a few microseconds where a sleep costs tens.
constexpr int kYieldRounds = 256;
// With more ranks than cores a spinning rank burns the time slice the rank it waits
// for needs (measured: 4 ranks on 2 cores spent 7 us of CPU per 8-byte allreduce
// spinning and yielding). There: no spinning, some yields, then sleep. With 8 yields a
// mid-sized op's waiters slept and woke each other in some runs and not in others
// (4 ranks on 2 cores, 128 KiB reduce-scatter: 14-138 us per op between runs; 22-24
// with 32, and 8 ranks' 512 KiB allreduce 350-570 -> 230-375); 8-byte ops move within
// their run-to-run spread, and 64 yields gained nothing over 32.
constexpr int kCrowdedSpinRounds = 0;
constexpr int kCrowdedYieldRounds = 32;
// A message part-way through a socket with this much left waits in poll at once.
constexpr size_t kKernelPacedBytes = size_t(256) << 10;
constexpr auto kMinSleep = std::chrono::microseconds(20);
constexpr auto kMaxSleep = std::chrono::microseconds(500);

uint64_t steadyNs() {
    return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                        std::chrono::steady_clock::now().time_since_epoch())
                        .count());
}

// Per thread: its yields are timed where every rank has a core (transports/yield_costs.h).
HOSTCCL_FAST_TLS thread_local YieldCosts tYieldCosts;

// The links of the transfers, each once (computed once per wait: the spin loop
// must not allocate).
void linksOf(const std::vector<Transfer*>& transfers, std::vector<Link*>* links) {
    links->clear();
    for (Transfer* t : transfers)
        if (std::find(links->begin(), links->end(), t->link) == links->end()) links->push_back(t->link);
}

// Whether `l` still has unfinished transfers.
bool busy(const Link* l, const std::vector<Transfer*>& transfers) {
    return std::any_of(transfers.begin(), transfers.end(), [l](const Transfer* t) { return !t->complete && t->link == l; });
}

const char* direction(const Transfer* t) { return t->dir == Transfer::Dir::Send ? "sending to" : "receiving from"; }

// How a waiter spends the time when nothing moved: spin, then yield, then block.
// Waits on shared-memory links only sleep on their doorbells until a peer acts;
// socket-only waits block in poll() until data or a 100 ms slice; mixed waits sleep
// with back-off from 20 to 500 microseconds, watching the sockets meanwhile.
class Idler {
public:
    explicit Idler(bool crowded)
        : spinRounds_(crowded ? kCrowdedSpinRounds : kSpinRounds),
          yieldRounds_(crowded ? kCrowdedYieldRounds : kYieldRounds),
          timesYields_(!crowded) {}
    void reset() {
        rounds_ = 0;
        sleep_ = kMinSleep;
        lastYieldEndNs_ = 0;
    }
    // Clock reads cost as much as a spin round: check deadlines only once spinning is over.
    bool pastSpinning() const { return rounds_ > spinRounds_; }
    // The next idle() may block (sleep or poll) rather than spin or yield.
    bool mayBlockNext() const { return rounds_ + 1 > spinRounds_ + yieldRounds_; }
    // Whether the next idle() may sleep, so the pass before it must read the links'
    // activity stamps. While spinning and yielding they are not read: each is a load of
    // lines the peer writes, and on every pass that traffic delays the peer's stores.
    bool maySleepNext() const { return rounds_ + 1 > spinRounds_ + yieldRounds_; }
    // `stamps[i]` is links[i]'s activity stamp, read before the progress pass that
    // moved nothing.
    // `stampsRead`: the stamps were read before the pass that moved nothing; if not,
    // a doorbell sleep waits for one more pass that reads them.
    void idle(const std::vector<Link*>& links, const std::vector<uint32_t>& stamps,
              const std::vector<Transfer*>& transfers, Deadline deadline, bool stampsRead) {
        // (Links whose transfers are done poll with no events, which costs nothing.)
        if (rounds_ == 0 && midMessageInKernel(transfers)) rounds_ = spinRounds_ + yieldRounds_;
        ++rounds_;
        if (rounds_ <= spinRounds_) {
            __builtin_ia32_pause();
            return;
        }
        if (rounds_ <= spinRounds_ + yieldRounds_) {
            if (yieldUnlessCostly()) return;
            rounds_ = spinRounds_ + yieldRounds_ + 1;  // sleeps from here on
        }
        if (sleepOnDoorbells(links, stamps, transfers, deadline, stampsRead)) return;
        std::vector<pollfd> fds;
        bool unpollable = false;
        for (Link* l : links) unpollable |= !l->appendPollFds(&fds);
        if (!unpollable) {
            ::poll(fds.data(), fds.size(), deadline.remainingMs(kPollSliceMs));
            return;
        }
        timespec ts{0, static_cast<long>(std::chrono::nanoseconds(sleep_).count())};
        ::ppoll(fds.data(), fds.size(), &ts, nullptr);
        sleep_ = std::min(sleep_ * 2, std::chrono::duration_cast<std::chrono::microseconds>(kMaxSleep));
    }

private:
    // Yields, timing the yield where every rank has a core (YieldCosts); false, without
    // yielding, while this thread's yields are known to be costly. With more ranks than
    // cores a yield runs the ranks sharing the core, for as long as their work takes.
    bool yieldUnlessCostly() {
        if (!timesYields_) {
            std::this_thread::yield();
            return true;
        }
        const uint64_t before = lastYieldEndNs_ != 0 ? lastYieldEndNs_ : steadyNs();
        if (!tYieldCosts.yieldsPay(before)) return false;
        std::this_thread::yield();
        lastYieldEndNs_ = steadyNs();
        tYieldCosts.yielded(lastYieldEndNs_ - before, lastYieldEndNs_);
        return true;
    }

    // Every unfinished transfer is on a link the kernel paces, and one of them is
    // part-way through a message with at least kKernelPacedBytes left: that moves at
    // the socket's pace, so spinning and yielding would only take the cores the
    // kernel's TCP work runs on. The socket wakes the poll once a batch has arrived
    // (TcpLane::setWakeBytes), not per segment, so blocking at once costs a wake-up
    // per batch (two namespace hosts on 2 cores, broadcast between two ranks, GB/s,
    // blocking from 4 MiB left and from 256 KiB: 2 MiB 2.4-2.6 and 3.1-3.5, 8 MiB
    // 3.0-3.3 and 3.3-3.4).
    static bool midMessageInKernel(const std::vector<Transfer*>& transfers) {
        bool begun = false;
        for (const Transfer* t : transfers) {
            if (t->complete) continue;
            if (!t->link->kernelPaced()) return false;
            begun = begun || (t->moved > 0 && t->bytes - std::min(t->moved, t->bytes) >= kKernelPacedBytes);
        }
        return begun;
    }

    // When every link with unfinished transfers can sleep on a doorbell: sleeps until
    // one of their peers acts (or the slice ends), or returns at once when the stamps
    // were not read. False when some link cannot sleep.
    bool sleepOnDoorbells(const std::vector<Link*>& links, const std::vector<uint32_t>& stamps,
                          const std::vector<Transfer*>& transfers, Deadline deadline, bool stampsRead) {
        HOSTCCL_FAST_TLS thread_local std::vector<Link*> sleeping;
        HOSTCCL_FAST_TLS thread_local std::vector<SleepWord> words;
        sleeping.clear();
        for (Link* l : links) {
            if (!busy(l, transfers)) continue;
            if (!l->canSleep()) return false;
            sleeping.push_back(l);
        }
        if (sleeping.empty()) return false;
        if (!stampsRead) return true;
        words.assign(sleeping.size(), SleepWord{});
        size_t begun = 0;
        for (; begun < sleeping.size(); ++begun) {
            size_t i = size_t(std::find(links.begin(), links.end(), sleeping[begun]) - links.begin());
            if (!sleeping[begun]->beginSleep(stamps[i], &words[begun])) break;  // that peer acted: don't sleep
        }
        if (begun == sleeping.size()) sleepOnWords(words.data(), words.size(), deadline.remainingMs(kPollSliceMs) * 1000);
        for (size_t i = 0; i < begun; ++i) sleeping[i]->endSleep();
        return true;
    }

    const int spinRounds_;
    const int yieldRounds_;
    const bool timesYields_;
    int rounds_ = 0;
    uint64_t lastYieldEndNs_ = 0;  // 0: no yield yet in this wait (the spinning between takes nanoseconds)
    std::chrono::microseconds sleep_ = kMinSleep;
};
}  // namespace

HcclResult endedByFailure(const CommFailure& failure, ErrorSite site) {
    CommFailure::Record r = failure.record();
    site.peer = r.culprit;
    return failAt(r.code, site, r.text);
}

HcclResult failWith(CommFailure* failure, HcclResult code, ErrorSite site, std::string text) {
    if (failure != nullptr && !failure->raise(code, site.peer, text)) return endedByFailure(*failure, site);
    return failAt(code, site, text);
}

namespace {

// Errors that are their own cause, seen by the ranks at both ends: an operation
// mismatch, and a link refused for want of the transport both ends were told to use
// (HOSTCCL_TRANSPORT=rdma where one has no device): no notice will say more.
bool isCause(HcclResult e) { return e == HCCL_E_PARA || e == HCCL_E_ROCE_CONNECT; }

// A link that broke under us is usually the consequence of a failure elsewhere: a
// peer that found a mismatch closes its end, a dead peer's sockets all close at once.
// That failure's notice (or the dead peer's closed health channel) arrives within
// moments; waiting briefly for it lets every rank report the cause, not the symptom.
// Asleep, not polling: at scale hundreds of ranks may wait here at once.
void awaitCause(const CommFailure* failure) {
    // A notice crosses a few hops, each a scheduling delay on a crowded host: at 256
    // processes on 2 cores the last ranks hear of a death up to ~2 s later, while
    // peers that heard first may already have destroyed the communicator and exited
    // (their links close as a dead process's would).
    constexpr auto kGrace = std::chrono::milliseconds(2000);
    failure->waitFailed(kGrace);
}
}  // namespace

namespace {
// Bulk receives on network links are timed from their first byte to their last
// (LinkCounters::timedBytes): what a link achieves, apart from waiting for the peer.
class BulkTimer {
public:
    BulkTimer(const std::vector<Transfer*>& transfers, bool on) : transfers_(transfers) {
        for (size_t i = 0; on && i < transfers.size() && i < starts_.size(); ++i) any_ |= timed(transfers[i]);
        if (!any_) return;
        state_.assign(transfers.size(), kNot);
        for (size_t i = 0; i < transfers.size() && i < starts_.size(); ++i) state_[i] = timed(transfers[i]) ? kWaiting : kNot;
    }
    // After each progress pass: stamps receives whose first bytes came and counts
    // those that completed. One that began and ended in one pass is not timed.
    void afterPass() {
        if (!any_) return;
        uint64_t now = 0;
        for (size_t i = 0; i < transfers_.size(); ++i) {
            Transfer* t = transfers_[i];
            if (state_[i] == kWaiting && (t->moved > 0 || t->complete)) {
                state_[i] = t->complete ? kNot : kStarted;
                if (state_[i] == kStarted) starts_[i] = now = now != 0 ? now : steadyNs();
            } else if (state_[i] == kStarted && t->complete) {
                now = now != 0 ? now : steadyNs();
                LinkCounters& c = t->link->counters();
                LinkCounters::add(c.timedBytes, t->bytes);
                LinkCounters::add(c.timedNs, now - starts_[i]);
                state_[i] = kNot;
            }
        }
    }

private:
    static constexpr size_t kTimedBytes = size_t(1) << 20;
    enum : uint8_t { kNot, kWaiting, kStarted };
    static bool timed(const Transfer* t) {
        return t->dir == Transfer::Dir::Recv && t->bytes >= kTimedBytes && !t->link->sharesMemory();
    }
    const std::vector<Transfer*>& transfers_;
    bool any_ = false;
    std::vector<uint8_t> state_;
    // Written when a receive starts and read only after, so left unset: a wait that times
    // nothing (every small op's) does not clear 512 bytes. Transfers beyond 64 are not timed.
    std::array<uint64_t, 64> starts_;
};

bool started(const Transfer* t) { return t->complete || t->moved > 0 || t->headerDone; }

// The peer of a transfer that has not begun (a receive if there is one), or of any
// unfinished one when `begunToo`; -1 when there is none.
int64_t awaitedPeer(const std::vector<Transfer*>& transfers, bool begunToo) {
    int64_t peer = -1;
    for (const Transfer* t : transfers) {
        if (t->complete || (!begunToo && started(t))) continue;
        if (t->dir == Transfer::Dir::Recv) return t->link->peer();
        peer = t->link->peer();
    }
    return peer;
}

// The monitor's side of a wait (WaitWatch): nothing happens until spinning is over.
// The arrival wait runs from the end of spinning until every transfer has begun (the
// last peer showed up), so a long message's own transfer time is not counted.
class Watcher {
public:
    Watcher(WaitWatch* w, const std::vector<Transfer*>& transfers) : w_(w), transfers_(transfers) {}
    // A pass moved nothing; `idler` is about to idle.
    void idle(const Idler& idler) {
        if (w_ == nullptr || !idler.pastSpinning()) return;
        if (w_->timeArrival && !arrived_) {
            const int64_t peer = awaitedPeer(transfers_, false);
            if (peer < 0) {
                arrive();
            } else {
                lastPeer_ = peer;
                if (spinEndNs_ == 0) spinEndNs_ = steadyNs();
            }
        }
        if (w_->waitingOn != nullptr && idler.mayBlockNext() && !published_) {
            w_->waitingOn->store(awaitedPeer(transfers_, true), std::memory_order_relaxed);
            published_ = true;
        }
    }
    void moved() {
        if (w_ == nullptr) return;
        if (spinEndNs_ != 0 && !arrived_ && awaitedPeer(transfers_, false) < 0) arrive();
        if (w_->progress != nullptr)  // every moving pass: a long message that never waits is not stuck
            w_->progress->store(w_->progress->load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    }
    ~Watcher() {
        if (w_ == nullptr) return;
        if (published_) w_->waitingOn->store(-1, std::memory_order_relaxed);
        if (spinEndNs_ != 0 && !arrived_) arrive();
        w_->lastPeer = w_->waitedNs != 0 ? lastPeer_ : -1;
    }

private:
    void arrive() {
        arrived_ = true;
        if (spinEndNs_ != 0) w_->waitedNs = std::max<uint64_t>(1, steadyNs() - spinEndNs_);
    }
    WaitWatch* const w_;
    const std::vector<Transfer*>& transfers_;
    uint64_t spinEndNs_ = 0;
    int64_t lastPeer_ = -1;
    bool arrived_ = false;
    bool published_ = false;
};
}  // namespace

HcclResult waitAll(const std::vector<Transfer*>& transfers, Deadline deadline, CommFailure* failure, ErrorSite site,
                   bool crowded, WaitWatch* watch) {
    Idler idler(crowded);
    HOSTCCL_FAST_TLS thread_local std::vector<Link*> links;
    HOSTCCL_FAST_TLS thread_local std::vector<uint32_t> stamps;
    linksOf(transfers, &links);
    stamps.resize(links.size());
    BulkTimer bulk(transfers, watch != nullptr);
    Watcher watcher(watch, transfers);
    for (;;) {
        const bool stampsRead = idler.maySleepNext();
        if (stampsRead)
            for (size_t i = 0; i < links.size(); ++i) stamps[i] = links[i]->activityStamp();
        bool moved = false;
        for (Link* l : links) moved |= l->progress();
        bulk.afterPass();
        for (Transfer* t : transfers) {
            if (t->error != HCCL_SUCCESS) {
                site.peer = t->link->peer();
                if (failure != nullptr && !isCause(t->error)) awaitCause(failure);
                return failWith(failure, t->error, site,
                                fmt::format("rank {} {} {}: {}", site.rank, direction(t), t->link->peerName(),
                                            t->errorText));
            }
        }
        if (std::all_of(transfers.begin(), transfers.end(), [](Transfer* t) { return t->complete; }))
            return HCCL_SUCCESS;
        if (moved) {
            watcher.moved();
            idler.reset();
            continue;
        }
        if (failure != nullptr && failure->failed()) return endedByFailure(*failure, site);
        if (idler.pastSpinning() && deadline.expired()) {
            for (Transfer* t : transfers) {
                if (!t->complete) {
                    site.peer = t->link->peer();
                    return failWith(failure, HCCL_E_TIMEOUT, site,
                                    fmt::format("rank {} timed out {} {} ({} of {} bytes done)", site.rank,
                                                direction(t), t->link->peerName(), t->moved, t->bytes));
                }
            }
        }
        watcher.idle(idler);
        idler.idle(links, stamps, transfers, deadline, stampsRead);
    }
}

}  // namespace hostccl::transport
