// Top-K sparsification with error feedback: each rank sends its k largest-magnitude
// entries of (gradient + residual) as (index, value) pairs; the average is the sum
// of every rank's pairs scattered into zeros, over n. The unsent rest becomes the
// residual.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include <fmt/format.h>

#include "training/compression/compressors.h"

namespace hostccl {
inline namespace v1 {
namespace compression {

std::string TopKCompressor::name() const { return fmt::format("topk:{}", ratio_); }

std::unique_ptr<PendingReduction> TopKCompressor::start(Communicator& comm, std::span<float> buffer, size_t key) {
    const uint32_t n = comm.size();
    const size_t count = buffer.size();
    const size_t k = std::clamp<size_t>(size_t(std::ceil(double(count) * ratio_)), count == 0 ? 0 : 1, count);
    std::vector<float>& res = residual(key, count);
    for (size_t i = 0; i < count; ++i) res[i] += buffer[i];  // res now holds what is owed
    std::vector<uint32_t> order(count);
    std::iota(order.begin(), order.end(), 0u);
    std::nth_element(order.begin(), order.begin() + k, order.end(),
                     [&](uint32_t a, uint32_t b) { return std::fabs(res[a]) > std::fabs(res[b]); });
    // Pairs as 2k uint32 words: index, then the value's bits.
    auto pairs = std::make_shared<std::vector<uint32_t>>(2 * k);
    for (size_t j = 0; j < k; ++j) {
        uint32_t idx = order[j];
        (*pairs)[2 * j] = idx;
        std::memcpy(&(*pairs)[2 * j + 1], &res[idx], sizeof(float));
        res[idx] = 0.0f;  // sent: no longer owed
    }
    auto gathered = std::make_shared<std::vector<uint32_t>>(2 * k * n);
    countAllGather(2 * k * sizeof(uint32_t), count, n);
    Work w = comm.allGather(pairs->data(), gathered->data(), 2 * k, HCCL_DATA_TYPE_UINT32);
    return std::make_unique<WorkThen>(std::move(w), [buffer, pairs, gathered, n] {
        std::fill(buffer.begin(), buffer.end(), 0.0f);
        for (size_t j = 0; j < gathered->size(); j += 2) {
            float v;
            std::memcpy(&v, &(*gathered)[j + 1], sizeof v);
            buffer[(*gathered)[j]] += v;
        }
        const float scale = 1.0f / float(n);
        for (float& x : buffer) x *= scale;
    });
}

}  // namespace compression
}  // namespace v1
}  // namespace hostccl
