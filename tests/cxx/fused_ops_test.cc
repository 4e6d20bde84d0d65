// The fused (MC2-style) ops equal their unfused sequences and a serial reference,
// for several shapes, rank counts and tile counts.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "on_ranks.h"
#include "hostccl/fused.hpp"

using hostccl::Communicator;
using hostccl::test::onRanks;

namespace {
std::vector<float> matrix(uint32_t seed, size_t rows, size_t cols) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> d(-1.0f, 1.0f);
    std::vector<float> m(rows * cols);
    for (float& x : m) x = d(rng);
    return m;
}
// Serial C += A * B (row-major) in double.
void accumulate(std::vector<double>& c, const std::vector<float>& a, const std::vector<float>& b, size_t m, size_t k,
                size_t n) {
    for (size_t i = 0; i < m; ++i)
        for (size_t p = 0; p < k; ++p)
            for (size_t j = 0; j < n; ++j) c[i * n + j] += double(a[i * k + p]) * b[p * n + j];
}
void expectClose(const float* got, const std::vector<double>& want, size_t offset, size_t count, double tol,
                 const std::string& what) {
    for (size_t i = 0; i < count; ++i)
        ASSERT_NEAR(got[i], want[offset + i], tol) << what << " element " << i;
}

struct Shape {
    uint32_t ranks;
    uint64_t m, k, n;  // m: rows per rank (AllGatherMatMul) or in all (the others)
    uint32_t tiles;
};
const Shape kShapes[] = {{2, 8, 16, 8, 4}, {3, 7, 5, 11, 3}, {4, 24, 32, 20, 4}, {4, 4, 64, 3, 16}, {2, 1, 3, 2, 1}};
}  // namespace

TEST(FusedOps, AllGatherMatMul) {
    for (const Shape& s : kShapes) {
        const uint64_t M = s.m * s.ranks;
        std::vector<float> b = matrix(99, s.k, s.n);
        std::vector<double> want(M * s.n, 0.0);
        for (uint32_t q = 0; q < s.ranks; ++q) {
            std::vector<double> block(s.m * s.n, 0.0);
            accumulate(block, matrix(q, s.m, s.k), b, s.m, s.k, s.n);
            std::copy(block.begin(), block.end(), want.begin() + q * s.m * s.n);
        }
        onRanks(s.ranks, [&](uint32_t r, Communicator& comm) {
            std::vector<float> a = matrix(r, s.m, s.k), c(M * s.n), cu(M * s.n), ga(M * s.k), gu(M * s.k);
            hostccl::allGatherMatMul(comm, a.data(), s.m, s.k, b.data(), s.n, c.data(), ga.data(), {s.tiles});
            hostccl::unfused::allGatherMatMul(comm, a.data(), s.m, s.k, b.data(), s.n, cu.data(), gu.data());
            expectClose(c.data(), want, 0, c.size(), 1e-4 * s.k, "fused");
            expectClose(cu.data(), want, 0, cu.size(), 1e-4 * s.k, "unfused");
            EXPECT_EQ(ga, gu);  // the gathered A is exact
        });
    }
}

TEST(FusedOps, MatMulReduceScatterAndAllReduce) {
    for (const Shape& s : kShapes) {
        const uint64_t M = s.m * s.ranks;  // a multiple of the rank count
        std::vector<double> want(M * s.n, 0.0);
        for (uint32_t q = 0; q < s.ranks; ++q)
            accumulate(want, matrix(q, M, s.k), matrix(100 + q, s.k, s.n), M, s.k, s.n);
        onRanks(s.ranks, [&](uint32_t r, Communicator& comm) {
            std::vector<float> a = matrix(r, M, s.k), b = matrix(100 + r, s.k, s.n);
            std::vector<float> out(s.m * s.n), outU(s.m * s.n), c(M * s.n), cU(M * s.n);
            const double tol = 1e-4 * s.k * s.ranks;
            hostccl::matMulReduceScatter(comm, a.data(), M, s.k, b.data(), s.n, out.data(), {s.tiles});
            hostccl::unfused::matMulReduceScatter(comm, a.data(), M, s.k, b.data(), s.n, outU.data());
            expectClose(out.data(), want, r * s.m * s.n, out.size(), tol, "fused reduce-scatter");
            expectClose(outU.data(), want, r * s.m * s.n, outU.size(), tol, "unfused reduce-scatter");
            hostccl::matMulAllReduce(comm, a.data(), M, s.k, b.data(), s.n, c.data(), {s.tiles});
            hostccl::unfused::matMulAllReduce(comm, a.data(), M, s.k, b.data(), s.n, cU.data());
            expectClose(c.data(), want, 0, c.size(), tol, "fused allreduce");
            expectClose(cU.data(), want, 0, cU.size(), tol, "unfused allreduce");
        });
    }
}

TEST(FusedOps, RejectsRowsThatDoNotDivide) {
    onRanks(3, [&](uint32_t, Communicator& comm) {
        std::vector<float> a(4 * 2), b(2 * 2), out(4);
        try {
            hostccl::matMulReduceScatter(comm, a.data(), 4, 2, b.data(), 2, out.data());
            ADD_FAILURE() << "m = 4 accepted on 3 ranks";
        } catch (const hostccl::Error& e) {
            EXPECT_EQ(e.code(), HCCL_E_PARA);
        }
        comm.barrier().wait();  // nothing was queued: the communicator still works
    });
}
