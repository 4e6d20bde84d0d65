#include "transports/link_class.h"

namespace hostccl {

const char* linkClassName(LinkClass c) {
    switch (c) {
        case LinkClass::Shm: return "shm";
        case LinkClass::Tcp: return "tcp";
        case LinkClass::Rdma: return "rdma";
    }
    return "?";
}

}  // namespace hostccl
