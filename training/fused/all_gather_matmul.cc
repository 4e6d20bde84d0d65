// AllGatherMatMul: C = gather(A) * B. The gather is cut into tiles (the same rows
// of every rank's shard) queued at once on the communicator's stream; this rank
// multiplies its own shard first, then each tile as soon as it has arrived, while
// the following tiles are still in transit.
#include <cstring>
#include <vector>

#include "hostccl/fused.hpp"
#include "training/fused/gemm.h"
#include "training/fused/fused_support.h"

namespace hostccl {
inline namespace v1 {

void allGatherMatMul(Communicator& comm, const float* aLocal, uint64_t mLocal, uint64_t k, const float* b,
                     uint64_t n, float* c, float* gatheredA, FusedOptions options) {
    fused::checkShape("allGatherMatMul", {mLocal * comm.size(), k, n});
    const uint32_t size = comm.size(), me = comm.rank();
    const uint32_t tiles = fused::tileCount(mLocal, options.tiles);
    // Tile t of every rank, rank-major, at rows [size * begin_t, size * end_t).
    std::vector<float> staging(size_t(mLocal) * size * k);
    std::vector<Work> arrived;
    fused::DrainOnExit drain(arrived);
    for (uint32_t t = 0; t < tiles; ++t) {
        fused::RowRange rows = fused::tileRows(mLocal, tiles, t);
        arrived.push_back(comm.allGather(aLocal + rows.begin * k, staging.data() + rows.begin * size * k,
                                         rows.size() * k, HCCL_DATA_TYPE_FP32));
    }
    fused::gemm(mLocal, n, k, aLocal, k, b, n, c + me * mLocal * n, n);
    // Each arrived tile is one GEMM for the ranks before this one and one for those
    // after it (their blocks are contiguous in the tile), into a scratch tile whose
    // rows are then copied to their places in C.
    std::vector<float> product(size_t(fused::tileRows(mLocal, tiles, 0).size() + 1) * size * n);
    for (uint32_t t = 0; t < tiles; ++t) {
        arrived[t].wait();
        fused::RowRange rows = fused::tileRows(mLocal, tiles, t);
        const uint64_t blockElems = rows.size() * k, outElems = rows.size() * n;
        const float* tile = staging.data() + rows.begin * size * k;
        fused::gemm(me * rows.size(), n, k, tile, k, b, n, product.data(), n);
        fused::gemm((size - me - 1) * rows.size(), n, k, tile + (me + 1) * blockElems, k, b, n,
                    product.data() + (me + 1) * outElems, n);
        for (uint32_t q = 0; q < size; ++q) {
            if (q != me)
                std::memcpy(c + (q * mLocal + rows.begin) * n, product.data() + q * outElems, outElems * sizeof(float));
            if (gatheredA != nullptr)
                std::memcpy(gatheredA + (q * mLocal + rows.begin) * k, tile + q * blockElems, blockElems * sizeof(float));
        }
    }
}

namespace unfused {
void allGatherMatMul(Communicator& comm, const float* aLocal, uint64_t mLocal, uint64_t k, const float* b,
                     uint64_t n, float* c, float* gatheredA) {
    fused::checkShape("allGatherMatMul", {mLocal * comm.size(), k, n});
    std::vector<float> own;
    float* all = gatheredA;
    if (all == nullptr) {
        own.resize(size_t(mLocal) * comm.size() * k);
        all = own.data();
    }
    comm.allGather(aLocal, all, mLocal * k, HCCL_DATA_TYPE_FP32).wait();
    fused::gemm(mLocal * comm.size(), n, k, all, k, b, n, c, n);
}
}  // namespace unfused

}  // namespace v1
}  // namespace hostccl
