// MatMulReduceScatter: each tile's partial products (the same rows of every rank's
// output block) are computed, then reduce-scattered asynchronously while the next
// tile's GEMMs run.
#include <vector>

#include "hostccl/fused.hpp"
#include "training/fused/gemm.h"
#include "training/fused/fused_support.h"

namespace hostccl {
inline namespace v1 {
namespace {
uint64_t blockRows(const char* op, Communicator& comm, uint64_t m) {
    if (m % comm.size() != 0)
        throw Error(HCCL_E_PARA, std::string(op) + ": m (" + std::to_string(m) + ") is not a multiple of the rank count");
    return m / comm.size();
}
}  // namespace

void matMulReduceScatter(Communicator& comm, const float* a, uint64_t m, uint64_t kLocal, const float* b, uint64_t n,
                         float* out, FusedOptions options) {
    fused::checkShape("matMulReduceScatter", {m, kLocal, n});
    const uint64_t mb = blockRows("matMulReduceScatter", comm, m);
    const uint32_t size = comm.size(), tiles = fused::tileCount(mb, options.tiles);
    // Tile t's partials for every block, block-major, at [size * begin_t * n, ...).
    std::vector<float> partial(size_t(m) * n);
    std::vector<Work> reduced;
    fused::DrainOnExit drain(reduced);
    for (uint32_t t = 0; t < tiles; ++t) {
        fused::RowRange rows = fused::tileRows(mb, tiles, t);
        float* tile = partial.data() + rows.begin * size * n;
        for (uint32_t q = 0; q < size; ++q)
            fused::gemm(rows.size(), n, kLocal, a + (q * mb + rows.begin) * kLocal, kLocal, b, n,
                        tile + q * rows.size() * n, n);
        reduced.push_back(comm.reduceScatter(tile, out + rows.begin * n, rows.size() * n, HCCL_DATA_TYPE_FP32));
    }
    waitAll(reduced);
}

namespace unfused {
void matMulReduceScatter(Communicator& comm, const float* a, uint64_t m, uint64_t kLocal, const float* b, uint64_t n,
                         float* out) {
    fused::checkShape("matMulReduceScatter", {m, kLocal, n});
    const uint64_t mb = blockRows("matMulReduceScatter", comm, m);
    std::vector<float> partial(size_t(m) * n);
    fused::gemm(m, n, kLocal, a, kLocal, b, n, partial.data(), n);
    comm.reduceScatter(partial.data(), out, mb * n, HCCL_DATA_TYPE_FP32).wait();
}
}  // namespace unfused

}  // namespace v1
}  // namespace hostccl
