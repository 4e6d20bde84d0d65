// The core's communicator, what an HcclComm handle points to (the C++ API's public
// hostccl::Communicator wraps such a handle): this rank's place among `size` ranks,
// its links to the peers (opened on first use, core/links/link_table.h), health
// channels to its ring neighbours, settings, the collective sequence number and the
// sticky failure (the first error, which every later op reports at once).
// Ops run on stream threads through execute(); they are serialised per
// communicator, and different communicators run concurrently.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "algorithms/coll_args.h"
#include "algorithms/context.h"
#include "algorithms/direct/process_board.h"
#include "common/comm_failure.h"
#include "common/deadline.h"
#include "common/error.h"
#include "common/siphash.h"
#include "core/bootstrap/peer_info.h"
#include "core/comm_memory.h"
#include "core/comm_settings.h"
#include "core/flight_recorder.h"
#include "core/health/health_session.h"
#include "core/links/link_table.h"
#include "core/metrics/comm_metrics.h"
#include "core/metrics/snapshot.h"
#include "core/net/handshake.h"
#include "common/trace/trace.h"
#include "transports/link.h"

namespace hostccl {

struct CommIdentity {
    uint64_t id = 0;  // the same on every member; stamped on every message
    Secret secret;    // proves membership on every connection
    uint32_t rank = 0;
    uint32_t size = 0;
};

class Comm {
public:
    // Opens the links (all of them with HOSTCCL_CONNECT_ALL=1, else on first use)
    // and the health channels (bounded by HCCL_CONNECT_TIMEOUT), and registers the
    // communicator so its handle is valid.
    static HcclResult create(const CommIdentity& identity, std::vector<PeerInfo> table, int32_t device,
                             CommSettings options, Comm** out);
    ~Comm();

    HcclResult execute(const CollArgs& args);

    // The flight recorder's id for an op being enqueued (0 when recording is off).
    uint64_t noteQueued(const CollArgs& args) { return recorder_ ? recorder_->queued(args) : 0; }
    // Writes the flight recorder (HOSTCCL_FLIGHT_RECORDER_DIR); once per failure
    // unless `always`. Returns the path ("" when nothing was written).
    std::string dumpFlightRecord(const std::string& reason, bool always = false);
    // In-flight accounting: enqueue() takes a reference that the stream task returns.
    void opEnqueued() { opsEnqueued_.fetch_add(1); }
    void opFinished();
    // Waits for in-flight ops (bounded; at once when the communicator has failed),
    // then closes the links.
    void quiesce();
    // Fails the op in flight and every queued one (they end within one wait slice)
    // and tells the peers. Any thread may call it; destroying follows.
    void abort(const std::string& why);
    // The n-th shrink of this communicator (every survivor counts the same).
    uint64_t nextShrinkGeneration() { return ++shrinks_; }

    uint32_t rank() const { return identity_.rank; }
    uint32_t size() const { return identity_.size; }
    uint64_t id() const { return identity_.id; }
    const Secret& secret() const { return identity_.secret; }
    const std::string& name() const { return options_.name; }
    int32_t device() const { return device_; }
    const std::vector<PeerInfo>& peers() const { return peers_; }
    // What algorithms see. Fixed once built except the sequence number, which only
    // the op in flight reads: describing the communicator reads the rest.
    const CommView& view() const { return view_; }
    // More of this communicator's ranks run on this machine's cores than it has (hosts
    // emulated by network namespaces share one machine): a thread that waits for an op
    // runs it itself (runtime::Stream::runHere) rather than handing it to the stream's,
    // whatever its size.
    bool machineCrowded() const { return machineCrowded_; }
    // The core the stream threads running this rank's ops keep to, or -1 (see
    // core/topology/worker_affinity.h).
    int workerCpu() const { return workerCpu_; }
    const CommSettings& options() const { return options_; }
    // The exec timeout of the ops that start from now on (HostcclCommSetExecTimeout);
    // 0 = no limit. Starts as options().execTimeoutSec.
    void setExecTimeout(int64_t seconds) { execTimeoutSec_.store(seconds); }
    int64_t execTimeoutSec() const { return execTimeoutSec_.load(); }
    // Zero-copy ranges and symmetric windows (HcclCommSetMemoryRange, HcclCommSymWin*).
    CommMemory& memory() { return memory_; }
    HcclResult asyncError() const { return failure_.code(); }
    const CommFailure& failure() const { return failure_; }
    // HCCL_SUCCESS, or the failure's code after logging why `op` cannot run.
    HcclResult refuseIfFailed(const char* op) const;
    ErrorSite site(const char* op = nullptr) const;
    // What live monitoring shows of this communicator now (core/metrics/comm_snapshot.cc).
    monitor::CommSnapshot snapshot() const;

private:
    Comm(const CommIdentity& identity, std::vector<PeerInfo> table, int32_t device, CommSettings options);
    HcclResult connect();
    HcclResult connectHealth();
    // The health channel to `peer`: the higher rank dials.
    HcclResult dialHealth(uint32_t peer, Deadline deadline);
    HcclResult acceptHealth(uint32_t peer, Deadline deadline);
    net::Fd claimAuthenticated(uint32_t peer, net::Purpose purpose, Deadline deadline, const ErrorSite& s);
    std::string whoIs(uint32_t peer) const;
    void onOpFailed(HcclResult rc, const ErrorSite& s);
    void buildView();
    HcclResult buildCostModel();
    uint32_t ranksOnThisMachine() const;
    uint32_t indexOnThisMachine() const;  // this rank's place among them, by rank
    bool machineIsOneHost() const;        // no other host emulated on this machine
    static uint32_t usableCores();
    void logInit() const;

