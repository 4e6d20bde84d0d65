// hostccl as a torch.distributed backend (a c10d ProcessGroup on torch 1.13, a
// c10d::Backend on torch 2.x: torch_compat.h): every op is queued on the group's
// hostccl communicator and returns a HostcclWork at once.
// Tensors live in host memory, which is hostccl's "device" memory; those that are
// not contiguous (or that several tensors share, as coalesced ops do) are staged in
// a contiguous buffer and copied back when the op completed.
#pragma once

#include <torch/csrc/distributed/c10d/Store.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <hostccl/hostccl.hpp>

#include "torch_compat.h"

namespace hostccl::torch_backend {

class Completer;
class HookCompressor;
class HostcclWork;

// A torch timeout as HCCL's exec timeout: whole seconds, at least one.
int32_t execTimeoutSeconds(std::chrono::milliseconds timeout);

class ProcessGroupHostccl : public BackendBase {
public:
    // A new communicator of `size` ranks: rank 0's root info travels through `store`.
    // `timeout` bounds every op (HCCL's exec timeout).
    ProcessGroupHostccl(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                        std::chrono::milliseconds timeout);
    // A subgroup of `parent` without a new rendezvous: `ranks` are the members' ranks
    // in the parent, in the order of their ranks in the subgroup, this rank among
    // them; every member passes the same ranks and `groupId`, which differs between
    // the groups built from one parent.
    // `store` is the subgroup's own (monitoredBarrier meets there).
    ProcessGroupHostccl(ProcessGroupHostccl& parent, const std::vector<int64_t>& ranks, uint64_t groupId,
                        std::chrono::milliseconds timeout, const c10::intrusive_ptr<c10d::Store>& store);
    ~ProcessGroupHostccl() override;

    const std::string getBackendName() const override { return "hostccl"; }
    // HostcclCommDescribe: hosts, links and the algorithms chosen.
    std::string describe() const { return comm_->describe(); }

    c10::intrusive_ptr<c10d::Work> broadcast(std::vector<at::Tensor>& tensors,
                                             const c10d::BroadcastOptions& opts = c10d::BroadcastOptions()) override;
    c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor>& tensors,
                                             const c10d::AllreduceOptions& opts = c10d::AllreduceOptions()) override;
    c10::intrusive_ptr<c10d::Work> allreduce_coalesced(
        std::vector<at::Tensor>& tensors,
        const c10d::AllreduceCoalescedOptions& opts = c10d::AllreduceCoalescedOptions()) override;
    c10::intrusive_ptr<c10d::Work> reduce(std::vector<at::Tensor>& tensors,
                                          const c10d::ReduceOptions& opts = c10d::ReduceOptions()) override;
    c10::intrusive_ptr<c10d::Work> allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                             std::vector<at::Tensor>& inputs,
                                             const c10d::AllgatherOptions& opts = c10d::AllgatherOptions()) override;
    c10::intrusive_ptr<c10d::Work> _allgather_base(at::Tensor& output, at::Tensor& input,
                                                   const c10d::AllgatherOptions& opts = c10d::AllgatherOptions()) override;
    c10::intrusive_ptr<c10d::Work> allgather_coalesced(
        std::vector<std::vector<at::Tensor>>& outputLists, std::vector<at::Tensor>& inputs,
        const c10d::AllgatherOptions& opts = c10d::AllgatherOptions()) override;
    c10::intrusive_ptr<c10d::Work> gather(std::vector<std::vector<at::Tensor>>& outputs,
                                          std::vector<at::Tensor>& inputs,
                                          const c10d::GatherOptions& opts = c10d::GatherOptions()) override;
    c10::intrusive_ptr<c10d::Work> scatter(std::vector<at::Tensor>& outputs,
                                           std::vector<std::vector<at::Tensor>>& inputs,
                                           const c10d::ScatterOptions& opts = c10d::ScatterOptions()) override;
    c10::intrusive_ptr<c10d::Work> reduce_scatter(
        std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
        const c10d::ReduceScatterOptions& opts = c10d::ReduceScatterOptions()) override;
    c10::intrusive_ptr<c10d::Work> _reduce_scatter_base(
        at::Tensor& output, at::Tensor& input,
        const c10d::ReduceScatterOptions& opts = c10d::ReduceScatterOptions()) override;
    c10::intrusive_ptr<c10d::Work> alltoall_base(at::Tensor& output, at::Tensor& input,
                                                 std::vector<int64_t>& outputSplits, std::vector<int64_t>& inputSplits,
                                                 const c10d::AllToAllOptions& opts = c10d::AllToAllOptions()) override;
    c10::intrusive_ptr<c10d::Work> alltoall(std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
                                            const c10d::AllToAllOptions& opts = c10d::AllToAllOptions()) override;
    c10::intrusive_ptr<c10d::Work> send(std::vector<at::Tensor>& tensors, int dstRank, int tag) override;
    c10::intrusive_ptr<c10d::Work> recv(std::vector<at::Tensor>& tensors, int srcRank, int tag) override;
    c10::intrusive_ptr<c10d::Work> recvAnysource(std::vector<at::Tensor>& tensors, int tag) override;
    c10::intrusive_ptr<c10d::Work> barrier(const c10d::BarrierOptions& opts = c10d::BarrierOptions()) override;
    // batch_isend_irecv: the sends and receives issued between the two run as one
    // HcclBatchSendRecv (all at once, in any order across ranks), not one after
    // another on the stream, where two ranks that both receive first would wait for
    // each other forever. Collectives issued in between (torch 2.x's coalescing
    // manager) run in order as they come.
    void startCoalescing() override;
