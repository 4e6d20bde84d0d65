// One rank of a job in which one rank (the victim) fails on purpose while the others
// are inside a collective. Started by peer_failure_test:
//   fault_worker <root-info file> <rank> <nranks> <kill|exit|stop|shrink|mismatch|create> <victim> <out dir>
// The victim dies (SIGKILL, _exit, SIGSTOP; shrink = SIGKILL) a few milliseconds into
// its 20th allreduce, or (mismatch) calls that allreduce with half the count. Every survivor records when and how its op failed, what
// HcclGetCommAsyncError says, how fast the next call fails and how long destroying
// takes; with "shrink" it then builds the survivors' communicator and checks an
// allreduce on it. Results go to <out dir>/rank<r>.result, the log to rank<r>.log.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "hccl/hccl.h"
#include "hostccl/hostccl.h"

namespace {

using Clock = std::chrono::steady_clock;
constexpr int kVictimStep = 20;
// 16 MiB of int32 (HOSTCCL_FAULT_TEST_COUNT in the sanitizer builds): an op lasts
// long enough to die inside it.
const uint64_t kCount = std::getenv("HOSTCCL_FAULT_TEST_COUNT") ? std::strtoull(std::getenv("HOSTCCL_FAULT_TEST_COUNT"), nullptr, 10) : 1 << 22;
// How long a survivor waits after its op failed before destroying the communicator
// (HOSTCCL_FAULT_TEST_LINGER_MS; 0 by default). At 256 processes on 2 cores the
// survivors that hear first would otherwise unmap and exit on the CPU the notice
// still needs to reach the last ranks: the test measures detection both ways.
const long kLingerMs = std::getenv("HOSTCCL_FAULT_TEST_LINGER_MS") ? std::atol(std::getenv("HOSTCCL_FAULT_TEST_LINGER_MS")) : 0;

int64_t wallNs() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}
double msSince(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

[[noreturn]] void die(const char* what) {
    std::fprintf(stderr, "fault_worker: %s\n", what);
    std::exit(2);
}

HcclResult tryJoin(const std::string& file, uint32_t rank, uint32_t n, HcclComm* comm) {
    HcclRootInfo info{};
    if (rank == 0) {
        if (HcclGetRootInfo(&info) != HCCL_SUCCESS) die("HcclGetRootInfo");
        std::ofstream(file + ".tmp", std::ios::binary).write(info.internal, HCCL_ROOT_INFO_BYTES);
        std::rename((file + ".tmp").c_str(), file.c_str());
    } else {
        for (int i = 0;; ++i) {
            std::ifstream in(file, std::ios::binary);
            if (in.read(info.internal, HCCL_ROOT_INFO_BYTES)) break;
            if (i > 3000) die("root info never appeared");
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
    }
    return HcclCommInitRootInfo(n, &info, rank, comm);
}

HcclComm join(const std::string& file, uint32_t rank, uint32_t n) {
    HcclComm comm = nullptr;
    if (tryJoin(file, rank, n, &comm) != HCCL_SUCCESS) die("HcclCommInitRootInfo");
    return comm;
}

// "create": the victim cannot set up its links (it insists on RDMA, which this
// machine lacks), so its creation fails after the rendezvous. "join": the victim
// cannot even register (its whitelist file does not exist). Every rank records how
// its own creation ended and when.
int runCreationFailure(const std::string& how, const std::string& file, uint32_t rank, uint32_t n, uint32_t victim,
                       const std::string& out) {
    if (rank == victim && how == "create") setenv("HOSTCCL_TRANSPORT", "rdma", 1);
    if (rank == victim && how == "join") {
        setenv("HCCL_WHITELIST_DISABLE", "0", 1);
        setenv("HCCL_WHITELIST_FILE", (out + "/no-such-whitelist").c_str(), 1);
    }
    HcclComm comm = nullptr;
    const HcclResult rc = tryJoin(file, rank, n, &comm);
    const int64_t endedAt = wallNs();
    if (comm != nullptr) HcclCommDestroy(comm);
    std::ofstream(out + "/rank" + std::to_string(rank) + ".result") << "code " << rc << "\nended_at_ns " << endedAt
                                                                    << "\n";
    return 0;
}

// The victim enters the op, lets it get going, and fails.
[[noreturn]] void failInsideOp(const std::string& how, const std::string& out) {
    std::this_thread::sleep_for(std::chrono::milliseconds(3));
    std::ofstream(out + "/victim.time") << wallNs() << "\n";
    if (how == "exit") _exit(3);
    if (how == "stop") {
        raise(SIGSTOP);
        _exit(0);  // continued: the test is over
    }
    raise(SIGKILL);
    _exit(4);
}

int runSurvivorChecks(HcclComm comm, aclrtStream stream, std::vector<int32_t>& buf, uint32_t rank, uint32_t n,
                      uint32_t victim, const std::string& scenario, const std::string& out) {
    int rc = 0;
    int steps = 0;
    for (; steps < 100000 && rc == 0; ++steps) {
        const bool odd = scenario == "mismatch" && rank == victim && steps == kVictimStep;
        rc = HcclAllReduce(buf.data(), buf.data(), odd ? kCount / 2 : kCount, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_MAX,
                           comm, stream);
        if (rc == 0) rc = aclrtSynchronizeStream(stream);
    }
    const int64_t failedAt = wallNs();
    HcclResult async = HCCL_SUCCESS;
    HcclGetCommAsyncError(comm, &async);
    auto t = Clock::now();
    int again = HcclAllReduce(buf.data(), buf.data(), 1, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_MAX, comm, stream);
    if (again == 0) again = aclrtSynchronizeStream(stream);
    const double failFastMs = msSince(t);
    double shrinkMs = -1;
    int shrunkOk = -1;
    if (scenario == "shrink") {
        HcclComm smaller = nullptr;
        t = Clock::now();
        shrunkOk = HostcclCommShrink(comm, &victim, 1, nullptr, &smaller) == HCCL_SUCCESS ? 1 : 0;
        shrinkMs = msSince(t);
        if (shrunkOk == 1) {
            int64_t v = int64_t(rank) + 1, want = int64_t(n) * (n + 1) / 2 - (victim + 1);
            int r = HcclAllReduce(&v, &v, 1, HCCL_DATA_TYPE_INT64, HCCL_REDUCE_SUM, smaller, stream);
            if (r == 0) r = aclrtSynchronizeStream(stream);
            shrunkOk = r == 0 && v == want ? 1 : 0;
            HcclCommDestroy(smaller);
        }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(kLingerMs));
    t = Clock::now();
    int destroyed = HcclCommDestroy(comm);
    const double destroyMs = msSince(t);
    std::ofstream(out + "/rank" + std::to_string(rank) + ".result")
        << "code " << rc << "\nasync " << async << "\nagain " << again << "\nfailfast_ms " << failFastMs
        << "\nfailed_at_ns " << failedAt << "\nsteps " << steps << "\ndestroy " << destroyed << "\ndestroy_ms "
        << destroyMs << "\nshrink_ok " << shrunkOk << "\nshrink_ms " << shrinkMs << "\n";
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 7) die("usage: fault_worker <root-info file> <rank> <nranks> <kill|exit|stop|shrink|mismatch|create> <victim> <out dir>");
    const std::string file = argv[1], scenario = argv[4], out = argv[6];
    const uint32_t rank = uint32_t(std::stoul(argv[2])), n = uint32_t(std::stoul(argv[3]));
    const uint32_t victim = uint32_t(std::stoul(argv[5]));
    if (!std::freopen((out + "/rank" + std::to_string(rank) + ".log").c_str(), "w", stderr)) die("log file");
    if (scenario == "create" || scenario == "join") return runCreationFailure(scenario, file, rank, n, victim, out);
    HcclComm comm = join(file, rank, n);
    aclrtStream stream = nullptr;
    aclrtCreateStream(&stream);
    std::vector<int32_t> buf(kCount, 1);
    if (rank != victim || scenario == "mismatch") return runSurvivorChecks(comm, stream, buf, rank, n, victim, scenario, out);
    for (int step = 0;; ++step) {
        if (HcclAllReduce(buf.data(), buf.data(), kCount, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_MAX, comm, stream) != 0)
            die("victim's allreduce failed before its time");
        if (step == kVictimStep) failInsideOp(scenario, out);
        if (aclrtSynchronizeStream(stream) != 0) die("victim's allreduce failed before its time");
    }
}
