// The init probe: a few bounded exchanges that measure the cost parameters on the
// links this communicator really has, so the selector's model fits this machine
// (crowded cores, a shaped network) rather than a guess.
//
// Every rank shifts messages round the ring (send to the next rank, receive from the
// previous, all at once, as ring steps do): tiny messages give alpha, the difference
// between 64 KiB and 256 KiB ones beta (lower quartiles of a dozen and of four runs),
// for the worst link class this rank touches; on one host, an all-pairs exchange
// of small messages gives the direct algorithms' handshake. Each rank times its reduction
// and copy kernels alone. The ranks then sum their figures (integer nanoseconds and
// femtoseconds, so the sum is exact in any order) and every rank divides the same
// totals: all ranks end with identical parameters, hence identical choices.
// A class no rank measured keeps the value it had (configuration or default).
// About 2-5 ms on a 2-core machine (more when ranks outnumber cores), counted from
// the first shift, which waits for the neighbours to finish creating the
// communicator; bounded by HCCL_CONNECT_TIMEOUT.
#pragma once


#include "algorithms/context.h"
#include "algorithms/cost_model/cost_params.h"

namespace hostccl {

HcclResult probeCosts(const CommView& view, Deadline deadline, CommFailure* failure, CostParams* params);

}  // namespace hostccl
