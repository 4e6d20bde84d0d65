// A single-producer single-consumer ring in shared memory. The producer owns `head`,
// the consumer owns `tail`; each lives on its own cache line so the two sides never
// write the same line. Each fragment of a message takes a header slot, one line; the
// first fragment's carries its op tag and size, so the receiver checks the op before
// it touches any payload. A message of up to kInlineBytes sits in its header; longer
// fragments (and single-copy descriptors) also take one of fewer, large payload slots,
// in the order they were sent, so both sides know which without saying.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "transports/link.h"
#include "transports/shared_region.h"

namespace hostccl::transport::shm {

// Header slots: how far a producer of small messages runs ahead of its consumer. Where
// ranks outnumber cores, a rank runs until its rings fill or empty, then gives the core
// up: with 8 slots, an 8-rank 8-byte broadcast on 2 cores switched threads 2.9 times per
// op and took 3.0 us; with 64, 0.9 times and 2.25 us.
constexpr size_t kSlots = 64;
// Payload slots, and the bytes of each: a multiple of 16 so fragments never split an
// element, and of 64 so every slot starts a line.
constexpr size_t kPayloadSlots = 8;
constexpr size_t kSlotPayload = 128 * 1024 - 64;
constexpr size_t kSlotHeaderBytes = 64;
static_assert(kSlotPayload % 64 == 0, "fragments hold whole elements, slots start lines");

// Flags of a slot.
constexpr uint32_t kFirstFragment = 1;  // `tag` and `bytes` name the message
constexpr uint32_t kDirect = 2;         // the payload is a DirectDescriptor, not data
constexpr uint32_t kInline = 4;         // the payload is in `inlineData`

// A message of up to this many bytes travels inside its header slot.
constexpr size_t kInlineBytes = 16;

// A fragment's header slot, one line. `stamp` is written last (release): fragment n's
// slot holds n + 1 once the fragment is there. The consumer polls the slot itself, so a
// small message reaches it in one step (the slot's line), not after the producer's
// `head` line and then the slot's: 0.45-0.50 against 0.28-0.30 us per exchange of 8 bytes
// between two processes here. A message of up to kInlineBytes sits in the same line:
// in the line after it, the consumer's read of it waited for a second transfer once
// the stamp showed. The op check needs no communicator id or magic: a segment
// belongs to one link of one communicator.
// The producer only stores to the line: a load of it (a bit field's read-modify-write)
// waits for the line to come back from the consumer, 94 % of the sending time.
struct alignas(64) SlotHeader {
    std::atomic<uint32_t> stamp;
    uint32_t sizeAndFlags;  // the fragment's bytes, its flags in the top 8 bits
    MsgTag tag;      // valid on a first fragment
    uint64_t bytes;  // the message's, valid on a first fragment
    alignas(16) unsigned char inlineData[kInlineBytes];

    void describe(size_t fragBytes, uint32_t flags) { sizeAndFlags = uint32_t(fragBytes) | flags << 24; }
    uint32_t fragBytes() const { return sizeAndFlags & 0xffffff; }
    uint32_t flags() const { return sizeAndFlags >> 24; }
};
static_assert(kSlotPayload < (size_t(1) << 24), "fragment sizes fit their field");
static_assert(sizeof(SlotHeader) == kSlotHeaderBytes, "the slot header is one line, inline data included");

// Single copy: where the sender's data is, so the receiver reads (or reduces) it
// straight from there. The sender's transfer completes when the receiver bumps
// the ring's `acked` counter past `seq`.
struct DirectDescriptor {
    SharedRegion region;
    uint64_t seq;  // this message's number among the ring's direct messages
};

struct alignas(64) Counter {
    std::atomic<uint64_t> value;
    char pad[64 - sizeof(std::atomic<uint64_t>)];
};
static_assert(std::atomic<uint64_t>::is_always_lock_free, "counters must work across processes");

struct Ring {
    Counter head;   // fragments written (each slot's stamp says so first)
    Counter tail;   // fragments consumed
    Counter acked;  // direct messages the consumer has finished reading
    // A producer whose op failed takes its direct messages back (its caller may free
    // the buffers they name as soon as the op returns): the consumer reads none
    // numbered at or below `withdrawn`. `reading` is the message the consumer is
    // reading now (0: none), so the producer can wait out a read already under way.
    Counter withdrawn;
    Counter reading;
    alignas(64) SlotHeader headers[kSlots];
    alignas(64) unsigned char payloads[kPayloadSlots][kSlotPayload];

    SlotHeader* header(uint64_t n) { return &headers[n % kSlots]; }
    // Publishes fragment n: its slot's stamp, then `head` (read for activity stamps).
    void publish(uint64_t n) {
        header(n)->stamp.store(static_cast<uint32_t>(n + 1), std::memory_order_release);
        head.value.store(n + 1, std::memory_order_release);
    }
    // Whether fragment n is in its slot (the slot held fragment n - kSlots before).
    bool arrived(uint64_t n) { return header(n)->stamp.load(std::memory_order_acquire) == static_cast<uint32_t>(n + 1); }
    // The payload of the p-th fragment that carries one (inline ones do not).
    unsigned char* payload(uint64_t p) { return payloads[p % kPayloadSlots]; }
};

// A side's doorbell, used only while that side sleeps: when `asleep` is set, the
// peer bumps `rings` after any change the side may be waiting for (data written,
// slots freed, a direct read acked) and wakes it with a futex. 32-bit, as futexes are.
struct alignas(64) Bell {
    std::atomic<uint32_t> rings;
    std::atomic<uint32_t> asleep;
};
static_assert(std::atomic<uint32_t>::is_always_lock_free, "bells must work across processes");

// One segment per pair of ranks: ring[0] carries low -> high, ring[1] high -> low;
// bell[s] wakes side s (0 = low rank).
struct Segment {
    Ring ring[2];
    Bell bell[2];
};

}  // namespace hostccl::transport::shm
