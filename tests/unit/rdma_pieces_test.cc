// The RDMA transport's parts that need no device: GID choice (from tables as
// rdma_rxe and real RoCE NICs present them), the registration cache, credits.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <set>

#include "transports/rdma/credit_window.h"
#include "transports/rdma/gid_select.h"
#include "transports/rdma/registration_cache.h"
#include "transports/rdma/ring_shape.h"

using namespace hostccl::transport::rdma;

namespace {
GidEntry entry(int index, const std::string& gid, const std::string& type, const std::string& netdev = "eth0") {
    GidEntry e;
    e.index = index;
    EXPECT_TRUE(parseGid(gid, &e.gid)) << gid;
    e.type = type;
    e.netdev = netdev;
    return e;
}
}  // namespace

TEST(RdmaGid, ParsesAndFormatsSysfsText) {
    Gid g;
    ASSERT_TRUE(parseGid("0000:0000:0000:0000:0000:ffff:0a00:0002", &g));
    EXPECT_EQ(g[10], 0xff);
    EXPECT_EQ(g[12], 10);
    EXPECT_EQ(g[15], 2);
    EXPECT_EQ(formatGid(g), "0000:0000:0000:0000:0000:ffff:0a00:0002");
    for (const char* bad : {"", "fe80::1", "0000:0000:0000:0000:0000:ffff:0a00", "0000:0000:0000:0000:0000:ffff:0a00:0002x",
                            "zzzz:0000:0000:0000:0000:ffff:0a00:0002"})
        EXPECT_FALSE(parseGid(bad, &g)) << bad;
    Gid m;
    ASSERT_TRUE(ipv4MappedGid("127.0.0.1", &m));
    EXPECT_EQ(formatGid(m), "0000:0000:0000:0000:0000:ffff:7f00:0001");
    EXPECT_FALSE(ipv4MappedGid("not an ip", &m));
}

// rdma_rxe on lo: [0] link-local (from the all-zero MAC), [1] ::ffff:127.0.0.1, [2] ::1.
TEST(RdmaGid, ChoosesTheIpv4MappedRoceV2Entry) {
    std::vector<GidEntry> rxe = {entry(0, "fe80:0000:0000:0000:0200:00ff:fe00:0000", "RoCE v2", "lo"),
                                 entry(1, "0000:0000:0000:0000:0000:ffff:7f00:0001", "RoCE v2", "lo"),
                                 entry(2, "0000:0000:0000:0000:0000:0000:0000:0001", "RoCE v2", "lo")};
    GidChoice c = chooseGid(rxe, "127.0.0.1", -1);
    EXPECT_EQ(c.index, 1) << c.why;
    // A NIC with v1 and v2 entries per address, two addresses: the v2 entry of ours.
    std::vector<GidEntry> nic = {entry(0, "fe80:0000:0000:0000:0a00:27ff:fe4e:7f3b", "IB/RoCE v1"),
                                 entry(1, "fe80:0000:0000:0000:0a00:27ff:fe4e:7f3b", "RoCE v2"),
                                 entry(2, "0000:0000:0000:0000:0000:ffff:c0a8:0105", "IB/RoCE v1"),
                                 entry(3, "0000:0000:0000:0000:0000:ffff:c0a8:0105", "RoCE v2"),
                                 entry(4, "0000:0000:0000:0000:0000:ffff:0a00:0007", "IB/RoCE v1"),
                                 entry(5, "0000:0000:0000:0000:0000:ffff:0a00:0007", "RoCE v2")};
    EXPECT_EQ(chooseGid(nic, "10.0.0.7", -1).index, 5);
    EXPECT_EQ(chooseGid(nic, "192.168.1.5", -1).index, 3);
    // Our address is not on the port: the first IPv4-mapped v2 entry, and the reason says so.
    c = chooseGid(nic, "172.16.0.1", -1);
    EXPECT_EQ(c.index, 3);
    EXPECT_NE(c.why.find("none is mapped from 172.16.0.1"), std::string::npos) << c.why;
    // The override wins when it names a populated entry; else nothing is chosen.
    EXPECT_EQ(chooseGid(nic, "10.0.0.7", 0).index, 0);
    c = chooseGid(nic, "10.0.0.7", 9);
    EXPECT_EQ(c.index, -1);
    EXPECT_NE(c.why.find("HOSTCCL_RDMA_GID_INDEX=9"), std::string::npos) << c.why;
    // Only link-local and v1 entries: nothing usable.
    c = chooseGid({nic[0], nic[1], nic[2]}, "10.0.0.7", -1);
    EXPECT_EQ(c.index, -1);
    EXPECT_NE(c.why.find("no IPv4-mapped RoCE v2 GID"), std::string::npos) << c.why;
}

