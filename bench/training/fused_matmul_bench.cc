// Fused (MC2-style) against unfused time for AllGatherMatMul, MatMulReduceScatter
// and MatMulAllReduce at a few shapes, on local ranks (threads) or ranks from a
// launcher. Prints one row per op and shape: median milliseconds of each and the
// speed-up. Shapes are M x K x N of the whole product (see hostccl/fused.hpp).
//   fused_matmul_bench --ranks 4 [--iters 10] [--tiles 4] [--shape 2048x1024x1024 ...]
#include <cblas.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <thread>

#include "hostccl/fused.hpp"

namespace {

struct Shape {
    uint64_t m, k, n;
};

using Clock = std::chrono::steady_clock;

template <typename F>
double medianMs(hostccl::Communicator& comm, int iters, F&& run) {
    std::vector<double> ms;
    for (int i = 0; i < iters + 1; ++i) {
        comm.barrier().wait();
        auto t0 = Clock::now();
        run();
        double t = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
        // The op's time is the slowest rank's.
        comm.allReduce(std::span<double>(&t, 1), HCCL_REDUCE_MAX).wait();
        if (i > 0) ms.push_back(t);  // the first run warms buffers and connections
    }
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
}

std::vector<float> randomMatrix(size_t elems, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> d(-1.0f, 1.0f);
    std::vector<float> v(elems);
    for (float& x : v) x = d(rng);
    return v;
}

void runRank(hostccl::Communicator& comm, const std::vector<Shape>& shapes, int iters, uint32_t tiles) {
    const uint32_t p = comm.size(), r = comm.rank();
    auto row = [&](const char* op, const Shape& s, double fused, double plain) {
        if (r == 0)
            std::printf("%-20s %6lux%-5lux%-5lu %10.2f %10.2f %8.2fx\n", op, (unsigned long)s.m, (unsigned long)s.k,
                        (unsigned long)s.n, plain, fused, plain / fused);
    };
    if (r == 0) std::printf("# %u ranks, %u tiles\n# %-18s %-18s %10s %10s %9s\n", p, tiles, "op", "MxKxN", "unfused_ms",
                            "fused_ms", "speedup");
    hostccl::FusedOptions o{tiles};
    for (const Shape& s : shapes) {
        // AllGatherMatMul: A row-sharded (M/p x K each), B replicated (K x N).
        std::vector<float> a = randomMatrix(s.m / p * s.k, r), b = randomMatrix(s.k * s.n, 7), c(s.m * s.n);
        double f = medianMs(comm, iters, [&] { hostccl::allGatherMatMul(comm, a.data(), s.m / p, s.k, b.data(), s.n, c.data(), nullptr, o); });
        double u = medianMs(comm, iters, [&] { hostccl::unfused::allGatherMatMul(comm, a.data(), s.m / p, s.k, b.data(), s.n, c.data()); });
        row("AllGatherMatMul", s, f, u);
        // The K-sharded products: A (M x K/p), B (K/p x N) on each rank.
        std::vector<float> ak = randomMatrix(s.m * (s.k / p), r), bk = randomMatrix(s.k / p * s.n, r + 100);
        std::vector<float> out(s.m / p * s.n), full(s.m * s.n);
        f = medianMs(comm, iters, [&] { hostccl::matMulReduceScatter(comm, ak.data(), s.m, s.k / p, bk.data(), s.n, out.data(), o); });
        u = medianMs(comm, iters, [&] { hostccl::unfused::matMulReduceScatter(comm, ak.data(), s.m, s.k / p, bk.data(), s.n, out.data()); });
        row("MatMulReduceScatter", s, f, u);
        f = medianMs(comm, iters, [&] { hostccl::matMulAllReduce(comm, ak.data(), s.m, s.k / p, bk.data(), s.n, full.data(), o); });
        u = medianMs(comm, iters, [&] { hostccl::unfused::matMulAllReduce(comm, ak.data(), s.m, s.k / p, bk.data(), s.n, full.data()); });
        row("MatMulAllReduce", s, f, u);
    }
}

}  // namespace

int main(int argc, char** argv) {
    uint32_t ranks = 0, tiles = 4;
    int iters = 10;
    std::vector<std::string> shapeText = {"1024x1024x1024", "2048x2048x1024", "4096x1024x2048"};
    CLI::App app{"Fused vs unfused compute-communication (MC2-style) ops"};
    app.add_option("--ranks", ranks, "local ranks as threads (default: from the launcher)");
    app.add_option("--iters", iters, "timed iterations per case")->check(CLI::Range(1, 100000));
    app.add_option("--tiles", tiles, "pipeline tiles")->check(CLI::Range(1u, 4096u));
    app.add_option("--shape", shapeText, "MxKxN of the whole product (M and K divisible by the rank count)");
    CLI11_PARSE(app, argc, argv);
    std::vector<Shape> shapes;
    for (const std::string& t : shapeText) {
        Shape s{};
        if (std::sscanf(t.c_str(), "%lux%lux%lu", &s.m, &s.k, &s.n) != 3 || s.m == 0 || s.k == 0 || s.n == 0) {
            std::fprintf(stderr, "bad --shape %s (want MxKxN)\n", t.c_str());
            return 2;
        }
        shapes.push_back(s);
    }
    openblas_set_num_threads(1);  // one GEMM thread per rank: ranks already share the cores
    auto check = [&](uint32_t p) {
        for (const Shape& s : shapes)
            if (s.m % p || s.k % p) return false;
        return true;
    };
    try {
        if (ranks == 0) {
            hostccl::Communicator comm = hostccl::Communicator::fromEnvironment();
            if (!check(comm.size())) throw hostccl::Error(HCCL_E_PARA, "M and K must be multiples of the rank count");
            runRank(comm, shapes, iters, tiles);
            return 0;
        }
        if (!check(ranks)) throw hostccl::Error(HCCL_E_PARA, "M and K must be multiples of the rank count");
        HcclRootInfo root = hostccl::Communicator::createRootInfo();
        std::vector<std::thread> threads;
        for (uint32_t r = 0; r < ranks; ++r)
            threads.emplace_back([&, r] {
                hostccl::CommOptions o;
                o.device = int32_t(r);
                hostccl::Communicator comm(root, ranks, r, o);
                runRank(comm, shapes, iters, tiles);
            });
        for (auto& t : threads) t.join();
    } catch (const hostccl::Error& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 2;
    }
    return 0;
}
