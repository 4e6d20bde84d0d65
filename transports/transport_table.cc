#include "transports/transport_table.h"

#include "common/env.h"
#include "transports/rdma/rdma_transport.h"
#include "transports/shm/shm_transport.h"
#include "transports/tcp/tcp_transport.h"

namespace hostccl::transport {

const std::vector<const TransportEntry*>& transportTable() {
    static const std::vector<const TransportEntry*> table{&rdmaTransport(), &shmTransport(), &tcpTransport()};
    return table;
}

const TransportEntry* transportTagged(char tag) {
    for (const TransportEntry* t : transportTable())
        if (t->tag == tag) return t;
    return nullptr;
}

const TransportEntry* transportNamed(const std::string& name) {
    for (const TransportEntry* t : transportTable())
        if (name == t->name) return t;
    return nullptr;
}

bool forcedTransport(const TransportEntry** forced, std::string* why) {
    const std::string value = env::getString("HOSTCCL_TRANSPORT");
    *forced = nullptr;
    if (value.empty() || value == "auto") return true;
    *forced = transportNamed(value);
    if (*forced != nullptr) return true;
    std::string names = "auto";
    for (const TransportEntry* t : transportTable()) names += std::string(", ") + t->name;
    *why = "HOSTCCL_TRANSPORT=" + value + " names no transport (" + names + ")";
    return false;
}

const TransportEntry& firstChoice(const PairEnds& ends) {
    const TransportEntry* forced = nullptr;
    std::string why;
    if (!forcedTransport(&forced, &why)) return *transportTable().back();  // init fails when it negotiates
    if (forced != nullptr) return *forced;
    for (const TransportEntry* t : transportTable())
        if (t->wanted(ends)) return *t;
    return *transportTable().back();
}

}  // namespace hostccl::transport
