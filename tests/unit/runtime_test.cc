// The ACL runtime shim: streams, events, memory, devices, and bad handles.
#include <gtest/gtest.h>
#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "acl/acl.h"
#include "api/op_queue.h"
#include "runtime/memory.h"
#include "runtime/stream.h"

using namespace std::chrono_literals;

namespace {
struct StreamGuard {
    aclrtStream s = nullptr;
    StreamGuard() { EXPECT_EQ(aclrtCreateStream(&s), ACL_SUCCESS); }
    ~StreamGuard() { aclrtDestroyStream(s); }
};
}  // namespace

TEST(Stream, RunsTasksInOrderAndSynchronizeWaitsForThem) {
    StreamGuard g;
    auto stream = hostccl::runtime::resolveStream(g.s);
    std::vector<int> order;
    for (int i = 0; i < 100; ++i) stream->enqueue([&order, i] { order.push_back(i); return 0; });
    ASSERT_EQ(aclrtSynchronizeStream(g.s), ACL_SUCCESS);
    ASSERT_EQ(order.size(), 100u);
    for (int i = 0; i < 100; ++i) EXPECT_EQ(order[i], i);
}

// The worker is named, so `top -H`, `perf sched` and gdb tell it from the ranks' threads.
TEST(Stream, TheWorkerThreadIsNamed) {
    StreamGuard g;
    auto stream = hostccl::runtime::resolveStream(g.s);
    char name[16] = {};
    stream->enqueue([&name] { return pthread_getname_np(pthread_self(), name, sizeof name); });
    ASSERT_EQ(aclrtSynchronizeStream(g.s), ACL_SUCCESS);
    EXPECT_STREQ(name, "hccl-stream");
}

// A thread remembers the last stream it resolved; destroying the stream must still
// make its handle dead to that thread.
TEST(Stream, ADestroyedStreamIsDeadToTheThreadThatUsedIt) {
    aclrtStream s = nullptr;
    ASSERT_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
    ASSERT_NE(hostccl::runtime::resolveStream(s), nullptr);
    ASSERT_EQ(aclrtSynchronizeStream(s), ACL_SUCCESS);
    ASSERT_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_EQ(hostccl::runtime::resolveStream(s), nullptr);
    EXPECT_NE(aclrtSynchronizeStream(s), ACL_SUCCESS);
}

// Producers and synchronizers race: every synchronize must return with all the work
// its thread enqueued done (the worker counts without the lock and wakes waiters
// only at the count they wait for). With callers allowed to run tasks, the
// synchronizing threads run some of them too: each still runs once, in order.
static void producersRace(bool callersRun) {
    StreamGuard g;
    auto stream = hostccl::runtime::resolveStream(g.s);
    stream->letCallersRun(callersRun ? hostccl::runtime::Stream::kAnyNumber : 0);
    constexpr int kThreads = 4, kRounds = 2000;
    std::vector<std::atomic<int>> done(kThreads);
    std::vector<int> order;  // written only by whoever runs tasks: one at a time
    std::vector<std::thread> threads;
    std::atomic<int> failures{0};
    for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&, t] {
            for (int r = 1; r <= kRounds; ++r) {
                stream->enqueue([&done, &order, t] {
                    order.push_back(t);
                    done[t].fetch_add(1);
                    return 0;
                });
                if (r % 7 == 0 && (aclrtSynchronizeStream(g.s) != ACL_SUCCESS || done[t].load() != r)) ++failures;
            }
        });
    for (auto& th : threads) th.join();
    ASSERT_EQ(aclrtSynchronizeStream(g.s), ACL_SUCCESS);
    EXPECT_EQ(failures.load(), 0);
    for (auto& d : done) EXPECT_EQ(d.load(), kRounds);
    EXPECT_EQ(order.size(), size_t(kThreads) * kRounds);
}

TEST(Stream, ConcurrentProducersEachSeeTheirOwnWorkDone) { producersRace(false); }
TEST(Stream, ConcurrentProducersEachSeeTheirOwnWorkDoneWhenCallersRunTasks) { producersRace(true); }

