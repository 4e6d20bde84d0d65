#include "core/comm.h"

#include <sched.h>

#include <algorithm>
#include <array>
#include <condition_variable>
#include <set>
#include <thread>

#include "algorithms/context.h"
#include "algorithms/cost_model/probe.h"
#include "algorithms/selector.h"
#include "common/datatype.h"
#include "common/env.h"
#include "common/fast_tls.h"
#include "common/wall_clock.h"
#include "core/metrics/monitor_hooks.h"
#include "core/net/acceptor.h"
#include "core/net/handshake.h"
#include "core/link_factory.h"
#include "core/profiling.h"
#include "core/topology/worker_affinity.h"

namespace hostccl {

namespace {
constexpr const char* kLibraryVersion = "0.1.0";
constexpr uint32_t kDirectMaxRanks = 64;
}  // namespace

Comm::Comm(const CommIdentity& identity, std::vector<PeerInfo> table, int32_t device,
                           CommSettings options)
    : identity_(identity),
      table_(std::make_shared<const std::vector<PeerInfo>>(std::move(table))),
      peers_(*table_),
      device_(device),
      options_(std::move(options)),
      recorder_(FlightRecorder::fromEnv()),
      metrics_(uint64_t(env::getInt("HOSTCCL_STRAGGLER_MS", 0, 3600 * 1000)) * 1000),
      monitored_(monitor::enabled()) {
    execTimeoutSec_.store(options_.execTimeoutSec);
    installFlightRecorderSignal();
}

namespace {
// Destroying takes milliseconds; beyond this the log says which part waited.
constexpr double kSlowDestroyMs = 250;
double msBetween(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
}
}  // namespace

Comm::~Comm() {
    const auto began = std::chrono::steady_clock::now();
    if (health_) health_->close();  // a goodbye first: our closing channels are not a death
    const auto healthClosed = std::chrono::steady_clock::now();
    links_.reset();  // before the peer table it points at
    if (tracer_) tracer_->flush();
    profiling::detach(this);
    forgetWindowsOf(this);
    const auto ended = std::chrono::steady_clock::now();
    const double total = quiesceMs_ + msBetween(began, ended);
    if (total >= kSlowDestroyMs)
        log::warn("{}: destroying took {:.0f} ms: {:.0f} ms for the ops in flight, {:.0f} ms closing the health "
                  "channels (notices this rank passes on), {:.0f} ms closing the links and the rest",
                  describe(site("destroy")), total, quiesceMs_, msBetween(began, healthClosed),
                  msBetween(healthClosed, ended));
}

ErrorSite Comm::site(const char* op) const {
    ErrorSite s;
    s.comm = options_.name;
    s.rank = identity_.rank;
    s.op = op;
    return s;
}

HcclResult Comm::create(const CommIdentity& identity, std::vector<PeerInfo> table, int32_t device,
                                CommSettings options, Comm** out) {
    std::unique_ptr<Comm> c(new Comm(identity, std::move(table), device, std::move(options)));
    Comm* self = c.get();
    c->links_ = std::make_unique<LinkTable>(LinkTable::Identity{c->id(), c->secret(), c->rank(), c->name()},
                                            c->peers_, [self](uint32_t p) { return self->whoIs(p); }, &c->failure_);
    c->links_->open();
    c->failure_.setWaker([self] {  // a waiter asleep on a doorbell wakes to see the failure
        self->links_->forEach([](transport::Link& l) { l.wakeWaiter(); });
        self->links_->wake();
    });
    c->health_ = std::make_unique<health::HealthSession>(
        health::Membership{c->name(), c->id(), c->secret(), c->rank(), c->table_}, &c->failure_);
    c->health_->start();  // from here on a failure reaches every rank
    if (HcclResult rc = c->connect(); rc != HCCL_SUCCESS) {
        // The others would otherwise wait for this rank until HCCL_CONNECT_TIMEOUT.
        c->failure_.raise(rc, c->rank(),
                          fmt::format("{} could not create the communicator: {}", c->whoIs(c->rank()),
                                      lastFailureReason()));
        c->health_->announceFailure();
        return rc;
    }
    c->logInit();
    registerComm(c.get());
    *out = c.release();
    return HCCL_SUCCESS;
}

// Health channels, the eager links if asked for, the view and the cost model (whose
// probe is the first traffic on the links).
HcclResult Comm::connect() {
    HOSTCCL_CHECK(connectHealth());
    if (env::getInt("HOSTCCL_CONNECT_ALL", 0, 1) == 1) HOSTCCL_CHECK(links_->connectAll(connectDeadline()));
    buildView();
    return buildCostModel();
}

// Health channels go to the ring neighbours (rank - 1 and rank + 1) that live in
// another process: ranks of one process share their fate, so watching them would
// tell nothing. Each rank is thus watched by at most two others whatever the size.
// The higher rank of a pair dials; dialling lower neighbours first, then accepting
// from higher ones, cannot deadlock (every rank's sequence follows one global order
// of the pairs).
HcclResult Comm::connectHealth() {
    if (size() < 2) return HCCL_SUCCESS;
    std::set<uint32_t> watch;
    for (uint32_t p : {(rank() + size() - 1) % size(), (rank() + 1) % size()})
        if (p != rank() && !sameProcess(peers_[p], peers_[rank()]))
            watch.insert(p);
    Deadline deadline = connectDeadline();
    for (uint32_t p : watch)
        if (p < rank()) HOSTCCL_CHECK(dialHealth(p, deadline));
    for (uint32_t p : watch)
        if (p > rank()) HOSTCCL_CHECK(acceptHealth(p, deadline));
    return HCCL_SUCCESS;
}

std::string Comm::whoIs(uint32_t peer) const { return hostccl::whoIs(peers_[peer]); }

HcclResult Comm::dialHealth(uint32_t peer, Deadline deadline) {
    ErrorSite s = site("init");
    s.peer = peer;
    const PeerInfo& info = peers_[peer];
    std::string err;
    const net::Hello hello = net::makeHello(net::Purpose::Health, id(), rank(), peer);
    net::Fd fd;
    {
        // Another rank's failure to create (its notice) ends this dial, whose peer may be gone.
        net::CancelScope failed(nullptr, std::chrono::milliseconds(0), failure_.failedFlag());
        fd = net::dialProven(net::Endpoint{info.ip, info.port}, secret(), hello, deadline, &err);
    }
    if (!fd.valid() && failure_.failed()) return fail(failure_.code(), s, "{}", failure_.record().text);
    if (!fd.valid())
        return fail(HCCL_E_TCP_CONNECT, s, "health channel to {}:{}: {} (host {})", info.ip, info.port, err, info.hostId);
    health_->addPeer(peer, std::move(fd), whoIs(peer));
    return HCCL_SUCCESS;
}

HcclResult Comm::acceptHealth(uint32_t peer, Deadline deadline) {
    ErrorSite s = site("init");
    s.peer = peer;
    net::Fd fd = claimAuthenticated(peer, net::Purpose::Health, deadline, s);
    if (!fd.valid() && failure_.failed()) return fail(failure_.code(), s, "{}", failure_.record().text);
    if (!fd.valid())
        return fail(HCCL_E_TIMEOUT, s, "peer's health channel never connected within HCCL_CONNECT_TIMEOUT (host {})",
                    peers_[peer].hostId);
    health_->addPeer(peer, std::move(fd), whoIs(peer));
    return HCCL_SUCCESS;
}

// The next connection that claims to be `peer` for `purpose` and proves the secret;
// invalid when the deadline passes first.
net::Fd Comm::claimAuthenticated(uint32_t peer, net::Purpose purpose, Deadline deadline, const ErrorSite& s) {
    for (;;) {
        net::Hello hello{};
        // In slices, so that another rank's failure to create the communicator ends the wait.
        Deadline slice = Deadline::after(std::chrono::milliseconds(100));
        if (deadline.at() < slice.at()) slice = deadline;
        net::Fd fd = net::Acceptor::instance().claim(id(), rank(), peer, purpose, slice, &hello);
        if (!fd.valid() && !deadline.expired() && !failure_.failed()) continue;
        if (!fd.valid()) return fd;
        std::string err;
        Deadline step = Deadline::after(std::chrono::milliseconds(3000));
        if (net::serverHandshake(fd.get(), secret(), hello, step, &err)) return fd;
        log::warn("{}: dropped a connection claiming to be rank {} from {}: {}", describe(s), peer,
                  net::peerIp(fd.get()), err);
    }
}

// Once per process: every registered variable the user set, so a log shows the
// configuration a job really ran with.
static void logEnvironmentOnce() {
    static std::once_flag once;
    std::call_once(once, [] {
        for (const std::string& v : env::setVariables()) log::info("environment: {}", v);
    });
}

void Comm::logInit() const {
    logEnvironmentOnce();
    std::array<int, kLinkClasses> count{};
    links_->forEach([&](transport::Link& l) { count[size_t(l.linkClass())]++; });
    std::string links;
    for (size_t c = 0; c < kLinkClasses; ++c) links += fmt::format(" {} x{}", linkClassName(LinkClass(c)), count[c]);
    log::info("hostccl {} comm {} rank {}/{} device {} host {} links{} ({}) "
              "health channels x{} connect-timeout {}s exec-timeout {}s expansion host{}",
              kLibraryVersion, name(), rank(), size(), device_, peers_[rank()].hostId, links,
              env::getInt("HOSTCCL_CONNECT_ALL", 0, 1) == 1 ? "every pair connected: HOSTCCL_CONNECT_ALL=1"
                                                            : "connected so far; the rest open on first use",
              health_->channelCount(),
              env::getInt("HCCL_CONNECT_TIMEOUT", 1, 7200), execTimeoutSec(),
              options_.expansionAsked.empty() ? "" : fmt::format(" ({} asked: every mode runs on host threads here)",
                                                                 options_.expansionAsked));
}

HcclResult Comm::execute(const CollArgs& args) {
    std::lock_guard<std::mutex> lock(execMutex_);
    HOSTCCL_CHECK(refuseIfFailed(collName(args.type)));
    view_.seq = isPointToPoint(args.type) ? 0 : ++collSeq_;
    health_->setSeq(view_.seq);
    const Deadline::Clock::time_point began = Deadline::Clock::now();  // for the deadline, recorder and metrics
    const int64_t startUs = wallUsAt(began);
    if (monitored_) metrics_.opStarted(args.type, view_.seq, startUs);
    if (recorder_) recorder_->started(args.flightId, view_.seq, startUs);
    // HOSTCCL_TRACE's tracer, else a running profiling session's (aclprofStart).
    const std::shared_ptr<Tracer> profiled = tracer_ ? nullptr : profiling::tracerFor(this);
    Tracer* tracer = tracer_ ? tracer_.get() : profiled.get();
    view_.tracer = tracer;
    Context ctx(view_, args, Deadline::afterSecondsFrom(began, execTimeoutSec()), &failure_);
    if (view_.board != nullptr && view_.seq != 0) view_.board->announce(rank(), ctx.opTag());
    const Algorithm& algo = selectAlgorithm(ctx);
    explainIfAsked(ctx);
    if (log::logger().should_log(spdlog::level::debug))
        log::debug("{} count {} via {}", describe(ctx.site()), args.count, algo.name());
    auto start = tracer ? Tracer::Clock::now() : Tracer::Clock::time_point{};
    HcclResult rc = algo.run(ctx);
    const char* ran = ctx.handedTo() != nullptr ? ctx.handedTo() : algo.name();
    if (tracer)
        tracer->op(collName(args.type), start, Tracer::Clock::now(),
                    fmt::format(R"("seq":{},"comm":"{}","count":{},"dtype":"{}","redop":"{}","root":{},"algorithm":"{}","result":"{}")",
                                view_.seq, name(), args.count, dtypeName(args.dtype),
                                isReduction(args.type) ? reduceOpName(args.op) : "none", args.root, ran,
                                resultName(rc)));
    view_.tracer = tracer_.get();  // a profiling session's tracer may end with the session
    const int64_t endUs = wallUsAt(Deadline::Clock::now());
    if (monitored_) metrics_.opEnded(args.type, ctx.opBytes(), rc, endUs);
    if (recorder_) recorder_->ended(args.flightId, rc, ran, rc == HCCL_SUCCESS ? -1 : failure_.record().culprit, endUs);
    if (rc != HCCL_SUCCESS) onOpFailed(rc, ctx.site());
    return rc;
}

HcclResult Comm::refuseIfFailed(const char* op) const {
    if (!failure_.failed()) return HCCL_SUCCESS;
    CommFailure::Record prior = failure_.record();
    ErrorSite s = site(op);
    s.peer = prior.culprit;
    std::string reason = fmt::format("communicator failed earlier: {}; destroy it, or shrink it to the ranks still alive",
                                     prior.text);
    if (refusalLogged_.exchange(true)) return failAgain(prior.code, s, reason);
    return failAt(prior.code, s, reason + " (later calls refused alike are logged at debug level)");
}

// The op's error becomes the communicator's failure (if nothing failed before) and
// the peers hear of it; a timeout also says what the peer was last seen doing.
void Comm::onOpFailed(HcclResult rc, const ErrorSite& s) {
    failure_.raise(rc, s.peer, fmt::format("{} failed ({})", describe(s), resultName(rc)));
    CommFailure::Record r = failure_.record();
    if (r.code == HCCL_E_TIMEOUT && r.local && r.culprit >= 0 && uint32_t(r.culprit) < size()) {
        std::string status = health_->peerStatus(static_cast<uint32_t>(r.culprit));
        if (!status.empty()) log::error("{}: {}", describe(s), status);
    }
    health_->announceFailure();
    dumpFlightRecord("failure");
}

std::string Comm::dumpFlightRecord(const std::string& reason, bool always) {
    if (!recorder_ || (!always && failureDumped_.exchange(true))) return "";
    CommFailure::Record r = failure_.record();
    FlightRecorder::Identity who{name(), id(), rank(), size(), peers_[rank()].hostId, peers_[rank()].pid};
    return recorder_->dump(who, reason, r.code, r.culprit, r.text);
}

uint32_t Comm::ranksOnThisMachine() const {
    const std::string mine = machineOf(peers_[rank()].hostId);
    uint32_t local = 0;
    for (const auto& p : peers_) local += machineOf(p.hostId) == mine ? 1 : 0;
    return local;
}

uint32_t Comm::indexOnThisMachine() const {
    const std::string mine = machineOf(peers_[rank()].hostId);
    uint32_t before = 0;
    for (uint32_t r = 0; r < rank(); ++r) before += machineOf(peers_[r].hostId) == mine ? 1 : 0;
    return before;
}

bool Comm::machineIsOneHost() const {
    const std::string& host = peers_[rank()].hostId;
    const std::string mine = machineOf(host);
    for (const auto& p : peers_)
        if (p.hostId != host && machineOf(p.hostId) == mine) return false;
    return true;
}

// The cores this host's ranks share: the affinity mask when it is a cpuset that
// confines them all (a container), the machine's cores when the mask is a single
// core: launchers bind each rank to its own core (mpirun does by default), and one
// core per rank is not crowding.
uint32_t Comm::usableCores() {
    const uint32_t online = std::max(1u, std::thread::hardware_concurrency());
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0) return online;
    const uint32_t allowed = static_cast<uint32_t>(CPU_COUNT(&set));
    return allowed > 1 ? allowed : online;
}