TEST(RdmaGid, ReadsASysfsPortDirectory) {
    std::string port = "/tmp/hostccl-gid-test-" + std::to_string(getpid());
    for (const char* d : {"", "/gids", "/gid_attrs", "/gid_attrs/types", "/gid_attrs/ndevs"}) mkdir((port + d).c_str(), 0755);
    auto put = [&](const std::string& file, const std::string& text) { std::ofstream(port + file) << text << "\n"; };
    put("/gids/0", "fe80:0000:0000:0000:0200:00ff:fe00:0000");
    put("/gids/1", "0000:0000:0000:0000:0000:ffff:7f00:0001");
    put("/gids/7", "0000:0000:0000:0000:0000:0000:0000:0000");  // unpopulated: skipped
    put("/gid_attrs/types/0", "RoCE v2");
    put("/gid_attrs/types/1", "RoCE v2");
    put("/gid_attrs/ndevs/0", "lo");
    put("/gid_attrs/ndevs/1", "lo");
    auto table = readGidTable(port);
    ASSERT_EQ(table.size(), 2u);
    EXPECT_EQ(table[1].index, 1);
    EXPECT_EQ(table[1].type, "RoCE v2");
    EXPECT_EQ(table[1].netdev, "lo");
    EXPECT_EQ(chooseGid(table, "127.0.0.1", -1).index, 1);
    EXPECT_TRUE(readGidTable(port + "/missing").empty());
    std::system(("rm -rf " + port).c_str());
}

namespace {
// Records what is registered; refuses ranges that start at `refuseAt`.
class FakeRegistrar : public Registrar {
public:
    void* registerMemory(void* addr, size_t len, uint32_t* lkey, uint32_t* rkey, std::string* why) override {
        if (addr == refuseAt) {
            *why = "refused";
            return nullptr;
        }
        ++registered;
        live.insert({reinterpret_cast<uintptr_t>(addr), len});
        *lkey = *rkey = uint32_t(registered);
        return new std::pair<uintptr_t, size_t>(reinterpret_cast<uintptr_t>(addr), len);
    }
    void deregister(void* handle) override {
        auto* r = static_cast<std::pair<uintptr_t, size_t>*>(handle);
        EXPECT_EQ(live.erase(*r), 1u);
        delete r;
    }
    int registered = 0;
    void* refuseAt = nullptr;
    std::set<std::pair<uintptr_t, size_t>> live;
};
char* at(uintptr_t a) { return reinterpret_cast<char*>(a); }
}  // namespace

