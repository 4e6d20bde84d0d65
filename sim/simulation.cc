#include "sim/simulation.h"

#include <fmt/format.h>

#include <cstring>

#include "algorithms/selector.h"
#include "sim/sim_link.h"

namespace hostccl::sim {

using transport::Transfer;

struct Simulation::Message {
    uint32_t src = 0, dst = 0;
    transport::MsgTag tag;
    uint64_t bytes = 0;
    std::vector<char> data;  // carrying data: the sender's bytes as posted
    Transfer* send = nullptr;
    Time posted = 0;
    bool reserved = false;
    MessageTiming timing;
};

struct Simulation::Inbox {
    std::deque<std::unique_ptr<Message>> messages;                // sent, no receive yet
    std::deque<std::pair<Transfer*, Time>> receives;              // posted, no message yet
};

// What one simulated rank is: its fiber, clock, and what its code sees.
struct Simulation::Rank final : transport::Driver {
    Rank(Simulation& s, uint32_t r) : sim(s), rank(r), links(s, r) {}
    HcclResult waitAll(const std::vector<Transfer*>& transfers) override { return sim.wait(rank, transfers); }
    void localWork(Work what, size_t bytes) override { sim.localWork(rank, what, bytes); }
    bool movesData() const override { return sim.carriesData(); }