// What algorithms see; fixed once the links exist (only the sequence number changes).
void Comm::buildView() {
    view_.rank = rank();
    view_.size = size();
    view_.commId = id();
    view_.name = name();
    view_.scratch = &scratch_;
    view_.windows = &memory_.windows();
    // Waiting yields the core at once when the machine's cores are oversubscribed, not
    // only this host's: hosts emulated on one machine (network namespaces, HOSTCCL_HOST_ID)
    // share its cores, and a rank spinning for a peer on the other "host" takes the core
    // that peer needs (2 namespaces x 2 ranks on 2 cores, 8-byte allreduce: 32-143 us
    // spinning first, 31-59 us yielding at once; Open MPI 47).
    machineCrowded_ = ranksOnThisMachine() > usableCores();
    view_.crowded = machineCrowded_;
    workerCpu_ = claimWorkerCpu(device_, {indexOnThisMachine(), ranksOnThisMachine(), machineIsOneHost()});
    view_.algoOverride = options_.algoOverride;
    std::vector<std::string> hosts;
    std::vector<uint32_t> nodeOf;
    for (const PeerInfo& p : peers_) {
        auto it = std::find(hosts.begin(), hosts.end(), p.hostId);
        nodeOf.push_back(static_cast<uint32_t>(it - hosts.begin()));
        if (it == hosts.end()) hosts.push_back(p.hostId);
    }
    setHosts(&view_, std::move(nodeOf));
    view_.links = links_.get();
    // The direct algorithms talk to every peer: past kDirectMaxRanks that is a full
    // mesh of links, which on-demand connections exist to avoid (HOSTCCL_CONNECT_ALL=1
    // has paid for it already).
    const bool meshAffordable = size() <= kDirectMaxRanks || env::getInt("HOSTCCL_CONNECT_ALL", 0, 1) == 1;
    bool everyPeerShares = true, everyPeerHere = true;
    for (uint32_t r = 0; r < size(); ++r) {
        if (r == rank()) continue;
        everyPeerShares = everyPeerShares && sharesMemoryWith(peers_[rank()], peers_[r]);
        everyPeerHere = everyPeerHere && sameProcess(peers_[rank()], peers_[r]);
    }
    view_.sharedMemoryMesh = size() > 1 && meshAffordable && everyPeerShares;
    view_.singleProcess = everyPeerShares && everyPeerHere;
    // Threads of one process meet on a board for the direct algorithms, which then
    // need no links at any size.
    if (view_.singleProcess && size() > 1) board_ = ProcessBoard::join(id(), size());
    view_.board = board_.get();
    view_.watch = monitored_ ? metrics_.watch() : nullptr;
    tracer_ = Tracer::fromEnv(name(), rank(), peers_[rank()].hostId);
    view_.tracer = tracer_.get();
}

