// memcpy bandwidth of 64 MiB buffers with every core copying at once: the ceiling a
// shared-memory collective is compared against. Prints "per-core GB/s" on one line.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

int main(int argc, char** argv) {
    const size_t bytes = 64u << 20;
    const int threads = argc > 1 ? std::atoi(argv[1]) : int(std::max(1u, std::thread::hardware_concurrency()));
    const int reps = 10;
    std::vector<double> perThread(threads);
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
            std::vector<char> src(bytes, char(t)), dst(bytes);
            std::memcpy(dst.data(), src.data(), bytes);  // fault the pages in
            auto t0 = std::chrono::steady_clock::now();
            for (int r = 0; r < reps; ++r) std::memcpy(dst.data(), src.data(), bytes);
            double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            perThread[t] = double(bytes) * reps / s / 1e9;
        });
    for (auto& p : pool) p.join();
    double sum = 0;
    for (double g : perThread) sum += g;
    std::printf("memcpy 64 MiB with %d threads: %.2f GB/s per core\n", threads, sum / threads);
    return 0;
}
