#include "training/compression/codec.h"

#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <functional>
#include <numeric>
#include <vector>

namespace hostccl::codec {

namespace {

// The eight signs (+1 for a set bit, -1 for a clear one) a byte stands for: decoding
// is then a multiply-add of eight floats per byte, which the compiler vectorises.
const std::array<std::array<float, 8>, 256> kSigns = [] {
    std::array<std::array<float, 8>, 256> t{};
    for (int b = 0; b < 256; ++b)
        for (int j = 0; j < 8; ++j) t[b][j] = (b >> j) & 1 ? 1.0f : -1.0f;
    return t;
}();

// Packs the signs of res[0, count) (1 = non-negative) into bits and takes from res
// what they said (scale with that sign). Returns how many entries it handled: AVX
// does eight at a time, the caller the tail.
__attribute__((target("avx"))) size_t encodeAvx(float* res, size_t count, float scale, uint8_t* bits) {
    const __m256 zero = _mm256_setzero_ps(), plus = _mm256_set1_ps(scale), minus = _mm256_set1_ps(-scale);
    size_t i = 0;
    for (; i + 8 <= count; i += 8) {
        __m256 v = _mm256_loadu_ps(res + i);
        __m256 nonNegative = _mm256_cmp_ps(v, zero, _CMP_GE_OQ);
        bits[i / 8] = uint8_t(_mm256_movemask_ps(nonNegative));
        // scale where the sign bit was clear, -scale where set, selected with masks: GCC
        // at -O3 turned _mm256_blendv_ps here into a branch per lane, mispredicted half
        // the time on gradients (encoding ran 5-10x slower in training than on a benchmark).
        const __m256 taken = _mm256_or_ps(_mm256_and_ps(nonNegative, plus), _mm256_andnot_ps(nonNegative, minus));
        _mm256_storeu_ps(res + i, _mm256_sub_ps(v, taken));
    }
    return i;
}

const bool kAvx = __builtin_cpu_supports("avx");

// Adds s * sign to out[0, count) for the bits in `bits`.
void addSigns(const uint8_t* bits, float s, float* out, size_t count) {
    const size_t whole = count / 8;
    for (size_t i = 0; i < whole; ++i) {
        const float* signs = kSigns[bits[i]].data();
        float* o = out + 8 * i;
        for (int j = 0; j < 8; ++j) o[j] += s * signs[j];
    }
    for (size_t i = whole * 8; i < count; ++i) out[i] += s * kSigns[bits[whole]][i % 8];
}


// Indices of the k largest |v|. A full selection over millions of entries costs more
// than the transfer it saves, so a threshold is first estimated from a sample (set
// low enough that about twice k entries pass) and the exact selection runs over the
// entries above it only; when fewer than k pass, over everything.
std::vector<uint32_t> largest(std::span<const float> v, size_t k) {
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

size_t signMessageBytes(size_t count) { return sizeof(float) + (count + 7) / 8; }

void signEncode(std::span<const float> grad, std::span<float> res, uint8_t* message) {
    const size_t count = grad.size();
    // |res| summed in float over blocks (vectorised), the blocks in double.
    double magnitude = 0.0;
    for (size_t begin = 0; begin < count; begin += 4096) {
        const size_t end = std::min(count, begin + 4096);
        float block = 0.0f;
        for (size_t i = begin; i < end; ++i) {
            res[i] += grad[i];
            block += std::fabs(res[i]);
        }
        magnitude += block;
    }
    const float scale = count == 0 ? 0.0f : float(magnitude / double(count));
    std::memset(message, 0, signMessageBytes(count));
    std::memcpy(message, &scale, sizeof scale);
    uint8_t* bits = message + sizeof(float);
    for (size_t i = kAvx ? encodeAvx(res.data(), count, scale, bits) : 0; i < count; ++i) {
        const bool positive = res[i] >= 0.0f;
        bits[i / 8] |= uint8_t(uint8_t(positive) << (i % 8));
        res[i] -= positive ? scale : -scale;
    }
}

void signDecode(const uint8_t* gathered, size_t messageBytes, uint32_t n, std::span<float> out) {
    std::fill(out.begin(), out.end(), 0.0f);
    for (uint32_t r = 0; r < n; ++r) {
        const uint8_t* msg = gathered + r * messageBytes;
        float s;
        std::memcpy(&s, msg, sizeof s);
        addSigns(msg + sizeof(float), s / float(n), out.data(), out.size());
    }
}

size_t topkCount(size_t count, double ratio) {
    return std::clamp<size_t>(size_t(std::ceil(double(count) * ratio)), count == 0 ? 0 : 1, count);
}

void topkEncode(std::span<const float> grad, std::span<float> res, size_t k, uint32_t* pairs) {
    for (size_t i = 0; i < grad.size(); ++i) res[i] += grad[i];  // res now holds what is owed
    const std::vector<uint32_t> order = largest(res, k);
    for (size_t j = 0; j < k; ++j) {
        const uint32_t idx = order[j];
        pairs[2 * j] = idx;
        std::memcpy(&pairs[2 * j + 1], &res[idx], sizeof(float));
        res[idx] = 0.0f;  // sent: no longer owed
    }
}

void topkDecode(const uint32_t* gathered, size_t k, uint32_t n, std::span<float> out) {
    std::fill(out.begin(), out.end(), 0.0f);
    for (size_t j = 0; j < 2 * k * n; j += 2) {
        float v;
        std::memcpy(&v, &gathered[j + 1], sizeof v);
        out[gathered[j]] += v;
    }
    const float scale = 1.0f / float(n);
    for (float& x : out) x *= scale;
}

}  // namespace hostccl::codec
