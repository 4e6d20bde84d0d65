// Residuals and message buffers kept per bucket between steps.
#include "training/compression/compressors.h"

namespace hostccl {
inline namespace v1 {
namespace compression {

ErrorFeedback::KeyState& ErrorFeedback::state(size_t key, size_t n) {
    KeyState& s = states_[key];
    if (s.residual.size() != n) s.residual.assign(n, 0.0f);
    return s;
}

}  // namespace compression
}  // namespace v1
}  // namespace hostccl
