#include "transports/rdma/ring_shape.h"

#include <algorithm>

namespace hostccl::transport::rdma {

RingShape ringShapeFor(uint32_t ranks, uint64_t budget, RingShape wanted) {
    const uint64_t links = std::max<uint32_t>(ranks, 2) - 1;
    const uint64_t perLink = budget / links;
    RingShape s = wanted;
    while (s.linkBytes() > perLink) {
        if (s.slots > 4) {
            s.slots /= 2;
        } else if (s.slotBytes / 2 >= kMinSlotBytes) {
            s.slotBytes = s.slotBytes / 2 / 16 * 16;  // whole 16-byte elements
        } else if (s.slots > kMinSlots) {
            s.slots = kMinSlots;
        } else {
            break;  // the floor
        }
    }
    return s;
}

}  // namespace hostccl::transport::rdma