// Work queued while the worker is held past the ring's capacity spills into a list: every
// task still runs once, each thread's in the order it queued them, with distinct tickets,
// and the ring is used again afterwards.
TEST(Stream, WorkPastTheRingSpillsAndRunsInOrderFromSeveralThreads) {
    StreamGuard g;
    auto stream = hostccl::runtime::resolveStream(g.s);
    std::atomic<bool> release{false};
    stream->enqueue([&] {
        while (!release) std::this_thread::sleep_for(1ms);
        return 0;
    });
    constexpr int kThreads = 4, kEach = 1000;  // 4000 tasks: several times the ring
    std::vector<std::pair<int, int>> ran;       // (thread, index), written by the runner only
    std::vector<std::vector<uint64_t>> tickets(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&, t] {
            for (int i = 0; i < kEach; ++i)
                tickets[t].push_back(stream->enqueue([&ran, t, i] {
                    ran.emplace_back(t, i);
                    return 0;
                }));
        });
    for (auto& th : threads) th.join();
    release = true;
    ASSERT_EQ(aclrtSynchronizeStream(g.s), ACL_SUCCESS);
    ASSERT_EQ(ran.size(), size_t(kThreads) * kEach);
    std::vector<int> next(kThreads, 0);
    for (auto [t, i] : ran) EXPECT_EQ(i, next[t]++) << "thread " << t;
    std::vector<uint64_t> all;
    for (auto& v : tickets) all.insert(all.end(), v.begin(), v.end());
    std::sort(all.begin(), all.end());
    EXPECT_EQ(std::adjacent_find(all.begin(), all.end()), all.end()) << "a ticket given twice";
    EXPECT_EQ(all.front(), 2u);
    EXPECT_EQ(all.back(), uint64_t(kThreads) * kEach + 1);
    ran.clear();
    for (int i = 0; i < 10; ++i) stream->enqueue([&ran, i] { ran.emplace_back(0, i); return 0; });
    ASSERT_EQ(aclrtSynchronizeStream(g.s), ACL_SUCCESS);
    ASSERT_EQ(ran.size(), 10u);
    for (int i = 0; i < 10; ++i) EXPECT_EQ(ran[i].second, i);
}

// Work built in place: each object is created once per slot (or spill entry) and kind,
// kept between uses of its slot, and destroyed when the slot goes to another kind or
// the stream ends; a task and in-place work interleave in queue order.
namespace {
struct Tally {
    static inline std::atomic<int> created{0}, destroyed{0};
    Tally() { ++created; }
    ~Tally() { ++destroyed; }
    std::vector<int>* out = nullptr;
    int value = 0;
    int uses = 0;  // how many times this object was queued
};
int runTally(Tally& t) {
    t.out->push_back(t.value * 100 + t.uses);
    return 0;
}
void queueTally(hostccl::runtime::Stream& stream, std::vector<int>* out, int value) {
    stream.enqueueInPlace<Tally, runTally>([&](Tally& t) {
        t.out = out;
        t.value = value;
        ++t.uses;
    });
}
}  // namespace

TEST(Stream, InPlaceWorkLivesInItsSlotAndIsDestroyedOnce) {
    Tally::created = 0;
    Tally::destroyed = 0;
    std::vector<int> out;
    {
        StreamGuard g;
        auto stream = hostccl::runtime::resolveStream(g.s);
        for (int i = 0; i < 3000; ++i) {
            if (i % 3 == 2) {
                stream->enqueue([&out, i] { out.push_back(i * 100); return 0; });
                continue;
            }
            queueTally(*stream, &out, i);
            if (i % 100 == 0) {
                ASSERT_EQ(aclrtSynchronizeStream(g.s), ACL_SUCCESS);
            }
        }
        ASSERT_EQ(aclrtSynchronizeStream(g.s), ACL_SUCCESS);
        ASSERT_EQ(out.size(), 3000u);
        int reused = 0;
        for (int i = 0; i < 3000; ++i) {
            EXPECT_EQ(out[i] / 100, i);
            reused += out[i] % 100 > 1 ? 1 : 0;
        }
        EXPECT_GT(reused, 0) << "no slot kept its object for a later op of its kind";
        EXPECT_LT(Tally::created.load(), 2000) << "an object was built for every op";
    }
    EXPECT_EQ(Tally::created.load(), Tally::destroyed.load());
}

