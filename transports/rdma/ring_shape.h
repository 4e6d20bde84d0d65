// How big one RDMA link's rings are. Every link registers two rings (staging for
// what it sends, slots for what it receives) of `slots` x `slotBytes`; with links on
// demand a rank holds at most one link per peer, so a rank in a communicator of n
// ranks registers at most 2 (n - 1) rings. The shape is chosen from n and the rank's
// budget, so both ends of a link (same communicator, same settings) choose the same
// shape without asking each other.
#pragma once

#include <cstdint>

namespace hostccl::transport::rdma {

struct RingShape {
    uint32_t slots = 8;
    uint32_t slotBytes = 1 << 20;
    uint64_t ringBytes() const { return uint64_t(slots) * slotBytes; }
    uint64_t linkBytes() const { return 2 * ringBytes(); }  // staging + receive
};

// Below these a ring stops shrinking: fewer slots cannot keep a write in flight
// while one is consumed, smaller slots cost a completion per 64 KiB.
constexpr uint32_t kMinSlots = 2;
constexpr uint32_t kMinSlotBytes = 64 * 1024;

// `wanted` (the configured shape) shrunk until (ranks - 1) links fit in `budget`
// bytes: halve the slots down to 4 (pipelining is kept), then the slot size down to
// kMinSlotBytes, then the slots down to kMinSlots. The result may still exceed the
// budget at that floor (256 KiB per link); it never grows past `wanted`.
RingShape ringShapeFor(uint32_t ranks, uint64_t budget, RingShape wanted);

}  // namespace hostccl::transport::rdma
