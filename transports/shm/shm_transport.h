// Shared memory's entry in the transport table (transports/transport_entry.h):
// wanted between ranks of one host. The offering rank creates the pair's segment
// and sends its name; the other maps it; the creator unlinks the name once the
// answer is in, so nothing stays in /dev/shm. Two ranks of one process share one
// anonymous mapping instead, without a connection.
#pragma once

#include "transports/transport_entry.h"

namespace hostccl::transport {

const TransportEntry& shmTransport();

}  // namespace hostccl::transport
