// GradientBucketer: bucket layout (first bucket small, a gradient never split),
// exact averages whatever order gradients become ready in, unused gradients, and
// misuse that must throw.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "on_ranks.h"
#include "hostccl/bucketing.hpp"

using hostccl::BucketOptions;
using hostccl::Communicator;
using hostccl::GradientBucketer;
using hostccl::test::onRanks;

namespace {
// Exact in float: small integers, and an average over 4 ranks of such values.
float value(uint32_t rank, uint32_t step, size_t grad, size_t j) {
    return float(rank * 1000 + step * 100 + grad * 10 + j % 7);
}
const std::vector<size_t> kSizes = {100000, 50000, 300000, 7, 250000};
}  // namespace

TEST(GradientBucketer, AveragesExactlyInAnyReadyOrder) {
    const uint32_t n = 4;
    onRanks(n, [&](uint32_t r, Communicator& comm) {
        std::vector<std::vector<float>> grads;
        for (size_t s : kSizes) grads.emplace_back(s);
        BucketOptions options;
        options.firstBucketBytes = 256 << 10;
        options.bucketBytes = 1 << 20;
        GradientBucketer buckets(comm, options);
        for (auto& g : grads) buckets.add(g);
        std::mt19937 rng(r);  // every rank marks gradients ready in its own order
        for (uint32_t step = 0; step < 3; ++step) {
            for (size_t i = 0; i < grads.size(); ++i)
                for (size_t j = 0; j < grads[i].size(); ++j) grads[i][j] = value(r, step, i, j);
            std::vector<size_t> order(grads.size());
            std::iota(order.begin(), order.end(), 0);
            std::shuffle(order.begin(), order.end(), rng);
            // Step 2 leaves gradient 3 unmarked (an unused parameter): reduced as it is.
            for (size_t id : order)
                if (!(step == 2 && id == 3)) buckets.ready(id);
            buckets.waitAll();
            for (size_t i = 0; i < grads.size(); ++i)
                for (size_t j = 0; j < grads[i].size(); ++j)
                    ASSERT_EQ(grads[i][j], 1500.0f + float(step * 100 + i * 10 + j % 7))
                        << "rank " << r << " step " << step << " grad " << i << " index " << j;
            EXPECT_EQ(buckets.lastStep().wireBytes, 2 * 3 * 700007 * sizeof(float) / 4);
        }
        // 400 KB alone in the 256 KiB first bucket; then 200 KB; 1.2 MB alone; 28 B + 1 MB.
        EXPECT_EQ(buckets.bucketCount(), 4u);
    });
}

TEST(GradientBucketer, ReadyFromSeveralThreads) {
    onRanks(2, [&](uint32_t r, Communicator& comm) {
        std::vector<std::vector<float>> grads(16, std::vector<float>(4096));
        BucketOptions options;
        options.firstBucketBytes = 16 << 10;
        options.bucketBytes = 64 << 10;
        GradientBucketer buckets(comm, options);
        for (auto& g : grads) buckets.add(g);
        for (size_t i = 0; i < grads.size(); ++i) std::fill(grads[i].begin(), grads[i].end(), float(r * 2 + i));
        std::vector<std::thread> workers;
        for (size_t t = 0; t < 4; ++t)
            workers.emplace_back([&, t] {
                for (size_t i = t; i < grads.size(); i += 4) buckets.ready(i);
            });
        for (auto& w : workers) w.join();
        buckets.waitAll();
        for (size_t i = 0; i < grads.size(); ++i) EXPECT_EQ(grads[i], std::vector<float>(4096, float(1 + i)));
    });
}

TEST(GradientBucketer, MisuseThrowsAndChangesNothing) {
    onRanks(2, [&](uint32_t r, Communicator& comm) {
        std::vector<float> a(10, float(r)), b(10, float(r));
        GradientBucketer buckets(comm);
        buckets.add(a);
        buckets.add(b);
        buckets.ready(0);
        EXPECT_THROW(buckets.ready(0), hostccl::Error);  // twice in one step
        EXPECT_THROW(buckets.ready(2), hostccl::Error);  // no such gradient
        EXPECT_THROW(buckets.add(a), hostccl::Error);    // registration closed
        buckets.ready(1);
        buckets.waitAll();
        EXPECT_EQ(a, std::vector<float>(10, 0.5f));
        EXPECT_EQ(b, std::vector<float>(10, 0.5f));
        BucketOptions zero;
        zero.bucketBytes = 0;
        EXPECT_THROW(GradientBucketer(comm, zero), hostccl::Error);
    });
}

// A failed step throws, leaves nothing in flight, and the next step starts clean
// (it fails again here, since the communicator stays failed, but does not crash).
TEST(GradientBucketer, FailedStepThrowsAndResets) {
    onRanks(2, [&](uint32_t r, Communicator& comm) {
        std::vector<float> a(1 << 16, 1.0f), b(1 << 16, 2.0f);
        BucketOptions options;
        options.firstBucketBytes = 1 << 16;  // two buckets
        GradientBucketer buckets(comm, options);
        buckets.add(a);
        buckets.add(b);
        if (r == 1) comm.abort();  // rank 1 leaves before the step
        for (int step = 0; step < 2; ++step) {
            try {
                buckets.ready(0);
                buckets.ready(1);
                buckets.waitAll();
                ADD_FAILURE() << "rank " << r << " step " << step << " succeeded without its peer";
            } catch (const hostccl::Error& e) {
                if (r == 0) {
                    EXPECT_EQ(e.code(), HCCL_E_REMOTE) << e.what();
                }
            }
            // Whatever the failure left half done (a refused launch in ready()), waitAll()
            // finishes and resets; the communicator is still failed, so it throws too.
            EXPECT_THROW(buckets.waitAll(), hostccl::Error);
        }
    });
}

// Gradients of different bucket groups never share a bucket (a compressor decides per
// bucket); with sign compression the replicated group's result depends only on the
// replicated gradients: identical on ranks whose other group differs.
TEST(GradientBucketer, BucketGroupsNeverShareABucket) {
    onRanks(2, [&](uint32_t r, Communicator& comm) {
        std::vector<float> replicatedA(64, 1.0f), shard(64), replicatedB(64, -2.0f);
        for (size_t j = 0; j < shard.size(); ++j) shard[j] = float((r + 1) * 100 * (j % 5 + 1));  // differs per rank
        GradientBucketer mixed(comm);
        mixed.add(replicatedA);
        mixed.add(shard);
        mixed.add(replicatedB);
        GradientBucketer grouped(comm, {}, hostccl::makeCompressor("sign"));
        grouped.add(replicatedA, 0);
        grouped.add(shard, 1);
        grouped.add(replicatedB, 0);
        grouped.waitAll();
        EXPECT_EQ(mixed.bucketCount(), 0u);  // built on the first step only
        mixed.waitAll();
        EXPECT_EQ(mixed.bucketCount(), 1u);
        EXPECT_EQ(grouped.bucketCount(), 2u);
        // Sign compression of {1 x64, -2 x64}: scale = mean |g| = 1.5 on both ranks.
        for (float v : replicatedA) EXPECT_EQ(v, 1.5f);
        for (float v : replicatedB) EXPECT_EQ(v, -1.5f);
    });
}
