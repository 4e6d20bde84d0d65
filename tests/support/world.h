// N ranks as threads of this process: one communicator (HcclCommInitAll) and one
// stream per rank. run() calls the body on every rank's own thread at once, as a
// real job would, and returns each rank's result.
#pragma once

#include <functional>
#include <thread>
#include <vector>

#include "acl/acl.h"
#include "hccl/hccl.h"

namespace hostccl::test {

class World {
public:
    explicit World(uint32_t n);
    ~World();
    World(const World&) = delete;
    World& operator=(const World&) = delete;

    uint32_t size() const { return n_; }
    HcclComm comm(uint32_t r) const { return comms_[r]; }
    aclrtStream stream(uint32_t r) const { return streams_[r]; }
    bool ok() const { return initResult_ == HCCL_SUCCESS; }
    // Hands rank r's communicator to the caller (who aborts or destroys it).
    HcclComm release(uint32_t r) {
        HcclComm c = comms_[r];
        comms_[r] = nullptr;
        return c;
    }
    HcclResult initResult() const { return initResult_; }

    // body(rank) on n threads; returns the per-rank results.
    std::vector<int> run(const std::function<int(uint32_t)>& body) const;

private:
    uint32_t n_;
    HcclResult initResult_;
    std::vector<HcclComm> comms_;
    std::vector<aclrtStream> streams_;
};

}  // namespace hostccl::test