// The selector's model: the parent's numbers for a sub-communicator, else the
// configured ones completed by the init probe (every rank ends with the same).
HcclResult Comm::buildCostModel() {
    CostParams params = options_.inheritedCosts ? *options_.inheritedCosts : options_.costs;
    const bool needTcp = view_.nodes > 1 || env::getString("HOSTCCL_TRANSPORT") == "tcp";
    if (!options_.inheritedCosts && options_.probeCosts && !fullyConfigured(params, needTcp))
        HOSTCCL_CHECK(probeCosts(view_, connectDeadline(), &failure_, &params));
    std::vector<uint32_t> cores(view_.nodes, 1);
    for (uint32_t r = 0; r < size(); ++r) cores[(*view_.nodeOf)[r]] = std::max<uint32_t>(1, peers_[r].hostCores);
    view_.costs = prepareSelector(
        CostModel(params, *view_.nodeOf, cores, env::getString("HOSTCCL_TRANSPORT") == "tcp", view_.board != nullptr));
    log::info("{}: cost model {}", describe(site("init")), params.summary());
    return HCCL_SUCCESS;
}

// No lock per op unless a destroying thread waits (seq_cst both ways: either it sees
// the count reach 0 or this sees it waiting).
void Comm::opFinished() {
    const uint64_t finished = opsFinished_.fetch_add(1) + 1;
    if (idleWaiters_.load() > 0 && finished == opsEnqueued_.load()) {
        std::lock_guard<std::mutex> lock(idleMutex_);
        idle_.notify_all();
    }
}

