// Sleeping on several shared-memory doorbells at once (transports/doorbell.h).
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "transports/doorbell.h"

using hostccl::transport::SleepWord;
using Clock = std::chrono::steady_clock;

namespace {
// A sleeper on three words; another thread bumps and wakes only `which`. The
// sleeper must return on that wake-up, long before its 20 s timeout.
void wakesOn(size_t which) {
    std::atomic<uint32_t> words[3] = {{5}, {6}, {7}};
    SleepWord w[3];
    for (int i = 0; i < 3; ++i) w[i] = SleepWord{&words[i], words[i].load()};
    std::thread waker([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        words[which].fetch_add(1);
        hostccl::transport::wakeWord(&words[which]);
    });
    auto start = Clock::now();
    hostccl::transport::sleepOnWords(w, 3, 20 * 1000 * 1000);
    waker.join();
    EXPECT_LT(Clock::now() - start, std::chrono::seconds(10)) << "not woken by word " << which;
}
}  // namespace

TEST(Doorbell, AnyOfSeveralWordsWakesTheSleeper) {
    for (size_t i = 0; i < 3; ++i) wakesOn(i);
}

TEST(Doorbell, AChangedWordMeansNoSleep) {
    std::atomic<uint32_t> a{1}, b{2};
    SleepWord w[2] = {{&a, 1}, {&b, 3}};  // b already moved past what the caller saw
    auto start = Clock::now();
    hostccl::transport::sleepOnWords(w, 2, 20 * 1000 * 1000);
    EXPECT_LT(Clock::now() - start, std::chrono::seconds(10));
}

TEST(Doorbell, TimesOutWithoutAWake) {
    std::atomic<uint32_t> a{1}, b{2};
    SleepWord w[2] = {{&a, 1}, {&b, 2}};
    auto start = Clock::now();
    hostccl::transport::sleepOnWords(w, 2, 30 * 1000);
    EXPECT_GE(Clock::now() - start, std::chrono::milliseconds(25));
}
