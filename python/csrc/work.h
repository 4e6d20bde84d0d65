// A c10d Work over one hostccl op: wait/isCompleted/exception as torch expects, the
// steps that follow the op once it completed (copies back into the caller's views,
// the division of AVG, unflattening), and a future for DDP and communication hooks.
#pragma once

#include <ATen/ATen.h>
#include <ATen/core/ivalue.h>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <hostccl/hostccl.hpp>

namespace hostccl::torch_backend {

class Completer;

// Names a failed op's cause: the communicator's own words about the rank to blame.
using FailureText = std::function<std::string(const hostccl::Error&)>;

class HostcclWork : public c10d::Work {
public:
    HostcclWork(int rank, c10d::OpType type, const char* name, hostccl::Work op, std::vector<at::Tensor> outputs,
                std::function<void()> after, FailureText failureText, std::weak_ptr<Completer> completer);

    bool isCompleted() override;
    bool isSuccess() const override;
    std::exception_ptr exception() const override;
    // Waits for the op (at most `timeout` when one is given: past it, throws); then
    // throws the op's failure as a RuntimeError naming the cause.
    bool wait(std::chrono::milliseconds timeout = kNoTimeout) override;
    std::vector<at::Tensor> result() override { return outputs_; }
    void synchronize() override {}
    c10::intrusive_ptr<c10::ivalue::Future> getFuture() override;

    // A receive from any source: the sender's rank, written by the op when it completes.
    void setSource(std::shared_ptr<const uint32_t> source) { source_ = std::move(source); }
    // The sender of a completed receive from any source (torch's recv() returns it).
    int sourceRank() const override;

    // A Work made inside a coalesced batch gets its op once the batch is queued.
    void awaitBatch() { awaitingBatch_ = true; }
    void bindOp(hostccl::Work op) {
        op_ = std::move(op);
        awaitingBatch_ = false;
    }
    // Blocks until the op completed, then (once, by whoever gets here first) runs the
    // steps that follow it and records its failure.
    void settle();
    // Completes the future (on a completer's thread: its callbacks may issue and wait
    // for later ops).
    void completeFuture();

private:
    const char* name_;
    hostccl::Work op_;
    std::vector<at::Tensor> outputs_;
    std::function<void()> after_;
    FailureText failureText_;
    std::weak_ptr<Completer> completer_;  // the group's; gone once the group is destroyed
    std::shared_ptr<const uint32_t> source_;
    bool awaitingBatch_ = false;
    std::once_flag settled_;
    std::exception_ptr error_;
    std::mutex futureMutex_;
    c10::intrusive_ptr<c10::ivalue::Future> future_;
};

}  // namespace hostccl::torch_backend
