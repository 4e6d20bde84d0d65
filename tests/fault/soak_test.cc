// Soak: many small ops and many communicator lifetimes must not leak. After a
// warm-up, resident memory, open file descriptors and threads are sampled; after
// the soak they may have drifted only within small bounds.
#include <dirent.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "tests/support/world.h"

using namespace hostccl::test;

namespace {

struct Usage {
    long rssKiB = 0;
    long fds = 0;
    long threads = 0;
};

Usage usage() {
    Usage u;
    std::ifstream status("/proc/self/status");
    std::string key;
    while (status >> key) {
        if (key == "VmRSS:") status >> u.rssKiB;
        if (key == "Threads:") status >> u.threads;
    }
    if (DIR* d = opendir("/proc/self/fd")) {
        while (readdir(d) != nullptr) ++u.fds;
        closedir(d);
    }
    return u;
}

void report(const char* what, const Usage& before, const Usage& after) {
    std::printf("%s: RSS %ld -> %ld KiB, fds %ld -> %ld, threads %ld -> %ld\n", what, before.rssKiB, after.rssKiB,
                before.fds, after.fds, before.threads, after.threads);
}

// Each rank enqueues `batch` allreduces of one int64, then synchronises.
int allReduces(const World& w, uint32_t r, int total, int batch) {
    int64_t v = 0;
    for (int done = 0; done < total; done += batch) {
        for (int i = 0; i < batch; ++i)
            if (HcclAllReduce(&v, &v, 1, HCCL_DATA_TYPE_INT64, HCCL_REDUCE_MAX, w.comm(r), w.stream(r)) != 0) return 1;
        if (aclrtSynchronizeStream(w.stream(r)) != 0) return 2;
    }
    return v == 0 ? 0 : 3;
}

TEST(Soak, TwoHundredThousandSmallAllReduces) {
    World w(2);
    ASSERT_TRUE(w.ok());
    EXPECT_EQ(w.run([&](uint32_t r) { return allReduces(w, r, 10000, 100); }), std::vector<int>(2, 0));
    const Usage before = usage();
    EXPECT_EQ(w.run([&](uint32_t r) { return allReduces(w, r, 200000, 100); }), std::vector<int>(2, 0));
    const Usage after = usage();
    report("200000 allreduces", before, after);
    EXPECT_LE(after.rssKiB - before.rssKiB, 4 * 1024);
    EXPECT_EQ(after.fds, before.fds);
    EXPECT_EQ(after.threads, before.threads);
}

// Each cycle: two ranks join through root info, run one allreduce, destroy.
int cycle() {
    World w(2);
    if (!w.ok()) return 100;
    std::vector<int> rcs = w.run([&](uint32_t r) { return allReduces(w, r, 1, 1); });
    return rcs[0] + rcs[1];
}

TEST(Soak, ThousandInitDestroyCycles) {
    for (int i = 0; i < 50; ++i) ASSERT_EQ(cycle(), 0) << "warm-up cycle " << i;
    usleep(300 * 1000);  // detached handshake threads of the last cycle finish
    const Usage before = usage();
    for (int i = 0; i < 1000; ++i) ASSERT_EQ(cycle(), 0) << "cycle " << i;
    usleep(300 * 1000);
    const Usage after = usage();
    report("1000 init/destroy cycles", before, after);
    EXPECT_LE(after.rssKiB - before.rssKiB, 8 * 1024);
    EXPECT_LE(after.fds - before.fds, 2);
    EXPECT_LE(after.threads - before.threads, 2);
}

}  // namespace
