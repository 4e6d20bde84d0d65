// RDMA's entry in the transport table (transports/transport_entry.h): wanted
// between hosts, and within a host with HCCL_INTRA_ROCE_ENABLE=1 as in HCCL. Either
// end without a usable verbs device declines (the reason logged once per process);
// queue pairs that cannot connect fall back to TCP over the same socket. In a build
// without libibverbs the entry is there and always declines, saying why.
#pragma once

#include "transports/transport_entry.h"

namespace hostccl::transport {

const TransportEntry& rdmaTransport();

}  // namespace hostccl::transport
