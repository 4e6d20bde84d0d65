// Ranks as threads for the C++ API tests: body(rank, communicator) on n threads,
// each rank on its own device, one communicator from a fresh root info.
#pragma once

#include <functional>
#include <thread>
#include <vector>

#include "hostccl/hostccl.hpp"

namespace hostccl::test {

inline void onRanks(uint32_t n, const std::function<void(uint32_t, Communicator&)>& body) {
    HcclRootInfo root = Communicator::createRootInfo();
    std::vector<std::thread> threads;
    for (uint32_t r = 0; r < n; ++r) {
        threads.emplace_back([&, r] {
            CommOptions options;
            options.device = static_cast<int32_t>(r);
            Communicator comm(root, n, r, options);
            body(r, comm);
        });
    }
    for (auto& t : threads) t.join();
}

}  // namespace hostccl::test
