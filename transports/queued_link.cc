#include "transports/queued_link.h"

namespace hostccl::transport {

void QueuedLink::post(Transfer* t) {
    t->link = this;
    if (broken_ != HCCL_SUCCESS) {
        failWithLinkError(t);
        return;
    }
    (t->dir == Transfer::Dir::Send ? sends_ : recvs_).push_back(t);
}

void QueuedLink::failAll(HcclResult code, const std::string& why) {
    broken_ = code;
    brokenWhy_ = why;
    onBroken();
    failQueued();
}

void QueuedLink::abandon(HcclResult code, const std::string& why) {
    if (broken()) return;
    broken_ = code;
    brokenWhy_ = why;
    onAbandoned();
    failQueued();
}

void QueuedLink::failQueued() {
    for (auto* queue : {&sends_, &recvs_}) {
        for (Transfer* t : *queue) failWithLinkError(t);
        queue->clear();
    }
}

}  // namespace hostccl::transport
