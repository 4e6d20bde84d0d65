#include "monitor/job_view.h"

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

// "ranks 0-2, 5, 6": a sorted list of ranks, runs of three or more as ranges.
std::string rankList(std::vector<uint32_t> v) {
    std::sort(v.begin(), v.end());
    std::string out;
    for (size_t i = 0; i < v.size();) {
        size_t j = i;
        while (j + 1 < v.size() && v[j + 1] == v[j] + 1) ++j;
        if (j < i + 2) j = i;  // two in a row read better as "5, 6"
        out += fmt::format("{}{}", out.empty() ? "" : ", ", j == i ? fmt::format("{}", v[i])
                                                                  : fmt::format("{}-{}", v[i], v[j]));
        i = j + 1;
    }
    return (v.size() == 1 ? "rank " : "ranks ") + out;
}

// Bulk rates of every link of the job with at least kJudgedBytes timed (what the
// per-rank rule's window also asks), per transport.
constexpr double kJudgedBytes = 16.0 * 1048576;
// One figure of every link of the job, per transport: its bulk rate (bytes per
// second, links with at least kJudgedBytes timed) or its round trip (seconds).
struct LinkFigure {
    uint32_t rank;
    int64_t peer;
    double value;
};
using FigureOf = double (*)(const json& link);  // < 0: the link has none
std::map<std::string, std::vector<LinkFigure>> linkFigures(const std::vector<JobRank>& ranks, FigureOf figure) {
    std::map<std::string, std::vector<LinkFigure>> out;
    for (const JobRank& r : ranks) {
        if (!answered(r)) continue;
        for (const json& l : r.status.value("links", json::array())) {
            const double v = figure(l);
            if (v >= 0) out[l.value("transport", "")].push_back({r.rank, l.value("peer", int64_t(-1)), v});
        }
    }
    return out;
}
double bulkRate(const json& l) {
    const double bytes = l.value("timed_bytes", 0.0), secs = l.value("timed_seconds", 0.0);
    return bytes >= kJudgedBytes && secs > 0 ? bytes / secs : -1;
}
double roundTrip(const json& l) {
    const json& rtt = l.contains("round_trip_seconds") ? l["round_trip_seconds"] : json(nullptr);
    return rtt.is_number() ? rtt.get<double>() : -1;
}
double median(std::vector<LinkFigure> v) {
    std::nth_element(v.begin(), v.begin() + long(v.size() / 2), v.end(),
                     [](const LinkFigure& a, const LinkFigure& b) { return a.value < b.value; });
    return v[v.size() / 2].value;
}
// A slow-link finding already names this pair of ranks (either way round).
bool knownSlow(const json& findings, uint32_t rank, int64_t peer) {
    for (const json& f : findings) {
        if (f.value("kind", "") != "slow_link") continue;
        const int64_t a = f.value("rank", int64_t(-1)), b = f.value("peer", int64_t(-1));
        if ((a == int64_t(rank) && b == peer) || (a == peer && b == int64_t(rank))) return true;
    }
    return false;
}

