// batch_isend_irecv on hostccl: torch brackets the batch with startCoalescing and
// endCoalescing; the sends and receives in between become one HcclBatchSendRecv.
#include <c10/util/Exception.h>

#include "dtypes.h"
#include "process_group.h"
#include "work.h"

namespace hostccl::torch_backend {

void ProcessGroupHostccl::startCoalescing() {
    TORCH_CHECK(!batch_, "hostccl: startCoalescing inside a batch that has not ended");
    batch_ = std::make_unique<PendingBatch>();
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHostccl::coalesce(c10d::OpType type, const char* name, at::Tensor t,
                                                             at::Tensor buf, HcclSendRecvType kind, int peer,
                                                             std::function<void()> after) {
    if (buf.numel() > 0)
        batch_->items->push_back(HcclSendRecvItem{kind, buf.data_ptr(), uint64_t(buf.numel()), hcclTypeOf(buf), uint32_t(peer)});
    auto keep = [items = batch_->items, after = std::move(after)] { after(); };
    auto work = c10::make_intrusive<HostcclWork>(rank_, type, name, hostccl::Work(), std::vector<at::Tensor>{t}, keep,
                                                 failureTextFor(name), completer_);
    batch_->works.push_back(work);
    return work;
}

void ProcessGroupHostccl::endCoalescing(std::vector<c10::intrusive_ptr<c10d::Work>>&) {
    TORCH_CHECK(batch_, "hostccl: endCoalescing without startCoalescing");
    std::unique_ptr<PendingBatch> batch = std::move(batch_);
    hostccl::Work op;
    if (!batch->items->empty()) {
        std::shared_ptr<std::vector<HcclSendRecvItem>> items = batch->items;
        op = comm_->launch("HcclBatchSendRecv", [&](HcclComm comm, aclrtStream s) {
            return HcclBatchSendRecv(items->data(), uint32_t(items->size()), comm, s);
        });
    }
    for (const auto& work : batch->works) work->bindOp(op);
}

}  // namespace hostccl::torch_backend
