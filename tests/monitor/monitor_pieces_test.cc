// Live monitoring's pieces on hand-made snapshots: the diagnosis rules (straggler,
// slow link, stuck, and when each clears), the Prometheus text and the endpoint's
// request parsing.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>

#include "monitor/diagnosis.h"
#include "monitor/http_server.h"
#include "monitor/job_gather.h"
#include "monitor/job_view.h"
#include "monitor/prometheus.h"

namespace hostccl::monitor {
namespace {

CommSnapshot comm(uint32_t rank = 2) {
    CommSnapshot s;
    s.comm = "world";
    s.commId = 0xabc;
    s.rank = rank;
    s.size = 4;
    s.lateUs = 20000;
    return s;
}

// `late` of `total` recent ops waited `waitUs` for `peer`; the others waited for nobody.
void recentOps(CommSnapshot* s, size_t total, size_t late, int64_t peer, uint64_t waitUs) {
    for (size_t i = 0; i < total; ++i)
        s->recent.push_back({int64_t(i + 1), i < late ? peer : -1, i < late ? waitUs + i : 0});
}

TEST(Diagnosis, NamesThePeerLateInMostRecentOps) {
    CommSnapshot s = comm();
    recentOps(&s, 16, 9, 1, 200000);
    s.waits.push_back({1, "rank 1 (host b, pid 7)", 9, 1800000, 9});
    Diagnosis d({});
    const std::vector<Finding> f = d.update({s}, 0);
    ASSERT_EQ(f.size(), 1u);
    EXPECT_EQ(f[0].kind, Finding::Kind::Straggler);
    EXPECT_EQ(f[0].peer, 1);
    EXPECT_EQ(f[0].rank, 2u);
    EXPECT_EQ(f[0].who, "rank 1 (host b, pid 7)");
    EXPECT_DOUBLE_EQ(f[0].value, 200.004);  // the median of 200000..200008 us, in ms
    EXPECT_DOUBLE_EQ(f[0].reference, 9);
    EXPECT_NE(f[0].text.find("rank 1 (host b, pid 7) of comm world arrived last at 9 of the last 16"), std::string::npos)
        << f[0].text;
    EXPECT_EQ(d.appeared().size(), 1u);
    d.update({s}, 1000000);
    EXPECT_TRUE(d.appeared().empty());  // still there: logged once
}

TEST(Diagnosis, HalfTheOpsOrTooFewIsNoStraggler) {
    CommSnapshot half = comm();
    recentOps(&half, 16, 8, 1, 200000);
    CommSnapshot few = comm(3);
    recentOps(&few, 7, 7, 0, 200000);
    Diagnosis d({});
    EXPECT_TRUE(d.update({half, few}, 0).empty());
}

TEST(Diagnosis, AStragglerThatCatchesUpClears) {
    CommSnapshot late = comm();
    recentOps(&late, 16, 12, 1, 50000);
    CommSnapshot caughtUp = comm();
    recentOps(&caughtUp, 16, 4, 1, 50000);
    Diagnosis d({});
    d.update({late}, 0);
    EXPECT_TRUE(d.update({caughtUp}, 1000000).empty());
    ASSERT_EQ(d.cleared().size(), 1u);
    EXPECT_EQ(d.cleared()[0].peer, 1);
}

LinkSnapshot link(uint64_t timedBytes, uint64_t timedNs, double expected) {
    LinkSnapshot l;
    l.peer = 0;
    l.who = "rank 0 (host a, pid 5)";
    l.kind = "tcp";
    l.timedBytes = timedBytes;
    l.timedNs = timedNs;
    l.expectedBytesPerSec = expected;
    return l;
}

TEST(Diagnosis, ALinkBelowHalfTheModelOverAWindowIsSlow) {
    const uint64_t MiB = 1 << 20;
    Diagnosis d({});
    CommSnapshot s = comm();
    // 8 MiB so far: not a window yet, however slow.
    s.links = {link(8 * MiB, 1000000000, 1e9)};
    EXPECT_TRUE(d.update({s}, 0).empty());
    // 32 MiB in 0.1 s: 335 MB/s against 1 GB/s expected.
    s.links = {link(32 * MiB, 100000000, 1e9)};
    std::vector<Finding> f = d.update({s}, 1);
    ASSERT_EQ(f.size(), 1u);
    EXPECT_EQ(f[0].kind, Finding::Kind::SlowLink);
    EXPECT_EQ(f[0].peer, 0);
    EXPECT_NEAR(f[0].value, 32.0 * MiB / 0.1 / 1e9, 1e-9);
    EXPECT_DOUBLE_EQ(f[0].reference, 1.0);
    EXPECT_NE(f[0].text.find("rank 0 (host a, pid 5) -> rank 2 of comm world (tcp) moves 0.336 GB/s"), std::string::npos)
        << f[0].text;
    // The next window runs at 0.8 GB/s: cleared; until a window is full the verdict stays.
    s.links = {link(40 * MiB, 110000000, 1e9)};
    EXPECT_EQ(d.update({s}, 2).size(), 1u);
    s.links = {link(56 * MiB, 130971520, 1e9)};
    EXPECT_TRUE(d.update({s}, 3).empty());
    EXPECT_EQ(d.cleared().size(), 1u);
}

TEST(Diagnosis, ALinkWithoutAModelRateIsNeverSlow) {
    Diagnosis d({});
    CommSnapshot s = comm();
    s.links = {link(uint64_t(64) << 20, 1000000000, 0)};
    EXPECT_TRUE(d.update({s}, 0).empty());
}

TEST(Diagnosis, AnOpThatMovesNothingForTheStuckTimeIsStuck) {
    DiagnosisSettings settings;
    settings.stuckSeconds = 3;
    Diagnosis d(settings);
    CommSnapshot s = comm();
    s.running.running = true;
    s.running.type = CollType::AllReduce;
    s.running.seq = 64;
    s.running.progress = 10;
    s.running.waitingOn = 3;
    s.waitingOnWho = "rank 3 (host d, pid 9)";
    EXPECT_TRUE(d.update({s}, 0).empty());
    EXPECT_TRUE(d.update({s}, 2900000).empty());
    std::vector<Finding> f = d.update({s}, 3000000);
    ASSERT_EQ(f.size(), 1u);
    EXPECT_EQ(f[0].kind, Finding::Kind::Stuck);
    EXPECT_EQ(f[0].peer, 3);
    EXPECT_DOUBLE_EQ(f[0].value, 3);
    EXPECT_EQ(f[0].text, "stuck: AllReduce seq 64 of comm world has moved nothing for 3 s on rank 2, waiting for rank 3 (host d, pid 9)");
    // Bytes moved: the clock starts again.
    s.running.progress = 11;
    EXPECT_TRUE(d.update({s}, 3500000).empty());
    EXPECT_EQ(d.cleared().size(), 1u);
    // A new op resets it too, and an idle communicator is never stuck.
    s.running.running = false;
    EXPECT_TRUE(d.update({s}, 9000000).empty());
    // A communicator destroyed and made again under the same id starts afresh.
    s.running.running = true;
    d.update({s}, 9000000);
    d.update({}, 20000000);
    EXPECT_TRUE(d.update({s}, 20000000).empty());
}

CommSnapshot measured() {
    CommSnapshot s = comm();
    s.comm = "a\"b\\c";
    OpTypeSnapshot o;
    o.type = CollType::AllReduce;
    o.ops = 5;
    o.bytes = 40;
    o.durationUs = 30;
    o.buckets[0] = 4;  // <= 10 us
    o.buckets[2] = 1;  // <= 1 ms
    s.ops.push_back(o);
    s.lastSeq = 5;
    s.waits.push_back({1, "rank 1", 2, 1500, 0});
    s.links = {link(uint64_t(2) << 20, 2000000, 1e9)};
    s.links[0].sentBytes = 100;
    return s;
}

TEST(Prometheus, HistogramsAreCumulativeWithCountAndSum) {
    const std::string text = renderPrometheus({measured()}, {});
    const std::string labels = R"(comm="a\"b\\c",rank="2",op="allreduce")";
    for (const std::string& line : std::vector<std::string>{
             "# TYPE hostccl_collective_duration_seconds histogram",
          "hostccl_collective_duration_seconds_bucket{" + labels + R"(,le="1e-05"} 4)",
          "hostccl_collective_duration_seconds_bucket{" + labels + R"(,le="0.0001"} 4)",
          "hostccl_collective_duration_seconds_bucket{" + labels + R"(,le="0.001"} 5)",
          "hostccl_collective_duration_seconds_bucket{" + labels + R"(,le="+Inf"} 5)",
          "hostccl_collective_duration_seconds_sum{" + labels + "} 3e-05",
          "hostccl_collective_duration_seconds_count{" + labels + "} 5",
          "hostccl_collective_ops_total{" + labels + "} 5", "hostccl_collective_bytes_total{" + labels + "} 40"})
        EXPECT_NE(text.find(line + "\n"), std::string::npos) << line << "\n" << text;
}

TEST(Prometheus, EveryFamilyHasHelpAndTypeAndCountersEndInTotal) {
    const std::string text = renderPrometheus({measured()}, {});
    size_t helps = 0, types = 0, pos = 0;
    while ((pos = text.find("# TYPE ", pos)) != std::string::npos) {
        const size_t end = text.find('\n', pos);
        const std::string line = text.substr(pos, end - pos);
        ++types;
        if (line.size() > 8 && line.compare(line.size() - 8, 8, " counter") == 0) {
            EXPECT_NE(line.find("_total counter"), std::string::npos) << line;
        }
        pos = end;
    }
    pos = 0;
    while ((pos = text.find("# HELP ", pos)) != std::string::npos) ++helps, ++pos;
    EXPECT_EQ(helps, types);
    EXPECT_GT(types, 15u);
    EXPECT_NE(text.find(R"(hostccl_link_timed_seconds_total{comm="a\"b\\c",rank="2",peer="0",transport="tcp"} 0.002)"),
              std::string::npos);
    EXPECT_NE(text.find(R"(hostccl_arrival_wait_seconds_total{comm="a\"b\\c",rank="2",peer="1"} 0.0015)"),
              std::string::npos);
}

