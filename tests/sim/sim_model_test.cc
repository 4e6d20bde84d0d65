// The simulated platform's timing model (sim/network.h) and platform
// files (platform.h): exact virtual times for messages and work, sharing of NICs,
// uplinks and cores, and refusal of bad platform files naming the field.
#include <gtest/gtest.h>

#include <algorithm>

#include "sim/calendar.h"
#include "sim/network.h"
#include "sim/probe.h"
#include "sim/platform.h"

using namespace hostccl;
using namespace hostccl::sim;

namespace {

// Two hosts of two ranks; round numbers so every expected time is exact.
Platform twoHosts() {
    Platform p;
    p.hosts = 2;
    p.ranksPerHost = 2;
    p.coresPerHost = 2;
    p.shm = LinkModel{1e-6, 1e-9, 0};  // 1 GB/s
    p.net = LinkModel{10e-6, 2e-9, 0};  // 0.5 GB/s per flow
    p.gamma = 1e-9;
    p.copyBeta = 0.5e-9;
    return p;
}

// A calendar places a request in the earliest gap long enough for it, merges what
// touches, and forgets what ended.
TEST(SimCalendar, TakesTheEarliestGapThatFits) {
    Calendar c;
    c.reserve(0, 1);
    c.reserve(3, 1);                           // busy [0,1) and [3,4)
    EXPECT_DOUBLE_EQ(c.earliestFit(0, 2), 1);  // [1,3) holds 2
    EXPECT_DOUBLE_EQ(c.earliestFit(0, 2.5), 4);
    EXPECT_DOUBLE_EQ(c.earliestFit(3.5, 1), 4);
    c.reserve(1, 2);                           // fills the gap: [0,4) in one piece
    EXPECT_DOUBLE_EQ(c.earliestFit(0, 0.5), 4);
    c.forgetBefore(4);
    EXPECT_DOUBLE_EQ(c.earliestFit(0, 0.5), 0);
}

TEST(SimNetwork, AMessageTakesItsBytesAtTheFlowRatePlusAlpha) {
    Network net(twoHosts());
    const MessageTiming local = net.transfer(0, 1, 1000, 5e-6);
    EXPECT_DOUBLE_EQ(local.start, 5e-6);
    EXPECT_DOUBLE_EQ(local.sent, 5e-6 + 1000 * 1e-9);
    EXPECT_DOUBLE_EQ(local.arrived, 5e-6 + 1000 * 1e-9 + 1e-6);
    const MessageTiming remote = net.transfer(0, 2, 1000, 0);
    EXPECT_DOUBLE_EQ(remote.arrived, 1000 * 2e-9 + 10e-6);
}

// A link's step is the least a message takes from when it can move: a small message
// arrives a step later, one whose wire time is longer hides it (alpha still follows).
TEST(SimNetwork, AStepIsTheLeastAMessageTakesAndTheWireHidesIt) {
    Platform p = twoHosts();
    p.net.step = 50e-6;
    Network net(p);
    EXPECT_DOUBLE_EQ(net.transfer(0, 2, 1000, 5e-6).arrived, 5e-6 + 50e-6);  // 2 us of bytes + 10 us alpha
    EXPECT_DOUBLE_EQ(net.transfer(1, 3, 100000, 0).arrived, 100000 * 2e-9 + 10e-6);
    EXPECT_DOUBLE_EQ(net.transfer(0, 1, 1000, 0).arrived, 1000 * 1e-9 + 1e-6);  // the shm link has none
}

// Hosts that share a machine's cores get a part of one: work on it takes longer by
// that part, a message's CPU share too.
TEST(SimNetwork, APartOfACoreWorksAtItsSpeed) {
    Platform p = twoHosts();
    p.coresPerHost = 1;
    p.coreSpeed = 0.5;
    Network net(p);
    EXPECT_DOUBLE_EQ(net.transfer(0, 1, 100000, 0).arrived, 200e-6);  // a single copy: the receiver's pass
    EXPECT_DOUBLE_EQ(net.work(0, 1e-3, 0), 200e-6 + 2e-3);  // host 0's core, after that pass
    EXPECT_DOUBLE_EQ(net.work(1, 1e-3, 0), 2e-3);
}

TEST(SimNetwork, RanksOfOneHostShareItsNic) {
    Platform p = twoHosts();
    p.nicBytesPerSec = 1e9;  // 1 GB/s per direction: two 0.5 GB/s flows fill it
    Network net(p);
    // Both ranks of host 0 send 1 MiB to host 1 at once. Each flow alone takes 2.1 ms
    // at its own rate; it crosses the NIC in 256 KiB chunks (262 us of NIC each) at its
    // own pace (524 us apart), so the second flow's chunks fill the gaps: it starts one
    // chunk later and both move at their own rate, as two TCP flows sharing the NIC do.
    const double chunkNic = 262144 / 1e9, flow = 1048576 * 2e-9;
    const MessageTiming a = net.transfer(0, 2, 1048576, 0);
    const MessageTiming b = net.transfer(1, 3, 1048576, 0);
    EXPECT_DOUBLE_EQ(a.start, 0);
    EXPECT_DOUBLE_EQ(a.sent, flow);
    EXPECT_DOUBLE_EQ(b.start, chunkNic);
    EXPECT_DOUBLE_EQ(b.sent, chunkNic + flow);
    // A third flow finds no gap until the first two are through the NIC.
    const MessageTiming c = net.transfer(0, 3, 1048576, 0);
    EXPECT_GE(c.start, 3 * chunkNic);
    EXPECT_GE(c.sent, 3 * 1048576 / 1e9);  // three flows cannot beat the NIC
}

// A message that must wait for a busy receiving NIC does not hold up its sender's
// other traffic (first come, first served per whole message did).
TEST(SimNetwork, AWaitingMessageLeavesItsSendersNicToOthers) {
    Platform p = twoHosts();
    p.hosts = 3;
    p.nicBytesPerSec = 1e9;
    p.net.beta = 1e-9;  // a flow fills the NIC
    Network net(p);
    net.transfer(4, 2, 1 << 20, 0);                            // host 2 -> host 1: host 1's NIC in busy ~1 ms
    const MessageTiming blocked = net.transfer(0, 3, 1 << 20, 0);  // host 0 -> host 1 waits for it
    const MessageTiming free = net.transfer(1, 5, 1 << 20, 0);     // host 0 -> host 2 need not
    EXPECT_GT(blocked.sent, 2e-3);
    EXPECT_LT(free.sent, 1.1e-3);
}

TEST(SimNetwork, AnOversubscribedUplinkIsShared) {
    Platform p = twoHosts();
    p.hosts = 4;
    p.nicBytesPerSec = 1e9;
    p.net.beta = 1e-9;         // a flow could fill the NIC
    p.hostsPerSwitch = 2;      // two leaves of two hosts
    p.oversubscription = 2;    // each leaf's uplink carries one NIC's worth
    Network net(p);
    // Hosts 0 and 1 (leaf 0) each send 1 MB to hosts 2 and 3 (leaf 1): one uplink for two.
    const MessageTiming a = net.transfer(0, 4, 1000000, 0);
    const MessageTiming b = net.transfer(2, 6, 1000000, 0);
    EXPECT_DOUBLE_EQ(a.sent, 1e-3);
    EXPECT_DOUBLE_EQ(b.start, 1e-3);
    EXPECT_DOUBLE_EQ(b.sent, 2e-3);
    // Inside a leaf no uplink is used: hosts 0 and 1 swap 1 MB each at once.
    net.reset();
    EXPECT_DOUBLE_EQ(net.transfer(0, 2, 1000000, 0).start, 0);
    EXPECT_DOUBLE_EQ(net.transfer(2, 0, 1000000, 0).start, 0);
    EXPECT_DOUBLE_EQ(net.transfer(0, 4, 1000000, 0).start, 1e-3);  // host 0's NIC is busy until then
}

TEST(SimNetwork, WorkBeyondTheCoresWaitsForOne) {
    Platform p = twoHosts();
    p.coresPerHost = 1;
    Network net(p);
    EXPECT_DOUBLE_EQ(net.work(0, 1e-3, 0), 1e-3);
    EXPECT_DOUBLE_EQ(net.work(0, 1e-3, 0), 2e-3);    // the one core is busy until 1 ms
    EXPECT_DOUBLE_EQ(net.work(1, 1e-3, 0), 1e-3);    // the other host's is free
    net.reset();
    EXPECT_DOUBLE_EQ(net.work(0, 1e-3, 0), 1e-3);
}

// From the single-copy size on, a shared-memory message is the receiver's one pass:
// a fused reduction runs at the slower of copy and reduction, the sender's core
// stays free, and crowded hosts pay their own alpha.
TEST(SimNetwork, ASingleCopyIsTheReceiversPass) {
    Platform p = twoHosts();
    p.coresPerHost = 1;
    p.gamma = 3e-9;
    p.shm.cpuShare = 0.5;
    p.shm.alphaCrowded = 5e-6;
    Network net(p);
    const MessageTiming t = net.transfer(0, 1, 1 << 16, 0, true);
    EXPECT_DOUBLE_EQ(t.sent, (1 << 16) * 3e-9);
    EXPECT_DOUBLE_EQ(t.arrived, t.sent + 5e-6);                          // 2 ranks on 1 core: crowded
    EXPECT_DOUBLE_EQ(net.work(0, 1e-6, 0), (1 << 16) * 3e-9 + 1e-6);     // the one core was the receiver's
    net.reset();
    const MessageTiming ring = net.transfer(0, 1, 1000, 0);             // below it: both ends copy
    EXPECT_DOUBLE_EQ(ring.sent, 1000 * 1e-9);
    EXPECT_DOUBLE_EQ(net.work(0, 1e-6, 0), 1000 * 1e-9 + 1e-6);          // two halves on the one core
}

// Across hosts a message has not left before its sender's CPU part is done, nor
// arrived before its receiver's: two hosts of one core exchanging at once with a
// cpu share of 1 (TCP's kernel work filling a core for the whole flow) take twice
// one flow's time; with a share of a half (the directions do not contend) they take
// one flow's time.
TEST(SimNetwork, TcpWorkOnBusyCoresHoldsAMessageBack) {
    for (const double share : {1.0, 0.5}) {
        Platform p = twoHosts();
        p.ranksPerHost = 1;
        p.coresPerHost = 1;
        p.net.cpuShare = share;
        Network net(p);
        const double flow = 1000 * 2e-9;
        const MessageTiming there = net.transfer(0, 1, 1000, 0);
        const MessageTiming back = net.transfer(1, 0, 1000, 0);
        const double busy = 2 * share * flow;  // each core: one send part and one receive part
        EXPECT_DOUBLE_EQ(there.sent, std::max(flow, share * flow)) << share;
        EXPECT_DOUBLE_EQ(back.sent, std::max(flow, busy)) << share;  // its core did the first one's receive first
        EXPECT_DOUBLE_EQ(back.arrived, std::max(back.sent + 10e-6, busy)) << share;
    }
}

// The net's cpu share moves toward its bulk value as the rates do.
TEST(SimNetwork, TheNetCpuShareHasABulkValue) {
    Platform p = twoHosts();
    p.net.cpuShare = 0.5;
    p.bulk = BulkRates{{{1 << 20, 0}, {4 << 20, 1}}, 0, 0, 0, 0, 0.9};
    EXPECT_DOUBLE_EQ(p.ratesFor(1 << 20).net.cpuShare, 0.5);
    EXPECT_DOUBLE_EQ(p.ratesFor(2 << 20).net.cpuShare, 0.7);
    EXPECT_DOUBLE_EQ(p.ratesFor(64 << 20).net.cpuShare, 0.9);
    p.bulk.netCpuShare = 0;  // not measured: the in-cache share holds
    EXPECT_DOUBLE_EQ(p.ratesFor(64 << 20).net.cpuShare, 0.5);
}

// An op whose data outgrows a host's cache moves and reduces at the bulk rates;
// one that fits, and rates the platform leaves out, keep the in-cache ones.
TEST(SimNetwork, DataBeyondTheCacheMovesAtTheBulkRates) {
    Platform p = twoHosts();
    p.bulk = BulkRates{{{1 << 20, 0}, {4 << 20, 0.5}, {16 << 20, 1}}, 4e-9, 0, 3e-9, 0};
    Network net(p);
    net.setWorkingSet(1 << 20);
    EXPECT_DOUBLE_EQ(net.transfer(0, 1, 1000, 0).sent, 1000 * 1e-9);
    EXPECT_DOUBLE_EQ(net.rates().gamma, 1e-9);
    net.setWorkingSet(2 << 20);  // halfway to 4 MiB on a log scale: a quarter of the way to bulk
    EXPECT_DOUBLE_EQ(net.rates().gamma, 1e-9 + 0.25 * 2e-9);
    EXPECT_DOUBLE_EQ(net.rates().shm.beta, 1e-9 + 0.25 * 3e-9);
    net.setWorkingSet(64 << 20);
    EXPECT_DOUBLE_EQ(net.transfer(0, 1, 1000, 0).sent, 1000 * 4e-9);
    EXPECT_DOUBLE_EQ(net.transfer(0, 2, 1000, 0).sent, 1000 * 2e-9);  // no bulk net rate given
    EXPECT_DOUBLE_EQ(net.rates().gamma, 3e-9);
    EXPECT_DOUBLE_EQ(net.rates().copyBeta, 0.5e-9);
}

TEST(SimPlatform, ReadsAFileAndWritesItBack) {
    const std::string text = R"({"hosts": 4, "ranks_per_host": 8, "cores_per_host": 16,
        "shm": {"alpha_us": 1.5, "bandwidth_GBps": 6},
        "net": {"alpha_us": 20, "bandwidth_GBps": 1.1, "nic_GBps": 12.5, "kind": "rdma", "step_us": 40},
        "switch": {"hosts_per_leaf": 2, "oversubscription": 3},
        "reduce_GBps": 4, "copy_GBps": 8,
        "bulk": {"curve": [[1048576, 0], [67108864, 1]], "shm_GBps": 3, "reduce_GBps": 2, "net_cpu_share": 0.8}})";
    Platform p;
    std::string why;
    ASSERT_TRUE(parsePlatform(text, &p, &why)) << why;
    ASSERT_EQ(p.bulk.curve.size(), 2u);
    EXPECT_EQ(p.bulk.curve[1].first, 67108864u);
    EXPECT_DOUBLE_EQ(p.bulk.fractionAt(8 << 20), 0.5);
    EXPECT_DOUBLE_EQ(p.bulk.shmBeta, 1e-9 / 3);
    EXPECT_DOUBLE_EQ(p.bulk.netBeta, 0);  // not given: the in-cache rate holds
    EXPECT_DOUBLE_EQ(p.bulk.netCpuShare, 0.8);
    EXPECT_EQ(p.ranks(), 32u);
    EXPECT_EQ(p.cores(), 16u);
    EXPECT_DOUBLE_EQ(p.shm.alpha, 1.5e-6);
    EXPECT_DOUBLE_EQ(p.net.step, 40e-6);
    EXPECT_DOUBLE_EQ(p.shm.step, 0);
    EXPECT_DOUBLE_EQ(p.net.beta, 1e-9 / 1.1);
    EXPECT_EQ(p.netClass, LinkClass::Rdma);
    EXPECT_DOUBLE_EQ(p.nicBytesPerSec, 12.5e9);
    EXPECT_EQ(p.hostsPerSwitch, 2u);
    EXPECT_DOUBLE_EQ(p.oversubscription, 3);
    Platform again;
    ASSERT_TRUE(parsePlatform(platformJson(p), &again, &why)) << why;
    EXPECT_EQ(platformJson(again), platformJson(p));
}