// A failed communicator has nothing worth waiting for: its queued ops fail at once.
void Comm::quiesce() {
    idleWaiters_.fetch_add(1);
    struct Leave {
        std::atomic<int>& waiters;
        std::chrono::steady_clock::time_point began;
        double& took;
        ~Leave() {
            waiters.fetch_sub(1);
            took = msBetween(began, std::chrono::steady_clock::now());
        }
    } leave{idleWaiters_, std::chrono::steady_clock::now(), quiesceMs_};
    std::unique_lock<std::mutex> lock(idleMutex_);
    const int64_t execTimeout = execTimeoutSec();
    auto limit = std::chrono::seconds(execTimeout > 0 ? execTimeout : 1836);
    auto settled = [&] { return inflight() == 0 || failure_.failed(); };
    if (failure_.failed()) dumpFlightRecord("destroyed after a failure");
    if (!idle_.wait_for(lock, limit, settled)) {
        log::warn("{}: destroying with ops still in flight; aborting them", describe(site("destroy")));
        failure_.raise(HCCL_E_INTERNAL, -1, "communicator destroyed with ops in flight");
    }
    // Bounded although it has no deadline: every wait inside an op checks the failure
    // at least once per 100 ms slice, and queued ops fail before they start.
    idle_.wait(lock, [&] { return inflight() == 0; });
}

