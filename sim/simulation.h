// Ranks on a virtual clock. Each simulated rank runs real hostccl code (an
// algorithm's run()) on a fiber; its sends and receives go over SimLinks to this
// engine, which matches them per pair in posting order (checking the ops agree, as
// a real link's header check does), times them on the Network, and resumes a rank
// waiting in waitAll when the last of its transfers completes in virtual time.
// Events are taken in time order, so every rank's code runs exactly as it would,
// only the clock is simulated. Two modes: carrying data (every byte really moves
// and reductions really run, so results can be checked exactly) and sizes only.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <queue>
#include <string>
#include <unordered_map>
#include <vector>

#include "algorithms/context.h"
#include "common/comm_failure.h"
#include "transports/progress.h"
#include "sim/fiber.h"
#include "sim/network.h"

namespace hostccl::sim {

class SimLink;

class Simulation {
public:
    Simulation(const Platform& platform, bool carryData);
    ~Simulation();

    uint32_t ranks() const { return static_cast<uint32_t>(ranks_.size()); }
    const Platform& platform() const { return network_.platform(); }
    // The data the next runs hold on each host (every rank's input and output):
    // beyond the platform's cache size they run at its bulk rates.
    void setWorkingSet(uint64_t hostBytes) { network_.setWorkingSet(hostBytes); }
    bool carriesData() const { return carryData_; }
    // What `rank`'s algorithms see (set `seq` per op; the rest is fixed).
    CommView& view(uint32_t rank);
    CommFailure& failure(uint32_t rank);

    // Runs body(rank) for every rank, each starting at virtual time `start`, until
    // all have returned. False when some rank can never finish (it waits for a
    // message nobody sends): `why` names them.
    bool run(const std::function<void(uint32_t rank)>& body, Time start, std::string* why);
    // When `rank` finished the last run.
    Time finishedAt(uint32_t rank) const;
    // The first transfer error of the last run on `rank` (empty: none).
    const std::string& errorOf(uint32_t rank) const;
    // How many messages the last runs moved, and the events taken.
    uint64_t messages() const { return messages_; }

    // From SimLink and the ranks' drivers.
    void post(uint32_t rank, uint32_t peer, transport::Transfer* t);
    HcclResult wait(uint32_t rank, const std::vector<transport::Transfer*>& transfers);
    void localWork(uint32_t rank, transport::Driver::Work what, size_t bytes);

private:
    struct Message;
    struct Rank;
    struct Inbox;  // what `rank` has from one peer: unmatched messages and receives
    struct Event {
        Time at;
        uint64_t order;  // ties in posting order: the run is deterministic
        enum Kind : uint8_t { Resume, SendDone, RecvDone } kind;
        uint32_t rank;
        transport::Transfer* transfer;
        Message* message;
        bool operator>(const Event& o) const { return at != o.at ? at > o.at : order > o.order; }
    };

    Inbox& inbox(uint32_t rank, uint32_t from);
    void match(Message* m, transport::Transfer* recv, Time recvPosted);
    void reserve(Message* m, Time ready, bool fusedReduce = false);
    void schedule(Time at, Event::Kind kind, uint32_t rank, transport::Transfer* t, Message* m);
    void complete(const Event& e);
    void resume(uint32_t rank, Time at);
    void fail(transport::Transfer* t, HcclResult code, const std::string& why);

    Network network_;
    const bool carryData_;
    std::vector<std::unique_ptr<Rank>> ranks_;
    std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events_;
    uint64_t order_ = 0;
    Time clock_ = 0;  // the time of the event being taken
    uint64_t messages_ = 0;
    std::vector<char> sharedScratch_;  // sizes only: every rank's scratch (its contents do not matter)
};

}  // namespace hostccl::sim