// The job's rule for slow links, which no rank can apply alone: among the links of
// one transport (at least three with the figure), those whose bulk rate is below
// half of the median, or whose round trip is above 5x the median. A bulk rate is
// what the rank received from the peer (peer -> rank); a round trip is mostly the
// rank's own sending direction (its data queues, the acks do not), so it names the
// pair both ways round (rank <-> peer). The cost model,
// the per-rank rule's reference, is measured at init over the links the ring
// touches, so a link slow from the start drags it down with itself; and the kernel's
// round trip on a machine whose ranks outnumber its cores is milliseconds of
// scheduling where the model's start-up time is tens of microseconds (measured:
// 0.7-5 ms on loopback), so only other links of the same job are a fair reference.
void slowAgainstTheJob(const std::string& comm, const std::string& id, const std::vector<JobRank>& ranks, json* findings) {
    const struct {
        FigureOf figure;
        bool slowBelow;  // slow when below factor x median (rates), else above it (round trips)
        double factor;
    } rules[] = {{bulkRate, true, 0.5}, {roundTrip, false, 5}};
    for (const auto& rule : rules) {
        for (auto& [transport, links] : linkFigures(ranks, rule.figure)) {
            if (links.size() < 3) continue;
            const double mid = median(links);
            for (const LinkFigure& l : links) {
                const bool slow = rule.slowBelow ? l.value < rule.factor * mid : l.value > rule.factor * mid && mid > 0;
                if (!slow || l.peer < 0 || size_t(l.peer) >= ranks.size() || knownSlow(*findings, l.rank, l.peer)) continue;
                const std::string who = ranks[size_t(l.peer)].who;
                const std::string text =
                    rule.slowBelow
                        ? fmt::format("slow link: {} -> rank {} of comm {} ({}) moves {:.3f} GB/s, below half of the "
                                      "median {:.3f} GB/s",
                                      who, l.rank, comm, transport, l.value / 1e9, mid / 1e9)
                        : fmt::format("slow link: {} <-> {} of comm {} ({}) has a round trip of {:.3f} ms, over 5x the "
                                      "median {:.3f} ms",
                                      ranks[l.rank].who, who, comm, transport, l.value * 1e3, mid * 1e3);
                findings->push_back({{"kind", "slow_link"}, {"comm", comm}, {"comm_id", id}, {"rank", l.rank},
                                     {"peer", l.peer}, {"who", who}, {"value", rule.slowBelow ? l.value / 1e9 : l.value},
                                     {"reference", rule.slowBelow ? mid / 1e9 : mid}, {"source", "job"},
                                     {"text", fmt::format("{} of the job's {} {} links", text, links.size(), transport)}});
            }
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

// Every rank that sees the same straggler reports it; the job names it once, with
// the ranks that saw it ("seen_by"). Other findings keep their one observer.
void mergeStragglers(json* findings) {
    json merged = json::array();
    std::map<int64_t, size_t> stragglerAt;  // peer -> its entry in `merged`
    for (json& f : *findings) {
        const uint32_t observer = f.value("rank", 0u);
        if (f.value("kind", "") == "straggler") {
            const auto [it, fresh] = stragglerAt.emplace(f.value("peer", int64_t(-1)), merged.size());
            if (!fresh) {
                merged[it->second]["seen_by"].push_back(observer);
                continue;
            }
        }
        f["seen_by"] = json::array({observer});
        merged.push_back(std::move(f));
    }
    *findings = std::move(merged);
}

std::string seenBy(const json& f) {
    std::vector<uint32_t> ranks;
    for (const json& r : f.value("seen_by", json::array({f.value("rank", 0u)}))) ranks.push_back(r.get<uint32_t>());
    return "seen by " + rankList(ranks);
}

// Why rank `r` holds up op `seq` from outside it: it does not answer, or has not
// started the op; "" when it is in the op.
std::string holdsUp(const JobRank& r, uint64_t seq) {
    if (!answered(r)) return "does not answer (stopped, dead or cut off)";
    if (!running(r) || lastSeq(r) < seq) return fmt::format("has not started seq {} (its last is {})", seq, lastSeq(r));
    return "";
}

// For a rank in op `seq` whose wait names no peer (waiting on several at once, or not
// asleep yet): the first other rank of the op that holds it up from outside. Every stuck
// rank of a large job may ask, so the first two such ranks per op are found once.
class HoldUps {
public:
    explicit HoldUps(const std::vector<JobRank>& ranks) : ranks_(ranks) {}
    // -1 when every rank but `except` is in the op.
    int64_t firstBut(uint32_t except, uint64_t seq, std::string* why) {
        auto [it, fresh] = firstTwo_.try_emplace(seq);
        for (size_t r = 0; fresh && r < ranks_.size() && it->second.size() < 2; ++r)
            if (!holdsUp(ranks_[r], seq).empty()) it->second.push_back(uint32_t(r));
        for (uint32_t r : it->second)
            if (r != except) {
                *why = holdsUp(ranks_[r], seq);
                return r;
            }
        return -1;
    }

private:
    const std::vector<JobRank>& ranks_;
    std::map<uint64_t, std::vector<uint32_t>> firstTwo_;
};

// From a stuck rank, its wait from peer to peer until a rank that does not answer,
// has not started op `seq`, or is running it without waiting for anyone. A wait that
// names no peer points at a rank of the op that holds it up; a stuck rank is never
// said to wait for itself.
json followWait(const std::vector<JobRank>& ranks, HoldUps& holdUps, uint32_t from, uint64_t seq) {
    std::vector<uint32_t> chain{from};
    std::string why;
    for (;;) {
        const int64_t next = waitingOn(ranks[chain.back()]);
        if (next < 0 || size_t(next) >= ranks.size() || uint32_t(next) == chain.back()) {
            if (const int64_t behind = holdUps.firstBut(chain.back(), seq, &why); behind >= 0)
                chain.push_back(uint32_t(behind));
            else if (chain.size() > 1)
                why = "is running it and waits for no one (busy, or its wait has not slept yet)";
            else
                why = "waits for no single rank while every rank is in the op (busy, or its wait has not slept yet)";
            break;
        }
        if (std::find(chain.begin(), chain.end(), uint32_t(next)) != chain.end()) {
            why = "is part of a cycle of waits";
            break;
        }
        chain.push_back(uint32_t(next));
        why = holdsUp(ranks[size_t(next)], seq);
        if (!why.empty()) break;
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
        json j = {{"rank", r.rank}, {"who", r.who}, {"endpoint", r.endpoint}, {"answered", answered(r)}};
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
    HoldUps holdUps(ranks);
    for (uint32_t r : stuckRanks) {
        if (r >= ranks.size()) continue;
        json s = followWait(ranks, holdUps, r, running(ranks[r]) ? ranks[r].status["running"].value("seq", maxSeq) : maxSeq);
        s["rank"] = r;
        stuck.push_back(std::move(s));
    }
    view["stuck"] = std::move(stuck);
    slowAgainstTheJob(comm, id, ranks, &mine);
    mergeStragglers(&mine);
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
    for (auto& [c, waiting] : byCulprit) {
        const std::string who = culprit[c]["who"].get<std::string>(), why = culprit[c]["why"].get<std::string>();
        waiting.erase(std::remove(waiting.begin(), waiting.end(), c), waiting.end());  // stuck itself: said below
        if (waiting.empty())
            out.push_back(fmt::format("stuck: {} {}", who, why));
        else
            out.push_back(fmt::format("stuck: {} {} waiting (directly or through others) for {}, which {}",
                                      rankList(waiting), waiting.size() == 1 ? "is" : "are", who, why));
    }
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
            if (f.value("kind", "") != "stuck") out += fmt::format("  {} ({})\n", f.value("text", ""), seenBy(f));
        if (v["findings"].empty() && v["not_answering"].empty()) out += "  nothing found: no straggler, slow link or stuck op\n";
    }
    return out;
}

}  // namespace hostccl::monitor
