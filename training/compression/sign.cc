// 1-bit sign compression with a scale and error feedback (as in signSGD with error
// feedback / 1-bit Adam): each rank sends the signs of (gradient + residual) and
// their mean magnitude; the average is mean over ranks of scale_r * sign_r. What the
// one bit could not say becomes the residual.
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

#include "training/compression/compressors.h"

namespace hostccl {
inline namespace v1 {
namespace compression {
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
        _mm256_storeu_ps(res + i, _mm256_sub_ps(v, _mm256_blendv_ps(minus, plus, nonNegative)));
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

}  // namespace

std::unique_ptr<PendingReduction> SignCompressor::start(Communicator& comm, std::span<float> buffer, size_t key) {
    const uint32_t n = comm.size();
    const size_t count = buffer.size();
    std::vector<float>& res = residual(key, count);
    // |res| summed in float over blocks (vectorised), the blocks in double.
    double magnitude = 0.0;
    for (size_t begin = 0; begin < count; begin += 4096) {
        const size_t end = std::min(count, begin + 4096);
        float block = 0.0f;
        for (size_t i = begin; i < end; ++i) {
            res[i] += buffer[i];
            block += std::fabs(res[i]);
        }
        magnitude += block;
    }
    const float scale = count == 0 ? 0.0f : float(magnitude / double(count));
    // Message: the scale (4 bytes), then one bit per entry (1 = non-negative).
    const size_t bytes = sizeof(float) + (count + 7) / 8;
    auto mine = std::make_shared<std::vector<uint8_t>>(bytes, 0);
    std::memcpy(mine->data(), &scale, sizeof scale);
    uint8_t* bits = mine->data() + sizeof(float);
    for (size_t i = kAvx ? encodeAvx(res.data(), count, scale, bits) : 0; i < count; ++i) {
        const bool positive = res[i] >= 0.0f;
        bits[i / 8] |= uint8_t(uint8_t(positive) << (i % 8));
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
            addSigns(msg + sizeof(float), s / float(n), buffer.data(), buffer.size());
        }
    });
}

}  // namespace compression
}  // namespace v1
}  // namespace hostccl
