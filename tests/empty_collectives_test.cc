// A collective with no bytes to move (count 0 on every rank) completes at once on
// every rank, touches no buffer, and leaves the ranks in step: the op after it still
// meets the same op on every peer. Forced algorithms skip it alike (HCCL_ALGO names
// a family; an empty op has nothing for any of them to do).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "tests/support/world.h"

using namespace hostccl::test;

namespace {

constexpr float kSentinel = -7.0f;

// Runs one count-0 call of `coll` on rank r over buffers full of the sentinel.
HcclResult emptyCall(const std::string& coll, World& w, uint32_t r, std::vector<float>& in, std::vector<float>& out) {
    HcclComm c = w.comm(r);
    aclrtStream s = w.stream(r);
    const HcclDataType f = HCCL_DATA_TYPE_FP32;
    if (coll == "allreduce") return HcclAllReduce(in.data(), out.data(), 0, f, HCCL_REDUCE_SUM, c, s);
    if (coll == "allgather") return HcclAllGather(in.data(), out.data(), 0, f, c, s);
    if (coll == "reducescatter") return HcclReduceScatter(in.data(), out.data(), 0, f, HCCL_REDUCE_SUM, c, s);
    if (coll == "broadcast") return HcclBroadcast(out.data(), 0, f, 1, c, s);
    if (coll == "reduce") return HcclReduce(in.data(), out.data(), 0, f, HCCL_REDUCE_MAX, 2, c, s);
    if (coll == "alltoall") return HcclAlltoAll(in.data(), 0, f, out.data(), 0, f, c, s);
    return HCCL_E_NOT_SUPPORT;
}

// Every collective at count 0, then an allreduce of one element whose sum proves the
// ranks still meet op for op. "" on success, else what went wrong on which rank.
std::string emptyThenOne(World& w) {
    const std::vector<std::string> colls = {"allreduce", "allgather", "reducescatter", "broadcast", "reduce",
                                            "alltoall"};
    std::vector<std::string> errors(w.size());
    w.run([&](uint32_t r) {
        std::vector<float> in(8, kSentinel), out(8, kSentinel);
        for (const std::string& coll : colls) {
            const HcclResult rc = emptyCall(coll, w, r, in, out);
            if (rc != HCCL_SUCCESS || aclrtSynchronizeStream(w.stream(r)) != ACL_SUCCESS) {
                errors[r] = coll + " of 0 elements failed (" + std::to_string(rc) + ")";
                return 0;
            }
            for (size_t i = 0; i < out.size(); ++i)
                if (in[i] != kSentinel || out[i] != kSentinel) {
                    errors[r] = coll + " of 0 elements wrote element " + std::to_string(i);
                    return 0;
                }
        }
        float mine = float(r + 1), sum = 0;
        if (HcclAllReduce(&mine, &sum, 1, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, w.comm(r), w.stream(r)) !=
                HCCL_SUCCESS ||
            aclrtSynchronizeStream(w.stream(r)) != ACL_SUCCESS)
            errors[r] = "the allreduce after the empty ops failed";
        else if (sum != float(w.size() * (w.size() + 1) / 2))
            errors[r] = "the allreduce after the empty ops summed to " + std::to_string(sum);
        return 0;
    });
    for (uint32_t r = 0; r < w.size(); ++r)
        if (!errors[r].empty()) return "rank " + std::to_string(r) + ": " + errors[r];
    return "";
}

// How many ops of each algorithm rank `r`'s trace (HOSTCCL_TRACE) recorded.
std::map<std::string, int> algorithmsTraced(const std::string& prefix, uint32_t r) {
    std::map<std::string, int> ran;
    for (const auto& f : std::filesystem::directory_iterator(std::filesystem::path(prefix).parent_path())) {
        const std::string name = f.path().string();
        if (name.find(".rank" + std::to_string(r) + ".json") == std::string::npos) continue;
        std::ifstream in(name);
        const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        const std::string key = "\"algorithm\":\"";
        for (size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + 1)) {
            const size_t from = at + key.size();
            ran[text.substr(from, text.find('"', from) - from)]++;
        }
    }
    return ran;
}

TEST(EmptyCollectives, CompleteAtOnceTouchNothingAndKeepRanksInStep) {
    char dir[] = "/tmp/hostccl-empty-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    const std::string prefix = std::string(dir) + "/trace";
    setenv("HOSTCCL_TRACE", prefix.c_str(), 1);
    {
        World w(3);
        unsetenv("HOSTCCL_TRACE");
        ASSERT_TRUE(w.ok());
        EXPECT_EQ(emptyThenOne(w), "");
    }  // the traces are written as the communicators go
    for (uint32_t r = 0; r < 3; ++r) {
        const std::map<std::string, int> ran = algorithmsTraced(prefix, r);
        int others = 0;
        for (const auto& [algo, times] : ran) others += algo == "none" ? 0 : times;
        EXPECT_EQ(ran.count("none") ? ran.at("none") : 0, 6) << "rank " << r << ": the six empty ops ran an algorithm";
        EXPECT_EQ(others, 1) << "rank " << r << ": the allreduce of one element";
    }
    std::filesystem::remove_all(dir);
}

TEST(EmptyCollectives, ForcedAlgorithmsSkipThemAlike) {
    for (const char* algo : {"level0:NA;level1:ring", "level0:NA;level1:H-D_R", "level0:NA;level1:fullmesh"}) {
        SCOPED_TRACE(algo);
        setenv("HCCL_ALGO", algo, 1);
        World w(4);
        unsetenv("HCCL_ALGO");
        ASSERT_TRUE(w.ok());
        EXPECT_EQ(emptyThenOne(w), "");
    }
}

}  // namespace