// Spill entries are reused: a second burst past the ring builds no objects beyond
// what the first built, runs in order, and every object is destroyed once.
TEST(Stream, SpilledWorkIsReusedRoundAfterRoundAndDestroyedOnce) {
    Tally::created = Tally::destroyed = 0;
    std::vector<int> out;
    {
        StreamGuard g;
        const auto stream = hostccl::runtime::resolveStream(g.s);
        constexpr int kBurst = 2000;  // about four rings' worth: most of it spills
        int firstRound = 0;
        for (int round = 0; round < 3; ++round) {
            std::atomic<bool> release{false};
            stream->enqueue([&] {  // holds the stream so the burst piles up
                while (!release) std::this_thread::sleep_for(1ms);
                return 0;
            });
            for (int i = 0; i < kBurst; ++i) queueTally(*stream, &out, round * kBurst + i);
            release = true;
            ASSERT_EQ(aclrtSynchronizeStream(g.s), ACL_SUCCESS);
            if (round == 0) firstRound = Tally::created.load();
        }
        ASSERT_EQ(out.size(), size_t(3 * kBurst));
        for (int i = 0; i < 3 * kBurst; ++i) ASSERT_EQ(out[i] / 100, i) << "out of order";
        EXPECT_GE(firstRound, kBurst - 512) << "the first burst spilled";
        EXPECT_LE(Tally::created.load(), firstRound + 2) << "later bursts built new objects instead of reusing";
        EXPECT_EQ(out.back() % 100, 3) << "the last op's object served all three rounds";
    }
    EXPECT_EQ(Tally::created.load(), Tally::destroyed.load());
}

// runHere: the caller runs the queued tasks up to its ticket, in order, on its own
// thread, when no thread runs the stream's tasks; never while the worker runs one, and
// never unless the stream allows it.
TEST(Stream, ACallerRunsQueuedTasksItselfOnlyWhenAllowedAndTheWorkerIsIdle) {
    StreamGuard g;
    auto stream = hostccl::runtime::resolveStream(g.s);
    const std::thread::id me = std::this_thread::get_id();
    std::vector<std::thread::id> ranOn;
    auto record = [&ranOn] {
        ranOn.push_back(std::this_thread::get_id());
        return 0;
    };
    // Not allowed: the worker runs everything.
    for (int i = 0; i < 200; ++i) EXPECT_FALSE(stream->runHere(stream->enqueue(record)));
    ASSERT_EQ(aclrtSynchronizeStream(g.s), ACL_SUCCESS);
    for (auto id : ranOn) EXPECT_NE(id, me);
    // The worker busy with a task: the caller takes none, and tasks run after it.
    stream->letCallersRun(hostccl::runtime::Stream::kAnyNumber);
    std::atomic<bool> release{false}, started{false};
    stream->enqueue([&] {
        started = true;
        while (!release) std::this_thread::sleep_for(1ms);
        return 0;
    });
    for (int waited = 0; !started && waited < 10000; ++waited) std::this_thread::sleep_for(1ms);
    if (!started) {
        release = true;  // lets the stream drain when the guard destroys it
        FAIL() << "the worker did not start the blocking task within 10 s";
    }
    ranOn.clear();
    const uint64_t last = stream->enqueue(record);
    EXPECT_FALSE(stream->runHere(last));
    release = true;
    ASSERT_EQ(aclrtSynchronizeStream(g.s), ACL_SUCCESS);
    ASSERT_EQ(ranOn.size(), 1u);
    EXPECT_NE(ranOn[0], me);
    EXPECT_FALSE(stream->runHere(last));  // done already
    // The worker asleep: a caller that gets there first runs the task here (the worker,
    // just woken, usually does not get to it before the caller does on any machine).
    bool ranHere = false;
    for (int i = 0; i < 10000 && !ranHere; ++i) {
        ranOn.clear();
        const uint64_t t1 = stream->enqueue(record);
        stream->enqueue(record);  // past the ticket: left to the worker
        if (stream->runHere(t1)) {
            ASSERT_EQ(aclrtSynchronizeStream(g.s), ACL_SUCCESS);
            ASSERT_EQ(ranOn.size(), 2u);
            ranHere = ranOn[0] == me;
            EXPECT_TRUE(ranHere);
        } else {
            ASSERT_EQ(aclrtSynchronizeStream(g.s), ACL_SUCCESS);
        }
    }
    EXPECT_TRUE(ranHere) << "in 10000 tries the caller never found the worker idle";
}

