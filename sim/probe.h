// The platform as hostccl measured it: a running communicator's cost model (its
// init probe) and shape, as hostccl-sim --probe writes it (ranks as threads on this
// host, or one per process under a launcher), or read back from the text a
// HostcclCommDescribe call printed (--describe).
#pragma once

#include <cstdint>
#include <string>

#include "sim/platform.h"

namespace hostccl::sim {

// Creates a communicator (`localRanks` threads here; 0: one rank per process from the
// launcher's environment), reads its measured model and layout. `*printer` is true
// on the one rank that should print (rank 0).
bool probePlatform(uint32_t localRanks, Platform* out, bool* printer, std::string* why);

// From HostcclCommDescribe's text: the hosts line, each host's cores and the cost
// model line. False and `why` when a part is missing or malformed.
bool platformFromDescription(const std::string& text, Platform* out, std::string* why);

}  // namespace hostccl::sim
