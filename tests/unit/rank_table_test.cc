// Rank table parsing: a valid table, and each way a table can be wrong, with an
// error that names the field.
#include <gtest/gtest.h>

#include "core/bootstrap/rank_table.h"

using namespace hostccl;

namespace {
const char* kGood = R"({"status":"completed","version":"1.0","server_count":"2","server_list":[
  {"server_id":"node_0","host_ip":"10.0.0.1","device":[
     {"device_id":"0","device_ip":"192.168.1.8","rank_id":"0","host_port":"60001"},
     {"device_id":"1","device_ip":"192.168.1.9","rank_id":"1"}]},
  {"server_id":"node_1","device":[{"device_id":"0","device_ip":"192.168.1.10","rank_id":"2"}]}]})";

std::string errorFor(const std::string& json) {
    RankTable t;
    std::string why;
    HcclResult rc = parseRankTable(json, &t, &why);
    EXPECT_EQ(rc, HCCL_E_PARA) << json;
    return why;
}

std::string replaced(std::string s, const std::string& from, const std::string& to) {
    size_t p = s.find(from);
    EXPECT_NE(p, std::string::npos) << from;
    return s.replace(p, from.size(), to);
}
}  // namespace

TEST(RankTable, ParsesAValidTable) {
    RankTable t;
    std::string why;
    ASSERT_EQ(parseRankTable(kGood, &t, &why), HCCL_SUCCESS) << why;
    ASSERT_EQ(t.ranks.size(), 3u);
    EXPECT_EQ(t.serverCount, 2u);
    EXPECT_EQ(t.ranks[0].hostIp, "10.0.0.1");
    EXPECT_EQ(t.ranks[0].hostPort, 60001);
    EXPECT_EQ(t.ranks[1].deviceIp, "192.168.1.9");
    EXPECT_EQ(t.ranks[2].serverId, "node_1");
    EXPECT_EQ(t.ranks[2].serverIndex, 1u);
}

TEST(RankTable, NamesTheBrokenField) {
    EXPECT_NE(errorFor("{not json").find("not valid JSON"), std::string::npos);
    EXPECT_NE(errorFor(replaced(kGood, "completed", "initializing")).find("status"), std::string::npos);
    EXPECT_NE(errorFor(replaced(kGood, R"("version":"1.0",)", "")).find("version: missing"), std::string::npos);
    EXPECT_NE(errorFor(replaced(kGood, R"("server_count":"2")", R"("server_count":"3")")).find("server_count"),
              std::string::npos);
    EXPECT_NE(errorFor(replaced(kGood, R"("rank_id":"2")", R"("rank_id":"1")")).find("duplicate rank 1"),
              std::string::npos);
    EXPECT_NE(errorFor(replaced(kGood, R"("rank_id":"2")", R"("rank_id":"7")")).find("not below"), std::string::npos);
    EXPECT_NE(errorFor(replaced(kGood, R"("device_ip":"192.168.1.9")", R"("device_ip":"300.1.1.1")"))
                  .find("server_list[0].device[1].device_ip"),
              std::string::npos);
    EXPECT_NE(errorFor(replaced(kGood, R"("device_id":"1")", R"("device_id":"x1")")).find("device[1].device_id"),
              std::string::npos);
    EXPECT_NE(errorFor(replaced(kGood, R"("host_port":"60001")", R"("host_port":"70000")")).find("host_port"),
              std::string::npos);
    EXPECT_NE(errorFor(replaced(kGood, R"("server_id":"node_1")", R"("server_id":"node_0")")).find("duplicate server_id"),
              std::string::npos);
    EXPECT_NE(errorFor(replaced(kGood, R"("device_id":"1")", R"("device_id":"0")")).find("duplicate device_id"),
              std::string::npos);
    EXPECT_NE(errorFor(R"({"status":"completed","version":"1.0","server_count":"1","server_list":[]})").find("server_list"),
              std::string::npos);
}

TEST(RankTable, RejectsInterleavedServers) {
    // node_0 holds ranks 0 and 2, node_1 holds rank 1.
    std::string t = replaced(replaced(kGood, R"("rank_id":"1")", R"("rank_id":"X")"), R"("rank_id":"2")", R"("rank_id":"1")");
    t = replaced(t, R"("rank_id":"X")", R"("rank_id":"2")");
    EXPECT_NE(errorFor(t).find("interleaved"), std::string::npos);
}

TEST(RankTable, MissingOrUnreadableFile) {
    RankTable t;
    std::string content, why;
    EXPECT_EQ(loadRankTable("/nonexistent/table.json", &t, &content, &why), HCCL_E_OPEN_FILE_FAILURE);
    EXPECT_NE(why.find("cannot open"), std::string::npos);
}
