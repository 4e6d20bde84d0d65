// batch_isend_irecv and torch 2.x's coalescing manager on hostccl: torch brackets
// the batch with startCoalescing and endCoalescing; the sends and receives in
// between become one HcclBatchSendRecv, collectives run in order as they come.
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
    work->awaitBatch();
    batch_->sendRecvs.push_back(work);
    batch_->all.push_back(work);
    return work;
}

hostccl::Work ProcessGroupHostccl::launchBatch(PendingBatch& batch) {
    if (batch.items->empty())
        return live().launch("coalesced ops", [](HcclComm, aclrtStream) { return HCCL_SUCCESS; });
    std::shared_ptr<std::vector<HcclSendRecvItem>> items = batch.items;
    hostccl::Work op = live().launch("HcclBatchSendRecv", [&](HcclComm comm, aclrtStream s) {
        return HcclBatchSendRecv(items->data(), uint32_t(items->size()), comm, s);
    });
    for (const auto& work : batch.sendRecvs) work->bindOp(op);
    return op;
}

#if HOSTCCL_TORCH2
c10::intrusive_ptr<c10d::Work> ProcessGroupHostccl::endCoalescing() {
    TORCH_CHECK(batch_, "hostccl: endCoalescing without startCoalescing");
    std::unique_ptr<PendingBatch> batch = std::move(batch_);
    // torch aborts every group inside one batch (_abort_process_group): a batch that
    // holds nothing ends without the communicator.
    if (comm_ == nullptr && batch->all.empty())
        return c10::make_intrusive<HostcclWork>(rank_, c10d::OpType::COALESCED, "coalesced ops", hostccl::Work(),
                                                std::vector<at::Tensor>{}, nullptr, failureTextFor("coalesced ops"),
                                                completer_);
    hostccl::Work last = launchBatch(*batch);
    // Settling each op of the batch runs its own follow-up steps (copies back) and
    // raises the first failure among them.
    auto settleAll = [works = batch->all] {
        for (const auto& w : works) w->wait();
    };
    std::vector<at::Tensor> outputs;
    for (const auto& w : batch->all)
        for (const at::Tensor& t : w->result()) outputs.push_back(t);
    return c10::make_intrusive<HostcclWork>(rank_, c10d::OpType::COALESCED, "coalesced ops", std::move(last),
                                            std::move(outputs), std::move(settleAll), failureTextFor("coalesced ops"),
                                            completer_);
}
#else
void ProcessGroupHostccl::endCoalescing(std::vector<c10::intrusive_ptr<c10d::Work>>&) {
    TORCH_CHECK(batch_, "hostccl: endCoalescing without startCoalescing");
    std::unique_ptr<PendingBatch> batch = std::move(batch_);
    launchBatch(*batch);
}
#endif

}  // namespace hostccl::torch_backend
