// The sockets of one TCP link: the connection both ranks already share, and the
// extra lanes (HOSTCCL_TCP_SOCKETS) opened over it. Both ends say how many lanes
// they want and take the smaller count; the lower rank listens on an ephemeral
// port of the address the peer already reaches it at and sends the port with a
// random token, the higher rank connects that many times and presents the token
// with each lane's number; the lower rank confirms once every lane is in.
#pragma once

#include <string>
#include <vector>

#include "common/deadline.h"
#include "common/net/socket.h"

namespace hostccl::transport {

// How many lanes this rank wants per link (HOSTCCL_TCP_SOCKETS, default 2).
unsigned wantedTcpLanes();

// `first` connected; `listens`: this end is the lower rank. On success `*lanes`
// holds every socket, `first` at lane 0. False with `*why` when a step fails or
// the deadline passes.
bool openTcpLanes(net::Fd first, bool listens, unsigned wanted, Deadline deadline, std::vector<net::Fd>* lanes,
                  std::string* why);

}  // namespace hostccl::transport