    Simulation& sim;
    const uint32_t rank;
    SimLinks links;
    CommView view;
    OpStorage storage;
    CommFailure failure;
    std::vector<char> scratch;
    std::unique_ptr<Fiber> fiber;
    Time now = 0;
    uint32_t outstanding = 0;  // transfers still to complete while waiting
    bool waiting = false;
    std::string error;
    std::unordered_map<uint32_t, Inbox> inboxes;  // by sending peer
};

Simulation::Simulation(const Platform& platform, bool carryData) : network_(platform), carryData_(carryData) {
    const uint32_t n = platform.ranks();
    std::vector<uint32_t> nodeOf(n);
    for (uint32_t r = 0; r < n; ++r) nodeOf[r] = platform.hostOf(r);
    // The selector's model, as a communicator on this platform would have measured it.
    const auto costs = prepareSelector(CostModel(platform.costParams(), nodeOf,
                                                 std::vector<uint32_t>(platform.hosts, platform.cores()), false));
    CommView hosts;  // the host tables every rank shares
    setHosts(&hosts, nodeOf);
    ranks_.reserve(n);
    for (uint32_t r = 0; r < n; ++r) {
        ranks_.push_back(std::make_unique<Rank>(*this, r));
        CommView& v = ranks_[r]->view;
        v.rank = r;
        v.size = n;
        v.commId = 1;
        v.name = "sim";
        v.links = &ranks_[r]->links;
        // Sizes only: nothing read from scratch matters, so every rank shares one.
        v.scratch = carryData ? &ranks_[r]->scratch : &sharedScratch_;
        v.crowded = platform.ranksPerHost > platform.cores();
        v.nodeOf = hosts.nodeOf;
        v.hostRanks = hosts.hostRanks;
        v.nodes = hosts.nodes;
        v.costs = costs;
        v.driver = ranks_[r].get();
        v.storage = &ranks_[r]->storage;
    }
}

Simulation::~Simulation() = default;

CommView& Simulation::view(uint32_t rank) { return ranks_[rank]->view; }
CommFailure& Simulation::failure(uint32_t rank) { return ranks_[rank]->failure; }
Time Simulation::finishedAt(uint32_t rank) const { return ranks_[rank]->now; }
const std::string& Simulation::errorOf(uint32_t rank) const { return ranks_[rank]->error; }

Simulation::Inbox& Simulation::inbox(uint32_t rank, uint32_t from) { return ranks_[rank]->inboxes[from]; }

void Simulation::schedule(Time at, Event::Kind kind, uint32_t rank, Transfer* t, Message* m) {
    events_.push(Event{at, order_++, kind, rank, t, m});
}

void Simulation::post(uint32_t rank, uint32_t peer, Transfer* t) {
    Rank& self = *ranks_[rank];
    if (peer >= ranks()) return fail(t, HCCL_E_PARA, fmt::format("rank {} does not exist", peer));
    if (t->dir == Transfer::Dir::Recv) {
        Inbox& in = inbox(rank, peer);
        if (in.messages.empty()) {
            in.receives.emplace_back(t, self.now);
            return;
        }
        Message* m = in.messages.front().release();
        in.messages.pop_front();
        return match(m, t, self.now);
    }
    auto m = std::make_unique<Message>();
    m->src = rank;
    m->dst = peer;
    m->tag = t->tag;
    m->bytes = t->bytes;
    m->send = t;
    m->posted = self.now;
    if (carryData_ && t->bytes > 0) m->data.assign(static_cast<const char*>(t->src), static_cast<const char*>(t->src) + t->bytes);
    ++messages_;
    // A small message leaves at once (it fits the peer's buffers); a large one, or
    // a single shared-memory copy, waits for its receive, as rings and socket
    // buffers and the receiver's read make it.
    if (m->bytes <= platform().eagerBytes && !platform().singleCopy(rank, peer, m->bytes)) reserve(m.get(), self.now);
    Inbox& in = inbox(peer, rank);
    if (in.receives.empty()) {
        in.messages.push_back(std::move(m));
        return;
    }
    auto [recv, postedAt] = in.receives.front();
    in.receives.pop_front();
    match(m.release(), recv, postedAt);
}

void Simulation::reserve(Message* m, Time ready, bool fusedReduce) {
    m->timing = network_.transfer(m->src, m->dst, m->bytes, ready, fusedReduce);
    m->reserved = true;
    schedule(m->timing.sent, Event::SendDone, m->src, m->send, nullptr);
}

// A receive meets its message: the ops must agree (a real link checks the header).
void Simulation::match(Message* m, Transfer* recv, Time recvPosted) {
    const transport::WireHeader h = transport::makeHeader(1, m->tag, m->bytes);
    const std::string mismatch = transport::headerMismatch(h, 1, recv->tag, recv->bytes);
    // A single shared-memory copy is the receiver's one pass, reducing as it copies.
    const bool fused = recv->reduce != nullptr && platform().singleCopy(m->src, m->dst, m->bytes);
    if (!m->reserved) reserve(m, std::max(m->posted, recvPosted), fused);
    if (!mismatch.empty()) {
        fail(recv, HCCL_E_PARA, mismatch);
        delete m;
        return;
    }
    Time done = std::max(m->timing.arrived, recvPosted);

    if (recv->reduce != nullptr && !fused) {  // reduced as it arrives: the slower of the two sets the pace
        const Time from = std::max(recvPosted, m->timing.start);
        done = std::max(done, network_.work(platform().hostOf(m->dst), double(m->bytes) * network_.rates().gamma, from));
    }
    schedule(done, Event::RecvDone, m->dst, recv, m);
}

void Simulation::fail(Transfer* t, HcclResult code, const std::string& why) {
    t->error = code;
    t->errorText = why;
    t->complete = true;
    Rank& r = *ranks_[static_cast<SimLink*>(t->link)->rank()];
    if (r.error.empty()) r.error = why;
    if (r.waiting && --r.outstanding == 0) schedule(std::max(r.now, clock_), Event::Resume, r.rank, nullptr, nullptr);
}

void Simulation::complete(const Event& e) {
    Transfer* t = e.transfer;
    if (e.kind == Event::RecvDone) {
        std::unique_ptr<Message> m(e.message);
        if (carryData_ && t->bytes > 0) {
            if (t->reduce != nullptr)
                t->reduce(t->dst, t->local, m->data.data(), t->bytes / t->elemSize);
            else
                std::memcpy(t->dst, m->data.data(), t->bytes);
        }
    }
    t->moved = t->bytes;
    t->complete = true;
    Rank& r = *ranks_[e.rank];
    if (r.waiting && --r.outstanding == 0) resume(e.rank, e.at);
}

void Simulation::resume(uint32_t rank, Time at) {
    Rank& r = *ranks_[rank];
    r.now = std::max(r.now, at);
    r.waiting = false;
    r.fiber->resume();
}

HcclResult Simulation::wait(uint32_t rank, const std::vector<Transfer*>& transfers) {
    Rank& r = *ranks_[rank];
    uint32_t open = 0;
    for (const Transfer* t : transfers) open += t->complete ? 0 : 1;
    if (open > 0) {
        r.outstanding = open;
        r.waiting = true;
        r.fiber->yield();
    }
    for (const Transfer* t : transfers)
        if (t->error != HCCL_SUCCESS) return t->error;
    return HCCL_SUCCESS;
}

void Simulation::localWork(uint32_t rank, transport::Driver::Work what, size_t bytes) {
    Rank& r = *ranks_[rank];
    const Rates& rates = network_.rates();
    const double perByte = what == transport::Driver::Work::Reduce ? rates.gamma : rates.copyBeta;
    r.now = network_.work(platform().hostOf(rank), double(bytes) * perByte, r.now);
}

bool Simulation::run(const std::function<void(uint32_t rank)>& body, Time start, std::string* why) {
    network_.reset();
    for (auto& r : ranks_) {
        Rank* self = r.get();
        self->now = start;
        self->error.clear();
        self->waiting = false;
        self->inboxes.clear();  // a failed run may have left unmatched traffic
        self->fiber = std::make_unique<Fiber>([self, &body] { body(self->rank); });
        schedule(start, Event::Resume, self->rank, nullptr, nullptr);
    }
    for (uint64_t taken = 1; !events_.empty(); ++taken) {
        const Event e = events_.top();
        events_.pop();
        clock_ = e.at;
        // Every request from now on starts at or after the clock (ranks run no earlier).
        if (taken % 1024 == 0) network_.forgetBefore(clock_);
        if (e.kind == Event::Resume) {
            Rank& r = *ranks_[e.rank];
            if (!r.fiber->finished() && (r.waiting ? r.outstanding == 0 : true)) resume(e.rank, e.at);
        } else {
            complete(e);
        }
    }
    std::vector<uint32_t> stuck;
    for (auto& r : ranks_)
        if (!r->fiber->finished()) stuck.push_back(r->rank);
    if (stuck.empty()) {
        for (auto& r : ranks_) r->fiber.reset();
        return true;
    }
    *why = fmt::format("{} of {} ranks wait for messages nobody sends (first: rank {})", stuck.size(), ranks(),
                       stuck[0]);
    return false;  // the stuck fibers stay: their stacks hold what their waits refer to
}

}  // namespace hostccl::sim
