// The reference: each rank scales by 1/n, then an fp32 sum. Scaling first keeps the
// pass on the launching thread (it overlaps the transfers of earlier buckets)
// instead of after the wait, where it would be exposed.
#include "training/compression/compressors.h"

namespace hostccl {
inline namespace v1 {
namespace compression {

std::unique_ptr<PendingReduction> Fp32AllReduce::start(Communicator& comm, std::span<float> buffer, size_t) {
    const uint32_t n = comm.size();
    const float scale = 1.0f / float(n);
    for (float& x : buffer) x *= scale;
    countAllReduce(buffer.size_bytes(), buffer.size(), n);
    return std::make_unique<WorkThen>(comm.allReduce(buffer), [] {});
}

}  // namespace compression
}  // namespace v1
}  // namespace hostccl
