#include "tests/support/world.h"

namespace hostccl::test {

World::World(uint32_t n) : n_(n), comms_(n, nullptr), streams_(n, nullptr) {
    std::vector<int32_t> devices(n);
    for (uint32_t i = 0; i < n; ++i) devices[i] = static_cast<int32_t>(i);
    initResult_ = HcclCommInitAll(n, devices.data(), comms_.data());
    for (uint32_t i = 0; i < n; ++i) {
        aclrtSetDevice(static_cast<int32_t>(i));
        aclrtCreateStream(&streams_[i]);
    }
}

World::~World() {
    for (uint32_t i = 0; i < n_; ++i) {
        if (comms_[i] != nullptr) HcclCommDestroy(comms_[i]);
        if (streams_[i] != nullptr) aclrtDestroyStream(streams_[i]);
    }
}

std::vector<int> World::run(const std::function<int(uint32_t)>& body) const {
    std::vector<int> results(n_, 0);
    std::vector<std::thread> threads;
    for (uint32_t r = 0; r < n_; ++r)
        threads.emplace_back([&, r] {
            aclrtSetDevice(static_cast<int32_t>(r));
            results[r] = body(r);
        });
    for (auto& t : threads) t.join();
    return results;
}

}  // namespace hostccl::test