TEST(Prometheus, FindingsAreGaugesNamingThePeer) {
    Finding f;
    f.kind = Finding::Kind::Straggler;
    f.comm = "world";
    f.rank = 2;
    f.peer = 1;
    f.value = 250;  // ms
    const std::string text = renderPrometheus({}, {f});
    EXPECT_NE(text.find("hostccl_straggler_wait_seconds{comm=\"world\",rank=\"2\",peer=\"1\"} 0.25\n"), std::string::npos)
        << text;
}

// A rank's entry of its process's /status.json: at `lastSeq`, running it or not,
// its wait asleep on `waitingOn`.
nlohmann::json rankStatus(uint64_t lastSeq, bool running, int64_t waitingOn) {
    nlohmann::json j = {{"last_seq", lastSeq}, {"failed", false}, {"running", nullptr}};
    if (running) {
        j["running"] = {{"op", "AllReduce"}, {"seq", lastSeq}, {"seconds", 12.0}};
        if (waitingOn >= 0) j["running"]["waiting_on"] = {{"rank", waitingOn}, {"who", "x"}};
    }
    return j;
}

std::vector<JobRank> ranksOf(std::vector<nlohmann::json> statuses) {
    std::vector<JobRank> out;
    for (uint32_t r = 0; r < statuses.size(); ++r) out.push_back({r, "rank " + std::to_string(r) + " (host h, pid 1)", "", statuses[r]});
    return out;
}

