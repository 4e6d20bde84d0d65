// 1-bit sign compression with a scale and error feedback (as in signSGD with error
// feedback / 1-bit Adam): each rank sends the signs of (gradient + residual) and
// their mean magnitude; the average is mean over ranks of scale_r * sign_r. What the
// one bit could not say becomes the residual.
#include <cmath>
#include <cstring>

#include "training/compression/compressors.h"

namespace hostccl {
inline namespace v1 {
namespace compression {

std::unique_ptr<PendingReduction> SignCompressor::start(Communicator& comm, std::span<float> buffer, size_t key) {
    const uint32_t n = comm.size();
    const size_t count = buffer.size();
    std::vector<float>& res = residual(key, count);
    double magnitude = 0.0;
    for (size_t i = 0; i < count; ++i) {
        res[i] += buffer[i];
        magnitude += std::fabs(res[i]);
    }
    const float scale = count == 0 ? 0.0f : float(magnitude / double(count));
    // Message: the scale (4 bytes), then one bit per entry (1 = non-negative).
    const size_t bytes = sizeof(float) + (count + 7) / 8;
    auto mine = std::make_shared<std::vector<uint8_t>>(bytes, 0);
    std::memcpy(mine->data(), &scale, sizeof scale);
    uint8_t* bits = mine->data() + sizeof(float);
    for (size_t i = 0; i < count; ++i) {
        bool positive = res[i] >= 0.0f;
        if (positive) bits[i / 8] |= uint8_t(1u << (i % 8));
        res[i] -= positive ? scale : -scale;
    }
    auto gathered = std::make_shared<std::vector<uint8_t>>(bytes * n);
    countAllGather(bytes, count, n);
    Work w = comm.allGather(mine->data(), gathered->data(), bytes, HCCL_DATA_TYPE_UINT8);
    return std::make_unique<WorkThen>(std::move(w), [buffer, mine, gathered, bytes, n] {
        std::fill(buffer.begin(), buffer.end(), 0.0f);
        for (uint32_t r = 0; r < n; ++r) {
            const uint8_t* msg = gathered->data() + r * bytes;
            float s;
            std::memcpy(&s, msg, sizeof s);
            s /= float(n);
            const uint8_t* b = msg + sizeof(float);
            for (size_t i = 0; i < buffer.size(); ++i) buffer[i] += (b[i / 8] >> (i % 8)) & 1u ? s : -s;
        }
    });
}

}  // namespace compression
}  // namespace v1
}  // namespace hostccl
