// Shared-memory links between two ranks of one process (transports/shm/shm_link.cc):
// single-copy sends, whose receiver reads the sender's buffer by pointer, so a sender
// whose op fails must take the send back before its caller frees that buffer; and the
// slots, header and payload, that carry the other messages.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

#include "core/link_factory.h"
#include "transports/shm/shm_ring.h"

using hostccl::transport::Link;
using hostccl::transport::Transfer;

namespace {
constexpr size_t kBytes = 1 << 20;  // far above the single-copy threshold

struct InProcessPair {
    std::unique_ptr<Link> a, b;  // a = rank 0's end, b = rank 1's
    InProcessPair() {
        hostccl::PeerInfo r0, r1;
        r0.rank = 0;
        r1.rank = 1;
        r0.pid = r1.pid = static_cast<uint32_t>(getpid());
        std::string why;
        EXPECT_TRUE(hostccl::makeInProcessPair(r0, r1, 7, &a, &b, &why)) << why;
    }
};

Transfer sendOf(const void* src) {
    Transfer t;
    t.dir = Transfer::Dir::Send;
    t.src = src;
    t.bytes = kBytes;
    return t;
}

Transfer recvInto(void* dst) {
    Transfer t;
    t.dir = Transfer::Dir::Recv;
    t.dst = dst;
    t.bytes = kBytes;
    return t;
}

// Memory that faults when touched once unmapped, where freed heap memory would not.
char* mapBuffer() {
    void* p = mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    EXPECT_NE(p, MAP_FAILED);
    std::memset(p, 0x5a, kBytes);
    return static_cast<char*>(p);
}

// A reduction that holds the receiver inside its read until told to finish.
std::atomic<bool> readStarted{false}, releaseRead{false}, readFinished{false};
void slowCopy(void* dst, const void* /*local*/, const void* src, size_t count) {
    readStarted = true;
    while (!releaseRead) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::memcpy(dst, src, count);
    readFinished = true;
}
}  // namespace

TEST(ShmLinkSingleCopy, DeliversFromTheSendersBuffer) {
    InProcessPair pair;
    std::vector<char> src(kBytes, 3), dst(kBytes, 0);
    Transfer s = sendOf(src.data()), r = recvInto(dst.data());
    pair.a->post(&s);
    pair.b->post(&r);
    for (int i = 0; i < 1000 && !(s.complete && r.complete); ++i) {
        pair.a->progress();
        pair.b->progress();
    }
    ASSERT_TRUE(s.complete && r.complete);
    EXPECT_EQ(s.directSeq, 1u) << "the send went through the slots, not by pointer";
    EXPECT_EQ(dst, src);
}

// The sender's op failed before the receiver posted (the op abandons its links; an
// abort or destroy shuts them): its buffer is gone, and the receiver must fail
// cleanly instead of reading unmapped memory.
TEST(ShmLinkSingleCopy, AWithdrawnSendIsNeverRead) {
    for (bool abandoned : {true, false}) {
        SCOPED_TRACE(abandoned ? "abandoned" : "shut down");
        InProcessPair pair;
        char* src = mapBuffer();
        std::vector<char> dst(kBytes, 0);
        Transfer s = sendOf(src);
        pair.a->post(&s);
        pair.a->progress();  // the descriptor is in the ring
        ASSERT_EQ(s.directSeq, 1u);
        if (abandoned)
            pair.a->abandon(HCCL_E_TIMEOUT, "op failed");
        else
            pair.a->shutdown(HCCL_E_TIMEOUT, "op failed");
        EXPECT_EQ(s.error, HCCL_E_TIMEOUT);
        munmap(src, kBytes);

        Transfer r = recvInto(dst.data());
        pair.b->post(&r);
        pair.b->progress();
        EXPECT_EQ(r.error, HCCL_E_REMOTE);
        EXPECT_NE(r.errorText.find("took back"), std::string::npos) << r.errorText;
        EXPECT_EQ(dst, std::vector<char>(kBytes, 0)) << "nothing was written";
    }
}

