// MatMulAllReduce: rows of C are computed a tile at a time and each tile is
// allreduced in place while the next tile's GEMM runs.
#include <vector>

#include "hostccl/fused.hpp"
#include "training/fused/gemm.h"
#include "training/fused/fused_support.h"

namespace hostccl {
inline namespace v1 {

void matMulAllReduce(Communicator& comm, const float* a, uint64_t m, uint64_t kLocal, const float* b, uint64_t n,
                     float* c, FusedOptions options) {
    fused::checkShape("matMulAllReduce", {m, kLocal, n});
    const uint32_t tiles = fused::tileCount(m, options.tiles);
    std::vector<Work> reduced;
    fused::DrainOnExit drain(reduced);
    for (uint32_t t = 0; t < tiles; ++t) {
        fused::RowRange rows = fused::tileRows(m, tiles, t);
        float* tile = c + rows.begin * n;
        fused::gemm(rows.size(), n, kLocal, a + rows.begin * kLocal, kLocal, b, n, tile, n);
        reduced.push_back(comm.allReduce(tile, tile, rows.size() * n, HCCL_DATA_TYPE_FP32));
    }
    waitAll(reduced);
}

namespace unfused {
void matMulAllReduce(Communicator& comm, const float* a, uint64_t m, uint64_t kLocal, const float* b, uint64_t n,
                     float* c) {
    fused::checkShape("matMulAllReduce", {m, kLocal, n});
    fused::gemm(m, n, kLocal, a, kLocal, b, n, c, n);
    comm.allReduce(c, c, m * n, HCCL_DATA_TYPE_FP32).wait();
}
}  // namespace unfused

}  // namespace v1
}  // namespace hostccl
