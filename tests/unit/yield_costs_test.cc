// When a waiting thread stops yielding (transports/yield_costs.h): after a few long
// yields within a second, for a second; short yields and lone long ones change nothing.
#include <gtest/gtest.h>

#include "transports/yield_costs.h"

using hostccl::transport::YieldCosts;

namespace {
constexpr uint64_t kMs = 1'000'000;
constexpr uint64_t kLong = YieldCosts::kLongYieldNs + 1;
constexpr uint64_t kShort = YieldCosts::kLongYieldNs;
}  // namespace

TEST(YieldCosts, ShortYieldsKeepYieldingHoweverMany) {
    YieldCosts c;
    uint64_t now = 5000 * kMs;
    for (int i = 0; i < 10000; ++i) c.yielded(kShort, now += kShort);
    EXPECT_TRUE(c.yieldsPay(now));
}

TEST(YieldCosts, AFewLongYieldsWithinASecondStopYieldsForASecond) {
    YieldCosts c;
    uint64_t now = 5000 * kMs;
    for (int i = 1; i < YieldCosts::kLongYieldsToStop; ++i) {
        c.yielded(kLong, now += 100 * kMs);
        EXPECT_TRUE(c.yieldsPay(now)) << i << " long yields";
    }
    c.yielded(kLong, now += 100 * kMs);
    const uint64_t stopped = now;
    EXPECT_FALSE(c.yieldsPay(stopped));
    EXPECT_FALSE(c.yieldsPay(stopped + YieldCosts::kNoYieldsForNs - 1));
    EXPECT_TRUE(c.yieldsPay(stopped + YieldCosts::kNoYieldsForNs));
    // Yielding again, it needs as many long ones again to stop.
    now = stopped + YieldCosts::kNoYieldsForNs;
    c.yielded(kLong, now += kMs);
    EXPECT_TRUE(c.yieldsPay(now));
}

TEST(YieldCosts, LongYieldsMoreThanASecondApartNeverStopYields) {
    YieldCosts c;
    uint64_t now = 5000 * kMs;
    for (int i = 0; i < 20; ++i) {
        c.yielded(kLong, now += YieldCosts::kNoYieldsForNs + kMs);
        EXPECT_TRUE(c.yieldsPay(now)) << "long yield " << i;
    }
}