#if HOSTCCL_TORCH2
    // The Work completes once every op of the batch has.
    c10::intrusive_ptr<c10d::Work> endCoalescing() override;
    bool supportsCoalescing() const override { return true; }

    // Each pair (outputs[i], inputs[i]) gathered as _allgather_base / reduce-scattered
    // as _reduce_scatter_base does, one collective on the stream after another (FSDP
    // and DTensor issue these).
    c10::intrusive_ptr<c10d::Work> allgather_into_tensor_coalesced(
        std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
        const c10d::AllgatherOptions& opts = c10d::AllgatherOptions()) override;
    c10::intrusive_ptr<c10d::Work> reduce_scatter_tensor_coalesced(
        std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
        const c10d::ReduceScatterOptions& opts = c10d::ReduceScatterOptions()) override;

#if HOSTCCL_TORCH_BACKEND_SPLIT
    // DeviceMesh and split_group build subgroups from this one without a new
    // rendezvous (HostcclCommSplit underneath). `ranks` are this group's ranks, in
    // the order of the subgroup's; a rank not among them gets nothing.
    bool supportsSplitting() const override { return true; }
    c10::intrusive_ptr<c10d::Backend> split(const c10::intrusive_ptr<c10d::Store>& store, const std::vector<int>& ranks,
                                            const c10::intrusive_ptr<Options>& opts) override;
    c10::intrusive_ptr<Options> getBackendOptions() override;
    // Bounds the ops that start from now on (the communicator's exec timeout).
    void setTimeout(std::chrono::milliseconds timeout) override;
#endif
    // abort: fails what is in flight on this rank at once and releases the
    // communicator; shutdown (destroy_process_group): lets queued ops finish first.
    // Ops issued afterwards raise.
    void abort() override;
    void shutdown() override;
#else
    void endCoalescing(std::vector<c10::intrusive_ptr<c10d::Work>>& reqs) override;
#endif

    // How many ops this rank issued on the group (torch's debug checks and object
    // collectives on subgroups compare it across ranks); every rank starts at 0.
    void setSequenceNumberForGroup() override {}
    uint64_t getSequenceNumberForGroup() override { return issued_.load(); }

    // A barrier through the group's store that names the ranks which did not reach it
    // within the timeout (on rank 0; the others fail when rank 0 does not answer).
    void monitoredBarrier(const c10d::BarrierOptions& opts, bool waitAllRanks = false) override;

    // Averages the float32 `bucket` in place with one of the training layer's
    // compressors (top-k, 1-bit sign, fp16/bf16 casts: hostccl/compression.hpp), its
    // error feedback kept per `key`. The compression runs here, its collective on the
    // group's stream, the decode once that completed; the Work's result is {bucket}.
    c10::intrusive_ptr<c10d::Work> compressedAverage(HookCompressor& compressor, at::Tensor bucket, int64_t key);

