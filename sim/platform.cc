#include "sim/platform.h"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

namespace hostccl::sim {

using nlohmann::json;

CostParams Platform::costParams() const {
    CostParams p = CostParams::defaults();
    p.of(LinkClass::Shm) = LinkCost{shm.alpha, shm.beta, shm.alphaCrowded};
    const double nicBeta = nicBytesPerSec > 0 ? 1.0 / nicBytesPerSec : 0;
    p.of(netClass) = LinkCost{net.alpha, std::max(net.beta, nicBeta), net.alphaCrowded};
    p.nicBeta = nicBeta;
    if (nicBeta > 0) {  // the simulated uplinks are a number of NICs (network.cc)
        p.hostsPerLeaf = hostsPerSwitch;
        p.leafOversubscription = oversubscription;
    }
    p.gamma = gamma;
    p.copyBeta = copyBeta;
    p.linkSource[size_t(LinkClass::Shm)] = p.linkSource[size_t(netClass)] = "simulated";  // the other: "default"
    p.gammaSource = p.copySource = "simulated";
    return p;
}

double BulkRates::fractionAt(uint64_t hostBytes) const {
    if (curve.empty() || hostBytes <= curve.front().first) return curve.empty() ? 0 : curve.front().second;
    for (size_t i = 1; i < curve.size(); ++i) {
        const auto& [x1, y1] = curve[i];
        if (hostBytes > x1) continue;
        const auto& [x0, y0] = curve[i - 1];
        const double t = std::log(double(hostBytes) / double(x0)) / std::log(double(x1) / double(x0));
        return y0 + t * (y1 - y0);
    }
    return curve.back().second;
}

Rates Platform::ratesFor(uint64_t hostBytes) const {
    Rates r{shm, net, gamma, copyBeta};
    const double f = bulk.fractionAt(hostBytes);
    if (f <= 0) return r;
    auto toward = [f](double bulkValue, double* into) {
        if (bulkValue > 0) *into += f * (bulkValue - *into);
    };
    toward(bulk.shmBeta, &r.shm.beta);
    toward(bulk.netBeta, &r.net.beta);
    toward(bulk.gamma, &r.gamma);
    toward(bulk.copyBeta, &r.copyBeta);
    toward(bulk.netCpuShare, &r.net.cpuShare);
    return r;
}

std::string Platform::summary() const {
    std::string bulkPart;
    if (!bulk.curve.empty()) {
        const Rates r = ratesFor(bulk.curve.back().first);
        bulkPart = fmt::format("; from {:.1f}MiB per host: shm {:.2f}GB/s, net {:.2f}GB/s, reduce {:.2f}GB/s, copy {:.2f}GB/s",
                               bulk.curve.back().first / 1048576.0, 1e-9 / r.shm.beta, 1e-9 / r.net.beta,
                               1e-9 / r.gamma, 1e-9 / r.copyBeta);
    }
    return fmt::format(
        "{} hosts x {} ranks ({} cores each); shm {:.2f}us {:.2f}GB/s; {} {:.2f}us {:.2f}GB/s per flow, NIC {}, "
        "switch {}; reduce {:.2f}GB/s, copy {:.2f}GB/s",
        hosts, ranksPerHost, cores() * coreSpeed, shm.alpha * 1e6, 1e-9 / shm.beta, linkClassName(netClass), net.alpha * 1e6,
        1e-9 / net.beta, nicBytesPerSec > 0 ? fmt::format("{:.2f}GB/s", nicBytesPerSec * 1e-9) : "unlimited",
        hostsPerSwitch == 0 ? std::string("non-blocking")
                            : fmt::format("{} hosts per leaf, {:.1f}:1", hostsPerSwitch, oversubscription),
        1e-9 / gamma, 1e-9 / copyBeta) + bulkPart;
}

Platform fromCostParams(const CostParams& p, uint32_t hosts, uint32_t ranksPerHost, uint32_t coresPerHost,
                        LinkClass netClass) {
    Platform out;
    out.hosts = hosts;
    out.ranksPerHost = ranksPerHost;
    out.coresPerHost = coresPerHost;
    out.shm = LinkModel{p.of(LinkClass::Shm).alpha, p.of(LinkClass::Shm).beta, 0.5, p.of(LinkClass::Shm).alphaBusy};
    out.net = LinkModel{p.of(netClass).alpha, p.of(netClass).beta, netClass == LinkClass::Rdma ? 0.0 : 0.5,
                        p.of(netClass).alphaBusy};
    out.netClass = netClass;
    out.gamma = p.gamma;
    out.copyBeta = p.copyBeta;
    out.nicBytesPerSec = p.nicBeta > 0 ? 1.0 / p.nicBeta : 0;
    return out;
}

bool setCores(Platform* p, double x) {
    if (x > 1 && x != std::floor(x)) return false;
    p->coresPerHost = x == 0 ? 0 : static_cast<uint32_t>(std::ceil(x));
    p->coreSpeed = x > 0 && x < 1 ? x : 1;
    return true;
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
        LinkClass c = LinkClass::Tcp;
        if (linkClassNamed(s, &c) && linkClassInfo(c).betweenHosts) {
            *out = c;
            return;
        }
        std::string names;
        for (size_t k = 0; k < kLinkClasses; ++k)
            if (linkClassInfo(LinkClass(k)).betweenHosts)
                names += fmt::format("{}\"{}\"", names.empty() ? "" : " or ", linkClassName(LinkClass(k)));
        failWith(fmt::format("'{}' must be {}", path, names));
    }
    // An alpha in microseconds and a bandwidth in GB/s, as people quote them.
    void link(const char* name, LinkModel* out, bool required) {
        double alphaUs = out->alpha * 1e6, gbps = out->beta > 0 ? 1e-9 / out->beta : 0,
               crowdedUs = out->alphaCrowded * 1e6, stepUs = out->step * 1e6;
        number(fmt::format("{}.alpha_us", name).c_str(), &alphaUs, required, false);
        number(fmt::format("{}.alpha_crowded_us", name).c_str(), &crowdedUs, false, false);
        number(fmt::format("{}.step_us", name).c_str(), &stepUs, false, false);
        number(fmt::format("{}.bandwidth_GBps", name).c_str(), &gbps, required);
        number(fmt::format("{}.cpu_share", name).c_str(), &out->cpuShare, false, false, 1);
        if (!ok_) return;
        out->alpha = alphaUs * 1e-6;
        out->alphaCrowded = crowdedUs * 1e-6;
        out->step = stepUs * 1e-6;
        out->beta = 1e-9 / gbps;
    }

