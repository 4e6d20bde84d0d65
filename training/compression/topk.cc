// Top-K sparsification with error feedback: each rank sends its k largest-magnitude
// entries of (gradient + residual) as (index, value) pairs; the average is the sum
// of every rank's pairs scattered into zeros, over n. The unsent rest becomes the
// residual.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <numeric>

#include <fmt/format.h>

#include "training/compression/compressors.h"

namespace hostccl {
inline namespace v1 {
namespace compression {
namespace {

// Indices of the k largest |v|. A full selection over millions of entries costs more
// than the transfer it saves, so a threshold is first estimated from a sample (set
// low enough that about twice k entries pass) and the exact selection runs over the
// entries above it only; when fewer than k pass, over everything.
std::vector<uint32_t> largest(const std::vector<float>& v, size_t k) {
    const size_t count = v.size();
    auto byMagnitude = [&](uint32_t a, uint32_t b) { return std::fabs(v[a]) > std::fabs(v[b]); };
    std::vector<uint32_t> candidates;
    if (count > 65536 && k < count / 8) {
        const size_t samples = 8192;
        std::vector<float> sample(samples);
        for (size_t s = 0; s < samples; ++s) sample[s] = std::fabs(v[(s * 2654435761u) % count]);
        const size_t above = std::min(samples - 1, size_t(2.0 * double(k) / double(count) * samples) + 8);
        std::nth_element(sample.begin(), sample.begin() + above, sample.end(), std::greater<float>());
        const float threshold = sample[above];
        candidates.reserve(4 * k);
        for (uint32_t i = 0; i < count; ++i)
            if (std::fabs(v[i]) >= threshold) candidates.push_back(i);
    }
    if (candidates.size() < k) {
        candidates.resize(count);
        std::iota(candidates.begin(), candidates.end(), 0u);
    }
    std::nth_element(candidates.begin(), candidates.begin() + k, candidates.end(), byMagnitude);
    candidates.resize(k);
    return candidates;
}

}  // namespace

std::string TopKCompressor::name() const { return fmt::format("topk:{}", ratio_); }

std::unique_ptr<PendingReduction> TopKCompressor::start(Communicator& comm, std::span<float> buffer, size_t key) {
    const uint32_t n = comm.size();
    const size_t count = buffer.size();
    const size_t k = std::clamp<size_t>(size_t(std::ceil(double(count) * ratio_)), count == 0 ? 0 : 1, count);
    std::vector<float>& res = residual(key, count);
    for (size_t i = 0; i < count; ++i) res[i] += buffer[i];  // res now holds what is owed
    const std::vector<uint32_t> order = largest(res, k);
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
