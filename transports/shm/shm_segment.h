// Creating and mapping the shared segment of a pair of ranks. The creator makes a
// POSIX shared-memory object with an unguessable name; once the peer has mapped it
// the creator unlinks the name, so nothing is left in /dev/shm even if a rank dies.
#pragma once

#include <string>
#include <utility>

#include "transports/shm/shm_ring.h"

namespace hostccl::transport::shm {

class Mapping {
public:
    Mapping() = default;
    ~Mapping();
    Mapping(Mapping&& o) noexcept : seg_(o.seg_) { o.seg_ = nullptr; }
    Mapping& operator=(Mapping&& o) noexcept {
        std::swap(seg_, o.seg_);
        return *this;
    }
    Mapping(const Mapping&) = delete;

    // Creates a fresh segment; `name` receives its name.
    static Mapping create(std::string* name, std::string* err);
    static Mapping open(const std::string& name, std::string* err);
    static void unlink(const std::string& name);

    Segment* get() const { return seg_; }
    bool valid() const { return seg_ != nullptr; }

private:
    Segment* seg_ = nullptr;
};

}  // namespace hostccl::transport::shm
