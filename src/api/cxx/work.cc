// Work handles of the C++ API: the state a completion marker fills in when the
// stream reaches it, and the waits on that state.
#include "api/cxx/work_state.h"

#include <exception>

#include <fmt/format.h>

#include "common/error.h"

namespace hostccl {
inline namespace v1 {

Error::Error(HcclResult code, const std::string& what)
    : std::runtime_error(fmt::format("{}: {} ({})", what, resultName(code), resultText(code))), code_(code) {}

void check(HcclResult rc, const char* call) {
    if (rc != HCCL_SUCCESS) throw Error(rc, call);
}

void WorkState::started() {
    std::lock_guard<std::mutex> lock(mutex);
    startedAt = std::chrono::steady_clock::now();
}

void WorkState::finish(HcclResult rc) {
    std::lock_guard<std::mutex> lock(mutex);
    result = rc;
    runMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - startedAt).count();
    done.store(true, std::memory_order_release);
    finished.notify_all();
}

bool Work::test() const { return state_ == nullptr || state_->done.load(std::memory_order_acquire); }

bool Work::wait(std::chrono::milliseconds timeout) const {
    if (state_ == nullptr) return true;
    if (!state_->done.load(std::memory_order_acquire)) {
        if (timeout == std::chrono::milliseconds::max()) {  // a bounded wait must be free to return
            if (std::shared_ptr<runtime::Stream> s = state_->stream.lock()) s->runHere(state_->ticket);
        }
        std::unique_lock<std::mutex> lock(state_->mutex);
        auto isDone = [&] { return state_->done.load(std::memory_order_relaxed); };
        if (timeout == std::chrono::milliseconds::max()) {
            state_->finished.wait(lock, isDone);
        } else if (!state_->finished.wait_for(lock, timeout, isDone)) {
            return false;
        }
    }
    if (state_->result != HCCL_SUCCESS) throw Error(state_->result, state_->call);
    return true;
}

HcclResult Work::error() const {
    if (state_ == nullptr || !test()) return HCCL_SUCCESS;
    return state_->result;
}

double Work::runMs() const {
    if (!test() || state_ == nullptr) return 0.0;
    std::lock_guard<std::mutex> lock(state_->mutex);
    return state_->runMs;
}

void waitAll(std::span<const Work> works) {
    // Every op is waited for even after one failed: their buffers may be freed next.
    std::exception_ptr first;
    for (const Work& w : works) {
        try {
            w.wait();
        } catch (const Error&) {
            if (!first) first = std::current_exception();
        }
    }
    if (first) std::rethrow_exception(first);
}

}  // namespace v1
}  // namespace hostccl
