// The flight recorder's ring: what a dump shows of the last ops, and that a dump taken
// while ops are queued and run beside it shows each op whole (its entries are seqlocks
// written without a lock).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

#include "common/wall_clock.h"
#include "core/flight_recorder.h"

namespace hostccl {
namespace {

CollArgs allReduceOf(uint64_t count) {
    CollArgs a;
    a.type = CollType::AllReduce;
    a.count = count;
    return a;
}

nlohmann::json dump(const FlightRecorder& r) {
    return nlohmann::json::parse(r.json({"c", 1, 0, 2, "host", 1}, "test", HCCL_SUCCESS, -1, ""))["ops"];
}

// A capacity that is not a power of two: the dump shows exactly that many, the newest,
// each in the state its last report left it.
TEST(FlightRecorder, ADumpShowsTheLastOpsAsAskedInTheirStates) {
    FlightRecorder r(5);
    for (uint64_t i = 1; i <= 12; ++i) {
        const uint64_t id = r.queued(allReduceOf(i * 3));
        ASSERT_EQ(id, i);
        if (i <= 10) r.started(id, 100 + i, 1000 + int64_t(i));
        if (i <= 9) r.ended(id, i == 9 ? HCCL_E_TIMEOUT : HCCL_SUCCESS, "ring", i == 9 ? 1 : -1, 2000 + int64_t(i));
    }
    const nlohmann::json ops = dump(r);
    ASSERT_EQ(ops.size(), 5u);
    const char* states[] = {"done", "failed", "running", "queued", "queued"};
    for (size_t k = 0; k < 5; ++k) {
        const uint64_t id = 8 + k;
        EXPECT_EQ(ops[k]["id"], id);
        EXPECT_EQ(ops[k]["count"], id * 3);
        EXPECT_EQ(ops[k]["state"], states[k]) << "op " << id;
        EXPECT_EQ(ops[k]["seq"], id <= 10 ? 100 + id : 0);
    }
    EXPECT_EQ(ops[0]["algorithm"], "ring");
    EXPECT_EQ(ops[1]["result"], "HCCL_E_TIMEOUT");
    EXPECT_EQ(ops[1]["blamed_rank"], 1);
    EXPECT_EQ(ops[2]["started_us"], 1010);
    EXPECT_FALSE(ops[2].contains("ended_us"));
}

// One thread queues, starts and ends ops as a stream would while another dumps: every op a
// dump shows is whole (its count, sequence number and times all belong to it).
TEST(FlightRecorder, DumpsBesideRunningOpsShowEachOpWhole) {
    FlightRecorder r(8);
    std::atomic<bool> stop{false};
    std::thread runner([&] {
        for (uint64_t i = 1; !stop.load(); ++i) {
            const uint64_t id = r.queued(allReduceOf(i * 7));
            r.started(id, id * 2, int64_t(id) * 10);
            r.ended(id, HCCL_SUCCESS, "ring", -1, int64_t(id) * 10 + 1);
        }
    });
    size_t seen = 0;
    for (int d = 0; d < 2000; ++d) {
        for (const auto& op : dump(r)) {
            const uint64_t id = op["id"];
            EXPECT_EQ(op["count"], id * 7);
            if (op["state"] == "queued") continue;
            EXPECT_EQ(op["seq"], id * 2);
            EXPECT_EQ(op["started_us"], int64_t(id) * 10);
            if (op["state"] == "done") {
                EXPECT_EQ(op["ended_us"], int64_t(id) * 10 + 1);
            }
            ++seen;
        }
    }
    stop = true;
    runner.join();
    EXPECT_GT(seen, 0u);
}

// Wall time from a steady reading follows the system clock.
TEST(WallClock, FollowsTheSystemClock) {
    for (int i = 0; i < 3; ++i) {
        const int64_t wall = std::chrono::duration_cast<std::chrono::microseconds>(
                                 std::chrono::system_clock::now().time_since_epoch())
                                 .count();
        const int64_t derived = wallUsAt(std::chrono::steady_clock::now());
        EXPECT_NEAR(double(derived), double(wall), 2000.0);
        std::this_thread::sleep_for(std::chrono::milliseconds(600));  // past one resample
    }
}

}  // namespace
}  // namespace hostccl