// Which ops keep the stream thread to the rank's core: every op where ranks have a core
// each; where they outnumber cores those up to 256 KiB.
TEST(Stream, OpsKeepToTheRanksCoreButLargeOnesOnACrowdedMachine) {
    using hostccl::api::keepsToCore;
    EXPECT_TRUE(keepsToCore(false, 8));
    EXPECT_TRUE(keepsToCore(false, uint64_t(64) << 20));
    EXPECT_TRUE(keepsToCore(true, 8));
    EXPECT_TRUE(keepsToCore(true, 256 << 10));
    EXPECT_FALSE(keepsToCore(true, (256 << 10) + 1));
}

// How many queued tasks a waiting caller may run itself: a few for a small op, none for a
// large one (left to the worker, kept to the rank's core); where ranks outnumber cores none
// when the op keeps the worker to a core, any number when it does not.
TEST(Stream, CallersRunAFewTasksOfASmallOpAndOnACrowdedMachineAllOrNone) {
    using hostccl::api::callerRunLimit;
    constexpr uint32_t kAny = hostccl::runtime::Stream::kAnyNumber;
    for (bool bound : {true, false}) {
        EXPECT_EQ(callerRunLimit(false, bound, 0), 8u);
        EXPECT_EQ(callerRunLimit(false, bound, 8), 8u);
        EXPECT_EQ(callerRunLimit(false, bound, 256 << 10), 8u);
        EXPECT_EQ(callerRunLimit(false, bound, (256 << 10) + 1), 0u);
        EXPECT_EQ(callerRunLimit(false, bound, uint64_t(64) << 20), 0u);
    }
    EXPECT_EQ(callerRunLimit(true, false, 8), kAny);
    EXPECT_EQ(callerRunLimit(true, false, uint64_t(64) << 20), kAny);
    EXPECT_EQ(callerRunLimit(true, true, 8), 0u);
    EXPECT_EQ(callerRunLimit(true, true, 256 << 10), 0u);
    EXPECT_EQ(callerRunLimit(true, true, (256 << 10) + 1), kAny);
    EXPECT_EQ(callerRunLimit(true, true, uint64_t(64) << 20), kAny);
}

// Past its limit a caller leaves the queue to the worker: three tasks queued, a caller
// that may take two runs none; one that may take three gets there first now and then.
TEST(Stream, ACallerLeavesAQueueLongerThanItsLimitToTheWorker) {
    StreamGuard g;
    auto stream = hostccl::runtime::resolveStream(g.s);
    const std::thread::id me = std::this_thread::get_id();
    std::mutex m;
    std::vector<std::thread::id> ranOn;
    auto queueThree = [&] {
        uint64_t last = 0;
        for (int i = 0; i < 3; ++i)
            last = stream->enqueue([&] {
                std::lock_guard<std::mutex> lock(m);
                ranOn.push_back(std::this_thread::get_id());
                return 0;
            });
        return last;
    };
    auto ranHere = [&] {
        std::lock_guard<std::mutex> lock(m);
        return std::count(ranOn.begin(), ranOn.end(), me);
    };
    // The worker may take the first of the three before the caller looks, leaving two the
    // caller may run; the caller never runs more than two, and refuses while three wait.
    stream->letCallersRun(2);
    int refused = 0;
    for (int i = 0; i < 1000; ++i) {
        const auto before = ranHere();
        const bool ran = stream->runHere(queueThree());
        ASSERT_EQ(aclrtSynchronizeStream(g.s), ACL_SUCCESS);
        const auto here = ranHere() - before;
        EXPECT_LE(here, 2);
        if (!ran) {
            EXPECT_EQ(here, 0);
        }
        refused += ran ? 0 : 1;
    }
    ASSERT_EQ(ranOn.size(), 3000u);
    EXPECT_GT(refused, 0) << "the caller ran every one of 1000 queues of three with a limit of two";
    stream->letCallersRun(3);
    bool ranThree = false;
    for (int i = 0; i < 10000 && !ranThree; ++i) {
        ranThree = stream->runHere(queueThree());
        ASSERT_EQ(aclrtSynchronizeStream(g.s), ACL_SUCCESS);
    }
    EXPECT_TRUE(ranThree) << "the worker took three queued tasks first 10000 times in a row";
    EXPECT_EQ(ranOn.back(), me);
}

