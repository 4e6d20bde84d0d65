#include "core/topology/describe.h"

#include <fmt/format.h>

#include <algorithm>

#include "algorithms/selector.h"
#include "common/env.h"
#include "core/comm.h"

namespace hostccl {

namespace {
// Hosts in order of their lowest rank, each with its ranks.
std::vector<std::pair<std::string, std::vector<uint32_t>>> hostsOf(const std::vector<PeerInfo>& peers) {
    std::vector<std::pair<std::string, std::vector<uint32_t>>> hosts;
    for (const PeerInfo& p : peers) {
        auto it = std::find_if(hosts.begin(), hosts.end(), [&](const auto& h) { return h.first == p.hostId; });
        if (it == hosts.end()) hosts.push_back({p.hostId, {p.rank}});
        else it->second.push_back(p.rank);
    }
    return hosts;
}

std::string hostsSection(const Comm& c) {
    auto hosts = hostsOf(c.peers());
    std::string out = fmt::format("communicator {}: {} ranks on {} host{}; this is rank {}\n", c.name(), c.size(),
                                  hosts.size(), hosts.size() == 1 ? "" : "s", c.rank());
    for (size_t h = 0; h < hosts.size(); ++h) {
        const PeerInfo& first = c.peers()[hosts[h].second[0]];
        out += fmt::format("host {} ({}): {} cores, {} NUMA node{}; ranks", h, first.hostId, first.hostCores,
                           first.hostNumaNodes, first.hostNumaNodes == 1 ? "" : "s");
        for (size_t i = 0; i < hosts[h].second.size(); ++i)
            out += fmt::format(" {} (local {})", hosts[h].second[i], i);
        out += "\n";
    }
    return out;
}

// This rank's row shows its links as built where they exist; pairs not connected
// yet (links open on first use) and other rows follow the rule the link factory
// applies without RDMA (shared memory within a host unless HOSTCCL_TRANSPORT=tcp):
// whether another pair has RDMA devices is known only to that pair.
char linkLetter(LinkClass c) { return linkClassInfo(c).letter; }

std::string linksSection(const Comm& c) {
    const bool tcpOnly = env::getString("HOSTCCL_TRANSPORT") == "tcp";
    uint32_t connected = 0;
    std::string rows;
    // Past kMatrixRanks the matrix would be n^2 characters: this rank's row only.
    constexpr uint32_t kMatrixRanks = 64;
    for (uint32_t a = 0; a < c.size(); ++a) {
        if (c.size() > kMatrixRanks && a != c.rank()) continue;
        rows += fmt::format("  rank {:>3}:", a);
        for (uint32_t b = 0; b < c.size(); ++b) {
            const transport::Link* mine = a == c.rank() && b != a ? c.view().links->existing(b) : nullptr;
            connected += mine != nullptr ? 1 : 0;
            char kind = a == b ? '.'
                        : linkLetter(!tcpOnly && c.peers()[a].hostId == c.peers()[b].hostId ? LinkClass::Shm
                                                                                               : LinkClass::Tcp);
            if (mine != nullptr) kind = linkLetter(mine->linkClass());
            rows += fmt::format(" {}", kind);
        }
        rows += "\n";
    }
    std::string legend;
    for (size_t k = 0; k < kLinkClasses; ++k)
        legend += fmt::format("{} = {}, ", linkClassInfo(LinkClass(k)).letter, linkClassName(LinkClass(k)));
    return fmt::format("links ({}. = self; this rank has connected {} of {} so far, the rest open on first use):\n",
                       legend, connected, c.size() - 1) +
           rows;
}

// What the selector picks for each collective at sizes from 8 B to 64 MiB (fp32 sum,
// per-rank bytes; gathered collectives carry that much per rank).
std::string choicesSection(const Comm& c) {
    static const std::pair<CollType, const char*> colls[] = {
        {CollType::AllReduce, "allreduce"}, {CollType::AllGather, "allgather"},
        {CollType::ReduceScatter, "reducescatter"}, {CollType::Broadcast, "broadcast"},
        {CollType::Reduce, "reduce"}, {CollType::AlltoAllV, "alltoall"},  // HcclAlltoAll arrives as the V form
    };
    std::string out = "algorithm per size (fp32 sum; direct = ranks on one host, aclrtMalloc buffers):\n";
    out += fmt::format("  {:>10}", "bytes");
    for (const auto& [t, name] : colls) out += fmt::format(" {:>18}", name);
    out += "\n";
    const uint32_t n = c.size();
    for (uint64_t bytes = 8; bytes <= (64u << 20); bytes *= 8) {
        out += fmt::format("  {:>10}", bytes);
        for (const auto& [t, name] : colls) {
            CollArgs a;
            a.type = t;
            a.count = bytes / 4;
            const uint64_t perRank = t == CollType::AllGather ? a.count : (a.count + n - 1) / n;
            // The normalised layout the API layer builds: counts and packed displacements.
            std::vector<uint64_t> counts(n, perRank), displs(n);
            for (uint32_t i = 0; i < n; ++i) displs[i] = i * perRank;
            if (t == CollType::AllGather) {
                a.recvCounts = counts;
                a.recvDispls = displs;
            }
            if (t == CollType::ReduceScatter) {
                a.sendCounts = counts;
                a.sendDispls = displs;
            }
            if (t == CollType::AlltoAllV) setPlainAlltoAll(&a, n, perRank);
            Context ctx(c.view(), a, Deadline::never(), nullptr);
            out += fmt::format(" {:>18}", selectAlgorithm(ctx).name());
        }
        out += "\n";
    }
    return out;
}
}  // namespace

std::string describeCommunicator(const Comm& comm) {
    return hostsSection(comm) + linksSection(comm) +
           fmt::format("cost model: {}\n", modelOf(*comm.view().costs).params().summary()) + choicesSection(comm);
}

}  // namespace hostccl
