// Sleeping on shared-memory doorbells. A link without a socket (shm) exposes a
// 32-bit word its peer bumps, only while this side sleeps; a waiter blocks on the
// words of every link it waits for at once (futex_waitv), so waits over several
// peers (rings, all-pairs exchanges) sleep and wake like waits over one.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace hostccl::transport {

struct SleepWord {
    std::atomic<uint32_t>* word = nullptr;
    uint32_t value = 0;  // sleep only while *word still holds this
};

// Blocks until any word changes, a peer wakes it, or `timeoutUs` passes. The words
// live in memory shared between processes (not FUTEX_PRIVATE).
void sleepOnWords(const SleepWord* words, size_t n, int timeoutUs);

// Wakes every sleeper on `word`.
void wakeWord(std::atomic<uint32_t>* word);

}  // namespace hostccl::transport
