// Live monitoring of real jobs (ranks as processes, tests/monitor/monitor_worker.cc),
// read through each process's endpoint (HOSTCCL_METRICS_PORT) as a user would:
//   - a healthy job reports nothing, and its metrics count exactly the ops it ran;
//   - a rank that sleeps before every collective is named the straggler within 10 s;
//   - a rank stopped with SIGSTOP is named as the one a stuck collective waits for, by
//     the job view of another rank's endpoint and by hostccl-status, which, asked at the
//     stopped rank's own endpoint, asks another process of its job (never another job's);
//   - garbage, a client that never finishes its request and 1000 connections at
//     once leave the job's results and the endpoint's answers intact.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "tests/multiprocess/launcher.h"

using namespace hostccl::test;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

int connectLocal(uint16_t port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) {
        ::close(fd);
        return -1;
    }
    timeval tv{5, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    return fd;
}

// The raw answer to `request` on 127.0.0.1:port ("" when nothing listens).
std::string httpExchange(uint16_t port, const std::string& request) {
    const int fd = connectLocal(port);
    if (fd < 0) return "";
    (void)!::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
    std::string out;
    char buf[4096];
    ssize_t got;
    while ((got = ::recv(fd, buf, sizeof buf, 0)) > 0) out.append(buf, size_t(got));
    ::close(fd);
    return out;
}

std::string body(const std::string& response) {
    const size_t at = response.find("\r\n\r\n");
    return at == std::string::npos ? "" : response.substr(at + 4);
}

std::string get(uint16_t port, const std::string& path) {
    return body(httpExchange(port, "GET " + path + " HTTP/1.1\r\nHost: x\r\n\r\n"));
}

// Whether `pid` is a child of this test process. Another test's job may run at the
// same time (ctest -j) with its endpoints in the ports this job scans: a rank found
// there must be this job's own (once a stopped-rank test stopped and killed another
// job's rank 1).
bool isOurChild(pid_t pid) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    const size_t close = text.rfind(')');  // the command name may hold spaces and parentheses
    if (close == std::string::npos) return false;
    char state = 0;
    long parent = 0;
    return std::sscanf(text.c_str() + close + 1, " %c %ld", &state, &parent) == 2 && parent == long(::getpid());
}

// A process's /status.json on `port`, if that process is one of ours.
json ownStatus(uint16_t port) {
    json j = json::parse(get(port, "/status.json"), nullptr, false);
    if (j.is_discarded() || !j.contains("communicators") || !j.contains("pid") || !isOurChild(j["pid"].get<pid_t>()))
        return nullptr;
    return j;
}