private:
    ProcessGroupHostccl(int rank, int size, std::unique_ptr<hostccl::Communicator> comm,
                        c10::intrusive_ptr<c10d::Store> store, std::chrono::milliseconds timeout);
    // Reduce-scatter of the contiguous `in` (size x output's elements) into `output`;
    // `original` is the caller's tensor `in` may be (PREMUL_SUM leaves it as it was).
    c10::intrusive_ptr<c10d::Work> reduceScatterFlat(c10d::OpType type, const char* name, at::Tensor& output,
                                                     at::Tensor in, const at::Tensor& original,
                                                     const c10d::ReduceScatterOptions& opts);
    // A reduction by BAND, BOR or BXOR of the contiguous `in`: allgathered, the ranks'
    // copies folded in rank order once it completed; `deliver(result)` (result shaped
    // as `in`) writes it where the op's output goes.
    c10::intrusive_ptr<c10d::Work> bitwiseReduction(c10d::OpType type, const char* name,
                                                    std::vector<at::Tensor> outputs, at::Tensor in,
                                                    const c10d::ReduceOp& op,
                                                    std::function<void(const at::Tensor&)> deliver);
    // allreduce of a sparse COO tensor (SUM), done before it returns.
    c10::intrusive_ptr<c10d::Work> allreduceSparse(at::Tensor& t, const c10d::AllreduceOptions& opts);
    // How a failed op's Work words its error.
    std::function<std::string(const hostccl::Error&)> failureTextFor(const char* name) const;
    // A send or receive inside startCoalescing/endCoalescing: its Work completes with
    // the batch.
    c10::intrusive_ptr<c10d::Work> coalesce(c10d::OpType type, const char* name, at::Tensor t, at::Tensor buf,
                                            HcclSendRecvType kind, int peer, std::function<void()> after);
    // Queues `launch` and wraps its Work: `outputs` are what the Work's result() and
    // future hold; `after` runs once the op completed successfully.
    c10::intrusive_ptr<c10d::Work> enqueue(c10d::OpType type, const char* name, std::vector<at::Tensor> outputs,
                                           const std::function<hostccl::Work(hostccl::Communicator&)>& launch,
                                           std::function<void()> after = nullptr);

    struct PendingBatch {
        // Read by HcclBatchSendRecv until the batch completes: each Work of the batch
        // holds them (through its `after`).
        std::shared_ptr<std::vector<HcclSendRecvItem>> items = std::make_shared<std::vector<HcclSendRecvItem>>();
        std::vector<c10::intrusive_ptr<HostcclWork>> sendRecvs;  // completed by the batch's op
        std::vector<c10::intrusive_ptr<HostcclWork>> all;        // every op issued in the batch
    };
    // Closes the batch: its sends and receives queued as one op, bound to their Works.
    // Returns an op that completes after every op of the batch (the stream runs them
    // in order): the batch's own, or a marker queued behind its collectives.
    hostccl::Work launchBatch(PendingBatch& batch);
    // The communicator, or a RuntimeError once the group was shut down or aborted.
    hostccl::Communicator& live() const;
    // Waits for the queued ops, then destroys the communicator (the destructor,
    // shutdown and abort).
    void release();

    std::unique_ptr<PendingBatch> batch_;  // while coalescing
    const char* closedBy_ = "destroyed";    // why comm_ is gone, once it is
    std::map<std::string, uint64_t> unnamedSplits_;  // split() without a group name
    c10::intrusive_ptr<c10d::Store> store_;
    std::chrono::milliseconds timeout_;
    uint64_t monitoredBarriers_ = 0;  // how many this rank entered: names each one's keys
    std::atomic<uint64_t> issued_{0};  // ops issued (getSequenceNumberForGroup)
    std::shared_ptr<hostccl::Communicator> comm_;
    std::shared_ptr<Completer> completer_;
};

}  // namespace hostccl::torch_backend