TEST(RdmaRegistrationCache, RegistersPagesOnceAndFindsThemAgain) {
    FakeRegistrar fake;
    {
        RegistrationCache cache(fake, 3, 4096);
        std::string why;
        const Registration* r = cache.acquire(at(0x10010), 100, &why);
        ASSERT_NE(r, nullptr);
        EXPECT_EQ(r->begin, 0x10000u);
        EXPECT_EQ(r->end, 0x11000u);
        EXPECT_EQ(cache.acquire(at(0x10f00), 0x100, &why)->lkey, r->lkey);  // inside: a hit
        EXPECT_EQ(fake.registered, 1);
        EXPECT_EQ(cache.hits(), 1u);
        // Crossing the end: a new registration replaces the old one (no overlaps kept).
        r = cache.acquire(at(0x10f00), 0x200, &why);
        EXPECT_EQ(r->begin, 0x10000u);
        EXPECT_EQ(r->end, 0x12000u);
        EXPECT_EQ(cache.size(), 1u);
        EXPECT_EQ(fake.live.size(), 1u);
        // Full (capacity 3): the least recently used goes.
        cache.acquire(at(0x20000), 10, &why);
        cache.acquire(at(0x30000), 10, &why);
        cache.acquire(at(0x10000), 10, &why);  // touch the first again
        cache.acquire(at(0x40000), 10, &why);  // evicts 0x20000
        EXPECT_EQ(cache.size(), 3u);
        EXPECT_EQ(fake.live.count({0x20000, 0x1000}), 0u);
        EXPECT_EQ(fake.live.count({0x10000, 0x2000}), 1u);
        // Freed memory: every registration touching it is dropped.
        cache.invalidate(at(0x11fff), 0x1f000);  // touches 0x10000-0x12000 and 0x30000
        EXPECT_EQ(cache.size(), 1u);
        EXPECT_EQ(fake.live.count({0x40000, 0x1000}), 1u);
        // A refusal leaves nothing behind and says why.
        fake.refuseAt = at(0x50000);
        EXPECT_EQ(cache.acquire(at(0x50000), 1, &why), nullptr);
        EXPECT_EQ(why, "refused");
        EXPECT_EQ(cache.size(), 1u);
    }
    EXPECT_TRUE(fake.live.empty());  // the destructor deregistered the rest
}

// Registrations under posted writes are pinned: eviction passes them over (the cache
// grows instead), an unpinned one can go again, and a pin that outlived an invalidation
// does not touch the registration that replaced it.
TEST(RdmaRegistrationCache, PinnedRegistrationsSurviveEviction) {
    FakeRegistrar fake;
    RegistrationCache cache(fake, 2, 4096);
    std::string why;
    RegistrationPin a, b;
    ASSERT_NE(cache.acquirePinned(at(0x10000), 0x1000, &a, &why), nullptr);
    ASSERT_NE(cache.acquirePinned(at(0x20000), 0x1000, &b, &why), nullptr);
    EXPECT_NE(a.id, b.id);
    cache.acquire(at(0x30000), 10, &why);  // full and all pinned: grows to 3
    EXPECT_EQ(cache.size(), 3u);
    EXPECT_EQ(fake.live.count({0x10000, 0x1000}), 1u);
    EXPECT_EQ(fake.live.count({0x20000, 0x1000}), 1u);
    // A range crossing a pinned registration's end cannot replace it: refused, it stays.
    EXPECT_EQ(cache.acquire(at(0x10f00), 0x200, &why), nullptr);
    EXPECT_NE(why.find("in use"), std::string::npos) << why;
    EXPECT_EQ(fake.live.count({0x10000, 0x1000}), 1u);
    EXPECT_EQ(cache.size(), 3u);
    cache.unpin(a);
    cache.acquire(at(0x40000), 10, &why);  // evicts the unpinned 0x10000 (older than 0x30000)
    EXPECT_EQ(fake.live.count({0x10000, 0x1000}), 0u);
    EXPECT_EQ(fake.live.count({0x20000, 0x1000}), 1u);
    // Freed while pinned: dropped all the same; the stale pin is ignored later.
    cache.invalidate(at(0x20000), 0x1000);
    EXPECT_EQ(fake.live.count({0x20000, 0x1000}), 0u);
    RegistrationPin again;
    ASSERT_NE(cache.acquirePinned(at(0x20000), 0x1000, &again, &why), nullptr);
    EXPECT_NE(again.id, b.id);
    cache.unpin(b);  // stale: must not release `again`
    cache.acquire(at(0x50000), 10, &why);
    cache.acquire(at(0x60000), 10, &why);
    EXPECT_EQ(fake.live.count({0x20000, 0x1000}), 1u);  // still pinned by `again`
    cache.unpin(again);
    cache.acquire(at(0x70000), 10, &why);
    cache.acquire(at(0x80000), 10, &why);
    EXPECT_EQ(fake.live.count({0x20000, 0x1000}), 0u);
    EXPECT_EQ(cache.size(), 2u);
}

