#include "transports/progress.h"

#include <poll.h>

#include <algorithm>
#include <thread>

namespace hostccl::transport {

namespace {
constexpr int kPollSliceMs = 100;
constexpr int kSpinRounds = 64;    // fresh data usually arrives within a few microseconds
// Then give the core to a rank that can make progress, for up to this long: with
// more ranks than cores the peer we wait for is usually runnable, and yielding to
// it costs a few microseconds where a sleep costs tens.
constexpr auto kYieldPhase = std::chrono::microseconds(300);
constexpr auto kMinSleep = std::chrono::microseconds(20);
constexpr auto kMaxSleep = std::chrono::microseconds(500);

// Links with unfinished transfers, each once.
std::vector<Link*> busyLinks(const std::vector<Transfer*>& transfers) {
    std::vector<Link*> links;
    for (Transfer* t : transfers)
        if (!t->complete && t->error == HCCL_SUCCESS && std::find(links.begin(), links.end(), t->link) == links.end())
            links.push_back(t->link);
    return links;
}

const char* direction(const Transfer* t) { return t->dir == Transfer::Dir::Send ? "send to" : "receive from"; }

// How a waiter spends the time when nothing moved: spin, then yield, then block.
// Socket-only waits block in poll() until data or a 100 ms slice; waits that
// include shared memory (which has no descriptor to poll) sleep with back-off
// from 20 to 500 microseconds, watching any sockets meanwhile.
class Idler {
public:
    void reset() {
        rounds_ = 0;
        sleep_ = kMinSleep;
    }
    void idle(const std::vector<Link*>& links, Deadline deadline) {
        ++rounds_;
        if (rounds_ <= kSpinRounds) {
            __builtin_ia32_pause();
            return;
        }
        if (rounds_ == kSpinRounds + 1) yieldUntil_ = std::chrono::steady_clock::now() + kYieldPhase;
        if (std::chrono::steady_clock::now() < yieldUntil_) {
            std::this_thread::yield();
            return;
        }
        std::vector<pollfd> fds;
        bool unpollable = false;
        for (Link* l : links) {
            if (l->pollFd() >= 0)
                fds.push_back(pollfd{l->pollFd(), l->pollEvents(), 0});
            else
                unpollable = true;
        }
        if (!unpollable) {
            ::poll(fds.data(), fds.size(), deadline.remainingMs(kPollSliceMs));
            return;
        }
        timespec ts{0, static_cast<long>(std::chrono::nanoseconds(sleep_).count())};
        ::ppoll(fds.data(), fds.size(), &ts, nullptr);
        sleep_ = std::min(sleep_ * 2, std::chrono::duration_cast<std::chrono::microseconds>(kMaxSleep));
    }

private:
    int rounds_ = 0;
    std::chrono::steady_clock::time_point yieldUntil_{};
    std::chrono::microseconds sleep_ = kMinSleep;
};
}  // namespace

HcclResult waitAll(const std::vector<Transfer*>& transfers, Deadline deadline, const std::atomic<bool>* aborted,
                   ErrorSite site) {
    Idler idler;
    for (;;) {
        std::vector<Link*> links = busyLinks(transfers);
        bool moved = false;
        for (Link* l : links) moved |= l->progress();
        for (Transfer* t : transfers) {
            if (t->error != HCCL_SUCCESS) {
                site.peer = t->link->peer();
                return fail(t->error, site, "{} peer {}: {}", direction(t), t->link->peer(), t->errorText);
            }
        }
        if (std::all_of(transfers.begin(), transfers.end(), [](Transfer* t) { return t->complete; }))
            return HCCL_SUCCESS;
        if (moved) {
            idler.reset();
            continue;
        }
        if (aborted != nullptr && aborted->load(std::memory_order_relaxed))
            return fail(HCCL_E_INTERNAL, site, "operation aborted");
        if (deadline.expired()) {
            for (Transfer* t : transfers) {
                if (!t->complete) {
                    site.peer = t->link->peer();
                    return fail(HCCL_E_TIMEOUT, site, "timed out waiting to {} peer {} ({} of {} bytes done)",
                                direction(t), t->link->peer(), t->moved, t->bytes);
                }
            }
        }
        idler.idle(links, deadline);
    }
}

}  // namespace hostccl::transport
