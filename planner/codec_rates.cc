#include "planner/codec_rates.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <random>
#include <vector>

#include "training/compression/codec.h"

namespace hostccl::plan {

namespace {
constexpr size_t kCount = size_t(1) << 20;

// Seconds of `run`, the best of three after a warm-up.
template <typename Run>
double best(Run run) {
    run();
    double least = 1e9;
    for (int i = 0; i < 3; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        run();
        least = std::min(least, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    return least;
}
}  // namespace

CodecRates measureCodecs() {
    std::vector<float> grad(kCount), res(kCount, 0.f), out(kCount);
    // Random signs, as gradients have: a pattern the branch predictor can learn would
    // hide a codec that branches per entry.
    std::mt19937 rng(12345);
    std::normal_distribution<float> gauss(0.0f, 1e-3f);
    for (float& g : grad) g = gauss(rng);
    CodecRates r;
    r.measured = true;

    const size_t bytes = codec::signMessageBytes(kCount);
    std::vector<uint8_t> messages(4 * bytes);
    r.signEncode = best([&] { codec::signEncode(grad, res, messages.data()); }) / kCount;
    for (int m = 1; m < 4; ++m) std::copy_n(messages.begin(), bytes, messages.begin() + m * bytes);
    r.signDecodePerRank = best([&] { codec::signDecode(messages.data(), bytes, 4, out); }) / (4.0 * kCount);

    const size_t k = codec::topkCount(kCount, 0.01);
    std::vector<uint32_t> pairs(4 * 2 * k);
    std::fill(res.begin(), res.end(), 0.f);
    r.topkEncode = best([&] { codec::topkEncode(grad, res, k, pairs.data()); }) / kCount;
    for (int m = 1; m < 4; ++m) std::copy_n(pairs.begin(), 2 * k, pairs.begin() + m * 2 * k);
    const double one = best([&] { codec::topkDecode(pairs.data(), k, 1, out); });
    const double four = best([&] { codec::topkDecode(pairs.data(), k, 4, out); });
    r.topkDecodePair = std::max(0.0, (four - one) / (3.0 * k));
    r.topkDecodePass = std::max(0.0, one - r.topkDecodePair * k) / kCount;
    return r;
}

}  // namespace hostccl::plan
