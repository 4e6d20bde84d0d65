#include "core/communicator.h"

#include <sched.h>

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <set>
#include <thread>

#include "algorithms/context.h"
#include "algorithms/cost_model/probe.h"
#include "algorithms/selector.h"
#include "common/datatype.h"
#include "common/env.h"
#include "core/net/acceptor.h"
#include "core/net/handshake.h"
#include "core/link_factory.h"

namespace hostccl {

namespace {
constexpr const char* kVersion = "0.1.0";

Deadline connectDeadline() {
    return Deadline::afterSeconds(env::getInt("HCCL_CONNECT_TIMEOUT", 1, 7200));
}
}  // namespace

Communicator::Communicator(const CommIdentity& identity, std::vector<PeerInfo> table, int32_t device,
                           CommOptions options)
    : identity_(identity), peers_(std::move(table)), device_(device), options_(std::move(options)) {
    links_.resize(identity_.size);
}

Communicator::~Communicator() {
    if (tracer_) tracer_->flush();
}

ErrorSite Communicator::site(const char* op) const {
    ErrorSite s;
    s.comm = options_.name;
    s.rank = identity_.rank;
    s.op = op;
    return s;
}

HcclResult Communicator::create(const CommIdentity& identity, std::vector<PeerInfo> table, int32_t device,
                                CommOptions options, Communicator** out) {
    std::unique_ptr<Communicator> c(new Communicator(identity, std::move(table), device, std::move(options)));
    HOSTCCL_CHECK(c->connectLinks());
    c->buildView();
    HOSTCCL_CHECK(c->buildCostModel());
    c->logInit();
    registerComm(c.get());
    *out = c.release();
    return HCCL_SUCCESS;
}

// Each pair is connected once: the higher rank dials, the lower accepts. Dialling
// lower ranks first, then accepting from higher ones, in rank order, cannot deadlock:
// every rank's sequence is consistent with ordering the pairs (high, low) lexically.
HcclResult Communicator::connectLinks() {
    Deadline deadline = connectDeadline();
    for (uint32_t p = 0; p < rank(); ++p) HOSTCCL_CHECK(connectTo(p, deadline));
    for (uint32_t p = rank() + 1; p < size(); ++p) HOSTCCL_CHECK(acceptFrom(p, deadline));
    return HCCL_SUCCESS;
}

HcclResult Communicator::connectTo(uint32_t peer, Deadline deadline) {
    const PeerInfo& info = peers_[peer];
    ErrorSite s = site("init");
    s.peer = peer;
    std::string err;
    net::Fd fd = net::connectTcp(net::Endpoint{info.ip, info.port}, deadline, &err);
    if (!fd.valid()) return fail(HCCL_E_TCP_CONNECT, s, "{} (host {})", err, info.hostId);
    net::Hello hello = net::makeHello(net::Purpose::PeerLink, id(), rank(), peer);
    if (!net::clientHandshake(fd.get(), secret(), hello, deadline, &err))
        return fail(HCCL_E_TCP_CONNECT, s, "handshake with {}:{}: {}", info.ip, info.port, err);
    return makeLink(peers_[rank()], info, id(), std::move(fd), deadline, s, &links_[peer]);
}

// A connection that claims to be `peer` but cannot prove the secret is dropped
// and the wait goes on: a stray or hostile client never breaks the job.
HcclResult Communicator::acceptFrom(uint32_t peer, Deadline deadline) {
    ErrorSite s = site("init");
    s.peer = peer;
    for (;;) {
        net::Hello hello{};
        net::Fd fd = net::Acceptor::instance().claim(id(), rank(), peer, deadline, &hello);
        if (!fd.valid())
            return fail(HCCL_E_TIMEOUT, s, "peer never connected within HCCL_CONNECT_TIMEOUT (host {}, {}:{})",
                        peers_[peer].hostId, peers_[peer].ip, peers_[peer].port);
        std::string err;
        Deadline step = Deadline::after(std::chrono::milliseconds(3000));
        if (net::serverHandshake(fd.get(), secret(), hello, step, &err))
            return makeLink(peers_[rank()], peers_[peer], id(), std::move(fd), deadline, s, &links_[peer]);
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

void Communicator::logInit() const {
    logEnvironmentOnce();
    int shm = 0, tcp = 0;
    for (const auto& l : links_)
        if (l) (std::strcmp(l->kind(), "shm") == 0 ? shm : tcp)++;
    log::info("hostccl {} comm {} rank {}/{} device {} host {} links shm x{} tcp x{} connect-timeout {}s exec-timeout {}s",
              kVersion, name(), rank(), size(), device_, peers_[rank()].hostId, shm, tcp,
              env::getInt("HCCL_CONNECT_TIMEOUT", 1, 7200), options_.execTimeoutSec);
}

HcclResult Communicator::execute(const CollArgs& args) {
    std::lock_guard<std::mutex> lock(execMutex_);
    if (HcclResult prior = asyncError_.load(); prior != HCCL_SUCCESS)
        return fail(prior, site(collName(args.type)), "communicator failed earlier ({}); destroy it and create a new one",
                    resultName(prior));
    view_.seq = isPointToPoint(args.type) ? 0 : ++collSeq_;
    Context ctx(view_, args, Deadline::afterSeconds(options_.execTimeoutSec), &aborted_);
    const Algorithm& algo = selectAlgorithm(ctx);
    explainIfAsked(ctx);
    if (log::logger().should_log(spdlog::level::debug))
        log::debug("{} count {} via {}", describe(ctx.site()), args.count, algo.name());
    auto start = tracer_ ? Tracer::Clock::now() : Tracer::Clock::time_point{};
    HcclResult rc = algo.run(ctx);
    const char* ran = ctx.handedTo() != nullptr ? ctx.handedTo() : algo.name();
    if (tracer_)
        tracer_->op(collName(args.type), start, Tracer::Clock::now(),
                    fmt::format(R"("seq":{},"comm":"{}","count":{},"dtype":"{}","redop":"{}","root":{},"algorithm":"{}","result":"{}")",
                                view_.seq, name(), args.count, dtypeName(args.dtype),
                                isReduction(args.type) ? reduceOpName(args.op) : "none", args.root, ran,
                                resultName(rc)));
    if (rc != HCCL_SUCCESS) asyncError_.store(rc);
    return rc;
}

uint32_t Communicator::ranksOnThisHost() const {
    uint32_t local = 0;
    for (const auto& p : peers_) local += p.hostId == peers_[rank()].hostId ? 1 : 0;
    return local;
}

// The cores this host's ranks share: the affinity mask when it is a cpuset that
// confines them all (a container), the machine's cores when the mask is a single
// core: launchers bind each rank to its own core (mpirun does by default), and one
// core per rank is not crowding.
uint32_t Communicator::usableCores() {
    const uint32_t online = std::max(1u, std::thread::hardware_concurrency());
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0) return online;
    const uint32_t allowed = static_cast<uint32_t>(CPU_COUNT(&set));
    return allowed > 1 ? allowed : online;
}

// What algorithms see; fixed once the links exist (only the sequence number changes).
void Communicator::buildView() {
    view_.rank = rank();
    view_.size = size();
    view_.commId = id();
    view_.name = name();
    view_.scratch = &scratch_;
    view_.crowded = ranksOnThisHost() > usableCores();
    view_.algoOverride = options_.algoOverride;
    std::vector<std::string> hosts;
    for (const PeerInfo& p : peers_) {
        auto it = std::find(hosts.begin(), hosts.end(), p.hostId);
        view_.nodeOf.push_back(static_cast<uint32_t>(it - hosts.begin()));
        if (it == hosts.end()) hosts.push_back(p.hostId);
    }
    view_.nodes = static_cast<uint32_t>(hosts.size());
    view_.sharedMemoryMesh = size() > 1;
    view_.singleProcess = true;
    for (uint32_t r = 0; r < size(); ++r) {
        view_.links.push_back(links_[r].get());
        if (r == rank()) continue;
        view_.sharedMemoryMesh = view_.sharedMemoryMesh && links_[r]->sharesMemory();
        view_.singleProcess = view_.singleProcess && view_.sharedMemoryMesh && peers_[r].pid == peers_[rank()].pid;
    }
    tracer_ = Tracer::fromEnv(name(), rank(), peers_[rank()].hostId);
    view_.tracer = tracer_.get();
}

// The selector's model: the parent's numbers for a sub-communicator, else the
// configured ones completed by the init probe (every rank ends with the same).
HcclResult Communicator::buildCostModel() {
    CostParams params = options_.inheritedCosts ? *options_.inheritedCosts : options_.costs;
    const bool needTcp = view_.nodes > 1 || env::getString("HOSTCCL_TRANSPORT") == "tcp";
    if (!options_.inheritedCosts && options_.probeCosts && !fullyConfigured(params, needTcp))
        HOSTCCL_CHECK(probeCosts(view_, connectDeadline(), &aborted_, &params));
    std::vector<uint32_t> cores(view_.nodes, 1);
    for (uint32_t r = 0; r < size(); ++r) cores[view_.nodeOf[r]] = std::max<uint32_t>(1, peers_[r].hostCores);
    view_.costs = prepareSelector(CostModel(params, view_.nodeOf, cores, env::getString("HOSTCCL_TRANSPORT") == "tcp"));
    log::info("{}: cost model {}", describe(site("init")), params.summary());
    return HCCL_SUCCESS;
}

void Communicator::opFinished() {
    if (inflight_.fetch_sub(1) == 1) {
        std::lock_guard<std::mutex> lock(idleMutex_);
        idle_.notify_all();
    }
}

void Communicator::quiesce() {
    std::unique_lock<std::mutex> lock(idleMutex_);
    auto limit = std::chrono::seconds(options_.execTimeoutSec > 0 ? options_.execTimeoutSec : 1836);
    if (!idle_.wait_for(lock, limit, [&] { return inflight_.load() == 0; })) {
        log::warn("{}: destroying with ops still in flight; aborting them", describe(site("destroy")));
        aborted_.store(true);
        for (auto& l : links_)
            if (l) l->shutdown(HCCL_E_INTERNAL, "communicator destroyed");
        // Bounded although it has no deadline: every wait inside an op checks `aborted_`
        // at least once per 100 ms slice, and the links now fail everything posted.
        idle_.wait(lock, [&] { return inflight_.load() == 0; });
    }
}

namespace {
struct CommTable {
    std::mutex mutex;
    std::set<const void*> live;
    std::vector<Communicator*> ordered;
};
CommTable& table() {
    static CommTable* t = new CommTable;
    return *t;
}
}  // namespace

bool registerComm(Communicator* c) {
    std::lock_guard<std::mutex> lock(table().mutex);
    table().ordered.push_back(c);
    return table().live.insert(c).second;
}

bool commAlive(const void* handle) {
    std::lock_guard<std::mutex> lock(table().mutex);
    return table().live.count(handle) == 1;
}

Communicator* unregisterComm(const void* handle) {
    std::lock_guard<std::mutex> lock(table().mutex);
    if (table().live.erase(handle) == 0) return nullptr;
    auto& v = table().ordered;
    v.erase(std::remove(v.begin(), v.end(), handle), v.end());
    return static_cast<Communicator*>(const_cast<void*>(handle));
}

Communicator* findCommByName(const std::string& name, int32_t preferDevice) {
    std::lock_guard<std::mutex> lock(table().mutex);
    Communicator* found = nullptr;
    for (Communicator* c : table().ordered) {
        if (c->name() != name) continue;
        if (found == nullptr || c->device() == preferDevice) found = c;
    }
    return found;
}

}  // namespace hostccl