// Below 1, cores_per_host is a part of one core (emulated hosts sharing a machine's).
TEST(SimPlatform, ReadsAPartOfACore) {
    const std::string text = R"({"hosts": 4, "ranks_per_host": 2, "cores_per_host": 0.5,
        "shm": {"alpha_us": 1.5, "bandwidth_GBps": 6}, "net": {"alpha_us": 20, "bandwidth_GBps": 1.1},
        "reduce_GBps": 4, "copy_GBps": 8})";
    Platform p;
    std::string why;
    ASSERT_TRUE(parsePlatform(text, &p, &why)) << why;
    EXPECT_EQ(p.cores(), 1u);
    EXPECT_DOUBLE_EQ(p.coreSpeed, 0.5);
    EXPECT_TRUE(p.crowded());
    Platform again;
    ASSERT_TRUE(parsePlatform(platformJson(p), &again, &why)) << why;
    EXPECT_DOUBLE_EQ(again.coreSpeed, 0.5);
    EXPECT_EQ(platformJson(again), platformJson(p));
}

TEST(SimPlatform, BadFilesNameTheFieldAndChangeNothing) {
    struct Case {
        const char* text;
        const char* names;
    };
    const Case cases[] = {
        {R"({"ranks_per_host": 8, "shm": {"alpha_us": 1, "bandwidth_GBps": 6}, "reduce_GBps": 4, "copy_GBps": 8})", "'hosts' is missing"},
        {R"({"hosts": 0, "ranks_per_host": 8, "shm": {"alpha_us": 1, "bandwidth_GBps": 6}, "reduce_GBps": 4, "copy_GBps": 8})", "'hosts' must be greater than 0"},
        {R"({"hosts": 2, "ranks_per_host": 8, "shm": {"alpha_us": -1, "bandwidth_GBps": 6}, "net": {"alpha_us": 1, "bandwidth_GBps": 1}, "reduce_GBps": 4, "copy_GBps": 8})", "'shm.alpha_us' must be 0 or more"},
        {R"({"hosts": 2, "ranks_per_host": 8, "shm": {"alpha_us": 1, "bandwidth_GBps": 6}, "reduce_GBps": 4, "copy_GBps": 8})", "'net.alpha_us' is missing"},
        {R"({"hosts": 1, "ranks_per_host": 8, "shm": {"alpha_us": 1, "bandwidth_GBps": "fast"}, "reduce_GBps": 4, "copy_GBps": 8})", "'shm.bandwidth_GBps' must be a number"},
        {R"({"hosts": 1, "ranks_per_host": 8, "cores_per_host": 2.5, "shm": {"alpha_us": 1, "bandwidth_GBps": 6}, "reduce_GBps": 4, "copy_GBps": 8})", "'cores_per_host' must be a whole number, or a part of one core below 1"},
        {R"({"hosts": 2, "ranks_per_host": 8, "shm": {"alpha_us": 1, "bandwidth_GBps": 6}, "net": {"alpha_us": 1, "bandwidth_GBps": 1, "step_us": -3}, "reduce_GBps": 4, "copy_GBps": 8})", "'net.step_us' must be 0 or more"},
        {R"({"hosts": 1.5, "ranks_per_host": 8, "shm": {"alpha_us": 1, "bandwidth_GBps": 6}, "reduce_GBps": 4, "copy_GBps": 8})", "'hosts' must be a whole number"},
        {R"({"hosts": 65536, "ranks_per_host": 65536, "shm": {"alpha_us": 1, "bandwidth_GBps": 6}, "net": {"alpha_us": 1, "bandwidth_GBps": 1}, "reduce_GBps": 4, "copy_GBps": 8})", "more than 16777216 ranks"},
        {R"({"hosts": 1, "ranks_per_host": 8, "shm": {"alpha_us": 1, "bandwidth_GBps": 6}, "copy_GBps": 8})", "'reduce_GBps' is missing"},
        {R"({"hosts": 2, "ranks_per_host": 2, "shm": {"alpha_us": 1, "bandwidth_GBps": 6}, "net": {"alpha_us": 1, "bandwidth_GBps": 1, "kind": "carrier pigeon"}, "reduce_GBps": 4, "copy_GBps": 8})", "'net.kind' must be"},
        {R"({"hosts": 1, "ranks_per_host": 8, "shm": {"alpha_us": 1, "bandwidth_GBps": 6}, "reduce_GBps": 4, "copy_GBps": 8, "bulk": {"cache_bytes": 1024, "shm_GBps": 0}})", "'bulk.shm_GBps' must be greater than 0"},
        {R"({"hosts": 1, "ranks_per_host": 8, "shm": {"alpha_us": 1, "bandwidth_GBps": 6}, "reduce_GBps": 4, "copy_GBps": 8, "bulk": {"curve": [[1024, 0], [512, 1]]}})", "'bulk.curve' must list growing byte counts"},
        {R"({"hosts": 1, "ranks_per_host": 8, "shm": {"alpha_us": 1, "bandwidth_GBps": 6}, "reduce_GBps": 4, "copy_GBps": 8, "bulk": {"curve": [[1024, 1.5]]}})", "'bulk.curve' must hold"},
        {R"({"hosts": 1, "ranks_per_host": 8, "shm": {"alpha_us": 1, "bandwidth_GBps": 6}, "reduce_GBps": 4, "copy_GBps": 8, "bulk": {"net_cpu_share": 2}})", "'bulk.net_cpu_share' must be 0 or more and at most 1"},
        {"[1, 2]", "not a JSON object"},
        {"{\"hosts\": ", "not a JSON object"},
    };
    for (const Case& c : cases) {
        Platform p = twoHosts();
        const std::string before = platformJson(p);
        std::string why;
        EXPECT_FALSE(parsePlatform(c.text, &p, &why)) << c.text;
        EXPECT_NE(why.find(c.names), std::string::npos) << "got: " << why;
        EXPECT_EQ(platformJson(p), before);
    }
}

}  // namespace