// The links are left alone: the op thread may be inside one. The failure is what
// stops it, within one wait slice.
void Comm::abort(const std::string& why) {
    // Not `local`: the peers hear an abort notice, not this rank's failure.
    if (failure_.raise(HCCL_E_INTERNAL, rank(), why, false)) health_->announceAbort();
    dumpFlightRecord("abort");
}

namespace {
struct CommTable {
    std::mutex mutex;
    std::set<const void*> live;
    std::vector<Comm*> ordered;
    // Bumped (under the mutex) whenever `live` changes: a thread that found a handle
    // live at some generation knows it still is while the generation stands.
    std::atomic<uint64_t> generation{0};
};
CommTable& table() {
    static CommTable* t = new CommTable;
    return *t;
}
}  // namespace

bool registerComm(Comm* c) {
    std::lock_guard<std::mutex> lock(table().mutex);
    table().ordered.push_back(c);
    table().generation.fetch_add(1, std::memory_order_release);
    return table().live.insert(c).second;
}

// Every API call asks this. Each thread remembers the last handle it found live: with
// 1024 thread ranks, one global lock and a tree walk per call were shared by all of them.
bool commAlive(const void* handle) {
    HOSTCCL_FAST_TLS thread_local const void* lastLive = nullptr;
    HOSTCCL_FAST_TLS thread_local uint64_t lastGeneration = 0;
    if (handle == lastLive && table().generation.load(std::memory_order_acquire) == lastGeneration) return true;
    std::lock_guard<std::mutex> lock(table().mutex);
    if (table().live.count(handle) == 0) return false;
    lastLive = handle;
    lastGeneration = table().generation.load(std::memory_order_relaxed);
    return true;
}

Comm* unregisterComm(const void* handle) {
    std::lock_guard<std::mutex> lock(table().mutex);
    if (table().live.erase(handle) == 0) return nullptr;
    table().generation.fetch_add(1, std::memory_order_release);
    auto& v = table().ordered;
    v.erase(std::remove(v.begin(), v.end(), handle), v.end());
    return static_cast<Comm*>(const_cast<void*>(handle));
}

void forEachLiveComm(const std::function<void(const Comm&)>& fn) {
    std::lock_guard<std::mutex> lock(table().mutex);
    for (const Comm* c : table().ordered) fn(*c);
}

void dumpAllFlightRecords(const std::string& reason) {
    std::lock_guard<std::mutex> lock(table().mutex);  // destroy waits: no communicator goes away meanwhile
    for (Comm* c : table().ordered) c->dumpFlightRecord(reason, true);
}

Comm* findCommByName(const std::string& name, int32_t preferDevice) {
    std::lock_guard<std::mutex> lock(table().mutex);
    Comm* found = nullptr;
    for (Comm* c : table().ordered) {
        if (c->name() != name) continue;
        if (found == nullptr || c->device() == preferDevice) found = c;
    }
    return found;
}

}  // namespace hostccl
