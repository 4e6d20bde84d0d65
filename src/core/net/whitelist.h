// HCCL's host whitelist: with HCCL_WHITELIST_DISABLE=0, connections to this process's
// listeners (the rendezvous and the peer acceptor) are admitted only from the
// addresses in HCCL_WHITELIST_FILE, a JSON file {"host_ip": ["10.0.0.1", ...]}
// ("device_ip" is accepted and ignored, as HCCL reserves it). Anyone else is
// disconnected before a byte is read.
#pragma once

#include <string>
#include <vector>

#include "hccl/hccl_types.h"

namespace hostccl::net {

// (Re)reads the configuration; called by every init before anything listens. With
// the whitelist on, a missing or malformed file is HCCL_E_PARA (logged) and no
// connection is admitted until a later call succeeds.
HcclResult loadWhitelist();
// Whether a connection from `ip` may proceed (always, with the whitelist off).
bool whitelistAdmits(const std::string& ip);
// Parses the file's text; false with `why` when malformed. For tests and fuzzing.
bool parseWhitelist(const std::string& text, std::vector<std::string>* ips, std::string* why);

}  // namespace hostccl::net
