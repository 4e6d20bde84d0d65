#include "training/fused/gemm.h"

#include <cblas.h>

#include <algorithm>

namespace hostccl {
inline namespace v1 {
namespace fused {

void gemm(uint64_t m, uint64_t n, uint64_t k, const float* a, uint64_t lda, const float* b, uint64_t ldb, float* c,
          uint64_t ldc) {
    if (m == 0 || n == 0) return;
    if (k == 0) {  // an empty sum (BLAS would reject a zero leading dimension)
        for (uint64_t i = 0; i < m; ++i) std::fill(c + i * ldc, c + i * ldc + n, 0.0f);
        return;
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(m), int(n), int(k), 1.0f, a, int(lda), b, int(ldb),
                0.0f, c, int(ldc));
}

}  // namespace fused
}  // namespace v1
}  // namespace hostccl
