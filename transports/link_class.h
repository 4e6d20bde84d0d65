// The classes of link a pair of ranks may be joined by. A link states its class
// (transport::Link::linkClass); the cost model keeps a start-up time and a rate per
// class, and the communicator counts and describes its links by it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace hostccl {

enum class LinkClass : uint8_t { Shm, Tcp, Rdma };
constexpr size_t kLinkClasses = 3;
const char* linkClassName(LinkClass c);  // "shm", "tcp", "rdma"

}  // namespace hostccl
