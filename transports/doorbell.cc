#include "transports/doorbell.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <ctime>
#include <vector>

namespace hostccl::transport {

namespace {
long futex(std::atomic<uint32_t>* word, int op, uint32_t value, const timespec* timeout) {
    return syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), op, value, timeout, nullptr, 0);
}

timespec relative(int timeoutUs) { return timespec{timeoutUs / 1000000, static_cast<long>(timeoutUs % 1000000) * 1000}; }

#ifdef SYS_futex_waitv
std::atomic<bool> waitvMissing{false};  // kernels before 5.16

// false when the kernel has no futex_waitv.
bool waitAny(const SleepWord* words, size_t n, int timeoutUs) {
    if (waitvMissing.load(std::memory_order_relaxed)) return false;
    thread_local std::vector<futex_waitv> waiters;
    waiters.assign(n < FUTEX_WAITV_MAX ? n : FUTEX_WAITV_MAX, futex_waitv{});
    for (size_t i = 0; i < waiters.size(); ++i) {
        waiters[i].val = words[i].value;
        waiters[i].uaddr = reinterpret_cast<uint64_t>(words[i].word);
        waiters[i].flags = FUTEX_32;
    }
    timespec at;  // futex_waitv takes an absolute time
    clock_gettime(CLOCK_MONOTONIC, &at);
    timespec d = relative(timeoutUs);
    at.tv_sec += d.tv_sec;
    at.tv_nsec += d.tv_nsec;
    if (at.tv_nsec >= 1000000000) {
        at.tv_sec += 1;
        at.tv_nsec -= 1000000000;
    }
    if (syscall(SYS_futex_waitv, waiters.data(), waiters.size(), 0, &at, CLOCK_MONOTONIC) < 0 && errno == ENOSYS) {
        waitvMissing.store(true, std::memory_order_relaxed);
        return false;
    }
    return true;
}
#else
bool waitAny(const SleepWord*, size_t, int) { return false; }
#endif
}  // namespace

void sleepOnWords(const SleepWord* words, size_t n, int timeoutUs) {
    if (n == 0) return;
    if (n > 1 && waitAny(words, n, timeoutUs)) return;
    // One word, or no futex_waitv: wait on the first word, briefly when there are
    // others, so their peers are heard soon.
    timespec ts = relative(n == 1 ? timeoutUs : (timeoutUs < 50 ? timeoutUs : 50));
    futex(words[0].word, FUTEX_WAIT, words[0].value, &ts);
}

void wakeWord(std::atomic<uint32_t>* word) { futex(word, FUTEX_WAKE, INT32_MAX, nullptr); }

}  // namespace hostccl::transport