nlohmann::json stuckFinding(uint32_t rank, int64_t peer) {
    return {{"kind", "stuck"}, {"comm", "world"}, {"comm_id", "0000000000000abc"}, {"rank", rank}, {"peer", peer}, {"text", "stuck"}};
}

TEST(JobView, FollowsStuckWaitsToTheRankThatDoesNotAnswer) {
    // 0 waits for 2, 2 waits for 3, 3 is silent; 1 has not started op 64.
    const auto ranks = ranksOf({rankStatus(64, true, 2), rankStatus(63, false, -1), rankStatus(64, true, 3), nullptr});
    const nlohmann::json findings = {stuckFinding(0, 2), stuckFinding(2, 3),
                                     {{"kind", "stuck"}, {"comm_id", "00000000000000ff"}, {"rank", 1}}};
    const nlohmann::json v = jobView("world", 0xabc, ranks, findings);
    EXPECT_EQ(v["not_answering"], nlohmann::json::array({3}));
    EXPECT_EQ(v["progress"]["text"], "ranks 0, 2 have started up to op 64; rank 1 up to 63; rank 3 did not answer");
    ASSERT_EQ(v["stuck"].size(), 2u);
    EXPECT_EQ(v["stuck"][0]["chain"], nlohmann::json::array({0, 2, 3}));
    EXPECT_EQ(v["stuck"][0]["culprit"], 3);
    EXPECT_EQ(v["stuck"][1]["chain"], nlohmann::json::array({2, 3}));
    EXPECT_EQ(v["findings"].size(), 2u);  // another communicator's finding is not this one's
    const std::string text = jobText(nlohmann::json::array({v}));
    EXPECT_NE(text.find("stuck: ranks 0, 2 are waiting (directly or through others) for rank 3 (host h, pid 1), which "
                        "does not answer"),
              std::string::npos)
        << text;
}

