#include "work.h"

#include <c10/util/Exception.h>

#include <stdexcept>

#include "completer.h"

namespace hostccl::torch_backend {

HostcclWork::HostcclWork(int rank, c10d::OpType type, const char* name, hostccl::Work op,
                         std::vector<at::Tensor> outputs, std::function<void()> after, FailureText failureText,
                         std::weak_ptr<Completer> completer)
    : c10d::Work(rank, type),
      name_(name),
      op_(std::move(op)),
      outputs_(std::move(outputs)),
      after_(std::move(after)),
      failureText_(std::move(failureText)),
      completer_(std::move(completer)) {}

void HostcclWork::settle() {
    std::call_once(settled_, [this] {
        try {
            op_.wait();
            if (after_) after_();
        } catch (const hostccl::Error& e) {
            error_ = std::make_exception_ptr(std::runtime_error(failureText_(e)));
        } catch (...) {
            error_ = std::current_exception();
        }
        after_ = nullptr;  // drops the staged buffers it held
        finish(error_);
    });
}

bool HostcclWork::isCompleted() {
    if (!op_.test()) return false;
    settle();
    return true;
}

bool HostcclWork::isSuccess() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return completed_ && !exception_;
}

std::exception_ptr HostcclWork::exception() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return exception_;
}

bool HostcclWork::wait(std::chrono::milliseconds timeout) {
    if (timeout != kNoTimeout && !op_.wait(timeout))
        TORCH_CHECK(false, "hostccl: ", name_, " did not complete within ", timeout.count(), " ms (it is still running)");
    settle();
    if (error_) std::rethrow_exception(error_);
    return true;
}

int HostcclWork::sourceRank() const {
    TORCH_CHECK(source_ != nullptr, "hostccl: ", name_, " was not a receive from any source: it has no source rank");
    {
        std::lock_guard<std::mutex> lock(mutex_);
        TORCH_CHECK(completed_ && !exception_, "hostccl: the source rank of a receive is known once it has completed");
    }
    return int(*source_);
}

c10::intrusive_ptr<c10::ivalue::Future> HostcclWork::getFuture() {
    c10::intrusive_ptr<c10::ivalue::Future> f;
    {
        std::lock_guard<std::mutex> lock(futureMutex_);
        if (future_) return future_;
        future_ = c10::make_intrusive<c10::ivalue::Future>(c10::ListType::create(c10::TensorType::get()));
        f = future_;
    }
    std::shared_ptr<Completer> c = completer_.lock();
    // An op that moved nothing (an empty tensor) is complete already: its future is
    // too, so callbacks attached to it run at once on the caller's thread, on every
    // rank alike. (Completed on the completer's thread, they would run there or on
    // the caller's as the race went, and a hook whose callbacks issue collectives
    // (PowerSGD's) would issue them in a different order on different ranks.) A
    // group that is gone completes it here too; no callbacks are attached yet.
    if (!c || (!op_.queued() && !awaitingBatch_)) {
        settle();
        completeFuture();
    } else {
        c->watch(c10::intrusive_ptr<HostcclWork>::reclaim_copy(this));
    }
    return f;
}

void HostcclWork::completeFuture() {
    c10::intrusive_ptr<c10::ivalue::Future> f;
    {
        std::lock_guard<std::mutex> lock(futureMutex_);
        f = future_;
    }
    if (!f) return;
    if (error_)
        f->setError(error_);
    else
        f->markCompleted(c10::IValue(outputs_));
}

}  // namespace hostccl::torch_backend
