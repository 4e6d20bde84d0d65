// What every concrete link shares: the per-direction queues of posted transfers
// (completed in posting order) and the broken state. Once a link fails, every
// pending and every later transfer fails with the same code and reason.
#pragma once

#include <deque>

#include "transports/link.h"

namespace hostccl::transport {

class QueuedLink : public Link {
public:
    using Link::Link;
    void post(Transfer* t) override;
    // A link already broken keeps its first reason.
    void shutdown(HcclResult code, const std::string& why) override {
        if (!broken()) failAll(code, why);
    }
    void abandon(HcclResult code, const std::string& why) override;

protected:
    // Marks the link broken and fails everything queued; calls onBroken() first so
    // the transport can tell the peer at once (and fail what it holds beyond the
    // queues, with failWithLinkError).
    void failAll(HcclResult code, const std::string& why);
    virtual void onBroken() = 0;
    // Abandoned (Link::abandon): what must be taken back from the peer, without telling it.
    virtual void onAbandoned() {}
    void failWithLinkError(Transfer* t) const {
        t->error = broken_;
        t->errorText = brokenWhy_;
    }
    bool idle() const { return sends_.empty() && recvs_.empty(); }
    bool broken() const { return broken_ != HCCL_SUCCESS; }

    std::deque<Transfer*> sends_;
    std::deque<Transfer*> recvs_;

private:
    void failQueued();

    HcclResult broken_ = HCCL_SUCCESS;
    std::string brokenWhy_;
};

}  // namespace hostccl::transport