TEST(JobView, ARankThatHasNotStartedTheOpIsTheOneWaitedFor) {
    const auto ranks = ranksOf({rankStatus(10, true, 1), rankStatus(9, false, -1)});
    const nlohmann::json v = jobView("world", 0xabc, ranks, nlohmann::json::array({stuckFinding(0, 1)}));
    ASSERT_EQ(v["stuck"].size(), 1u);
    EXPECT_EQ(v["stuck"][0]["culprit"], 1);
    EXPECT_EQ(v["stuck"][0]["why"], "has not started seq 10 (its last is 9)");
    EXPECT_EQ(v["progress"]["text"], "rank 0 has started up to op 10; rank 1 up to 9");
}

// A stuck rank whose wait names no peer (waiting on several at once) is not said to
// wait for itself: the op's rank that does not answer is the one waited for.
TEST(JobView, AWaitThatNamesNoPeerPointsAtTheRankHoldingTheOpUp) {
    const auto ranks = ranksOf({rankStatus(64, true, -1), rankStatus(64, true, -1), nullptr, rankStatus(64, true, -1)});
    const nlohmann::json v = jobView("world", 0xabc, ranks, nlohmann::json::array({stuckFinding(0, -1)}));
    ASSERT_EQ(v["stuck"].size(), 1u);
    EXPECT_EQ(v["stuck"][0]["chain"], nlohmann::json::array({0, 2}));
    EXPECT_EQ(v["stuck"][0]["culprit"], 2);
    const std::string text = jobText(nlohmann::json::array({v}));
    EXPECT_NE(text.find("stuck: rank 0 is waiting (directly or through others) for rank 2 (host h, pid 1), which does "
                        "not answer"),
              std::string::npos)
        << text;
}

// Every rank in the op and none named: the stuck rank is named alone, never as waiting
// for itself; a rank stuck behind it points at it.
TEST(JobView, AStuckRankWithEveryRankInTheOpIsNamedAloneNotAsWaitingForItself) {
    const auto ranks = ranksOf({rankStatus(64, true, -1), rankStatus(64, true, 0)});
    const nlohmann::json alone = jobView("world", 0xabc, ranks, nlohmann::json::array({stuckFinding(0, -1)}));
    ASSERT_EQ(alone["stuck"].size(), 1u);
    EXPECT_EQ(alone["stuck"][0]["chain"], nlohmann::json::array({0}));
    const std::string aloneText = jobText(nlohmann::json::array({alone}));
    EXPECT_NE(aloneText.find("stuck: rank 0 (host h, pid 1) waits for no single rank while every rank is in the op"),
              std::string::npos)
        << aloneText;
    const nlohmann::json both =
        jobView("world", 0xabc, ranks, nlohmann::json::array({stuckFinding(0, -1), stuckFinding(1, 0)}));
    ASSERT_EQ(both["stuck"].size(), 2u);
    EXPECT_EQ(both["stuck"][1]["chain"], nlohmann::json::array({1, 0}));
    const std::string text = jobText(nlohmann::json::array({both}));
    EXPECT_NE(text.find("stuck: rank 1 is waiting (directly or through others) for rank 0 (host h, pid 1), which is "
                        "running it and waits for no one"),
              std::string::npos)
        << text;
    for (const std::string& t : {aloneText, text})
        EXPECT_EQ(t.find("ranks 0, 1 are waiting"), std::string::npos) << "rank 0 waits for itself: " << t;
}