TEST(Stream, SynchronizeReturnsTheFirstErrorOnceThenClears) {
    StreamGuard g;
    auto stream = hostccl::runtime::resolveStream(g.s);
    stream->enqueue([] { return 13; });
    stream->enqueue([] { return 9; });
    EXPECT_EQ(aclrtSynchronizeStream(g.s), 13);
    EXPECT_EQ(aclrtSynchronizeStream(g.s), ACL_SUCCESS);
}

TEST(Stream, SynchronizeWithTimeoutExpires) {
    StreamGuard g;
    std::atomic<bool> release{false};
    hostccl::runtime::resolveStream(g.s)->enqueue([&] {
        while (!release) std::this_thread::sleep_for(1ms);
        return 0;
    });
    EXPECT_EQ(aclrtSynchronizeStreamWithTimeout(g.s, 20), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
    release = true;
    EXPECT_EQ(aclrtSynchronizeStreamWithTimeout(g.s, -1), ACL_SUCCESS);
    EXPECT_EQ(aclrtSynchronizeStreamWithTimeout(g.s, -2), ACL_ERROR_INVALID_PARAM);
}

TEST(Stream, AsyncCopiesAndMemsetsRunInStreamOrder) {
    StreamGuard g;
    std::vector<char> a(64, 'a'), b(64, 0);
    ASSERT_EQ(aclrtMemsetAsync(a.data(), 64, 'z', 32, g.s), ACL_SUCCESS);
    ASSERT_EQ(aclrtMemcpyAsync(b.data(), 64, a.data(), 64, ACL_MEMCPY_DEVICE_TO_DEVICE, g.s), ACL_SUCCESS);
    ASSERT_EQ(aclrtSynchronizeStream(g.s), ACL_SUCCESS);
    EXPECT_EQ(std::string(b.data(), 64), std::string(32, 'z') + std::string(32, 'a'));
    EXPECT_EQ(aclrtMemcpyAsync(b.data(), 8, a.data(), 64, ACL_MEMCPY_HOST_TO_HOST, g.s), ACL_ERROR_INVALID_PARAM);
}

TEST(Event, TimesAStretchOfAStreamAndOrdersAnotherStream) {
    StreamGuard first, second;
    aclrtEvent start, stop;
    ASSERT_EQ(aclrtCreateEvent(&start), ACL_SUCCESS);
    ASSERT_EQ(aclrtCreateEventWithFlag(&stop, ACL_EVENT_TIME_LINE), ACL_SUCCESS);
    std::atomic<int> step{0};
    aclrtRecordEvent(start, first.s);
    hostccl::runtime::resolveStream(first.s)->enqueue([&] {
        std::this_thread::sleep_for(30ms);
        step = 1;
        return 0;
    });
    aclrtRecordEvent(stop, first.s);
    // The second stream may not run its task before the first stream passes `stop`.
    ASSERT_EQ(aclrtStreamWaitEvent(second.s, stop), ACL_SUCCESS);
    int seen = -1;
    hostccl::runtime::resolveStream(second.s)->enqueue([&] { seen = step; return 0; });
    ASSERT_EQ(aclrtSynchronizeStream(second.s), ACL_SUCCESS);
    EXPECT_EQ(seen, 1);
    ASSERT_EQ(aclrtSynchronizeEvent(stop), ACL_SUCCESS);
    float ms = 0;
    ASSERT_EQ(aclrtEventElapsedTime(&ms, start, stop), ACL_SUCCESS);
    EXPECT_GE(ms, 29.0f);
    EXPECT_LT(ms, 2000.0f);
    aclrtEventStatus status;
    EXPECT_EQ(aclrtQueryEventStatus(stop, &status), ACL_SUCCESS);
    EXPECT_EQ(status, ACL_EVENT_STATUS_COMPLETE);
    aclrtDestroyEvent(start);
    aclrtDestroyEvent(stop);
}

TEST(Event, DestroyingAnEventWithQueuedWorkIsSafe) {
    StreamGuard g;
    std::atomic<bool> release{false};
    hostccl::runtime::resolveStream(g.s)->enqueue([&] {
        while (!release) std::this_thread::sleep_for(1ms);
        return 0;
    });
    aclrtEvent e;
    ASSERT_EQ(aclrtCreateEvent(&e), ACL_SUCCESS);
    ASSERT_EQ(aclrtRecordEvent(e, g.s), ACL_SUCCESS);
    ASSERT_EQ(aclrtDestroyEvent(e), ACL_SUCCESS);  // the queued record still owns it
    release = true;
    EXPECT_EQ(aclrtSynchronizeStream(g.s), ACL_SUCCESS);
    EXPECT_EQ(aclrtDestroyEvent(e), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtRecordEvent(e, g.s), ACL_ERROR_INVALID_PARAM);
}

// HCCL Test's -t mode: the stream waits on an event nobody has recorded yet, resets
// it, and everything queued behind runs only once another stream records it; the
// next round holds again until the next record.
TEST(Event, AWaitOnAnEventNotYetRecordedHoldsUntilItIsRecorded) {
    StreamGuard work, releaser;
    aclrtEvent gate;
    ASSERT_EQ(aclrtCreateEventWithFlag(&gate, ACL_EVENT_SYNC), ACL_SUCCESS);
    std::atomic<int> ran{0};
    for (int round = 1; round <= 2; ++round) {
        ASSERT_EQ(aclrtStreamWaitEvent(work.s, gate), ACL_SUCCESS);
        ASSERT_EQ(aclrtResetEvent(gate, work.s), ACL_SUCCESS);
        hostccl::runtime::resolveStream(work.s)->enqueue([&] { ++ran; return 0; });
        std::this_thread::sleep_for(100ms);
        EXPECT_EQ(ran.load(), round - 1) << "round " << round << ": queued work ran before the record";
        ASSERT_EQ(aclrtRecordEvent(gate, releaser.s), ACL_SUCCESS);
        ASSERT_EQ(aclrtSynchronizeStream(work.s), ACL_SUCCESS);
        EXPECT_EQ(ran.load(), round);
    }
    ASSERT_EQ(aclrtDestroyEvent(gate), ACL_SUCCESS);
}

// A hold that nothing can end any more fails instead of hanging: the event destroyed
// with no record queued, a wait longer than aclrtSetOpWaitTimeout, the stream destroyed.
TEST(Event, AHoldThatCannotEndFailsInsteadOfHanging) {
    {
        StreamGuard g;
        aclrtEvent never;
        ASSERT_EQ(aclrtCreateEvent(&never), ACL_SUCCESS);
        ASSERT_EQ(aclrtStreamWaitEvent(g.s, never), ACL_SUCCESS);
        ASSERT_EQ(aclrtDestroyEvent(never), ACL_SUCCESS);
        EXPECT_EQ(aclrtSynchronizeStream(g.s), ACL_ERROR_RT_PARAM_INVALID);
    }
    {
        StreamGuard g;
        aclrtEvent never;
        ASSERT_EQ(aclrtCreateEvent(&never), ACL_SUCCESS);
        ASSERT_EQ(aclrtSetOpWaitTimeout(1), ACL_SUCCESS);
        ASSERT_EQ(aclrtStreamWaitEvent(g.s, never), ACL_SUCCESS);
        auto start = std::chrono::steady_clock::now();
        EXPECT_EQ(aclrtSynchronizeStream(g.s), ACL_ERROR_RT_EVENT_SYNC_TIMEOUT);
        EXPECT_GE(std::chrono::steady_clock::now() - start, 900ms);
        ASSERT_EQ(aclrtSetOpWaitTimeout(0), ACL_SUCCESS);
        aclrtDestroyEvent(never);
    }
    aclrtStream s;
    ASSERT_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
    aclrtEvent never;
    ASSERT_EQ(aclrtCreateEvent(&never), ACL_SUCCESS);
    ASSERT_EQ(aclrtStreamWaitEvent(s, never), ACL_SUCCESS);
    auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_LT(std::chrono::steady_clock::now() - start, 5s) << "destroying a held stream hung";
    aclrtDestroyEvent(never);
}

TEST(Stream, DestroyDrainsQueuedWorkAndRejectsLaterUse) {
    aclrtStream s;
    ASSERT_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
    std::atomic<int> ran{0};
    for (int i = 0; i < 10; ++i) hostccl::runtime::resolveStream(s)->enqueue([&] { ++ran; return 0; });
    ASSERT_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_EQ(ran.load(), 10);
    EXPECT_EQ(aclrtSynchronizeStream(s), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtDestroyStream(s), ACL_ERROR_INVALID_PARAM);
}

TEST(Memory, DeviceMemoryIsSharedMappedAndTracked) {
    void* p = nullptr;
    ASSERT_EQ(aclrtMalloc(&p, 1 << 20, ACL_MEM_MALLOC_HUGE_ONLY), ACL_SUCCESS);
    auto a = hostccl::runtime::findAllocation(static_cast<char*>(p) + 12345);
    ASSERT_TRUE(a.has_value());
    EXPECT_EQ(a->base, p);
    EXPECT_EQ(a->size, size_t(1) << 20);
    EXPECT_GE(a->fd, 0);
    EXPECT_FALSE(hostccl::runtime::findAllocation(static_cast<char*>(p) + (1 << 20)).has_value());
    std::memset(p, 7, 1 << 20);
    ASSERT_EQ(aclrtFree(p), ACL_SUCCESS);
    EXPECT_EQ(aclrtFree(p), ACL_ERROR_INVALID_PARAM);  // twice
    int local = 0;
    EXPECT_EQ(aclrtFree(&local), ACL_ERROR_INVALID_PARAM);  // not ours
    EXPECT_EQ(aclrtMalloc(&p, 0, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtMalloc(nullptr, 16, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM);
    size_t freeBytes = 0, total = 0;
    EXPECT_EQ(aclrtGetMemInfo(ACL_HBM_MEM, &freeBytes, &total), ACL_SUCCESS);
    EXPECT_GT(total, 0u);
    EXPECT_LE(freeBytes, total);
}

// aclrtFree tells observers (the RDMA registration cache) the freed range while its
// pages are still mapped, and only for real frees.
namespace {
struct SeenRelease {
    const void* watched = nullptr;  // the observer stays for the process: it looks only at this
    int calls = 0;
    size_t size = 0;
    bool stillInTable = true;
    char firstByte = 0;
} g_seen;
void recordRelease(const void* base, size_t size) {
    if (base != g_seen.watched) return;
    ++g_seen.calls;
    g_seen.size = size;
    g_seen.stillInTable = hostccl::runtime::findAllocation(base).has_value();
    g_seen.firstByte = *static_cast<const volatile char*>(base);  // must still be mapped
}
}  // namespace

TEST(Memory, FreeNotifiesReleaseObserversBeforeUnmapping) {
    hostccl::runtime::addReleaseObserver(&recordRelease);
    void* p = nullptr;
    ASSERT_EQ(aclrtMalloc(&p, 8192, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    std::memset(p, 9, 8192);
    g_seen.watched = p;
    EXPECT_EQ(aclrtFree(static_cast<char*>(p) + 4096), ACL_ERROR_INVALID_PARAM);  // not a base: no release
    EXPECT_EQ(g_seen.calls, 0);
    ASSERT_EQ(aclrtFree(p), ACL_SUCCESS);
    g_seen.watched = nullptr;
    EXPECT_EQ(g_seen.calls, 1);
    EXPECT_EQ(g_seen.size, 8192u);
    EXPECT_FALSE(g_seen.stillInTable);
    EXPECT_EQ(g_seen.firstByte, 9);
}

TEST(Device, CountCurrentAndSocName) {
    uint32_t count = 0;
    ASSERT_EQ(aclrtGetDeviceCount(&count), ACL_SUCCESS);
    EXPECT_EQ(count, 8u);  // HOSTCCL_DEVICE_COUNT default
    EXPECT_EQ(aclrtSetDevice(int32_t(count)), ACL_ERROR_RT_INVALID_DEVICEID);
    std::thread([] {
        int32_t d = 5;
        EXPECT_EQ(aclrtGetDevice(&d), ACL_ERROR_INVALID_DEVICE);  // none set on this thread
        EXPECT_EQ(aclrtSetDevice(3), ACL_SUCCESS);
        EXPECT_EQ(aclrtGetDevice(&d), ACL_SUCCESS);
        EXPECT_EQ(d, 3);
    }).join();
    EXPECT_STREQ(aclrtGetSocName(), "Ascend910B1");
    EXPECT_EQ(aclInit(nullptr), ACL_SUCCESS);
    EXPECT_EQ(aclInit(nullptr), ACL_ERROR_REPEAT_INITIALIZE);
    EXPECT_EQ(aclFinalize(), ACL_SUCCESS);
    EXPECT_EQ(aclFinalize(), ACL_ERROR_REPEAT_FINALIZE);
}