TEST(RdmaCredits, SenderNeverOverrunsTheRing) {
    SendCredits s(4);
    std::vector<uint32_t> slots;
    while (s.canSend()) slots.push_back(s.take());
    EXPECT_EQ(slots, (std::vector<uint32_t>{0, 1, 2, 3}));
    EXPECT_FALSE(s.returned(5));  // more than were taken: refused, nothing changes
    EXPECT_EQ(s.available(), 0u);
    EXPECT_TRUE(s.returned(2));
    EXPECT_EQ(s.take(), 0u);  // ring order continues
    EXPECT_EQ(s.take(), 1u);
    EXPECT_FALSE(s.canSend());
}

TEST(RdmaCredits, ReceiverReturnsInBatchesOrWhenIdle) {
    CreditReturns r(8);
    r.consumed();
    r.consumed();
    EXPECT_EQ(r.due(false), 0u);  // below half the ring
    EXPECT_EQ(r.due(true), 2u);   // idle: give back what is owed
    r.consumed();
    r.consumed();
    EXPECT_EQ(r.due(false), 4u);
    r.sent(4);
    EXPECT_EQ(r.owed(), 0u);
    EXPECT_EQ(r.due(true), 0u);
}

// Rings shaped for the communicator's size so a rank's n - 1 links fit its budget.
TEST(RdmaRingShape, FullRingsWhileTheyFitThenShrinkToTheBudget) {
    const uint64_t kBudget = uint64_t(1) << 30;
    const RingShape wanted;  // 8 x 1 MiB: 16 MiB per link
    for (uint32_t n : {2u, 8u, 65u}) {
        RingShape s = ringShapeFor(n, kBudget, wanted);
        EXPECT_EQ(s.slots, 8u) << n;
        EXPECT_EQ(s.slotBytes, 1u << 20) << n;
    }
    RingShape at66 = ringShapeFor(66, kBudget, wanted);
    EXPECT_EQ(at66.slots, 4u);
    EXPECT_EQ(at66.slotBytes, 1u << 20);
    RingShape at1000 = ringShapeFor(1000, kBudget, wanted);
    EXPECT_EQ(at1000.slots, 4u);
    EXPECT_EQ(at1000.slotBytes, 128u * 1024);
    EXPECT_LE(at1000.linkBytes() * 999, kBudget);
    // Every size up to 16k ranks fits the budget, or sits at the floor.
    for (uint32_t n = 2; n <= 16384; n += 37) {
        RingShape s = ringShapeFor(n, kBudget, wanted);
        const bool atFloor = s.slots == kMinSlots && s.slotBytes == kMinSlotBytes;
        EXPECT_TRUE(atFloor || s.linkBytes() * (n - 1) <= kBudget) << n;
        EXPECT_EQ(s.slotBytes % 16, 0u) << n;
    }
}

TEST(RdmaRingShape, NeverGrowsAndStopsAtTheFloor) {
    RingShape small;
    small.slots = 2;
    small.slotBytes = 4096;
    RingShape s = ringShapeFor(100000, 1, small);  // nothing fits: what was asked stays
    EXPECT_EQ(s.slots, 2u);
    EXPECT_EQ(s.slotBytes, 4096u);
    RingShape floor = ringShapeFor(100000, 1, RingShape{});
    EXPECT_EQ(floor.slots, kMinSlots);
    EXPECT_EQ(floor.slotBytes, kMinSlotBytes);
    RingShape odd;
    odd.slotBytes = 1000000;  // halves to 125000, not a multiple of 16
    RingShape halved = ringShapeFor(1000, uint64_t(1) << 30, odd);
    EXPECT_EQ(halved.slotBytes, 124992u);
    EXPECT_EQ(halved.slots, 4u);
}
