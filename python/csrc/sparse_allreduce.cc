// ProcessGroupHostccl::allreduceSparse: SUM of sparse COO tensors (the gradients of
// sparse embeddings under DDP), as Gloo does it: every rank's (index, value) pairs
// are allgathered and summed where indices meet. Runs on the caller's thread (its
// steps depend on each other's sizes); the Work it returns is complete.
#include <c10/util/Exception.h>

#include <numeric>

#include "dtypes.h"
#include "process_group.h"

namespace hostccl::torch_backend {

namespace {

// Each rank's rows of `rows` (a contiguous [n, ...] tensor), gathered in rank order.
at::Tensor allGatherRows(hostccl::Communicator& comm, const at::Tensor& rows, const std::vector<int64_t>& rowsPerRank) {
    const int64_t rowElems = rows.size(0) == 0 ? 1 : rows.numel() / rows.size(0);
    std::vector<int64_t> shape = rows.sizes().vec();
    shape[0] = std::accumulate(rowsPerRank.begin(), rowsPerRank.end(), int64_t(0));
    at::Tensor out = at::empty(shape, rows.options());
    if (shape[0] == 0) return out;  // nothing on any rank
    std::vector<uint64_t> counts, displs;
    uint64_t at = 0;
    for (int64_t n : rowsPerRank) {
        counts.push_back(uint64_t(n * rowElems));
        displs.push_back(at);
        at += counts.back();
    }
    const HcclDataType dtype = hcclTypeOf(rows);
    comm.launch("HcclAllGatherV", [&](HcclComm c, aclrtStream s) {
            return HcclAllGatherV(rows.data_ptr(), uint64_t(rows.numel()), out.data_ptr(), counts.data(),
                                  displs.data(), dtype, c, s);
        }).wait();
    return out;
}

}  // namespace

c10::intrusive_ptr<c10d::Work> ProcessGroupHostccl::allreduceSparse(at::Tensor& t, const c10d::AllreduceOptions& opts) {
    TORCH_CHECK(opts.reduceOp == c10d::ReduceOp::SUM, "hostccl: allreduce of a sparse tensor takes ReduceOp.SUM only");
    try {
        at::Tensor in = t.coalesce();
        at::Tensor mine = at::full({1}, in._nnz(), at::kLong);
        at::Tensor nnz = at::empty({size_}, at::kLong);
        live().allGather(mine.data_ptr(), nnz.data_ptr(), 1, HCCL_DATA_TYPE_INT64).wait();
        std::vector<int64_t> rowsPerRank(nnz.data_ptr<int64_t>(), nnz.data_ptr<int64_t>() + size_);
        // Indices are [sparse dims, nnz]: gathered as rows of [nnz, sparse dims].
        at::Tensor indices = allGatherRows(live(), in._indices().t().contiguous(), rowsPerRank);
        at::Tensor values = allGatherRows(live(), in._values().contiguous(), rowsPerRank);
        t.copy_(at::sparse_coo_tensor(indices.t(), values, in.sizes()).coalesce());
    } catch (const hostccl::Error& e) {
        TORCH_CHECK(false, failureTextFor("sparse allreduce")(e));
    }
    return enqueue(c10d::OpType::ALLREDUCE, "sparse allreduce", {t}, [](hostccl::Communicator&) { return hostccl::Work(); });
}

}  // namespace hostccl::torch_backend