// The receiver is already reading when the sender's op fails: abandoning the link
// returns only once that read is over, so the caller may then free the buffer.
TEST(ShmLinkSingleCopy, AReadUnderWayIsWaitedOut) {
    InProcessPair pair;
    std::vector<char> src(kBytes, 9), dst(kBytes, 0), local(kBytes, 0);
    Transfer s = sendOf(src.data());
    pair.a->post(&s);
    pair.a->progress();
    Transfer r = recvInto(dst.data());
    r.local = local.data();
    r.reduce = slowCopy;
    r.elemSize = 1;
    pair.b->post(&r);
    std::thread receiver([&] { pair.b->progress(); });
    while (!readStarted) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::thread releaser([] {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        releaseRead = true;
    });
    pair.a->abandon(HCCL_E_TIMEOUT, "op failed");
    EXPECT_TRUE(readFinished) << "abandon returned while the peer was still reading the buffer";
    releaser.join();
    receiver.join();
    EXPECT_TRUE(r.complete);
    EXPECT_EQ(dst, src);
}

namespace {
// Sends then receives `bytes` through the pair's slots (below the single-copy size),
// with the receiver's tag and size given apart from the sender's.
void exchange(InProcessPair& pair, const std::vector<char>& src, std::vector<char>* dst, size_t recvBytes,
              Transfer* r) {
    Transfer s;
    s.src = src.data();
    s.bytes = src.size();
    s.tag.seq = 9;
    r->dir = Transfer::Dir::Recv;
    r->dst = dst->data();
    r->bytes = recvBytes;
    r->tag.seq = 9;
    pair.a->post(&s);
    pair.b->post(r);
    for (int i = 0; i < 100000 && !(s.complete && r->complete) && r->error == HCCL_SUCCESS; ++i) {
        pair.a->progress();
        pair.b->progress();
    }
}
}  // namespace

// A message of up to 16 bytes travels inside its slot's first line, a larger one after
// it (up to the single-copy size, 64 KiB): each arrives whole and exact, copied or
// reduced, on either side of the boundary.
TEST(ShmLinkSlots, MessagesOnEitherSideOfTheInlineSizeArriveExactly) {
    InProcessPair pair;
    for (size_t bytes : {size_t(0), size_t(1), size_t(8), size_t(15), size_t(16), size_t(17), size_t(48), size_t(64),
                         size_t(65535)}) {
        std::vector<char> src(bytes), dst(bytes, 0);
        for (size_t i = 0; i < bytes; ++i) src[i] = char(i * 7 + bytes);
        Transfer r;
        exchange(pair, src, &dst, bytes, &r);
        ASSERT_TRUE(r.complete) << bytes << " bytes: " << r.errorText;
        EXPECT_EQ(dst, src) << bytes << " bytes";
    }
    // Received with a reduction: each float is the sum of the sender's and the local one.
    for (size_t floats : {size_t(2), size_t(4), size_t(5)}) {
        std::vector<float> mine(floats), theirs(floats), out(floats, 0);
        for (size_t i = 0; i < floats; ++i) mine[i] = float(i + 1), theirs[i] = float(10 * (i + 1));
        std::vector<char> src(floats * 4), dst(floats * 4);
        std::memcpy(src.data(), theirs.data(), src.size());
        Transfer r;
        r.local = mine.data();
        r.reduce = hostccl::reduceFunction(HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM);
        r.elemSize = 4;
        exchange(pair, src, &dst, dst.size(), &r);
        ASSERT_TRUE(r.complete) << floats << " floats: " << r.errorText;
        std::memcpy(out.data(), dst.data(), dst.size());
        for (size_t i = 0; i < floats; ++i) EXPECT_EQ(out[i], 11.0f * float(i + 1)) << floats << " floats, element " << i;
    }
}

// A receiver expecting another size fails with both sides' sizes, whether the
// message is inline or not, and its buffer is untouched.
TEST(ShmLinkSlots, ASizeMismatchIsReportedWithBothSizesAndWritesNothing) {
    for (auto sizes : {std::pair<size_t, size_t>{8, 16}, {16, 8}, {64, 32}}) {
        InProcessPair pair;
        std::vector<char> src(sizes.first, 5), dst(std::max(sizes.first, sizes.second), 0);
        Transfer r;
        exchange(pair, src, &dst, sizes.second, &r);
        EXPECT_FALSE(r.complete);
        EXPECT_EQ(r.error, HCCL_E_PARA);
        EXPECT_NE(r.errorText.find("operation mismatch"), std::string::npos) << r.errorText;
        EXPECT_NE(r.errorText.find(std::to_string(sizes.first) + " bytes"), std::string::npos) << r.errorText;
        EXPECT_NE(r.errorText.find(std::to_string(sizes.second) + " bytes"), std::string::npos) << r.errorText;
        EXPECT_EQ(dst, std::vector<char>(dst.size(), 0));
    }
}

