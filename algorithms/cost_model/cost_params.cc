#include "algorithms/cost_model/cost_params.h"

#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
#include <sstream>

namespace hostccl {

// Each link class's defaults from its row in transports/link_class.h.
CostParams CostParams::defaults() {
    CostParams p;
    for (size_t c = 0; c < kLinkClasses; ++c) {
        const LinkClassInfo& info = linkClassInfo(LinkClass(c));
        p.link[c] = LinkCost{info.alpha, 1.0 / info.bytesPerSecond};
        p.linkSource[c] = "default";
    }
    p.gamma = 1.0 / 4e9;
    p.copyBeta = 1.0 / 5e9;
    return p;
}

std::string CostParams::summary() const {
    std::string out;
    for (size_t c = 0; c < kLinkClasses; ++c)
        out += fmt::format("{} alpha {:.2f}us{} beta {:.3f}GB/s ({}), ", linkClassName(LinkClass(c)), link[c].alpha * 1e6,
                           link[c].alphaBusy > 0 ? fmt::format(" (crowded {:.2f}us)", link[c].alphaBusy * 1e6) : "",
                           1e-9 / link[c].beta, linkSource[c]);
    out += fmt::format("reduce {:.2f}GB/s ({}), copy {:.2f}GB/s ({})", 1e-9 / gamma, gammaSource, 1e-9 / copyBeta,
                       copySource);
    if (nicBeta > 0) out += fmt::format(", nic {:.3f}GB/s", 1e-9 / nicBeta);
    if (hostsPerLeaf > 0) out += fmt::format(", leaves of {} hosts at {:g}:1", hostsPerLeaf, leafOversubscription);
    if (handshake > 0) out += fmt::format(", all-pairs handshake {:.2f}us ({})", handshake * 1e6, handshakeSource);
    if (boardBarrier > 0) out += fmt::format(", in-process barrier {:.2f}us (probe)", boardBarrier * 1e6);
    if (probeMs > 0) out += fmt::format(", probe {:.1f}ms", probeMs);
    return out;
}

namespace {
// "<number><unit>" with exactly `unit` after the number; the number must be > 0.
bool number(const std::string& s, const char* unit, double* out) {
    const char* begin = s.c_str();
    char* end = nullptr;
    const double v = std::strtod(begin, &end);
    if (end == begin || std::strcmp(end, unit) != 0 || !(v > 0) || v > 1e12) return false;
    *out = v;
    return true;
}

// leaf=<hosts>/<oversubscription>: a whole number of hosts, a ratio of at least 1.
bool leafSetting(const std::string& item, const std::string& value, CostParams* p, std::string* why) {
    const size_t slash = value.find('/');
    double hosts = 0, ratio = 0;
    if (slash == std::string::npos || !number(value.substr(0, slash), "", &hosts) ||
        !number(value.substr(slash + 1), "", &ratio) || hosts > 16777216 || hosts != double(uint32_t(hosts)) ||
        ratio < 1) {
        *why = fmt::format("'{}': expected leaf=<hosts per leaf switch>/<oversubscription, at least 1>", item);
        return false;
    }
    p->hostsPerLeaf = uint32_t(hosts);
    p->leafOversubscription = ratio;
    return true;
}

bool setting(const std::string& item, CostParams* p, std::string* why) {
    const size_t eq = item.find('=');
    const std::string key = item.substr(0, eq), value = eq == std::string::npos ? "" : item.substr(eq + 1);
    if (key == "leaf") return leafSetting(item, value, p, why);
    double a = 0, bw = 0;
    if (key == "reduce" || key == "copy" || key == "nic") {
        if (!number(value, "GBps", &bw)) {
            *why = fmt::format("'{}': expected {}=<bandwidth>GBps", item, key);
            return false;
        }
        if (key == "nic") {
            p->nicBeta = 1e-9 / bw;
            return true;
        }
        (key == "reduce" ? p->gamma : p->copyBeta) = 1e-9 / bw;
        (key == "reduce" ? p->gammaSource : p->copySource) = "config";
        return true;
    }
    for (size_t c = 0; c < kLinkClasses; ++c) {
        if (key != linkClassName(LinkClass(c))) continue;
        const size_t slash = value.find('/');
        if (slash == std::string::npos || !number(value.substr(0, slash), "us", &a) ||
            !number(value.substr(slash + 1), "GBps", &bw)) {
            *why = fmt::format("'{}': expected {}=<alpha>us/<bandwidth>GBps", item, key);
            return false;
        }
        p->link[c] = LinkCost{a * 1e-6, 1e-9 / bw};
        p->linkSource[c] = "config";
        return true;
    }
    *why = fmt::format("'{}': unknown setting (shm, tcp, rdma, reduce, copy, nic, leaf)", item);
    return false;
}
}  // namespace

bool applyCostConfig(const std::string& text, CostParams* out, std::string* why) {
    std::string spaced = text;
    for (char& c : spaced) c = c == ',' ? ' ' : c;
    std::istringstream in(spaced);
    CostParams p = *out;
    std::string item;
    while (in >> item)
        if (!setting(item, &p, why)) return false;
    *out = p;
    return true;
}

bool fullyConfigured(const CostParams& p, bool needTcp) {
    auto configured = [](const char* s) { return std::strcmp(s, "config") == 0; };
    return configured(p.linkSource[size_t(LinkClass::Shm)]) && configured(p.gammaSource) &&
           configured(p.copySource) && (!needTcp || configured(p.linkSource[size_t(LinkClass::Tcp)]));
}

}  // namespace hostccl
