#include "process_group.h"

#include <c10/util/Exception.h>

#include <algorithm>
#include <numeric>

#include "completer.h"
#include "dtypes.h"
#include "work.h"

namespace hostccl::torch_backend {

namespace {

void checkTensor(const at::Tensor& t, const char* op) {
    TORCH_CHECK(t.defined(), "hostccl: ", op, ": undefined tensor");
    TORCH_CHECK(t.device().is_cpu(), "hostccl: ", op, ": tensors must be on the CPU (got ", t.device(), ")");
    TORCH_CHECK(t.layout() == at::kStrided, "hostccl: ", op, ": only dense (strided) tensors are supported");
}

at::Tensor& single(std::vector<at::Tensor>& tensors, const char* op) {
    TORCH_CHECK(tensors.size() == 1, "hostccl: ", op, " takes one tensor per process (got ", tensors.size(), ")");
    checkTensor(tensors[0], op);
    return tensors[0];
}

void checkSameType(const at::Tensor& a, const at::Tensor& b, const char* op) {
    checkTensor(b, op);
    TORCH_CHECK(a.scalar_type() == b.scalar_type(), "hostccl: ", op, ": tensors of different types (", a.scalar_type(),
                " and ", b.scalar_type(), ")");
}

// A contiguous tensor with `t`'s values: `t` itself when it is one already.
at::Tensor staged(const at::Tensor& t) { return t.contiguous(); }

// Copies `buf` back into the caller's tensor unless they are the same tensor.
void writeBack(at::Tensor& t, const at::Tensor& buf) {
    if (!buf.is_same(t)) t.copy_(buf);
}

// The tensors' elements one after another in a new contiguous buffer.
at::Tensor flatten(const std::vector<at::Tensor>& ts) {
    std::vector<at::Tensor> flat;
    flat.reserve(ts.size());
    for (const at::Tensor& t : ts) flat.push_back(t.reshape({-1}));
    return at::cat(flat);
}

// The reverse of flatten, from element `offset` of `flat` on.
void unflatten(const at::Tensor& flat, std::vector<at::Tensor>& ts, int64_t offset = 0) {
    for (at::Tensor& t : ts) {
        t.copy_(flat.narrow(0, offset, t.numel()).view(t.sizes()));
        offset += t.numel();
    }
}

uint64_t count(const at::Tensor& t) { return static_cast<uint64_t>(t.numel()); }

void checkPeer(int peer, int rank, int size, const char* op) {
    TORCH_CHECK(peer >= 0 && peer < size && peer != rank, "hostccl: ", op, ": ", peer,
                " is not another rank of the group (this is rank ", rank, " of ", size, ")");
}

}  // namespace

namespace {
// A failed op's text: the communicator's own words on the cause (they name the rank
// to blame and its host) when it is still there, else the op's error.
std::string failureText(const std::weak_ptr<hostccl::Communicator>& comm, int rank, const char* name,
                        const hostccl::Error& e) {
    // Timeouts say so in the words torch's users and tests look for (" timeout ").
    std::string text = std::string("hostccl: ") + name + (e.code() == HCCL_E_TIMEOUT ? " hit a timeout" : " failed") +
                       " on rank " + std::to_string(rank) + ": ";
    if (std::shared_ptr<hostccl::Communicator> c = comm.lock()) {
        const hostccl::Communicator::Failure f = c->failure();
        if (f.code != HCCL_SUCCESS && !f.reason.empty()) return text + f.reason + " (" + e.what() + ")";
    }
    return text + e.what();
}
}  // namespace

c10::intrusive_ptr<c10d::Work> ProcessGroupHostccl::enqueue(
    c10d::OpType type, const char* name, std::vector<at::Tensor> outputs,
    const std::function<hostccl::Work(hostccl::Communicator&)>& launch, std::function<void()> after) {
    hostccl::Work op;
    try {
        op = launch(live());
    } catch (const hostccl::Error& e) {
        // Refused at once (the communicator had failed already, or a bad argument): told
        // in the words of a failure seen while waiting, naming the rank to blame.
        TORCH_CHECK(false, failureText(comm_, rank_, name, e));
    }
    issued_.fetch_add(1);
    auto work = c10::make_intrusive<HostcclWork>(rank_, type, name, std::move(op), std::move(outputs), std::move(after),
                                                 failureTextFor(name), completer_);
    if (batch_) batch_->all.push_back(work);
    return work;
}

FailureText ProcessGroupHostccl::failureTextFor(const char* name) const {
    return [comm = std::weak_ptr<hostccl::Communicator>(comm_), rank = rank_, name](const hostccl::Error& e) {
        return failureText(comm, rank, name, e);
    };
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHostccl::broadcast(std::vector<at::Tensor>& tensors,
                                                              const c10d::BroadcastOptions& opts) {
    at::Tensor& t = single(tensors, "broadcast");
    const HcclDataType dtype = hcclTypeOf(t);
    at::Tensor buf = staged(t);
    const auto root = uint32_t(opts.rootRank);
    return enqueue(
        c10d::OpType::BROADCAST, "broadcast", {t},
        [&](hostccl::Communicator& c) {
            return count(buf) == 0 ? hostccl::Work() : c.broadcast(buf.data_ptr(), count(buf), dtype, root);
        },
        [t, buf]() mutable { writeBack(t, buf); });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHostccl::allreduce(std::vector<at::Tensor>& tensors,
                                                              const c10d::AllreduceOptions& opts) {
    TORCH_CHECK(tensors.size() == 1, "hostccl: allreduce takes one tensor per process (got ", tensors.size(), ")");
    if (tensors[0].defined() && tensors[0].is_sparse() && tensors[0].device().is_cpu())
        return allreduceSparse(tensors[0], opts);
    at::Tensor& t = single(tensors, "allreduce");
    if (isBitwise(opts.reduceOp))
        return bitwiseReduction(c10d::OpType::ALLREDUCE, "allreduce", {t}, staged(t), opts.reduceOp,
                                [t](const at::Tensor& r) mutable { t.copy_(r); });
    const HcclDataType dtype = hcclTypeOf(t);
    const HcclReduceOp op = hcclOpOf(opts.reduceOp, t.scalar_type());
    const bool average = needsAverage(opts.reduceOp);
    at::Tensor buf = premultiplied(staged(t), t, opts.reduceOp);
    return enqueue(
        c10d::OpType::ALLREDUCE, "allreduce", {t},
        [&](hostccl::Communicator& c) {
            return count(buf) == 0 ? hostccl::Work() : c.allReduce(buf.data_ptr(), buf.data_ptr(), count(buf), dtype, op);
        },
        [t, buf, average, n = size_]() mutable {
            if (average) averageInPlace(buf, n);
            writeBack(t, buf);
        });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHostccl::allreduce_coalesced(std::vector<at::Tensor>& tensors,
                                                                        const c10d::AllreduceCoalescedOptions& opts) {
    TORCH_CHECK(!tensors.empty(), "hostccl: allreduce_coalesced: no tensors");
    for (const at::Tensor& t : tensors) checkSameType(tensors[0], t, "allreduce_coalesced");
    if (isBitwise(opts.reduceOp))
        return bitwiseReduction(c10d::OpType::ALLREDUCE_COALESCED, "allreduce_coalesced", tensors, flatten(tensors),
                                opts.reduceOp, [tensors](const at::Tensor& r) mutable { unflatten(r, tensors); });
    const HcclDataType dtype = hcclTypeOf(tensors[0]);
    const HcclReduceOp op = hcclOpOf(opts.reduceOp, tensors[0].scalar_type());
    const bool average = needsAverage(opts.reduceOp);
    at::Tensor flat = premultiplied(flatten(tensors), tensors[0], opts.reduceOp);
    return enqueue(
        c10d::OpType::ALLREDUCE_COALESCED, "allreduce_coalesced", tensors,
        [&](hostccl::Communicator& c) {
            return count(flat) == 0 ? hostccl::Work()
                                    : c.allReduce(flat.data_ptr(), flat.data_ptr(), count(flat), dtype, op);
        },
        [tensors, flat, average, n = size_]() mutable {
            if (average) averageInPlace(flat, n);
            unflatten(flat, tensors);
        });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHostccl::reduce(std::vector<at::Tensor>& tensors,
                                                           const c10d::ReduceOptions& opts) {
    at::Tensor& t = single(tensors, "reduce");
    if (isBitwise(opts.reduceOp))  // only the root's tensor receives the result
        return bitwiseReduction(c10d::OpType::REDUCE, "reduce", {t}, staged(t), opts.reduceOp,
                                [t, root = opts.rootRank == rank_](const at::Tensor& r) mutable {
                                    if (root) t.copy_(r);
                                });
    const HcclDataType dtype = hcclTypeOf(t);
    const HcclReduceOp op = hcclOpOf(opts.reduceOp, t.scalar_type());
    const bool average = needsAverage(opts.reduceOp);
    const bool root = opts.rootRank == rank_;
    at::Tensor in = premultiplied(staged(t), t, opts.reduceOp);
    // Only the root's tensor receives the result: the others' stay as they were.
    at::Tensor out = root ? in : at::empty_like(in);
    return enqueue(
        c10d::OpType::REDUCE, "reduce", {t},
        [&](hostccl::Communicator& c) {
            return count(in) == 0 ? hostccl::Work()
                                  : c.reduce(in.data_ptr(), out.data_ptr(), count(in), dtype, op, uint32_t(opts.rootRank));
        },
        [t, in, out, root, average, n = size_]() mutable {
            if (!root) return;
            if (average) averageInPlace(out, n);
            writeBack(t, out);
        });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHostccl::allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                                              std::vector<at::Tensor>& inputs,
                                                              const c10d::AllgatherOptions&) {
    at::Tensor& t = single(inputs, "allgather");
    TORCH_CHECK(outputs.size() == 1 && outputs[0].size() == size_t(size_),
                "hostccl: allgather needs one list of ", size_, " output tensors");
    for (const at::Tensor& o : outputs[0]) {
        checkSameType(t, o, "allgather");
        TORCH_CHECK(o.numel() == t.numel(), "hostccl: allgather: every output tensor must have the input's ",
                    t.numel(), " elements (got ", o.numel(), ")");
    }
    const HcclDataType dtype = hcclTypeOf(t);
    at::Tensor in = staged(t);
    at::Tensor flat = at::empty({int64_t(size_) * t.numel()}, t.options());
    std::vector<at::Tensor> outs = outputs[0];
    return enqueue(
        c10d::OpType::ALLGATHER, "allgather", outs,
        [&](hostccl::Communicator& c) {
            return count(in) == 0 ? hostccl::Work() : c.allGather(in.data_ptr(), flat.data_ptr(), count(in), dtype);
        },
        [outs, in, flat]() mutable { unflatten(flat, outs); });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHostccl::_allgather_base(at::Tensor& output, at::Tensor& input,
                                                                    const c10d::AllgatherOptions&) {
    checkTensor(input, "_allgather_base");
    checkSameType(input, output, "_allgather_base");
    TORCH_CHECK(output.numel() == input.numel() * size_, "hostccl: _allgather_base: the output must have ", size_,
                " x ", input.numel(), " elements (got ", output.numel(), ")");
    const HcclDataType dtype = hcclTypeOf(input);
    at::Tensor in = staged(input), out = staged(output);
    return enqueue(
        c10d::OpType::_ALLGATHER_BASE, "_allgather_base", {output},
        [&](hostccl::Communicator& c) {
            return count(in) == 0 ? hostccl::Work() : c.allGather(in.data_ptr(), out.data_ptr(), count(in), dtype);
        },
        [output, in, out]() mutable { writeBack(output, out); });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHostccl::allgather_coalesced(
    std::vector<std::vector<at::Tensor>>& outputLists, std::vector<at::Tensor>& inputs, const c10d::AllgatherOptions&) {
    TORCH_CHECK(!inputs.empty(), "hostccl: allgather_coalesced: no tensors");
    TORCH_CHECK(outputLists.size() == size_t(size_), "hostccl: allgather_coalesced needs ", size_,
                " output lists (one per rank)");
    for (const at::Tensor& t : inputs) checkSameType(inputs[0], t, "allgather_coalesced");
    for (const auto& list : outputLists) {
        TORCH_CHECK(list.size() == inputs.size(), "hostccl: allgather_coalesced: every output list must have ",
                    inputs.size(), " tensors");
        for (size_t i = 0; i < list.size(); ++i) {
            checkSameType(inputs[0], list[i], "allgather_coalesced");
            TORCH_CHECK(list[i].numel() == inputs[i].numel(), "hostccl: allgather_coalesced: output ", i,
                        " must match input ", i, "'s ", inputs[i].numel(), " elements");
        }
    }
    const HcclDataType dtype = hcclTypeOf(inputs[0]);
    at::Tensor in = flatten(inputs);
    at::Tensor flat = at::empty({int64_t(size_) * in.numel()}, in.options());
    std::vector<at::Tensor> all;
    for (const auto& list : outputLists) all.insert(all.end(), list.begin(), list.end());
    return enqueue(
        c10d::OpType::ALLGATHER_COALESCED, "allgather_coalesced", all,
        [&](hostccl::Communicator& c) {
            return count(in) == 0 ? hostccl::Work() : c.allGather(in.data_ptr(), flat.data_ptr(), count(in), dtype);
        },
        [all, in, flat]() mutable { unflatten(flat, all); });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHostccl::gather(std::vector<std::vector<at::Tensor>>& outputs,
                                                           std::vector<at::Tensor>& inputs,
                                                           const c10d::GatherOptions& opts) {
    at::Tensor& t = single(inputs, "gather");
    const HcclDataType dtype = hcclTypeOf(t);
    const auto root = uint32_t(opts.rootRank);
    TORCH_CHECK(opts.rootRank >= 0 && opts.rootRank < size_, "hostccl: gather: root ", opts.rootRank,
                " is not a rank of the group");
    const bool isRoot = opts.rootRank == rank_;
    std::vector<at::Tensor> outs;
    if (isRoot) {
        TORCH_CHECK(outputs.size() == 1 && outputs[0].size() == size_t(size_), "hostccl: gather: the root needs one list of ",
                    size_, " output tensors");
        for (const at::Tensor& o : outputs[0]) {
            checkSameType(t, o, "gather");
            TORCH_CHECK(o.numel() == t.numel(), "hostccl: gather: every output tensor must have the input's ",
                        t.numel(), " elements");
        }
        outs = outputs[0];
    } else {
        TORCH_CHECK(outputs.empty() || (outputs.size() == 1 && outputs[0].empty()),
                    "hostccl: gather: only the root passes output tensors");
    }
    at::Tensor in = staged(t);
    // The root receives from every other rank at once; the others send to it.
    auto recvBufs = std::make_shared<std::vector<at::Tensor>>();
    auto items = std::make_shared<std::vector<HcclSendRecvItem>>();
    if (isRoot) {
        for (int r = 0; r < size_; ++r) {
            recvBufs->push_back(r == rank_ ? in : staged(outs[r]));
            if (r != rank_ && t.numel() > 0)
                items->push_back(HcclSendRecvItem{HCCL_RECV, recvBufs->back().data_ptr(), count(in), dtype, uint32_t(r)});
        }
    } else if (t.numel() > 0) {
        items->push_back(HcclSendRecvItem{HCCL_SEND, in.data_ptr(), count(in), dtype, root});
    }
    return enqueue(
        c10d::OpType::GATHER, "gather", outs,
        [&](hostccl::Communicator& c) {
            if (items->empty()) return hostccl::Work();
            return c.launch("HcclBatchSendRecv", [&](HcclComm comm, aclrtStream s) {
                return HcclBatchSendRecv(items->data(), uint32_t(items->size()), comm, s);
            });
        },
        [outs, in, recvBufs, items]() mutable {
            for (size_t r = 0; r < outs.size(); ++r) writeBack(outs[r], (*recvBufs)[r]);
        });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHostccl::scatter(std::vector<at::Tensor>& outputs,
                                                            std::vector<std::vector<at::Tensor>>& inputs,
                                                            const c10d::ScatterOptions& opts) {
    at::Tensor& t = single(outputs, "scatter");
    const HcclDataType dtype = hcclTypeOf(t);
    TORCH_CHECK(opts.rootRank >= 0 && opts.rootRank < size_, "hostccl: scatter: root ", opts.rootRank,
                " is not a rank of the group");
    const bool isRoot = opts.rootRank == rank_;
    at::Tensor flat;
    if (isRoot) {
        TORCH_CHECK(inputs.size() == 1 && inputs[0].size() == size_t(size_), "hostccl: scatter: the root needs one list of ",
                    size_, " input tensors");
        for (const at::Tensor& i : inputs[0]) {
            checkSameType(t, i, "scatter");
            TORCH_CHECK(i.numel() == t.numel(), "hostccl: scatter: every input tensor must have the output's ",
                        t.numel(), " elements");
        }
        flat = flatten(inputs[0]);
    } else {
        TORCH_CHECK(inputs.empty() || (inputs.size() == 1 && inputs[0].empty()),
                    "hostccl: scatter: only the root passes input tensors");
    }
    at::Tensor out = staged(t);
    return enqueue(
        c10d::OpType::SCATTER, "scatter", {t},
        [&](hostccl::Communicator& c) {
            if (count(out) == 0) return hostccl::Work();
            void* send = isRoot ? flat.data_ptr() : out.data_ptr();
            return c.launch("HcclScatter", [&](HcclComm comm, aclrtStream s) {
                return HcclScatter(send, out.data_ptr(), count(out), dtype, uint32_t(opts.rootRank), comm, s);
            });
        },
        [t, out, flat]() mutable { writeBack(t, out); });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHostccl::reduce_scatter(std::vector<at::Tensor>& outputs,
                                                                   std::vector<std::vector<at::Tensor>>& inputs,
                                                                   const c10d::ReduceScatterOptions& opts) {
    at::Tensor& t = single(outputs, "reduce_scatter");
    TORCH_CHECK(inputs.size() == 1 && inputs[0].size() == size_t(size_), "hostccl: reduce_scatter needs one list of ",
                size_, " input tensors");
    for (const at::Tensor& i : inputs[0]) {
        checkSameType(t, i, "reduce_scatter");
        TORCH_CHECK(i.numel() == t.numel(), "hostccl: reduce_scatter: every input tensor must have the output's ",
                    t.numel(), " elements");
    }
    return reduceScatterFlat(c10d::OpType::REDUCE_SCATTER, "reduce_scatter", t, flatten(inputs[0]), at::Tensor(), opts);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHostccl::_reduce_scatter_base(at::Tensor& output, at::Tensor& input,
                                                                         const c10d::ReduceScatterOptions& opts) {
    checkTensor(output, "_reduce_scatter_base");
    checkSameType(output, input, "_reduce_scatter_base");
    TORCH_CHECK(input.numel() == output.numel() * size_, "hostccl: _reduce_scatter_base: the input must have ", size_,
                " x ", output.numel(), " elements (got ", input.numel(), ")");
    return reduceScatterFlat(c10d::OpType::_REDUCE_SCATTER_BASE, "_reduce_scatter_base", output, staged(input), input,
                             opts);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHostccl::reduceScatterFlat(c10d::OpType type, const char* name,
                                                                      at::Tensor& output, at::Tensor in,
                                                                      const at::Tensor& original,
                                                                      const c10d::ReduceScatterOptions& opts) {
    if (isBitwise(opts.reduceOp))  // this rank's block of the folded input
        return bitwiseReduction(type, name, {output}, in, opts.reduceOp,
                                [output, at = int64_t(rank_) * output.numel()](const at::Tensor& r) mutable {
                                    output.copy_(r.reshape({-1}).narrow(0, at, output.numel()).view(output.sizes()));
                                });
    const HcclDataType dtype = hcclTypeOf(output);
    const HcclReduceOp op = hcclOpOf(opts.reduceOp, output.scalar_type());
    const bool average = needsAverage(opts.reduceOp);
    in = premultiplied(in, original, opts.reduceOp);
    at::Tensor out = staged(output);
    return enqueue(
        type, name, {output},
        [&](hostccl::Communicator& c) {
            return count(out) == 0 ? hostccl::Work()
                                   : c.reduceScatter(in.data_ptr(), out.data_ptr(), count(out), dtype, op);
        },
        [output, in, out, average, n = size_]() mutable {
            if (average) averageInPlace(out, n);
            writeBack(output, out);
        });
}

namespace {
// Element counts and offsets of an all-to-all's blocks, one per rank.
struct Blocks {
    std::vector<uint64_t> counts, displs;
    uint64_t total() const { return counts.empty() ? 0 : displs.back() + counts.back(); }
};

// Blocks of `t` cut along its first dimension by `splits` (rows per rank), or into
// equal parts when `splits` is empty.
Blocks blocksOf(const at::Tensor& t, const std::vector<int64_t>& splits, int size, const char* what) {
    Blocks b;
    const int64_t rows = t.dim() == 0 ? 1 : t.size(0);
    const int64_t perRow = rows == 0 ? 0 : t.numel() / rows;
    if (splits.empty()) {
        TORCH_CHECK(rows % size == 0, "hostccl: alltoall_base: the ", what, "'s first dimension (", rows,
                    ") does not divide by the group's size ", size);
    } else {
        TORCH_CHECK(splits.size() == size_t(size), "hostccl: alltoall_base: ", what, " split sizes must have ", size,
                    " entries");
        const int64_t sum = std::accumulate(splits.begin(), splits.end(), int64_t(0));
        TORCH_CHECK(sum == rows && std::all_of(splits.begin(), splits.end(), [](int64_t s) { return s >= 0; }),
                    "hostccl: alltoall_base: ", what, " split sizes must be non-negative and add up to ", rows);
    }
    uint64_t offset = 0;
    for (int r = 0; r < size; ++r) {
        const int64_t blockRows = splits.empty() ? rows / size : splits[r];
        b.counts.push_back(uint64_t(blockRows * perRow));
        b.displs.push_back(offset);
        offset += b.counts.back();
    }
    return b;
}
}  // namespace

c10::intrusive_ptr<c10d::Work> ProcessGroupHostccl::alltoall_base(at::Tensor& output, at::Tensor& input,
                                                                  std::vector<int64_t>& outputSplits,
                                                                  std::vector<int64_t>& inputSplits,
                                                                  const c10d::AllToAllOptions&) {
    checkTensor(input, "alltoall_base");
    checkSameType(input, output, "alltoall_base");
    const HcclDataType dtype = hcclTypeOf(input);
    at::Tensor in = staged(input), out = staged(output);
    auto send = std::make_shared<Blocks>(blocksOf(input, inputSplits, size_, "input"));
    auto recv = std::make_shared<Blocks>(blocksOf(output, outputSplits, size_, "output"));
    const bool equal = inputSplits.empty() && outputSplits.empty();
    return enqueue(
        c10d::OpType::ALLTOALL_BASE, "alltoall_base", {output},
        [&](hostccl::Communicator& c) {
            // Only equal splits are alike on every rank: a rank with nothing to move under
            // uneven splits still takes part (its peers' sequence numbers count the op).
            if (equal && send->total() == 0) return hostccl::Work();
            if (equal) return c.allToAll(in.data_ptr(), out.data_ptr(), send->counts[0], dtype);
            return c.launch("HcclAlltoAllV", [&](HcclComm comm, aclrtStream s) {
                return HcclAlltoAllV(in.data_ptr(), send->counts.data(), send->displs.data(), dtype, out.data_ptr(),
                                     recv->counts.data(), recv->displs.data(), dtype, comm, s);
            });
        },
        [output, in, out, send, recv]() mutable { writeBack(output, out); });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHostccl::alltoall(std::vector<at::Tensor>& outputs,
                                                             std::vector<at::Tensor>& inputs,
                                                             const c10d::AllToAllOptions&) {
    TORCH_CHECK(inputs.size() == size_t(size_) && outputs.size() == size_t(size_), "hostccl: alltoall needs ", size_,
                " input and ", size_, " output tensors");
    for (const at::Tensor& t : inputs) checkSameType(inputs[0], t, "alltoall");
    for (const at::Tensor& t : outputs) checkSameType(inputs[0], t, "alltoall");
    const HcclDataType dtype = hcclTypeOf(inputs[0]);
    auto send = std::make_shared<Blocks>(), recv = std::make_shared<Blocks>();
    for (int r = 0; r < size_; ++r) {
        send->displs.push_back(send->total());
        send->counts.push_back(count(inputs[r]));
        recv->displs.push_back(recv->total());
        recv->counts.push_back(count(outputs[r]));
    }
    at::Tensor in = flatten(inputs);
    at::Tensor out = at::empty({int64_t(recv->total())}, inputs[0].options());
    std::vector<at::Tensor> outs = outputs;
    return enqueue(
        c10d::OpType::ALLTOALL, "alltoall", outs,
        [&](hostccl::Communicator& c) {
            return c.launch("HcclAlltoAllV", [&](HcclComm comm, aclrtStream s) {
                return HcclAlltoAllV(in.data_ptr(), send->counts.data(), send->displs.data(), dtype, out.data_ptr(),
                                     recv->counts.data(), recv->displs.data(), dtype, comm, s);
            });
        },
        [outs, in, out, send, recv]() mutable { unflatten(out, outs); });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHostccl::send(std::vector<at::Tensor>& tensors, int dstRank, int) {
    at::Tensor& t = single(tensors, "send");
    checkPeer(dstRank, rank_, size_, "send");
    const HcclDataType dtype = hcclTypeOf(t);
    at::Tensor buf = staged(t);
    if (batch_) return coalesce(c10d::OpType::SEND, "send", t, buf, HCCL_SEND, dstRank, [buf] {});
    return enqueue(
        c10d::OpType::SEND, "send", {t},
        [&](hostccl::Communicator& c) {
            return count(buf) == 0 ? hostccl::Work() : c.send(buf.data_ptr(), count(buf), dtype, uint32_t(dstRank));
        },
        [buf] {});
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHostccl::recv(std::vector<at::Tensor>& tensors, int srcRank, int) {
    at::Tensor& t = single(tensors, "recv");
    checkPeer(srcRank, rank_, size_, "recv");
    const HcclDataType dtype = hcclTypeOf(t);
    at::Tensor buf = staged(t);
    if (batch_) {
        return coalesce(c10d::OpType::RECV, "recv", t, buf, HCCL_RECV, srcRank,
                        [t, buf]() mutable { writeBack(t, buf); });
    }
    return enqueue(
        c10d::OpType::RECV, "recv", {t},
        [&](hostccl::Communicator& c) {
            return count(buf) == 0 ? hostccl::Work() : c.recv(buf.data_ptr(), count(buf), dtype, uint32_t(srcRank));
        },
        [t, buf]() mutable { writeBack(t, buf); });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHostccl::recvAnysource(std::vector<at::Tensor>& tensors, int) {
    at::Tensor& t = single(tensors, "recv");
    TORCH_CHECK(!batch_, "hostccl: a receive from any source cannot be coalesced (batch_isend_irecv): pass src");
    // An empty send moves nothing, so nothing could say who sent it.
    TORCH_CHECK(count(t) > 0, "hostccl: a receive from any source needs a tensor with elements");
    const HcclDataType dtype = hcclTypeOf(t);
    at::Tensor buf = staged(t);
    auto source = std::make_shared<uint32_t>(UINT32_MAX);
    auto work = enqueue(
        c10d::OpType::RECVANYSOURCE, "recv", {t},
        [&](hostccl::Communicator& c) { return c.recvAny(buf.data_ptr(), count(buf), dtype, source.get()); },
        [t, buf, source]() mutable { writeBack(t, buf); });
    c10::static_intrusive_pointer_cast<HostcclWork>(work)->setSource(std::move(source));
    return work;
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHostccl::barrier(const c10d::BarrierOptions&) {
    return enqueue(c10d::OpType::BARRIER, "barrier", {}, [](hostccl::Communicator& c) { return c.barrier(); });
}

}  // namespace hostccl::torch_backend
