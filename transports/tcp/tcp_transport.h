// TCP's entry in the transport table (transports/transport_entry.h): wanted by
// every pair and always agreed to, so it is the table's last row and every pair's
// fallback.
#pragma once

#include "transports/transport_entry.h"

namespace hostccl::transport {

const TransportEntry& tcpTransport();

// A TCP link of the one socket the pair already shares, with no lane handshake:
// for ends that used the socket for another transport's set-up, which failed.
std::unique_ptr<Link> singleSocketTcpLink(const PairEnds& ends, net::Fd fd);

}  // namespace hostccl::transport
