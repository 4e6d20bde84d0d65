// A connected loopback TCP pair, for tests of what runs over one connection.
#pragma once

#include <gtest/gtest.h>

#include "common/deadline.h"
#include "common/net/socket.h"

namespace hostccl::test {

// `*up` the connecting end, `*down` the accepted one.
inline void loopbackConnection(Deadline deadline, net::Fd* up, net::Fd* down) {
    std::string why;
    net::Fd listener = net::listenTcp("127.0.0.1", 0, &why);
    ASSERT_TRUE(listener.valid()) << why;
    *up = net::connectTcp({"127.0.0.1", net::boundPort(listener.get())}, deadline, &why);
    *down = net::acceptTcp(listener.get(), deadline, &why);
    ASSERT_TRUE(up->valid() && down->valid()) << why;
}

}  // namespace hostccl::test
