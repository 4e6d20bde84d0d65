#include "common/env.h"

#include <cassert>
#include <cstdlib>
#include <cstring>

#include "common/log.h"

namespace hostccl::env {

const std::vector<Var>& registry() {
    // Never destroyed: user objects destroyed at exit may still call into the library.
    static const std::vector<Var>& vars = *new std::vector<Var>{
        // Logging.
        {"ASCEND_GLOBAL_LOG_LEVEL", "3", "Log level as in CANN: 0 debug, 1 info, 2 warning, 3 error, 4 off."},
        {"HOSTCCL_LOG_LEVEL", "", "Log level by name (trace, debug, info, warn, error, off); wins over ASCEND_GLOBAL_LOG_LEVEL."},
        {"HCCL_ENTRY_LOG_ENABLE", "0", "1 logs every HCCL API call with its arguments at info level."},
        // Timeouts.
        {"HCCL_CONNECT_TIMEOUT", "120", "Seconds allowed for every connect, accept and the bootstrap exchange."},
        {"HCCL_EXEC_TIMEOUT", "1836", "Seconds any wait inside an operator may take (0 = no limit). Config hcclExecTimeOut wins."},
        {"HOSTCCL_HEARTBEAT_INTERVAL", "1000", "Milliseconds between heartbeats on each health channel (a rank keeps channels to its two ring neighbours in other processes)."},
        {"HOSTCCL_HEARTBEAT_TIMEOUT", "30", "Seconds without a heartbeat after which a peer counts as stopped or cut off (HCCL_E_TIMEOUT naming it); 0 = never."},
        {"HOSTCCL_CONNECT_ALL", "0", "1 connects every pair of ranks when the communicator is created (the eager mode); 0 opens each link when an algorithm first needs it."},
        // Bootstrap and network.
        {"HCCL_IF_IP", "", "IP address this process advertises and the root listens on."},
        {"HCCL_SOCKET_IFNAME", "", "Interface selection: prefixes, ^prefix to exclude, =name exact, ^=name exclude exact."},
        {"HCCL_WHITELIST_DISABLE", "1", "0 admits connections only from the hosts listed in HCCL_WHITELIST_FILE."},
        {"HCCL_WHITELIST_FILE", "", "JSON {\"host_ip\": [\"10.0.0.1\", ...]}: the hosts admitted when HCCL_WHITELIST_DISABLE=0."},
        {"HCCL_IF_BASE_PORT", "", "First port the root-info listener tries (it scans 32 ports from there); unset = any free port."},
        {"HOSTCCL_RANKTABLE_PORT", "16666", "Rendezvous port of a rank table whose rank 0 has neither host_port nor device_port."},
        {"HCCL_BUFFSIZE", "200", "MB; accepted for compatibility (hostccl sizes its own staging). Config hcclBufferSize wins."},
        {"HCCL_DETERMINISTIC", "false", "true/strict; accepted for compatibility: hostccl's reduction order is always fixed by the rank count."},
        {"HCCL_OP_EXPANSION_MODE", "", "AI_CPU, AIV, AIV_ONLY, HOST, HOST_TS, CCU_MS or CCU_SCHED: accepted and validated; operators always expand on host threads here (HcclConfigGetInfo says HOST). Config hcclOpExpansionMode wins."},
        {"HCCL_OP_RETRY_ENABLE", "", "L0:<0|1>, L1:<0|1>, L2:<0|1>: accepted and validated; hostccl does not re-run failed operators (a failure is reported, HostcclCommShrink recovers)."},
        {"HCCL_ALGO", "", "Algorithm family per operator in HCCL syntax (level0:NA;level1:<algo> or <op>=...); config hcclAlgo wins."},
        // Launchers (HostcclCommInitFromEnv and the perf tools without -p).
        {"HOSTCCL_ROOT_ADDR", "", "host:port where rank 0 serves the rendezvous of a launcher-started job."},
        {"HOSTCCL_JOB_SECRET", "", "Shared secret of a launcher-started job (default: the launcher's job id)."},
        {"MASTER_ADDR", "", "torchrun: rendezvous host, used when HOSTCCL_ROOT_ADDR is unset."},
        {"MASTER_PORT", "", "torchrun: rendezvous port, used when HOSTCCL_ROOT_ADDR is unset."},
        {"OMPI_COMM_WORLD_RANK", "", "Open MPI (mpirun): this process's rank."},
        {"OMPI_COMM_WORLD_SIZE", "", "Open MPI (mpirun): the number of ranks."},
        {"OMPI_COMM_WORLD_LOCAL_RANK", "", "Open MPI (mpirun): the rank among this host's ranks."},
        {"OMPI_MCA_ess_base_jobid", "", "Open MPI (mpirun): job id, mixed into the job secret."},
        {"PMI_RANK", "", "MPICH hydra (mpiexec): this process's rank."},
        {"PMI_SIZE", "", "MPICH hydra (mpiexec): the number of ranks."},
        {"MPI_LOCALRANKID", "", "MPICH hydra (mpiexec): the rank among this host's ranks."},
        {"PMI_ID", "", "MPICH hydra (mpiexec): job id, mixed into the job secret."},
        {"SLURM_PROCID", "", "Slurm (srun): this process's rank."},
        {"SLURM_NTASKS", "", "Slurm (srun): the number of ranks."},
        {"SLURM_LOCALID", "", "Slurm (srun): the rank among this host's ranks."},
        {"SLURM_JOB_ID", "", "Slurm (srun): job id, mixed into the job secret."},
        {"SLURM_STEP_ID", "", "Slurm (srun): step id; with SLURM_JOB_ID it gives the step's meeting port when HOSTCCL_ROOT_ADDR is unset."},
        {"SLURM_STEP_NODELIST", "", "Slurm (srun): the step's nodes; the first is the meeting host when HOSTCCL_ROOT_ADDR is unset."},
        {"SLURM_JOB_NODELIST", "", "Slurm: the job's nodes, used when SLURM_STEP_NODELIST is unset."},
        {"SLURM_STEP_RESV_PORTS", "", "Slurm (srun --resv-ports): ports reserved for the step; the first is the meeting port."},
        {"SLURMD_NODENAME", "", "Slurm: this task's node; rank 0 checks it is the step's first node."},
        {"RANK", "", "torchrun: this process's rank."},
        {"WORLD_SIZE", "", "torchrun: the number of ranks."},
        {"LOCAL_RANK", "", "torchrun: the rank among this host's ranks."},
        {"TORCHELASTIC_RUN_ID", "", "torchrun: run id, mixed into the job secret."},
        {"TORCHELASTIC_USE_AGENT_STORE", "", "torchrun: True when its agent serves a store on MASTER_PORT; a program's ranks then meet on MASTER_PORT + 1."},
        // Host runtime shim.
        {"HOSTCCL_DEVICE_COUNT", "8", "Number of logical devices aclrtGetDeviceCount reports."},
        // Topology and transports.
        {"HOSTCCL_BIND_WORKERS", "1", "1: when nobody bound the process (it may run on every core), each rank's stream threads are bound to one core, ranks spread over the cores in rank order (where ranks outnumber cores, each core takes a block of neighbouring ranks). 0: leave them to the scheduler."},
        {"HOSTCCL_HOST_ID", "", "Overrides the host identity to emulate several hosts on one machine; a,b,... gives the rank on device d entry d."},
        {"HOSTCCL_TRANSPORT", "auto", "auto: RDMA between hosts where both have an active verbs device, shared memory between ranks on one host, else TCP. rdma, shm or tcp forces that transport between every pair (init fails where it cannot be set up); any other value fails init."},
        {"HCCL_INTRA_ROCE_ENABLE", "0", "1: ranks on one host use RDMA (RoCE) between them instead of shared memory, as HCCL does."},
        {"HOSTCCL_RDMA_DEVICE", "", "RDMA device to use (e.g. rxe0, mlx5_0); empty = the first with an active port."},
        {"HOSTCCL_RDMA_GID_INDEX", "-1", "GID index to use; -1 = the RoCE v2 GID mapped from this rank's IPv4 address."},
        {"HOSTCCL_RDMA_SLOTS", "8", "Receive slots per RDMA link and direction (the credit window)."},
        {"HOSTCCL_RDMA_SLOT_BYTES", "1048576", "Bytes per RDMA receive slot (a multiple of 16)."},
        {"HOSTCCL_RDMA_RING_BUDGET", "1073741824",
         "Bytes of RDMA rings one rank may register per communicator: with n ranks, rings shrink so n - 1 links fit (floor 256 KiB per link)."},
        {"HOSTCCL_RDMA_ZERO_COPY_BYTES", "65536",
         "Smallest RDMA send written straight from its aclrtMalloc buffer (registered once); 0: always copy."},
        {"HOSTCCL_RDMA_INJECT_QP_ERROR", "-1", "Testing: after this many data writes on each of its RDMA links, this process moves the queue pair to the error state."},
        {"HOSTCCL_FLIGHT_RECORDER_DIR", "", "Directory where each rank writes its flight recorder (last ops, as JSON) on a failure, an abort or SIGUSR1."},
        {"HOSTCCL_FLIGHT_RECORDER_SIZE", "1024", "Ops each communicator's flight recorder keeps; 0 turns it off."},
        {"HOSTCCL_TRACE", "", "File prefix: each communicator writes <prefix>.<comm>.rank<r>.json (Chrome trace) when destroyed."},
        // Live monitoring (docs/monitoring.md).
        {"HOSTCCL_MONITOR", "1", "0 turns live monitoring off: no measurements, no monitor thread, no endpoint (what monitoring's overhead is measured against)."},
        {"HOSTCCL_METRICS_PORT", "", "TCP port of this process's monitoring endpoint (Prometheus /metrics, /status.json, /job.json, the dashboard at /); with several processes per host the next free port of the 64 from there. Unset = no endpoint; 0 = any free port."},
        {"HOSTCCL_METRICS_ADDR", "0.0.0.0", "Address the monitoring endpoint listens on."},
        {"HOSTCCL_METRICS_FILE", "", "File rewritten every HOSTCCL_METRICS_INTERVAL_MS with the metrics in Prometheus text format (node_exporter's textfile collector); %p is replaced by the process id."},
        {"HOSTCCL_METRICS_INTERVAL_MS", "1000", "Milliseconds between the monitor's looks at every communicator (diagnosis, the metrics file)."},
        {"HOSTCCL_DIAGNOSE", "1", "1 logs stragglers, slow links and stuck collectives as the monitor finds them (and when they recover); 0 keeps them to the endpoint."},
        {"HOSTCCL_STRAGGLER_MS", "20", "A rank that others wait for longer than this at the start of a collective, in most of the last 16, is named a straggler."},
        {"HOSTCCL_STUCK_SECONDS", "10", "A collective that moves nothing for this long is reported as stuck, with the peer it waits for."},
        {"HOSTCCL_DIRECT_MIN_BYTES", "", "Unset: the cost model decides when ranks sharing one host read and write each other's buffers directly; N: from N bytes on; -1: never."},
        {"HOSTCCL_COST_MODEL", "", "Cost-model numbers that replace the init probe's: shm=<alpha>us/<GB/s> tcp=... rdma=... reduce=<GB/s> copy=<GB/s> nic=<GB/s> leaf=<hosts>/<oversubscription>."},
        {"HOSTCCL_COST_PROBE", "1", "0 skips the init probe (configured or default cost-model numbers only)."},
        {"HOSTCCL_ALGO_EXPLAIN", "0", "1: rank 0 prints the selector's score table the first time each collective meets each power-of-two size."},
        {"HOSTCCL_TCP_SOCKETS", "2", "Sockets per TCP link (1-8): messages of 1 MiB and more are striped over them."},
        {"HOSTCCL_TCP_CHUNK_BYTES", "262144", "Bytes a TCP receive reduces at a time when it reduces on arrival."},
        {"HOSTCCL_TCP_CONGESTION", "auto", "Congestion control of TCP links' sockets: auto (the kernel's, except BBR, which becomes CUBIC), system (always the kernel's) or an algorithm's name."},
    };
    return vars;
}

static const Var* find(const char* name) {
    for (const auto& v : registry()) {
        if (std::strcmp(v.name, name) == 0) return &v;
    }
    return nullptr;
}

std::optional<std::string> raw(const char* name) {
    assert(find(name) != nullptr && "environment variable missing from the registry");
    const char* v = std::getenv(name);
    if (v == nullptr || *v == '\0') return std::nullopt;
    return std::string(v);
}

std::string getString(const char* name) {
    auto v = raw(name);
    if (v) return *v;
    const Var* var = find(name);
    return var ? var->defaultValue : "";
}

static std::optional<int64_t> parseInt(const std::string& s) {
    if (s.empty()) return std::nullopt;
    char* end = nullptr;
    errno = 0;
    long long x = std::strtoll(s.c_str(), &end, 10);
    if (errno != 0 || end == s.c_str() || *end != '\0') return std::nullopt;
    return x;
}

int64_t getInt(const char* name, int64_t min, int64_t max) {
    const Var* var = find(name);
    int64_t fallback = var ? parseInt(var->defaultValue).value_or(0) : 0;
    auto v = raw(name);
    if (!v) return fallback;
    auto x = parseInt(*v);
    if (!x || *x < min || *x > max) {
        log::warn("environment: {}='{}' is not an integer in [{}, {}]; using {}", name, *v, min, max, fallback);
        return fallback;
    }
    return *x;
}

bool getBool(const char* name) {
    std::string v = getString(name);
    for (auto& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (v == "1" || v == "true" || v == "on" || v == "yes") return true;
    if (v == "0" || v == "false" || v == "off" || v == "no" || v.empty()) return false;
    log::warn("environment: {}='{}' is not a boolean; treating it as false", name, v);
    return false;
}

std::vector<std::string> setVariables() {
    std::vector<std::string> out;
    for (const auto& v : registry()) {
        const char* value = std::getenv(v.name);
        if (value != nullptr && *value != '\0') out.push_back(std::string(v.name) + "=" + value);
    }
    return out;
}

}  // namespace hostccl::env