    // The optional "bulk" object: rates in GB/s (each optional) and the curve.
    void bulk(BulkRates* out) {
        double shmGbps = 0, netGbps = 0, reduceGbps = 0, copyGbps = 0, netCpuShare = 0;
        std::vector<std::pair<uint64_t, double>> curve;
        curvePoints("bulk.curve", &curve);
        number("bulk.shm_GBps", &shmGbps, false);
        number("bulk.net_GBps", &netGbps, false);
        number("bulk.reduce_GBps", &reduceGbps, false);
        number("bulk.copy_GBps", &copyGbps, false);
        number("bulk.net_cpu_share", &netCpuShare, false, false, 1);
        if (!ok_) return;
        auto beta = [](double gbps) { return gbps > 0 ? 1e-9 / gbps : 0.0; };
        *out = BulkRates{std::move(curve), beta(shmGbps), beta(netGbps), beta(reduceGbps), beta(copyGbps), netCpuShare};
    }
    // Whole cores, or a part of one (below 1: one core at that speed); 0 or absent: a
    // core per rank.
    void cores(const char* path, Platform* p) {
        double x = p->coresPerHost * p->coreSpeed;
        number(path, &x, false, false, 1 << 24);
        if (ok_ && !setCores(p, x))
            failWith(fmt::format("'{}' must be a whole number, or a part of one core below 1", path));
    }
    // [[bytes, fraction], ...]: bytes growing, fractions in [0, 1].
    void curvePoints(const char* path, std::vector<std::pair<uint64_t, double>>* out) {
        const json* v = find(path);
        if (!ok_ || v == nullptr) return;
        if (!v->is_array()) return failWith(fmt::format("'{}' must be a list of [bytes, fraction] pairs", path));
        for (const json& p : *v) {
            const bool pair = p.is_array() && p.size() == 2 && p[0].is_number() && p[1].is_number();
            const double bytes = pair ? p[0].get<double>() : 0, f = pair ? p[1].get<double>() : -1;
            if (!pair || !(bytes >= 1) || bytes > 1e15 || !(f >= 0 && f <= 1))
                return failWith(fmt::format("'{}' must hold [bytes >= 1, fraction in 0..1] pairs (got {})", path, p.dump()));
            if (!out->empty() && bytes <= out->back().first)
                return failWith(fmt::format("'{}' must list growing byte counts (got {})", path, p.dump()));
            out->emplace_back(static_cast<uint64_t>(bytes), f);
        }
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
    r.cores("cores_per_host", &p);
    r.link("shm", &p.shm, true);
    r.link("net", &p.net, p.hosts > 1);
    r.linkClass("net.kind", &p.netClass);
    double nicGbps = 0, reduceGbps = 0, copyGbps = 0, eager = double(p.eagerBytes), single = double(p.shmSingleCopyBytes);
    r.number("shm.single_copy_bytes", &single, false, false, double(uint64_t(1) << 40));
    r.number("net.nic_GBps", &nicGbps, false, false);
    r.count("switch.hosts_per_leaf", &p.hostsPerSwitch, false, false);
    r.number("switch.oversubscription", &p.oversubscription, false, true, 1e6);
    r.number("reduce_GBps", &reduceGbps, true);
    r.number("copy_GBps", &copyGbps, true);
    r.number("eager_bytes", &eager, false, false, double(uint64_t(1) << 40));
    r.bulk(&p.bulk);

    if (!r.ok()) return false;
    if (uint64_t(p.hosts) * p.ranksPerHost > (1u << 24)) {
        *why = fmt::format("hosts x ranks_per_host = {} is more than 16777216 ranks", uint64_t(p.hosts) * p.ranksPerHost);
        return false;
    }
    p.nicBytesPerSec = nicGbps * 1e9;
    p.gamma = 1e-9 / reduceGbps;
    p.copyBeta = 1e-9 / copyGbps;
    p.eagerBytes = static_cast<uint64_t>(eager);
    p.shmSingleCopyBytes = static_cast<uint64_t>(single);
    *out = p;
    return true;
}

std::string platformJson(const Platform& p) {
    auto link = [](const LinkModel& l) {
        json j{{"alpha_us", l.alpha * 1e6}, {"bandwidth_GBps", 1e-9 / l.beta}, {"cpu_share", l.cpuShare}};
        if (l.alphaCrowded > 0) j["alpha_crowded_us"] = l.alphaCrowded * 1e6;
        if (l.step > 0) j["step_us"] = l.step * 1e6;
        return j;
    };
    json j{{"hosts", p.hosts},
           {"ranks_per_host", p.ranksPerHost},
           {"cores_per_host", p.coreSpeed < 1 ? p.coreSpeed : double(p.coresPerHost)},
           {"shm", link(p.shm)},
           {"net", link(p.net)},
           {"reduce_GBps", 1e-9 / p.gamma},
           {"copy_GBps", 1e-9 / p.copyBeta},
           {"eager_bytes", p.eagerBytes}};
    j["shm"]["single_copy_bytes"] = p.shmSingleCopyBytes;
    j["net"]["kind"] = linkClassName(p.netClass);
    j["net"]["nic_GBps"] = p.nicBytesPerSec * 1e-9;
    j["switch"] = json{{"hosts_per_leaf", p.hostsPerSwitch}, {"oversubscription", p.oversubscription}};
    if (!p.bulk.curve.empty()) {
        json b{{"curve", p.bulk.curve}};
        auto rate = [&b](const char* key, double beta) {
            if (beta > 0) b[key] = 1e-9 / beta;
        };
        rate("shm_GBps", p.bulk.shmBeta);
        rate("net_GBps", p.bulk.netBeta);
        rate("reduce_GBps", p.bulk.gamma);
        rate("copy_GBps", p.bulk.copyBeta);
        if (p.bulk.netCpuShare > 0) b["net_cpu_share"] = p.bulk.netCpuShare;
        j["bulk"] = b;
    }
    return j.dump(2) + "\n";
}

}  // namespace hostccl::sim
