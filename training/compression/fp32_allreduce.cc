// The reference: fp32 sum, then a scale by 1/n.
#include "training/compression/compressors.h"

namespace hostccl {
inline namespace v1 {
namespace compression {

std::unique_ptr<PendingReduction> Fp32AllReduce::start(Communicator& comm, std::span<float> buffer, size_t) {
    const uint32_t n = comm.size();
    countAllReduce(buffer.size_bytes(), buffer.size(), n);
    Work w = comm.allReduce(buffer);
    return std::make_unique<WorkThen>(std::move(w), [buffer, n] {
        const float scale = 1.0f / float(n);
        for (float& x : buffer) x *= scale;
    });
}

}  // namespace compression
}  // namespace v1
}  // namespace hostccl
