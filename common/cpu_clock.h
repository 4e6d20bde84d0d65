// CPU-time clocks for probes that must tell work from waiting: a thread's CPU time
// does not grow while ranks sharing its core run, and the process's counts every
// thread (a TCP flow's kernel work runs in its syscalls, on the stream threads).
#pragma once

#include <ctime>

namespace hostccl {

inline double cpuSeconds(clockid_t clock) {
    timespec ts{};
    clock_gettime(clock, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

// CPU seconds of the calling thread.
inline double threadCpuSeconds() { return cpuSeconds(CLOCK_THREAD_CPUTIME_ID); }
// CPU seconds of this process, every thread.
inline double processCpuSeconds() { return cpuSeconds(CLOCK_PROCESS_CPUTIME_ID); }

}  // namespace hostccl
