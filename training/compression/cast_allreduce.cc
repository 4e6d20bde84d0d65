// fp16 / bf16: scaled by 1/n before the cast (the sum then cannot overflow where
// the average does not), allreduced in 16 bits, cast back.
#include "training/compression/half_convert.h"
#include "training/compression/compressors.h"

namespace hostccl {
inline namespace v1 {
namespace compression {

std::unique_ptr<PendingReduction> CastAllReduce::start(Communicator& comm, std::span<float> buffer, size_t key) {
    const uint32_t n = comm.size();
    const float scale = 1.0f / float(n);
    std::vector<uint16_t>& half = staging_[key];
    half.resize(buffer.size());
    const bool fp16 = dtype_ == HCCL_DATA_TYPE_FP16;
    toHalf(buffer.data(), scale, half.data(), buffer.size(), fp16);
    countAllReduce(half.size() * sizeof(uint16_t), buffer.size(), n);
    Work w = comm.allReduce(half.data(), half.data(), half.size(), dtype_, HCCL_REDUCE_SUM);
    uint16_t* h = half.data();
    return std::make_unique<WorkThen>(std::move(w), [buffer, h, fp16] {
        fromHalf(h, buffer.data(), buffer.size(), fp16);
    });
}

}  // namespace compression
}  // namespace v1
}  // namespace hostccl
