#include "transports/progress.h"

#include <poll.h>

#include <algorithm>
#include <thread>

namespace hostccl::transport {

namespace {
constexpr int kPollSliceMs = 100;

// Links with unfinished transfers, each once.
std::vector<Link*> busyLinks(const std::vector<Transfer*>& transfers) {
    std::vector<Link*> links;
    for (Transfer* t : transfers)
        if (!t->complete && t->error == HCCL_SUCCESS && std::find(links.begin(), links.end(), t->link) == links.end())
            links.push_back(t->link);
    return links;
}

const char* direction(const Transfer* t) { return t->dir == Transfer::Dir::Send ? "send to" : "receive from"; }

// Blocks until a busy link's socket is ready or a slice passes. Links without a
// socket (shared memory) are polled with a short sleep instead.
void blockBriefly(const std::vector<Link*>& links, Deadline deadline) {
    std::vector<pollfd> fds;
    bool unpollable = false;
    for (Link* l : links) {
        if (l->pollFd() >= 0)
            fds.push_back(pollfd{l->pollFd(), l->pollEvents(), 0});
        else
            unpollable = true;
    }
    int sliceMs = deadline.remainingMs(kPollSliceMs);
    if (unpollable) sliceMs = std::min(sliceMs, 0);
    if (!fds.empty()) {
        ::poll(fds.data(), fds.size(), sliceMs);
    } else {
        std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
}
}  // namespace

HcclResult waitAll(const std::vector<Transfer*>& transfers, Deadline deadline, const std::atomic<bool>* aborted,
                   ErrorSite site) {
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
        if (moved) continue;
        if (aborted != nullptr && aborted->load(std::memory_order_relaxed))
            return fail(HCCL_E_INTERNAL, site, "operation aborted");
        if (deadline.expired()) {
            for (Transfer* t : transfers) {
                if (!t->complete) {
                    site.peer = t->link->peer();
                    return fail(HCCL_E_TIMEOUT, site, "timed out waiting to {} peer {} ({} of {} bytes done)",
                                t->dir == Transfer::Dir::Send ? "send to" : "receive from", t->link->peer(),
                                t->moved, t->bytes);
                }
            }
        }
        blockBriefly(busyLinks(transfers), deadline);
    }
}

}  // namespace hostccl::transport
