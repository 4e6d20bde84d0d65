#include "transports/progress.h"

#include <poll.h>

#include <algorithm>
#include <thread>

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
// spinning and yielding). There: no spinning, a few yields, then sleep.
constexpr int kCrowdedSpinRounds = 0;
constexpr int kCrowdedYieldRounds = 8;
// A message part-way through a socket with this much left waits in poll at once.
constexpr size_t kKernelPacedBytes = size_t(4) << 20;
constexpr auto kMinSleep = std::chrono::microseconds(20);
constexpr auto kMaxSleep = std::chrono::microseconds(500);

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
          yieldRounds_(crowded ? kCrowdedYieldRounds : kYieldRounds) {}
    void reset() {
        rounds_ = 0;
        sleep_ = kMinSleep;
    }
    // Clock reads cost as much as a spin round: check deadlines only once spinning is over.
    bool pastSpinning() const { return rounds_ > spinRounds_; }
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
            std::this_thread::yield();
            return;
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
    // Every unfinished transfer is on a link the kernel paces, and one of them is
    // part-way through a message with at least kKernelPacedBytes left: that moves at
    // the socket's pace (a buffer's worth takes hundreds of microseconds; below it
    // spinning catches the last buffers sooner: 1 MiB one way took 456-482 us
    // spinning, 500-560 blocking at once), so spinning and yielding would
    // only take the cores the kernel's TCP work runs on (two namespace hosts on 2
    // cores: a 64 MiB broadcast between two ranks moved 1.60-1.72 GB/s spinning
    // first, 2.00-2.08 GB/s blocking at once; raw TCP one way 2.3-2.5).
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
        thread_local std::vector<Link*> sleeping;
        thread_local std::vector<SleepWord> words;
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
    int rounds_ = 0;
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

HcclResult waitAll(const std::vector<Transfer*>& transfers, Deadline deadline, CommFailure* failure, ErrorSite site,
                   bool crowded) {
    Idler idler(crowded);
    thread_local std::vector<Link*> links;
    thread_local std::vector<uint32_t> stamps;
    linksOf(transfers, &links);
    stamps.resize(links.size());
    for (;;) {
        const bool stampsRead = idler.maySleepNext();
        if (stampsRead)
            for (size_t i = 0; i < links.size(); ++i) stamps[i] = links[i]->activityStamp();
        bool moved = false;
        for (Link* l : links) moved |= l->progress();
        for (Transfer* t : transfers) {
            if (t->error != HCCL_SUCCESS) {
                site.peer = t->link->peer();
                if (failure != nullptr && t->error != HCCL_E_PARA) awaitCause(failure);  // a mismatch is a cause
                return failWith(failure, t->error, site,
                                fmt::format("rank {} {} {}: {}", site.rank, direction(t), t->link->peerName(),
                                            t->errorText));
            }
        }
        if (std::all_of(transfers.begin(), transfers.end(), [](Transfer* t) { return t->complete; }))
            return HCCL_SUCCESS;
        if (moved) {
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
        idler.idle(links, stamps, transfers, deadline, stampsRead);
    }
}

}  // namespace hostccl::transport