namespace {
// `count` messages of the given sizes (cycling), each filled with its own bytes, and
// their receives; the sends are posted first.
struct MessageRun {
    std::vector<std::vector<char>> src, dst;
    std::vector<Transfer> sends, recvs;
    MessageRun(InProcessPair& pair, const std::vector<size_t>& sizes, size_t count)
        : src(count), dst(count), sends(count), recvs(count) {
        for (size_t m = 0; m < count; ++m) {
            const size_t bytes = sizes[m % sizes.size()];
            src[m].resize(bytes);
            for (size_t i = 0; i < bytes; ++i) src[m][i] = char(i * 13 + m);
            dst[m].assign(bytes, 0);
            sends[m].src = src[m].data();
            sends[m].bytes = recvs[m].bytes = bytes;
            sends[m].tag.seq = recvs[m].tag.seq = m + 1;
            recvs[m].dir = Transfer::Dir::Recv;
            recvs[m].dst = dst[m].data();
        }
        for (Transfer& s : sends) pair.a->post(&s);
    }
    size_t sendsComplete() const {
        size_t n = 0;
        while (n < sends.size() && sends[n].complete) ++n;
        return n;
    }
    // Posts every receive and progresses both ends until the last arrives (or a bound).
    void receiveAll(InProcessPair& pair) {
        for (Transfer& r : recvs) pair.b->post(&r);
        for (int i = 0; i < 100000 && !recvs.back().complete; ++i) {
            pair.b->progress();
            pair.a->progress();
        }
    }
    // Every message sent, received, and exact.
    void expectAllExact() const {
        for (size_t m = 0; m < recvs.size(); ++m) {
            ASSERT_TRUE(recvs[m].complete && sends[m].complete) << "message " << m << ": " << recvs[m].errorText;
            EXPECT_EQ(dst[m], src[m]) << "message " << m;
        }
    }
};
}  // namespace

// A sender of small messages runs ahead of a receiver that is not there by every
// header slot (where ranks outnumber cores, each rank then runs many ops per turn on
// its core), and the receiver later gets every message, in order and exact.
TEST(ShmLinkSlots, ASenderRunsAheadByEveryHeaderSlot) {
    using hostccl::transport::shm::kSlots;
    static_assert(kSlots == 64, "64 header slots gave crowded ranks long turns (shm_ring.h)");
    InProcessPair pair;
    MessageRun run(pair, {8}, kSlots + 1);
    for (int i = 0; i < 100; ++i) pair.a->progress();
    EXPECT_EQ(run.sendsComplete(), kSlots) << "inline messages take a header slot each, and nothing else";
    run.receiveAll(pair);
    run.expectAllExact();
}

// Messages over 16 bytes also take a payload slot, of which there are fewer: the
// sender stops when those run out, and as the payload slots come round again and
// again, inline and payload messages arrive in the order sent, each exact.
TEST(ShmLinkSlots, PayloadSlotsComeRoundInTheOrderSent) {
    using hostccl::transport::shm::kPayloadSlots;
    static_assert(kPayloadSlots == 8, "the expected stop below counts 8 payload slots");
    InProcessPair pair;
    // Per cycle of 5: two inline messages (8 and 0 bytes), three with payloads.
    MessageRun run(pair, {8, 1000, 0, 65535, 17}, 200);
    for (int i = 0; i < 100; ++i) pair.a->progress();
    // Payloads 1-8 are messages 1, 3, 4, 6, 8, 9, 11, 13; message 14 waits for a ninth.
    EXPECT_EQ(run.sendsComplete(), 14u);
    run.receiveAll(pair);
    run.expectAllExact();
    // Single-copy descriptors (200000 bytes) take payload slots too.
    MessageRun mixed(pair, {8, 200000, 1000, 17, 0, 65535}, 100);
    mixed.receiveAll(pair);
    mixed.expectAllExact();
}