namespace {
TEST(SimPlatform, ReadsHostcclCommDescribesText) {
    const std::string text =
        "# communicator c: 8 ranks on 2 hosts; this is rank 0\n"
        "# host 0 (a): 16 cores, 1 NUMA node; ranks 0 (local 0) 1 (local 1) 2 (local 2) 3 (local 3)\n"
        "# cost model: shm alpha 0.50us (crowded 0.70us) beta 4.000GB/s (probe), tcp alpha 30.00us beta 1.250GB/s "
        "(probe), rdma alpha 5.00us beta 3.000GB/s (default), reduce 8.00GB/s (probe), copy 10.00GB/s (probe)\n";
    Platform p;
    std::string why;
    ASSERT_TRUE(hostccl::sim::platformFromDescription(text, &p, &why)) << why;
    EXPECT_EQ(p.hosts, 2u);
    EXPECT_EQ(p.ranksPerHost, 4u);
    EXPECT_EQ(p.coresPerHost, 16u);
    EXPECT_DOUBLE_EQ(p.shm.alpha, 0.5e-6);
    EXPECT_DOUBLE_EQ(p.shm.beta, 1e-9 / 4);
    EXPECT_DOUBLE_EQ(p.net.alpha, 30e-6);
    EXPECT_DOUBLE_EQ(p.net.beta, 1e-9 / 1.25);
    EXPECT_DOUBLE_EQ(p.gamma, 1e-9 / 8);
    EXPECT_DOUBLE_EQ(p.copyBeta, 1e-9 / 10);
    EXPECT_FALSE(hostccl::sim::platformFromDescription("# communicator c: 7 ranks on 2 hosts\n", &p, &why));
    EXPECT_NE(why.find("not an even layout"), std::string::npos) << why;
}
}  // namespace
