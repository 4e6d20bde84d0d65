// One rank of parallel_placement_test: started with launcher variables (RANK,
// WORLD_SIZE, HOSTCCL_ROOT_ADDR) and HOSTCCL_HOST_ID naming its emulated host, where
// the launcher placed ranks round-robin (rank r on host r % 2). Builds dp 2 x tp 2
// and checks that each tensor-parallel group lies inside one host. Exit 0 when right.
#include <cstdio>
#include <vector>

#include "hostccl/parallel.hpp"

int main() {
    try {
        hostccl::Communicator world = hostccl::Communicator::fromEnvironment();
        hostccl::ParallelGroups g(world, 2, 2, 1);
        uint32_t r = world.rank();
        // Hosts: {0, 2} and {1, 3}; slots fill host by host: [0, 2, 1, 3].
        std::vector<uint32_t> tp = r % 2 == 0 ? std::vector<uint32_t>{0, 2} : std::vector<uint32_t>{1, 3};
        std::vector<uint32_t> dp = r < 2 ? std::vector<uint32_t>{0, 1} : std::vector<uint32_t>{2, 3};
        bool ok = g.tensorParallelWithinHost() && g.tensorParallelMembers() == tp && g.dataParallelMembers() == dp;
        int32_t v = int32_t(r);
        g.tensorParallel().allReduce(std::span<int32_t>(&v, 1)).wait();
        ok = ok && v == int32_t(tp[0] + tp[1]);
        std::printf("rank %u: tp {%u, %u} dp {%u, %u} within host %d: %s\n", r, g.tensorParallelMembers()[0],
                    g.tensorParallelMembers()[1], g.dataParallelMembers()[0], g.dataParallelMembers()[1],
                    g.tensorParallelWithinHost(), ok ? "ok" : "WRONG");
        return ok ? 0 : 1;
    } catch (const hostccl::Error& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 2;
    }
}
