// Which congestion control hostccl's TCP sockets run (HOSTCCL_TCP_CONGESTION).
//
// BBR, the default of many current kernels, paces each socket at its estimate of the
// path's bandwidth. Collective traffic comes in bursts with idle gaps, which keep
// that estimate low: between two network namespaces on 2 cores, with BBR as the
// kernel's default, a 64 MiB broadcast moved 2.4-2.7 GB/s and 64 KiB allreduces ran
// at 0.8-3.4 GB/s in phases; with CUBIC 6.0-6.7 and 3.2-3.4 every run. So by default
// ("auto") a socket the kernel would give BBR gets CUBIC; any other default (DCTCP on
// an ECN fabric, say) is the administrator's choice and stays.
//
// The choice is made before the socket connects or listens (an accepted socket takes
// its listener's): a connection that started under BBR keeps pacing after a switch
// (the kernel turns pacing on when BBR starts and leaves it on) and moved slower still
// (the same broadcast 1.9-2.0 GB/s).
#pragma once

#include <string>

namespace hostccl::net {

// The policy from HOSTCCL_TCP_CONGESTION, read once: "auto", "system" or an
// algorithm's name.
const std::string& congestionPolicy();

// Applies `policy` to a socket not yet connected or listening. An algorithm the
// kernel does not offer (net.ipv4.tcp_allowed_congestion_control) leaves the socket
// as it is: false, with the reason in `why`.
bool applyCongestionPolicy(int fd, const std::string& policy, std::string* why);

// The environment's policy, with one warning per process when it cannot be followed.
void applyCongestionPolicy(int fd);

// The algorithm a socket runs ("" if the kernel does not say).
std::string congestionControlOf(int fd);

}  // namespace hostccl::net
