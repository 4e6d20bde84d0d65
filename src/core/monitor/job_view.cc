#include "core/monitor/job_view.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

namespace hostccl::monitor {

namespace {
using nlohmann::json;

bool answered(const JobRank& r) { return r.status.is_object(); }
uint64_t lastSeq(const JobRank& r) { return answered(r) ? r.status.value("last_seq", uint64_t(0)) : 0; }
bool running(const JobRank& r) { return answered(r) && r.status.contains("running") && r.status["running"].is_object(); }
int64_t waitingOn(const JobRank& r) {
    if (!running(r) || !r.status["running"].contains("waiting_on")) return -1;
    return r.status["running"]["waiting_on"].value("rank", int64_t(-1));
}

// "ranks 0-2, 5": a sorted list of ranks in ranges.
std::string rankList(std::vector<uint32_t> v) {
    std::sort(v.begin(), v.end());
    std::string out;
    for (size_t i = 0; i < v.size();) {
        size_t j = i;
        while (j + 1 < v.size() && v[j + 1] == v[j] + 1) ++j;
        out += fmt::format("{}{}", out.empty() ? "" : ", ", j == i ? fmt::format("{}", v[i])
                                                                  : fmt::format("{}-{}", v[i], v[j]));
        i = j + 1;
    }
    return (v.size() == 1 ? "rank " : "ranks ") + out;
}

// Bulk rates of every link of the job with at least kJudgedBytes timed (what the
// per-rank rule's window also asks), per transport.
constexpr double kJudgedBytes = 16.0 * 1048576;
struct LinkRate {
    uint32_t rank;
    int64_t peer;
    double rate;  // bytes per second
};
std::map<std::string, std::vector<LinkRate>> linkRates(const std::vector<JobRank>& ranks) {
    std::map<std::string, std::vector<LinkRate>> out;
    for (const JobRank& r : ranks) {
        if (!answered(r)) continue;
        for (const json& l : r.status.value("links", json::array())) {
            const double bytes = l.value("timed_bytes", 0.0), secs = l.value("timed_seconds", 0.0);
            if (bytes >= kJudgedBytes && secs > 0)
                out[l.value("transport", "")].push_back({r.rank, l.value("peer", int64_t(-1)), bytes / secs});
        }
    }
    return out;
}

// The job's rule for slow links, which no rank can apply alone: among the links of
// one transport (at least three judged), those below half of their median. The
// model's rate, the per-rank rule's reference, is measured at init over the links
// the ring touches, so a link slow from the start drags it down with itself.
void slowAgainstTheJob(const std::string& comm, const std::string& id, const std::vector<JobRank>& ranks, json* findings) {
    for (auto& [transport, links] : linkRates(ranks)) {
        if (links.size() < 3) continue;
        std::vector<double> rates;
        for (const LinkRate& l : links) rates.push_back(l.rate);
        std::nth_element(rates.begin(), rates.begin() + long(rates.size() / 2), rates.end());
        const double median = rates[rates.size() / 2];
        for (const LinkRate& l : links) {
            if (l.rate >= 0.5 * median || l.peer < 0 || size_t(l.peer) >= ranks.size()) continue;
            bool known = false;
            for (const json& f : *findings)
                known |= f.value("kind", "") == "slow_link" && f.value("rank", 0u) == l.rank && f.value("peer", int64_t(-1)) == l.peer;
            if (known) continue;
            const std::string who = ranks[size_t(l.peer)].who;
            findings->push_back(
                {{"kind", "slow_link"}, {"comm", comm}, {"comm_id", id}, {"rank", l.rank}, {"peer", l.peer},
                 {"who", who}, {"value", l.rate / 1e9}, {"reference", median / 1e9}, {"source", "job"},
                 {"text", fmt::format("slow link: {} -> rank {} of comm {} ({}) moves {:.3f} GB/s, below half of the "
                                      "median {:.3f} GB/s of the job's {} {} links",
                                      who, l.rank, comm, transport, l.rate / 1e9, median / 1e9, links.size(), transport)}});
        }
    }
}

// A straggler whose own receives come over a slow link is late because of it.
void explainStragglers(json* findings) {
    for (json& f : *findings) {
        if (f.value("kind", "") != "straggler") continue;
        for (const json& s : *findings) {
            if (s.value("kind", "") != "slow_link" || s.value("rank", int64_t(-1)) != f.value("peer", int64_t(-2))) continue;
            f["explained_by"] = {{"kind", "slow_link"}, {"rank", s["rank"]}, {"peer", s["peer"]}};
            f["text"] = f["text"].get<std::string>() + fmt::format(" -- it receives over a slow link from rank {}",
                                                                    s["peer"].get<int64_t>());
            break;
        }
    }
}

// From a stuck rank, its wait from peer to peer until a rank that does not answer,
// has not started op `seq`, or is running it without waiting for anyone.
json followWait(const std::vector<JobRank>& ranks, uint32_t from, uint64_t seq) {
    std::vector<uint32_t> chain{from};
    int64_t next = waitingOn(ranks[from]);
    std::string why = "waits for no one";
    while (next >= 0 && size_t(next) < ranks.size()) {
        const JobRank& r = ranks[size_t(next)];
        if (std::find(chain.begin(), chain.end(), uint32_t(next)) != chain.end()) {
            why = "is part of a cycle of waits";
            break;
        }
        chain.push_back(uint32_t(next));
        if (!answered(r)) {
            why = "does not answer (stopped, dead or cut off)";
            break;
        }
        if (!running(r) || lastSeq(r) < seq) {
            why = fmt::format("has not started seq {} (its last is {})", seq, lastSeq(r));
            break;
        }
        next = waitingOn(r);
        if (next < 0) why = "is running it and waits for no one (busy, or its wait has not slept yet)";
    }
    const uint32_t culprit = chain.back();
    return {{"chain", chain}, {"culprit", culprit}, {"who", ranks[culprit].who}, {"why", why}};
}
}  // namespace

json jobView(const std::string& comm, uint64_t commId, const std::vector<JobRank>& ranks, const json& findings) {
    const std::string id = fmt::format("{:016x}", commId);
    json view = {{"comm", comm}, {"comm_id", id}, {"size", ranks.size()}};
    json rankArray = json::array();
    std::vector<uint32_t> silent;
    uint64_t maxSeq = 0;
    for (const JobRank& r : ranks) {
        json j = {{"rank", r.rank}, {"who", r.who}, {"answered", answered(r)}};
        if (answered(r)) {
            j["last_seq"] = lastSeq(r);
            j["running"] = r.status.value("running", json(nullptr));
            j["failed"] = r.status.value("failed", false);
            j["status"] = r.status;  // the rank's whole entry: what the dashboard draws
            maxSeq = std::max(maxSeq, lastSeq(r));
        } else {
            silent.push_back(r.rank);
        }
        rankArray.push_back(std::move(j));
    }
    view["ranks"] = std::move(rankArray);
    view["not_answering"] = silent;
    std::vector<uint32_t> atMax, behind;
    for (const JobRank& r : ranks)
        if (answered(r)) (lastSeq(r) == maxSeq ? atMax : behind).push_back(r.rank);
    std::string progress = fmt::format("{} {} started up to op {}", rankList(atMax), atMax.size() == 1 ? "has" : "have", maxSeq);
    for (uint32_t b : behind) progress += fmt::format("; rank {} up to {}", b, lastSeq(ranks[b]));
    if (!silent.empty()) progress += fmt::format("; {} did not answer", rankList(silent));
    view["progress"] = {{"max_seq", maxSeq}, {"text", progress}};

    json mine = json::array();
    for (const json& f : findings)
        if (f.value("comm_id", "") == id) mine.push_back(f);
    json stuck = json::array();
    std::set<uint32_t> stuckRanks;
    for (const json& f : mine)
        if (f.value("kind", "") == "stuck") stuckRanks.insert(f.value("rank", 0u));
    for (uint32_t r : stuckRanks) {
        if (r >= ranks.size()) continue;
        json s = followWait(ranks, r, running(ranks[r]) ? ranks[r].status["running"].value("seq", maxSeq) : maxSeq);
        s["rank"] = r;
        stuck.push_back(std::move(s));
    }
    view["stuck"] = std::move(stuck);
    slowAgainstTheJob(comm, id, ranks, &mine);
    explainStragglers(&mine);
    view["findings"] = std::move(mine);
    return view;
}

namespace {
// Stuck ranks grouped by the rank their waits end at.
std::vector<std::string> stuckLines(const json& v) {
    std::map<uint32_t, std::vector<uint32_t>> byCulprit;
    std::map<uint32_t, json> culprit;
    for (const json& s : v["stuck"]) {
        byCulprit[s["culprit"].get<uint32_t>()].push_back(s["rank"].get<uint32_t>());
        culprit[s["culprit"].get<uint32_t>()] = s;
    }
    std::vector<std::string> out;
    for (const auto& [c, waiting] : byCulprit)
        out.push_back(fmt::format("stuck: {} {} waiting (directly or through others) for {}, which {}", rankList(waiting),
                                  waiting.size() == 1 ? "is" : "are", culprit[c]["who"].get<std::string>(),
                                  culprit[c]["why"].get<std::string>()));
    return out;
}
}  // namespace

std::string jobText(const json& views) {
    std::string out;
    for (const json& v : views) {
        out += fmt::format("comm {} (id {}, {} ranks)\n", v.value("comm", ""), v.value("comm_id", ""), v.value("size", 0));
        out += fmt::format("  progress: {}\n", v["progress"].value("text", ""));
        for (const json& r : v["ranks"])
            if (!r.value("answered", false)) out += fmt::format("  not answering: {}\n", r.value("who", ""));
        for (const std::string& line : stuckLines(v)) out += "  " + line + "\n";
        for (const json& f : v["findings"])
            if (f.value("kind", "") != "stuck") out += fmt::format("  {} (seen by rank {})\n", f.value("text", ""), f.value("rank", 0));
        if (v["findings"].empty() && v["not_answering"].empty()) out += "  nothing found: no straggler, slow link or stuck op\n";
    }
    return out;
}

}  // namespace hostccl::monitor