// A job of `n` monitor_worker processes with the endpoint on, run on a thread
// while the test watches its endpoints.
class Job {
public:
    // `basePort`: HOSTCCL_METRICS_PORT, 0 for a free one.
    Job(uint32_t n, int ops, size_t count, long slowRank, int slowMs, int holdMs, uint16_t basePort = 0) : n_(n) {
        basePort_ = basePort != 0 ? basePort : freeTcpPort();
        setenv("HOSTCCL_METRICS_PORT", std::to_string(basePort_).c_str(), 1);
        setenv("HOSTCCL_METRICS_INTERVAL_MS", "250", 1);
        const std::string root = "127.0.0.1:" + std::to_string(freeTcpPort());
        for (uint32_t r = 0; r < n; ++r)
            argvs_.push_back({HOSTCCL_MONITOR_WORKER, root, std::to_string(r), std::to_string(n), std::to_string(ops),
                              std::to_string(count), std::to_string(slowRank), std::to_string(slowMs),
                              std::to_string(holdMs)});
    }
    void start(int timeoutSec, std::vector<bool> linger = {}) {
        started_ = Clock::now();
        thread_ = std::thread([this, timeoutSec, linger] {
            results_ = runProcesses(argvs_, timeoutSec, linger);
            done_ = true;
        });
    }
    ~Job() {
        if (thread_.joinable()) thread_.join();  // a failed assertion left early
    }
    std::vector<ProcessResult> finish() {
        thread_.join();
        unsetenv("HOSTCCL_METRICS_PORT");
        return results_;
    }
    bool done() const { return done_; }
    double elapsed() const { return std::chrono::duration<double>(Clock::now() - started_).count(); }
    // Every process's /status.json, by rank (the ports from the base on: each process
    // took the first free one).
    std::map<uint32_t, json> statuses() const {
        std::map<uint32_t, json> out;
        for (uint16_t p = basePort_; p < basePort_ + n_ + 8; ++p) {
            const json j = ownStatus(p);
            if (j.is_null()) continue;
            for (const json& c : j["communicators"]) {
                json entry = j;
                entry["comm"] = c;
                out[c["rank"].get<uint32_t>()] = entry;
            }
        }
        return out;
    }
    // The port of this job's rank `rank`, 0 while it does not answer (another job of
    // another size may share the base port).
    uint16_t portOf(uint32_t rank) const {
        for (uint16_t p = basePort_; p < basePort_ + 2 * n_ + 8; ++p) {
            const json j = ownStatus(p);
            if (j.is_null()) continue;
            for (const json& c : j["communicators"])
                if (c["rank"] == rank && c["size"] == n_) return p;
        }
        return 0;
    }
    uint16_t basePort() const { return basePort_; }

private:
    const uint32_t n_;
    uint16_t basePort_ = 0;
    std::vector<std::vector<std::string>> argvs_;
    std::thread thread_;
    std::vector<ProcessResult> results_;
    std::atomic<bool> done_{false};
    Clock::time_point started_;
};

