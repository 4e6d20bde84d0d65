#include "core/topology/worker_affinity.h"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <map>
#include <mutex>

#include "common/env.h"
#include "common/fast_tls.h"
#include "common/log.h"

namespace hostccl {

namespace {
bool bindingWanted() { return env::getBool("HOSTCCL_BIND_WORKERS"); }

// The core (counted among the allowed ones) for `place` on `cores` cores.
uint32_t coreIndexFor(const MachinePlace& place, uint32_t cores) {
    // One host's ranks outnumbering its cores: core c holds a block of neighbouring ranks,
    // from rank c * ranks / cores. Otherwise rank order, round robin.
    const bool blocks = place.oneHost && place.ranks > cores && place.index < place.ranks;
    return blocks ? uint32_t(uint64_t(place.index) * cores / place.ranks) : place.index % cores;
}
}  // namespace

int workerCpuFor(const MachinePlace& place) {
    if (!bindingWanted()) return -1;
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0) return -1;
    const long online = sysconf(_SC_NPROCESSORS_ONLN);
    const int allowed = CPU_COUNT(&set);
    if (online <= 1 || allowed != online) return -1;
    int nth = static_cast<int>(coreIndexFor(place, uint32_t(allowed)));
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
        if (CPU_ISSET(cpu, &set) && nth-- == 0) return cpu;
    return -1;
}

int claimWorkerCpu(int32_t device, const MachinePlace& place) {
    static std::mutex mutex;
    static std::map<int32_t, int>* decided = new std::map<int32_t, int>;  // streams may run ops during exit
    std::lock_guard<std::mutex> lock(mutex);
    auto it = decided->find(device);
    if (it != decided->end()) return it->second;
    if (place.ranks < 2 || !bindingWanted()) return -1;  // nothing decided: a later one may
    const int cpu = workerCpuFor(place);
    decided->emplace(device, cpu);
    return cpu;
}

namespace {
// The calling thread's binding: the CPU it was last bound to (-1: none) and its own
// mask from before the first binding, to go back to.
struct ThreadBinding {
    int boundTo = -1;
    bool saved = false;
    cpu_set_t before;
};
HOSTCCL_FAST_TLS thread_local ThreadBinding tBinding;
}  // namespace

void keepThisThreadOn(int cpu) {
    ThreadBinding& b = tBinding;
    if (cpu < 0 || cpu == b.boundTo) return;
    if (!b.saved) b.saved = pthread_getaffinity_np(pthread_self(), sizeof b.before, &b.before) == 0;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    const int rc = pthread_setaffinity_np(pthread_self(), sizeof set, &set);
    if (rc != 0) log::debug("stream thread: cannot bind to CPU {} (error {}); left unbound", cpu, rc);
    b.boundTo = cpu;  // one attempt per thread and CPU
}

void releaseThisThread() {
    ThreadBinding& b = tBinding;
    if (b.boundTo < 0) return;
    b.boundTo = -1;
    if (b.saved) pthread_setaffinity_np(pthread_self(), sizeof b.before, &b.before);
}

}  // namespace hostccl
