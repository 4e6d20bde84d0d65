#include "transports/queued_link.h"

namespace hostccl::transport {

void QueuedLink::post(Transfer* t) {
    t->link = this;
    if (broken_ != HCCL_SUCCESS) {
        t->error = broken_;
        t->errorText = brokenWhy_;
        return;
    }
    (t->dir == Transfer::Dir::Send ? sends_ : recvs_).push_back(t);
}

void QueuedLink::failAll(HcclResult code, const std::string& why) {
    onBroken();
    broken_ = code;
    brokenWhy_ = why;
    for (auto* queue : {&sends_, &recvs_}) {
        for (Transfer* t : *queue) {
            t->error = code;
            t->errorText = why;
        }
        queue->clear();
    }
}

}  // namespace hostccl::transport