// Answers from the processes the bootstrap table names count; an answer for the same
// comm id and rank from another process (another job on that endpoint now) does not,
// nor do its findings.
TEST(JobGather, OnlyTheProcessTheTableNamesAnswersForARank) {
    CommSnapshot s = comm(0);
    auto peers = std::make_shared<std::vector<PeerInfo>>(2);
    for (uint32_t r = 0; r < 2; ++r) {
        (*peers)[r].rank = r;
        (*peers)[r].ip = "10.0.0.1";
        (*peers)[r].pid = 100 + r;
        (*peers)[r].hostId = "h";
        (*peers)[r].metricsPort = uint16_t(9400 + r);
    }
    s.peers = peers;
    auto answer = [](uint32_t rank, uint32_t pid, const char* finding) {
        nlohmann::json entry = rankStatus(7, false, -1);
        entry.update({{"comm_id", "0000000000000abc"}, {"rank", rank}, {"pid", pid}, {"host", "h"}});
        nlohmann::json f = {{"kind", "straggler"}, {"comm_id", "0000000000000abc"}, {"rank", rank}, {"peer", rank ^ 1u}, {"text", finding}};
        return nlohmann::json{{"pid", pid}, {"communicators", {entry}}, {"findings", {f}}};
    };
    const nlohmann::json v = viewFromAnswers(s, {answer(0, 100, "ours"), answer(1, 555, "another job's")});
    EXPECT_EQ(v["ranks"][0]["answered"], true);
    EXPECT_EQ(v["ranks"][0]["endpoint"], "10.0.0.1:9400");
    EXPECT_EQ(v["ranks"][1]["answered"], false) << "pid 555 is not the table's rank 1";
    EXPECT_EQ(v["not_answering"], nlohmann::json::array({1}));
    ASSERT_EQ(v["findings"].size(), 1u);
    EXPECT_EQ(v["findings"][0]["text"], "ours");
    const nlohmann::json both = viewFromAnswers(s, {answer(0, 100, "ours"), answer(1, 101, "rank 1's")});
    EXPECT_EQ(both["not_answering"], nlohmann::json::array());
    EXPECT_EQ(both["findings"].size(), 2u);
}

TEST(JobView, AHealthyJobSaysNothingWasFound) {
    const auto ranks = ranksOf({rankStatus(5, false, -1), rankStatus(5, false, -1), rankStatus(5, false, -1)});
    const nlohmann::json v = jobView("world", 0xabc, ranks, nlohmann::json::array());
    EXPECT_EQ(v["progress"]["text"], "ranks 0-2 have started up to op 5");
    EXPECT_NE(jobText(nlohmann::json::array({v})).find("nothing found"), std::string::npos);
}

TEST(JobView, AStragglerSeenByEveryRankIsNamedOnceWithItsObservers) {
    const auto ranks = ranksOf({rankStatus(9, false, -1), rankStatus(9, false, -1), rankStatus(9, false, -1),
                                rankStatus(9, false, -1)});
    auto straggler = [](uint32_t observer) {
        return nlohmann::json{{"kind", "straggler"}, {"comm_id", "0000000000000abc"}, {"rank", observer}, {"peer", 2},
                              {"text", fmt::format("straggler: rank 2, late after rank {}", observer)}};
    };
    const nlohmann::json v = jobView("world", 0xabc, ranks, nlohmann::json::array({straggler(0), straggler(1), straggler(3)}));
    ASSERT_EQ(v["findings"].size(), 1u) << v["findings"].dump();
    EXPECT_EQ(v["findings"][0]["seen_by"], nlohmann::json::array({0, 1, 3}));
    EXPECT_EQ(v["findings"][0]["text"], "straggler: rank 2, late after rank 0");
    const std::string text = jobText(nlohmann::json::array({v}));
    EXPECT_NE(text.find("  straggler: rank 2, late after rank 0 (seen by ranks 0, 1, 3)\n"), std::string::npos) << text;
}

// A rank that received `mib` MiB over one tcp link from `peer` at `gbps`.
nlohmann::json withLink(nlohmann::json status, int64_t peer, double mib, double gbps) {
    const double bytes = mib * 1048576;
    status["links"].push_back({{"peer", peer}, {"transport", "tcp"}, {"timed_bytes", bytes}, {"timed_seconds", bytes / (gbps * 1e9)}});
    return status;
}

