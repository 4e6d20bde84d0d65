#include "transports/sim/platform.h"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

namespace hostccl::sim {

using nlohmann::json;

CostParams Platform::costParams() const {
    CostParams p = CostParams::defaults();
    p.of(LinkClass::Shm) = LinkCost{shm.alpha, shm.beta};
    const double nicBeta = nicBytesPerSec > 0 ? 1.0 / nicBytesPerSec : 0;
    p.of(netClass) = LinkCost{net.alpha, std::max(net.beta, nicBeta)};
    p.gamma = gamma;
    p.copyBeta = copyBeta;
    p.linkSource = {"simulated", "simulated", "simulated"};
    p.gammaSource = p.copySource = "simulated";
    return p;
}

std::string Platform::summary() const {
    return fmt::format(
        "{} hosts x {} ranks ({} cores each); shm {:.2f}us {:.2f}GB/s; {} {:.2f}us {:.2f}GB/s per flow, NIC {}, "
        "switch {}; reduce {:.2f}GB/s, copy {:.2f}GB/s",
        hosts, ranksPerHost, cores(), shm.alpha * 1e6, 1e-9 / shm.beta, linkClassName(netClass), net.alpha * 1e6,
        1e-9 / net.beta, nicBytesPerSec > 0 ? fmt::format("{:.2f}GB/s", nicBytesPerSec * 1e-9) : "unlimited",
        hostsPerSwitch == 0 ? std::string("non-blocking")
                            : fmt::format("{} hosts per leaf, {:.1f}:1", hostsPerSwitch, oversubscription),
        1e-9 / gamma, 1e-9 / copyBeta);
}

Platform fromCostParams(const CostParams& p, uint32_t hosts, uint32_t ranksPerHost, uint32_t coresPerHost,
                        LinkClass netClass) {
    Platform out;
    out.hosts = hosts;
    out.ranksPerHost = ranksPerHost;
    out.coresPerHost = coresPerHost;
    out.shm = LinkModel{p.of(LinkClass::Shm).alpha, p.of(LinkClass::Shm).beta, 0.5};
    out.net = LinkModel{p.of(netClass).alpha, p.of(netClass).beta, netClass == LinkClass::Rdma ? 0.0 : 0.5};
    out.netClass = netClass;
    out.gamma = p.gamma;
    out.copyBeta = p.copyBeta;
    return out;
}

namespace {
// A field read with its name in every error.
class Reader {
public:
    Reader(const json& j, std::string* why) : j_(j), why_(why) {}
    bool ok() const { return ok_; }