    const CommIdentity identity_;
    const std::shared_ptr<const std::vector<PeerInfo>> table_;  // shared with health notices in flight
    const std::vector<PeerInfo>& peers_;
    const int32_t device_;
    CommSettings options_;
    std::unique_ptr<LinkTable> links_;
    std::shared_ptr<ProcessBoard> board_;  // every rank a thread of this process: the direct algorithms' meeting place
    std::vector<char> scratch_;
    CommMemory memory_;  // before view_, which points at its windows
    CommView view_;  // guarded by execMutex_
    bool machineCrowded_ = false;  // fixed by buildView
    int workerCpu_ = -1;           // likewise
    std::unique_ptr<Tracer> tracer_;
    std::unique_ptr<FlightRecorder> recorder_;
    monitor::CommMetrics metrics_;
    const bool monitored_;  // HOSTCCL_MONITOR
    std::atomic<bool> failureDumped_{false};
    std::mutex execMutex_;
    std::atomic<int64_t> execTimeoutSec_;  // read as each op starts: settable while ops run
    uint64_t collSeq_ = 0;
    CommFailure failure_;  // before health_: the session raises on it
    mutable std::atomic<bool> refusalLogged_{false};  // the first call refused after failure_ is logged as an error
    std::unique_ptr<health::HealthSession> health_;
    std::atomic<uint64_t> shrinks_{0};
    // Ops in flight = enqueued - finished. Two counters on their own cache lines, the
    // callers' and the stream threads': one shared counter crossed cores twice per op.
    alignas(64) std::atomic<uint64_t> opsEnqueued_{0};
    alignas(64) std::atomic<uint64_t> opsFinished_{0};
    std::atomic<int> idleWaiters_{0};  // threads in quiesce(): only they need idle_'s notice
    // How long destroying waited for the ops (quiesce): the destructor names the part
    // that made a slow destroy slow.
    double quiesceMs_ = 0;
    uint64_t inflight() const {
        const uint64_t finished = opsFinished_.load();  // first: every finished op was enqueued before
        return opsEnqueued_.load() - finished;
    }
    std::mutex idleMutex_;
    std::condition_variable idle_;
};

// Every live communicator writes its flight recorder (SIGUSR1).
void dumpAllFlightRecords(const std::string& reason);
// Calls `fn` on every live communicator; none is destroyed meanwhile (fn must not block).
void forEachLiveComm(const std::function<void(const Comm&)>& fn);

// The table of live communicators: handle validation and lookup by name.
bool registerComm(Comm* c);
bool commAlive(const void* handle);
Comm* unregisterComm(const void* handle);  // nullptr when not live
// When several live communicators share a name (HcclCommInitAll), the one on
// `preferDevice` wins.
Comm* findCommByName(const std::string& name, int32_t preferDevice);

}  // namespace hostccl
