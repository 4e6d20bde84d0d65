// The classes of link a pair of ranks may be joined by. A link states its class
// (transport::Link::linkClass); the cost model keeps a start-up time and a rate per
// class, and the communicator counts and describes its links by it.
//
// Every class is one row of HOSTCCL_LINK_CLASSES: a transport whose links cost
// like an existing class's names that class in its TransportEntry; one whose
// costs differ adds a row here too (besides its folder and its transport table row).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace hostccl {

// row(enumerator, name, letter, between hosts, default alpha s, default bytes/s)
// - name: in logs, status, HOSTCCL_COST_MODEL and the simulator's platform files
// - letter: the class's cell in the links matrix of a comm description
// - between hosts: whether it can join two hosts (a platform's network class)
// - defaults: typical of a small x86 VM (shared-memory rings at a few GB/s, TCP
//   over a virtual link at about 1 GB/s with tens of microseconds per message),
//   used until the init probe or HOSTCCL_COST_MODEL says otherwise.
#define HOSTCCL_LINK_CLASSES(row)              \
    row(Shm, "shm", 's', false, 2e-6, 4e9)     \
    row(Tcp, "tcp", 't', true, 25e-6, 1e9)     \
    row(Rdma, "rdma", 'r', true, 5e-6, 3e9)

#define HOSTCCL_LINK_CLASS_ENUMERATOR(e, ...) e,
enum class LinkClass : uint8_t { HOSTCCL_LINK_CLASSES(HOSTCCL_LINK_CLASS_ENUMERATOR) };
#undef HOSTCCL_LINK_CLASS_ENUMERATOR

#define HOSTCCL_LINK_CLASS_ONE(...) +1
constexpr size_t kLinkClasses = 0 HOSTCCL_LINK_CLASSES(HOSTCCL_LINK_CLASS_ONE);
#undef HOSTCCL_LINK_CLASS_ONE

struct LinkClassInfo {
    const char* name;
    char letter;
    bool betweenHosts;
    double alpha;           // seconds per message
    double bytesPerSecond;  // per link
};

const LinkClassInfo& linkClassInfo(LinkClass c);
inline const char* linkClassName(LinkClass c) { return linkClassInfo(c).name; }
// The class called `name`; false (and `out` untouched) when there is none.
bool linkClassNamed(const std::string& name, LinkClass* out);

}  // namespace hostccl