    // `required`: absent is an error; else the default stays. `positive`: 0 refused.
    void number(const char* path, double* out, bool required, bool positive = true, double max = 1e15) {
        const json* v = find(path);
        if (!ok_) return;
        if (v == nullptr) {
            if (required) failWith(fmt::format("'{}' is missing", path));
            return;
        }
        if (!v->is_number()) return failWith(fmt::format("'{}' must be a number", path));
        const double x = v->get<double>();
        if (!std::isfinite(x) || x < 0 || (positive && x == 0) || x > max)
            return failWith(fmt::format("'{}' must be {} and at most {:g} (got {})", path,
                                        positive ? "greater than 0" : "0 or more", max, v->dump()));
        *out = x;
    }
    void count(const char* path, uint32_t* out, bool required, bool positive = true) {
        double x = *out;
        number(path, &x, required, positive, 1 << 24);
        if (ok_ && x != std::floor(x)) return failWith(fmt::format("'{}' must be a whole number", path));
        if (ok_) *out = static_cast<uint32_t>(x);
    }
    void linkClass(const char* path, LinkClass* out) {
        const json* v = find(path);
        if (!ok_ || v == nullptr) return;
        const std::string s = v->is_string() ? v->get<std::string>() : "";
        if (s == "tcp") *out = LinkClass::Tcp;
        else if (s == "rdma") *out = LinkClass::Rdma;
        else failWith(fmt::format("'{}' must be \"tcp\" or \"rdma\"", path));
    }
    // An alpha in microseconds and a bandwidth in GB/s, as people quote them.
    void link(const char* name, LinkModel* out, bool required) {
        double alphaUs = out->alpha * 1e6, gbps = out->beta > 0 ? 1e-9 / out->beta : 0;
        number(fmt::format("{}.alpha_us", name).c_str(), &alphaUs, required, false);
        number(fmt::format("{}.bandwidth_GBps", name).c_str(), &gbps, required);
        number(fmt::format("{}.cpu_share", name).c_str(), &out->cpuShare, false, false, 1);
        if (!ok_) return;
        out->alpha = alphaUs * 1e-6;
        out->beta = 1e-9 / gbps;
    }

private:
    const json* find(const std::string& path) {
        const json* at = &j_;
        size_t from = 0;
        for (;;) {
            const size_t dot = path.find('.', from);
            const std::string key = path.substr(from, dot == std::string::npos ? std::string::npos : dot - from);
            if (!at->is_object() || !at->contains(key)) return nullptr;
            at = &(*at)[key];
            if (dot == std::string::npos) return at;
            from = dot + 1;
        }
    }
    void failWith(std::string why) {
        if (ok_) *why_ = std::move(why);
        ok_ = false;
    }
    const json& j_;
    std::string* why_;
    bool ok_ = true;
};
}  // namespace

bool parsePlatform(const std::string& text, Platform* out, std::string* why) {
    const json j = json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
        *why = "not a JSON object";
        return false;
    }
    // Unset link fields keep what a probe would default to.
    const CostParams d = CostParams::defaults();
    Platform p;
    p.shm = LinkModel{d.of(LinkClass::Shm).alpha, d.of(LinkClass::Shm).beta, 0.5};
    p.net = LinkModel{d.of(LinkClass::Tcp).alpha, d.of(LinkClass::Tcp).beta, 0.5};
    Reader r(j, why);
    r.count("hosts", &p.hosts, true);
    r.count("ranks_per_host", &p.ranksPerHost, true);
    r.count("cores_per_host", &p.coresPerHost, false, false);
    r.link("shm", &p.shm, true);
    r.link("net", &p.net, p.hosts > 1);
    r.linkClass("net.kind", &p.netClass);
    double nicGbps = 0, reduceGbps = 0, copyGbps = 0, eager = double(p.eagerBytes);
    r.number("net.nic_GBps", &nicGbps, false, false);
    r.count("switch.hosts_per_leaf", &p.hostsPerSwitch, false, false);
    r.number("switch.oversubscription", &p.oversubscription, false, true, 1e6);
    r.number("reduce_GBps", &reduceGbps, true);
    r.number("copy_GBps", &copyGbps, true);
    r.number("eager_bytes", &eager, false, false, double(uint64_t(1) << 40));
    if (!r.ok()) return false;
    if (uint64_t(p.hosts) * p.ranksPerHost > (1u << 24)) {
        *why = fmt::format("hosts x ranks_per_host = {} is more than 16777216 ranks", uint64_t(p.hosts) * p.ranksPerHost);
        return false;
    }
    p.nicBytesPerSec = nicGbps * 1e9;
    p.gamma = 1e-9 / reduceGbps;
    p.copyBeta = 1e-9 / copyGbps;
    p.eagerBytes = static_cast<uint64_t>(eager);
    *out = p;
    return true;
}

std::string platformJson(const Platform& p) {
    auto link = [](const LinkModel& l) {
        return json{{"alpha_us", l.alpha * 1e6}, {"bandwidth_GBps", 1e-9 / l.beta}, {"cpu_share", l.cpuShare}};
    };
    json j{{"hosts", p.hosts},
           {"ranks_per_host", p.ranksPerHost},
           {"cores_per_host", p.coresPerHost},
           {"shm", link(p.shm)},
           {"net", link(p.net)},
           {"reduce_GBps", 1e-9 / p.gamma},
           {"copy_GBps", 1e-9 / p.copyBeta},
           {"eager_bytes", p.eagerBytes}};
    j["net"]["kind"] = p.netClass == LinkClass::Rdma ? "rdma" : "tcp";
    j["net"]["nic_GBps"] = p.nicBytesPerSec * 1e-9;
    j["switch"] = json{{"hosts_per_leaf", p.hostsPerSwitch}, {"oversubscription", p.oversubscription}};
    return j.dump(2) + "\n";
}

}  // namespace hostccl::sim
