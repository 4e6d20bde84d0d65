#include "common/comm_failure.h"

namespace hostccl {

bool CommFailure::raise(HcclResult code, int64_t culprit, std::string text, bool local) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (record_.code != HCCL_SUCCESS) return false;
        record_ = Record{code, culprit, std::move(text), local};
        failed_.store(true, std::memory_order_release);
    }
    raised_.notify_all();
    if (waker_) waker_();
    return true;
}

bool CommFailure::waitFailed(std::chrono::milliseconds limit) const {
    std::unique_lock<std::mutex> lock(mutex_);
    return raised_.wait_for(lock, limit, [&] { return record_.code != HCCL_SUCCESS; });
}

HcclResult CommFailure::code() const {
    if (!failed()) return HCCL_SUCCESS;
    std::lock_guard<std::mutex> lock(mutex_);
    return record_.code;
}

CommFailure::Record CommFailure::record() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return record_;
}

}  // namespace hostccl
