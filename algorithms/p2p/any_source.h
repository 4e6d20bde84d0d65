#pragma once

#include "algorithms/context.h"

namespace hostccl {

// A receive from any source (HostcclRecvAny; torch's recvAnysource): waits until a
// peer's next message to this rank is a point-to-point one, receives it from that
// peer exactly as HcclRecv would (count and type must match the send), and writes
// the peer's rank to the op's `anySource`. Peers that have not connected yet are
// seen once they do (their first send connects them). Bounded by the op's deadline;
// a failure of the communicator (a dead peer) ends the wait with its cause.
HcclResult receiveFromAnySource(Context& ctx);

}  // namespace hostccl
