// The transports a pair of ranks may be joined by, in order of preference, and
// which of them HOSTCCL_TRANSPORT forces. Adding a transport adds a row here
// (transport_table.cc) and a folder with its link and entry (transport_entry.h).
#pragma once

#include <string>
#include <vector>

#include "transports/transport_entry.h"

namespace hostccl::transport {

// RDMA, shared memory, TCP. The last row wants every pair and agrees to every
// offer: the fallback.
const std::vector<const TransportEntry*>& transportTable();
const TransportEntry* transportTagged(char tag);  // null for a tag of no row
const TransportEntry* transportNamed(const std::string& name);  // null for a name of no row

// HOSTCCL_TRANSPORT: `*forced` null for auto, else the row it names. False with
// `why` for a value that names no row.
bool forcedTransport(const TransportEntry** forced, std::string* why);

// What the pair tries first: the forced row, else the first row it wants.
const TransportEntry& firstChoice(const PairEnds& ends);

}  // namespace hostccl::transport
