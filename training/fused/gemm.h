// Row-major single-precision GEMM (OpenBLAS), and how fused ops cut rows into tiles.
#pragma once

#include <cstdint>

namespace hostccl {
inline namespace v1 {
namespace fused {

// C (m x n, row stride ldc) = A (m x k, row stride lda) * B (k x n, row stride ldb).
void gemm(uint64_t m, uint64_t n, uint64_t k, const float* a, uint64_t lda, const float* b, uint64_t ldb, float* c,
          uint64_t ldc);

// Tile t of `rows` rows cut into `tiles` near-equal tiles: [begin, end).
struct RowRange {
    uint64_t begin, end;
    uint64_t size() const { return end - begin; }
};
inline RowRange tileRows(uint64_t rows, uint32_t tiles, uint32_t t) {
    return {rows * t / tiles, rows * (t + 1) / tiles};
}
// Tiles actually used: at least 1, at most one per row.
inline uint32_t tileCount(uint64_t rows, uint32_t wanted) {
    if (rows == 0) return 1;
    return wanted == 0 ? 1 : static_cast<uint32_t>(wanted < rows ? wanted : rows);
}

}  // namespace fused
}  // namespace v1
}  // namespace hostccl
