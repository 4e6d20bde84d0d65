// Creating and mapping the shared segment of a pair of ranks. The creator makes a
// POSIX shared-memory object with an unguessable name; once the peer has mapped it
// the creator unlinks the name, so nothing is left in /dev/shm even if a rank dies.
// Two ranks of one process share the creator's mapping instead of mapping the
// segment twice: one address for each atomic word, which is also what lets
// ThreadSanitizer see the ring's release/acquire pairs.
#pragma once

#include <memory>
#include <string>
#include <utility>

#include "transports/shm/shm_ring.h"

namespace hostccl::transport::shm {

class Mapping {
public:
    Mapping() = default;
    Mapping(Mapping&&) noexcept = default;
    Mapping& operator=(Mapping&&) noexcept = default;
    Mapping(const Mapping&) = delete;

    // Creates a fresh segment; `name` receives its name.
    static Mapping create(std::string* name, std::string* err);
    static Mapping open(const std::string& name, std::string* err);
    // A segment for two ranks of this process: anonymous memory, no name, no descriptor.
    static Mapping inProcess(std::string* err);
    static void unlink(const std::string& name);

    // A second handle on this process's mapping (the other end of an in-process pair).
    Mapping alias() const {
        Mapping m;
        m.seg_ = seg_;
        return m;
    }
    Segment* get() const { return seg_.get(); }
    bool valid() const { return seg_ != nullptr; }

private:
    std::shared_ptr<Segment> seg_;  // unmapped when the last rank of this process lets go
};

}  // namespace hostccl::transport::shm
