// The compressors: accuracy of the casts, error feedback that lets every entry
// through in time (top-k, sign), exact cases, bytes on the wire, bad specs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "on_ranks.h"
#include "hostccl/compression.hpp"

using hostccl::Communicator;
using hostccl::makeCompressor;
using hostccl::test::onRanks;

namespace {
std::vector<float> randomGrad(uint32_t seed, size_t n) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> d(0.0f, 1.0f);
    std::vector<float> g(n);
    for (float& x : g) x = d(rng);
    return g;
}
// The exact average over n ranks of randomGrad(rank, count).
std::vector<double> exactAverage(uint32_t n, size_t count) {
    std::vector<double> avg(count, 0.0);
    for (uint32_t r = 0; r < n; ++r) {
        auto g = randomGrad(r, count);
        for (size_t i = 0; i < count; ++i) avg[i] += g[i] / double(n);
    }
    return avg;
}
double maxError(const std::vector<float>& got, const std::vector<double>& want) {
    double e = 0;
    for (size_t i = 0; i < got.size(); ++i) e = std::max(e, std::fabs(got[i] - want[i]));
    return e;
}
}  // namespace

TEST(Compression, CastsAverageWithinTheirPrecision) {
    const uint32_t n = 4;
    const size_t count = 10000;
    const auto want = exactAverage(n, count);
    onRanks(n, [&](uint32_t r, Communicator& comm) {
        for (auto [spec, tolerance] : {std::pair{"none", 1e-6}, {"fp16", 4e-3}, {"bf16", 3e-2}}) {
            auto c = makeCompressor(spec);
            auto g = randomGrad(r, count);
            c->start(comm, std::span<float>(g), 0)->finish();
            EXPECT_LT(maxError(g, want), tolerance) << spec;
            uint64_t fp32 = 2 * 3 * count * 4 / 4;
            EXPECT_EQ(c->fp32WireBytes(), fp32);
            EXPECT_EQ(c->wireBytes(), std::string(spec) == "none" ? fp32 : fp32 / 2) << spec;
        }
    });
}

TEST(Compression, TopKWithEverythingSentIsExact) {
    const uint32_t n = 4;
    const size_t count = 1000;
    const auto want = exactAverage(n, count);
    onRanks(n, [&](uint32_t r, Communicator& comm) {
        auto c = makeCompressor("topk:1");
        auto g = randomGrad(r, count);
        c->start(comm, std::span<float>(g), 0)->finish();
        EXPECT_LT(maxError(g, want), 1e-6);
    });
}

// A constant gradient whose entries span a factor of six: without error feedback
// the small ones would never be sent (top-k) or be sent wrongly scaled (sign); with it, the applied updates add up
// to the true sum over steps.
TEST(Compression, ErrorFeedbackDeliversEveryEntryInTime) {
    const uint32_t n = 2;
    const size_t count = 64;
    const int steps = 1000;
    for (const char* spec : {"topk:0.05", "sign"}) {
        onRanks(n, [&](uint32_t r, Communicator& comm) {
            auto c = makeCompressor(spec);
            std::vector<double> applied(count, 0.0);
            std::vector<float> g(count);
            for (int s = 0; s < steps; ++s) {
                for (size_t i = 0; i < count; ++i) g[i] = (i % 2 ? -1.0f : 1.0f) * (0.2f + float(i) / count) * (r + 1);
                c->start(comm, std::span<float>(g), 7)->finish();
                for (size_t i = 0; i < count; ++i) applied[i] += g[i];
            }
            for (size_t i = 0; i < count; ++i) {
                double truth = steps * (i % 2 ? -1.0 : 1.0) * (0.2 + double(i) / count) * 1.5;
                // The residual stays bounded (it does not grow with the steps); without
                // error feedback the smallest entries (truth 300) would stay near 0.
                EXPECT_NEAR(applied[i], truth, 0.03 * std::fabs(truth) + 16.0) << spec << " entry " << i;
            }
        });
    }
}

TEST(Compression, SignIsExactForEqualMagnitudes) {
    onRanks(4, [&](uint32_t r, Communicator& comm) {
        auto c = makeCompressor("sign");
        std::vector<float> g(100);
        for (size_t i = 0; i < g.size(); ++i) g[i] = (i % 3 == 0 ? -2.0f : 2.0f) * float(r + 1);
        c->start(comm, std::span<float>(g), 0)->finish();
        for (size_t i = 0; i < g.size(); ++i) ASSERT_EQ(g[i], i % 3 == 0 ? -5.0f : 5.0f) << i;  // mean of 2, 4, 6, 8
        EXPECT_EQ(c->wireBytes(), 3u * (4 + 13));  // scale + 100 bits, to 3 peers
    });
}

// 100 000 entries take the sampled-threshold path; the selection must still be the
// exact top 1%: the result is the average of every rank's 1000 largest entries.
TEST(Compression, TopKSelectsExactlyTheLargestAndCountsItsBytes) {
    const size_t count = 100000, k = 1000;
    std::vector<double> want(count, 0.0);
    for (uint32_t r = 0; r < 4; ++r) {
        auto g = randomGrad(r, count);
        std::vector<uint32_t> idx(count);
        std::iota(idx.begin(), idx.end(), 0u);
        std::sort(idx.begin(), idx.end(), [&](uint32_t a, uint32_t b) { return std::fabs(g[a]) > std::fabs(g[b]); });
        for (size_t j = 0; j < k; ++j) want[idx[j]] += g[idx[j]] / 4.0;
    }
    onRanks(4, [&](uint32_t r, Communicator& comm) {
        auto c = makeCompressor("topk");  // 1%
        auto g = randomGrad(r, count);
        c->start(comm, std::span<float>(g), 0)->finish();
        EXPECT_LT(maxError(g, want), 1e-6);
        EXPECT_EQ(c->wireBytes(), 3u * 1000 * 8);
        EXPECT_EQ(c->fp32WireBytes(), 2u * 3 * 100000 * 4 / 4);
    });
}

TEST(Compression, RejectsUnknownSpecs) {
    for (const char* bad : {"gzip", "topk:0", "topk:1.5", "topk:x", "topk:", "fp8"}) {
        try {
            makeCompressor(bad);
            ADD_FAILURE() << bad << " accepted";
        } catch (const hostccl::Error& e) {
            EXPECT_EQ(e.code(), HCCL_E_PARA) << bad;
        }
    }
    EXPECT_EQ(makeCompressor("topk:0.05")->name(), "topk:0.05");
}