TEST(JobView, ALinkBelowHalfTheMedianOfItsTransportIsSlowAndExplainsItsStraggler) {
    // A ring 0 <- 2 <- 1 <- 0: the link into rank 0 from rank 2 runs at 0.025 GB/s.
    const auto ranks = ranksOf({withLink(rankStatus(9, false, -1), 2, 64, 0.025),
                                withLink(rankStatus(9, false, -1), 0, 64, 0.75),
                                withLink(rankStatus(9, false, -1), 1, 64, 0.11)});
    const nlohmann::json straggler = {{"kind", "straggler"}, {"comm_id", "0000000000000abc"}, {"rank", 1},
                                      {"peer", 0}, {"text", "straggler: rank 0"}};
    const nlohmann::json v = jobView("world", 0xabc, ranks, nlohmann::json::array({straggler}));
    ASSERT_EQ(v["findings"].size(), 2u) << v["findings"].dump();
    const nlohmann::json& slow = v["findings"][1];
    EXPECT_EQ(slow["kind"], "slow_link");
    EXPECT_EQ(slow["rank"], 0);
    EXPECT_EQ(slow["peer"], 2);
    EXPECT_NEAR(slow["value"].get<double>(), 0.025, 1e-9);
    EXPECT_NEAR(slow["reference"].get<double>(), 0.11, 1e-9);
    EXPECT_EQ(v["findings"][0]["explained_by"]["peer"], 2);
    EXPECT_EQ(v["findings"][0]["text"], "straggler: rank 0 -- it receives over a slow link from rank 2");
    // Too little timed (under 16 MiB), or fewer than three links: no judgment.
    const auto few = ranksOf({withLink(rankStatus(9, false, -1), 1, 64, 0.025), withLink(rankStatus(9, false, -1), 0, 64, 0.75)});
    EXPECT_TRUE(jobView("world", 0xabc, few, nlohmann::json::array())["findings"].empty());
    const auto small = ranksOf({withLink(rankStatus(9, false, -1), 2, 8, 0.025), withLink(rankStatus(9, false, -1), 0, 64, 0.75),
                                withLink(rankStatus(9, false, -1), 1, 64, 0.11)});
    EXPECT_TRUE(jobView("world", 0xabc, small, nlohmann::json::array())["findings"].empty());
}

nlohmann::json withRoundTrip(nlohmann::json status, int64_t peer, double seconds) {
    status["links"].push_back({{"peer", peer}, {"transport", "tcp"}, {"round_trip_seconds", seconds}});
    return status;
}

TEST(JobView, ALinkWhoseRoundTripIsOver5xTheMedianIsSlow) {
    const auto ranks = ranksOf({withRoundTrip(rankStatus(9, false, -1), 2, 0.02),
                                withRoundTrip(rankStatus(9, false, -1), 0, 0.001),
                                withRoundTrip(rankStatus(9, false, -1), 1, 0.0012)});
    const nlohmann::json v = jobView("world", 0xabc, ranks, nlohmann::json::array());
    ASSERT_EQ(v["findings"].size(), 1u) << v["findings"].dump();
    EXPECT_EQ(v["findings"][0]["peer"], 2);
    EXPECT_EQ(v["findings"][0]["text"], "slow link: rank 0 (host h, pid 1) <-> rank 2 (host h, pid 1) of comm world (tcp) "
                                        "has a round trip of 20.000 ms, over 5x the median 1.200 ms of the job's 3 tcp links");
    // Shared memory has no round trip (null): nothing to judge.
    const auto shm = ranksOf({withRoundTrip(rankStatus(9, false, -1), 2, -1), withRoundTrip(rankStatus(9, false, -1), 0, -1),
                              withRoundTrip(rankStatus(9, false, -1), 1, -1)});
    EXPECT_TRUE(jobView("world", 0xabc, shm, nlohmann::json::array())["findings"].empty());
}

TEST(HttpRequest, ParsesAGetAndRefusesTheRest) {
    ParsedRequest r = parseRequest("GET /metrics?x=1 HTTP/1.1\r\nHost: a\r\n\r\n");
    EXPECT_TRUE(r.complete);
    EXPECT_EQ(r.error, 0);
    EXPECT_EQ(r.path, "/metrics");
    r = parseRequest("GET /metrics HTTP/1.1\r\nHost: a\r\n");
    EXPECT_FALSE(r.complete);
    EXPECT_EQ(r.error, 0);
    EXPECT_EQ(parseRequest("POST /metrics HTTP/1.1\r\n\r\n").error, 405);
    EXPECT_EQ(parseRequest("hello\r\n").error, 400);
    EXPECT_EQ(parseRequest("GET metrics HTTP/1.1\r\n\r\n").error, 400);
    EXPECT_EQ(parseRequest(std::string(HttpServer::kMaxRequestBytes, 'a')).error, 413);
    EXPECT_EQ(parseRequest("GET / HTTP/1.0\r\n\r\n").path, "/");
}

TEST(HttpRequest, ResponsesCarryLengthAndClose) {
    const std::string r = formatResponse({404, "text/plain", "no\n"});
    EXPECT_EQ(r.rfind("HTTP/1.1 404 Not Found\r\n", 0), 0u);
    EXPECT_NE(r.find("Content-Length: 3\r\n"), std::string::npos);
    EXPECT_NE(r.find("Connection: close\r\n\r\nno\n"), std::string::npos);
}

}  // namespace
}  // namespace hostccl::monitor
