// Tensor-parallel groups stay inside a host even when the launcher placed ranks
// round-robin: four processes on two emulated hosts (HOSTCCL_HOST_ID).
#include <gtest/gtest.h>

#include "tests/multiprocess/launcher.h"

using namespace hostccl::test;

TEST(ParallelPlacement, TensorGroupsInsideHostsUnderRoundRobinPlacement) {
    const uint16_t port = freeTcpPort();
    std::vector<std::vector<std::string>> argvs;
    for (int r = 0; r < 4; ++r)
        argvs.push_back({"/usr/bin/env", "RANK=" + std::to_string(r), "WORLD_SIZE=4", "LOCAL_RANK=" + std::to_string(r / 2),
                         "HOSTCCL_ROOT_ADDR=127.0.0.1:" + std::to_string(port),
                         std::string("HOSTCCL_HOST_ID=host") + char('A' + r % 2), HOSTCCL_PLACEMENT_WORKER});
    auto results = runProcesses(argvs, 60);
    for (int r = 0; r < 4; ++r) EXPECT_EQ(results[r].exitCode, 0) << "rank " << r;
}
