// Residuals kept per bucket between steps.
#include "training/compression/compressors.h"

namespace hostccl {
inline namespace v1 {
namespace compression {

std::vector<float>& ErrorFeedback::residual(size_t key, size_t n) {
    std::vector<float>& r = residuals_[key];
    if (r.size() != n) r.assign(n, 0.0f);
    return r;
}

}  // namespace compression
}  // namespace v1
}  // namespace hostccl