// The findings of every rank's status, polled until `pred` holds for one or the job ends.
json awaitFinding(const Job& job, const std::function<bool(const json&)>& pred, double withinSec) {
    while (!job.done() && job.elapsed() < withinSec) {
        for (const auto& [rank, st] : job.statuses())
            for (const json& f : st["findings"])
                if (pred(f)) return f;
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return nullptr;
}

void expectAllExitZero(const std::vector<ProcessResult>& results) {
    for (size_t r = 0; r < results.size(); ++r) {
        EXPECT_FALSE(results[r].timedOut) << "rank " << r;
        EXPECT_EQ(results[r].exitCode, 0) << "rank " << r;
    }
}

// The output and exit status of `command`.
std::pair<std::string, int> run(const std::string& command) {
    std::string out;
    FILE* p = ::popen(command.c_str(), "r");
    if (p == nullptr) return {"", -1};
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    const int status = ::pclose(p);
    return {out, WIFEXITED(status) ? WEXITSTATUS(status) : -1};
}

TEST(Monitor, AHealthyJobReportsNothingAndCountsEveryOp) {
    const std::string file = tempPath("metrics") + "-%p.prom";
    setenv("HOSTCCL_METRICS_FILE", file.c_str(), 1);
    Job job(3, 40, 256, -1, 0, 3000);
    job.start(120);
    // Wait until every rank has run its 40 ops (it then holds for 3 s).
    std::map<uint32_t, json> st;
    while (!job.done() && job.elapsed() < 60) {
        st = job.statuses();
        bool all = st.size() == 3;
        for (const auto& [r, s] : st) all = all && s["comm"]["last_seq"] == 40;
        if (all) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ASSERT_EQ(st.size(), 3u);
    for (const auto& [rank, s] : st) {
        EXPECT_TRUE(s["findings"].empty()) << s["findings"].dump();
        const json& ops = s["comm"]["collectives"];
        ASSERT_EQ(ops.size(), 1u) << ops.dump();
        EXPECT_EQ(ops[0]["op"], "AllReduce");
        EXPECT_EQ(ops[0]["count"], 40);
        EXPECT_EQ(ops[0]["bytes"], 40 * 256 * 4);
        EXPECT_EQ(ops[0]["failed"], 0);
    }
    // The Prometheus text says the same.
    const std::string metrics = get(job.portOf(1), "/metrics");
    const std::string labels = "comm=\"" + st[1]["comm"]["comm"].get<std::string>() + "\",rank=\"1\"";
    for (const std::string& line : {"hostccl_collective_ops_total{" + labels + ",op=\"allreduce\"} 40\n",
                                    "hostccl_collective_duration_seconds_count{" + labels + ",op=\"allreduce\"} 40\n",
                                    "hostccl_collective_bytes_total{" + labels + ",op=\"allreduce\"} 40960\n",
                                    "hostccl_collective_sequence{" + labels + "} 40\n"})
        EXPECT_NE(metrics.find(line), std::string::npos) << line << metrics.substr(0, 3000);
    // And the textfile collector's file, rewritten every interval by each process.
    std::this_thread::sleep_for(std::chrono::milliseconds(600));
    std::string path = file;
    path.replace(path.find("%p"), 2, std::to_string(st[1]["pid"].get<int>()));
    std::ifstream in(path);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find("hostccl_collective_ops_total{" + labels + ",op=\"allreduce\"} 40\n"), std::string::npos)
        << path << ":\n" << text.substr(0, 1000);
    // hostccl-status, asked by host name, finds nothing (exit status 0).
    const auto [status, code] = run(std::string(HOSTCCL_STATUS_TOOL) + " localhost:" + std::to_string(job.portOf(0)));
    EXPECT_EQ(code, 0) << status;
    EXPECT_NE(status.find("ranks 0-2 have started up to op 40"), std::string::npos) << status;
    EXPECT_NE(status.find("nothing found"), std::string::npos) << status;
    expectAllExitZero(job.finish());
    unsetenv("HOSTCCL_METRICS_FILE");
    // Each process rewrites its file until it exits: remove them all once they have, with
    // the file a process was writing beside it when it exited.
    for (const auto& [rank, s] : st) {
        std::string done = file;
        done.replace(done.find("%p"), 2, std::to_string(s["pid"].get<int>()));
        std::remove(done.c_str());
        std::remove((done + ".tmp").c_str());
    }
}

TEST(Monitor, ARankLateToEveryCollectiveIsNamedTheStragglerWithin10s) {
    Job job(4, 60, 1024, 2, 200, 0);
    job.start(180);
    const json f = awaitFinding(job, [](const json& f) { return f["kind"] == "straggler"; }, 30);
    const double at = job.elapsed();
    ASSERT_FALSE(f.is_null()) << "no straggler named";
    EXPECT_EQ(f["peer"], 2) << f.dump();
    EXPECT_NE(f["who"].get<std::string>().find("pid"), std::string::npos) << f.dump();
    EXPECT_GE(f["value"].get<double>(), 150.0) << f.dump();  // ms: it sleeps 200 before each op
    EXPECT_LT(at, 10.0) << f.dump();
    // Nobody else is named.
    for (const auto& [rank, st] : job.statuses())
        for (const json& g : st["findings"]) EXPECT_EQ(g["peer"], 2) << g.dump();
    expectAllExitZero(job.finish());
}

TEST(Monitor, AStoppedRankIsNamedAsTheOneAStuckCollectiveWaitsFor) {
    setenv("HOSTCCL_STUCK_SECONDS", "2", 1);
    // Long enough that, on a loaded machine, the queries below (each waits up to 2 s for the
    // stopped rank's endpoint) finish before the others give rank 1 up and exit.
    setenv("HOSTCCL_HEARTBEAT_TIMEOUT", "40", 1);
    Job job(3, 1000000, 16, -1, 0, 0);
    job.start(120, {false, true, false});
    uint16_t port1 = 0, port0 = 0;
    while ((port1 == 0 || port0 == 0) && job.elapsed() < 30) {
        port1 = job.portOf(1);
        port0 = job.portOf(0);
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ASSERT_NE(port1, 0) << "rank 1's endpoint never answered";
    ASSERT_NE(port0, 0);
    const pid_t pid1 = json::parse(get(port1, "/status.json"))["pid"].get<pid_t>();
    ASSERT_EQ(::kill(pid1, SIGSTOP), 0);
    const double stoppedAt = job.elapsed();
    const json f = awaitFinding(job, [](const json& f) { return f["kind"] == "stuck"; }, stoppedAt + 8);
    // The whole job, from rank 0's endpoint: every stuck wait ends at rank 1.
    const json views = json::parse(get(port0, "/job.json"), nullptr, false);
    const auto [text, status] = run(std::string(HOSTCCL_STATUS_TOOL) + " 127.0.0.1:" + std::to_string(port0) + " --timeout 20");
    ::kill(pid1, SIGCONT);
    ::kill(pid1, SIGKILL);
    ASSERT_FALSE(f.is_null()) << "no stuck op reported";
    EXPECT_LT(f["peer"], 3) << f.dump();
    ASSERT_TRUE(views.is_array() && views.size() == 1) << views.dump();
    const json& v = views[0];
    EXPECT_EQ(v["not_answering"], json::array({1})) << v.dump();
    ASSERT_FALSE(v["stuck"].empty()) << v.dump();
    for (const json& s : v["stuck"]) {
        EXPECT_EQ(s["culprit"], 1) << s.dump();
        EXPECT_NE(s["why"].get<std::string>().find("does not answer"), std::string::npos) << s.dump();
    }
    EXPECT_NE(v["progress"]["text"].get<std::string>().find("rank 1 did not answer"), std::string::npos) << v.dump();
    EXPECT_EQ(status, 1) << text;
    EXPECT_NE(text.find("waiting (directly or through others) for rank 1 ("), std::string::npos) << text;
    EXPECT_NE(text.find("not answering: rank 1 ("), std::string::npos) << text;
    job.finish();
    unsetenv("HOSTCCL_STUCK_SECONDS");
    unsetenv("HOSTCCL_HEARTBEAT_TIMEOUT");
}

// The asked endpoint's process is stopped: hostccl-status asks a process of the same
// job on the ports next to it, says so, and shows that job; another job's endpoint on
// the port just below (started first, on the same HOSTCCL_METRICS_PORT) never answers
// for it.
TEST(Monitor, TheStatusToolAsksAnotherProcessOfTheJobWhenTheAskedOneIsStopped) {
    Job first(2, -20000, 16, -1, 0, 0);  // 20 s of allreduces, ranks agreeing when to stop
    first.start(120);
    uint16_t a0 = 0, a1 = 0;
    while ((a0 == 0 || a1 == 0) && first.elapsed() < 30) {
        a0 = first.portOf(0);
        a1 = first.portOf(1);
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ASSERT_NE(a0 * a1, 0) << "the first job's endpoints never answered";
    Job second(3, 1000000, 16, -1, 0, 0, first.basePort());  // 3 ranks: its statuses tell it apart
    second.start(120);
    std::vector<uint16_t> b(3, 0);
    while (std::count(b.begin(), b.end(), 0) > 0 && second.elapsed() < 30) {
        for (uint32_t r = 0; r < 3; ++r) b[r] = second.portOf(r);
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ASSERT_EQ(std::count(b.begin(), b.end(), 0), 0) << "the second job's endpoints never answered";
    // An endpoint answers before its communicator is made: every rank must have one before a
    // rank is stopped (a rank stopped in init keeps the others from finishing theirs).
    auto commIdAt = [](uint16_t port, double within) {
        const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(within);
        for (;;) {
            const json status = json::parse(get(port, "/status.json"), nullptr, false);
            if (status.is_object() && !status.value("communicators", json::array()).empty())
                return status["communicators"][0].value("comm_id", std::string());
            if (std::chrono::steady_clock::now() > until) return std::string();
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
    };
    const std::string firstId = commIdAt(a0, 30), secondId = commIdAt(b[0], 30);
    ASSERT_FALSE(firstId.empty() || secondId.empty()) << "a job's communicator was not made within 30 s";
    for (uint16_t port : b) ASSERT_EQ(commIdAt(port, 30), secondId) << "port " << port;
    // The second job's lowest port is asked: the first job's endpoints are the nearest
    // below it; the next of the second job's answers instead.
    std::vector<uint16_t> sorted = b;
    std::sort(sorted.begin(), sorted.end());
    const uint16_t asked = sorted[0], other = sorted[1];
    const uint32_t askedRank = uint32_t(std::find(b.begin(), b.end(), asked) - b.begin());
    const pid_t stopped = json::parse(get(asked, "/status.json"))["pid"].get<pid_t>();
    ASSERT_EQ(::kill(stopped, SIGSTOP), 0);
    const auto [text, status] = run(std::string(HOSTCCL_STATUS_TOOL) + " 127.0.0.1:" + std::to_string(asked) + " --timeout 6");
    ::kill(stopped, SIGCONT);
    ::kill(stopped, SIGKILL);
    EXPECT_EQ(status, 1) << text;
    EXPECT_NE(text.find("127.0.0.1:" + std::to_string(asked) + " did not answer; asked 127.0.0.1:" +
                        std::to_string(other) + ", a process of its job, instead"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("(id " + secondId), std::string::npos) << text;
    EXPECT_EQ(text.find(firstId), std::string::npos) << "the other job answered: " << text;
    EXPECT_NE(text.find("not answering: rank " + std::to_string(askedRank) + " ("), std::string::npos) << text;
    second.finish();
    expectAllExitZero(first.finish());
}

TEST(Monitor, TheStatusToolRefusesBadInputWithStatus2) {
    const std::string tool = HOSTCCL_STATUS_TOOL;
    for (const std::string& args : std::vector<std::string>{"nonsense", "localhost:99999", "localhost:80x", "nosuchhost.invalid:80",
                                    "127.0.0.1:" + std::to_string(freeTcpPort()) + " --timeout 1"}) {
        const auto [out, code] = run(tool + " " + args + " 2>/dev/null");
        EXPECT_EQ(code, 2) << args;
        EXPECT_TRUE(out.empty()) << args << ": " << out;
    }
}

TEST(Monitor, HostileClientsDoNotDisturbTheJobOrTheEndpoint) {
    Job job(2, -4000, 4096, -1, 0, 3000);  // 4 s of allreduces, then 3 s still
    job.start(120);
    uint16_t port = 0;
    while (port == 0 && job.elapsed() < 30) port = job.portOf(0);
    ASSERT_NE(port, 0);
    EXPECT_EQ(httpExchange(port, "garbage\r\n\r\n").rfind("HTTP/1.1 400", 0), 0u);
    EXPECT_EQ(httpExchange(port, "POST /metrics HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 405", 0), 0u);
    EXPECT_EQ(httpExchange(port, "GET /nothing HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 404", 0), 0u);
    EXPECT_EQ(httpExchange(port, std::string(20000, 'x')).rfind("HTTP/1.1 413", 0), 0u);
    // A client that never finishes its request, and 1000 that connect at once.
    const int slow = connectLocal(port);
    ASSERT_GE(slow, 0);
    (void)!::send(slow, "GET /metr", 9, MSG_NOSIGNAL);
    std::vector<int> flood;
    for (int i = 0; i < 1000; ++i) {
        const int fd = connectLocal(port);
        if (fd >= 0) flood.push_back(fd);
    }
    for (int fd : flood) ::close(fd);
    // The endpoint still answers, and cuts the slow client off within its 5 s.
    std::string metrics;
    for (int i = 0; i < 50 && metrics.empty(); ++i) {
        metrics = get(port, "/metrics");
        if (metrics.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    EXPECT_NE(metrics.find("# TYPE hostccl_collective_ops_total counter"), std::string::npos);
    char c;
    timeval tv{8, 0};
    ::setsockopt(slow, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    const auto t0 = Clock::now();
    EXPECT_EQ(::recv(slow, &c, 1, 0), 0) << "the slow client was not cut off";
    EXPECT_LT(std::chrono::duration<double>(Clock::now() - t0).count(), 7.0);
    ::close(slow);
    expectAllExitZero(job.finish());  // every allreduce checked its result
}

}  // namespace
