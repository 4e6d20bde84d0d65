#include "sim/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace hostccl::sim {

double scalingEfficiency(const std::vector<Row>& rows, size_t i) {
    const OpOutcome& o = rows[i].outcome;
    if (!o.ok) return 0;
    for (size_t j = 0; j <= i; ++j) {
        const OpOutcome& b = rows[j].outcome;
        if (b.spec.type != o.spec.type || b.spec.bytes != o.spec.bytes || b.algorithm != o.algorithm) continue;
        return b.ok && b.busbw() > 0 ? o.busbw() / b.busbw() : 0;
    }
    return 0;
}

std::string tableHeader() {
    return fmt::format("{:<14} {:>6} {:>5} {:>12} {:<20} {:>3} {:>12} {:>10} {:>10} {:>9} {:>6} {:>12}\n",
                       "collective", "ranks", "hosts", "bytes", "algorithm", "sel", "time_us", "algbw_GBs", "busbw_GBs",
                       "scale_eff", "exact", "model_us");
}

std::string tableLine(const std::vector<Row>& rows, size_t i) {
    const Row& r = rows[i];
    const OpOutcome& o = r.outcome;
    if (!o.ok)
        return fmt::format("{:<14} {:>6} {:>5} {:>12} {:<20} error: {}\n", collectiveKey(o.spec.type), o.ranks, r.hosts,
                           o.spec.bytes, o.algorithm.empty() ? o.spec.algorithm : o.algorithm, o.error);
    return fmt::format("{:<14} {:>6} {:>5} {:>12} {:<20} {:>3} {:>12.2f} {:>10.3f} {:>10.3f} {:>9.3f} {:>6} {:>12.2f}\n",
                       collectiveKey(o.spec.type), o.ranks, r.hosts, o.spec.bytes, o.algorithm,
                       r.selected ? (r.fastest ? "*" : "*!") : (r.fastest ? "+" : ""), o.seconds * 1e6, o.algbw() * 1e-9,
                       o.busbw() * 1e-9, scalingEfficiency(rows, i), o.checked ? "yes" : "-", o.modelSeconds * 1e6);
}

std::string csv(const std::vector<Row>& rows) {
    std::string out =
        "collective,ranks,hosts,bytes,algorithm,selected,fastest,time_us,model_us,algbw_GBps,busbw_GBps,"
        "scaling_efficiency,messages,exact,error\n";
    for (size_t i = 0; i < rows.size(); ++i) {
        const Row& r = rows[i];
        const OpOutcome& o = r.outcome;
        std::string error = o.error;
        std::replace(error.begin(), error.end(), '"', '\'');
        out += fmt::format("{},{},{},{},{},{},{},{:.3f},{:.3f},{:.6f},{:.6f},{:.4f},{},{},\"{}\"\n",
                           collectiveKey(o.spec.type), o.ranks, r.hosts, o.spec.bytes,
                           o.algorithm.empty() ? o.spec.algorithm : o.algorithm, r.selected ? 1 : 0, r.fastest ? 1 : 0,
                           o.seconds * 1e6, o.modelSeconds * 1e6, o.algbw() * 1e-9, o.busbw() * 1e-9,
                           scalingEfficiency(rows, i), o.messages, o.checked ? (o.ok ? "yes" : "no") : "-", error);
    }
    return out;
}

std::string htmlEscape(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (c == '<') out += "&lt;";
        else if (c == '>') out += "&gt;";
        else if (c == '&') out += "&amp;";
        else out += c;
    }
    return out;
}

namespace {
const char* kColours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf", "#7f7f7f"};
std::string escape(const std::string& s) { return htmlEscape(s); }

// One plot: busbw (y) against ranks (x, logarithmic), a polyline per algorithm,
// the selector's picks circled.
std::string plot(const std::string& title, const std::vector<const Row*>& rows) {
    constexpr double W = 560, H = 300, L = 60, R = 150, T = 30, B = 40;
    std::map<std::string, std::vector<const Row*>> byAlgo;
    double maxBw = 0, minN = 1e18, maxN = 0;
    for (const Row* r : rows) {
        if (!r->outcome.ok) continue;
        byAlgo[r->outcome.algorithm].push_back(r);
        maxBw = std::max(maxBw, r->outcome.busbw() * 1e-9);
        minN = std::min(minN, double(r->outcome.ranks));
        maxN = std::max(maxN, double(r->outcome.ranks));
    }
    if (byAlgo.empty() || maxBw <= 0) return "";
    const double lx0 = std::log2(minN), lx1 = std::max(std::log2(maxN), lx0 + 1);
    auto x = [&](double n) { return L + (std::log2(n) - lx0) / (lx1 - lx0) * (W - L - R); };
    auto y = [&](double bw) { return H - B - bw / (maxBw * 1.1) * (H - T - B); };
    std::string svg = fmt::format(R"svg(<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" font-family="sans-serif" font-size="11">)svg", W, H);
    svg += fmt::format(R"svg(<text x="{}" y="18" font-size="13">{}</text>)svg", L, escape(title));
    svg += fmt::format(R"svg(<line x1="{0}" y1="{1}" x2="{2}" y2="{1}" stroke="black"/><line x1="{0}" y1="{3}" x2="{0}" y2="{1}" stroke="black"/>)svg",
                       L, H - B, W - R, T);
    for (int i = 0; i <= 4; ++i) {
        const double bw = maxBw * 1.1 * i / 4;
        svg += fmt::format(R"svg(<text x="{}" y="{}" text-anchor="end">{:.2f}</text>)svg", L - 4, y(bw) + 4, bw);
    }
    for (double n = std::exp2(std::ceil(lx0)); n <= maxN; n *= 2)
        svg += fmt::format(R"svg(<text x="{}" y="{}" text-anchor="middle">{}</text>)svg", x(n), H - B + 14, n);
    svg += fmt::format(R"svg(<text x="{}" y="{}" text-anchor="middle">ranks</text>)svg", (L + W - R) / 2, H - 6);
    svg += fmt::format(R"svg(<text x="12" y="{}" transform="rotate(-90 12 {})" text-anchor="middle">busbw GB/s</text>)svg",
                       (H - B + T) / 2, (H - B + T) / 2);
    size_t k = 0;
    for (auto& [algo, pts] : byAlgo) {
        std::sort(pts.begin(), pts.end(), [](const Row* a, const Row* b) { return a->outcome.ranks < b->outcome.ranks; });
        const char* colour = kColours[k % (sizeof kColours / sizeof *kColours)];
        std::string line;
        for (const Row* p : pts) {
            line += fmt::format("{:.1f},{:.1f} ", x(p->outcome.ranks), y(p->outcome.busbw() * 1e-9));
            if (p->selected)
                svg += fmt::format(R"svg(<circle cx="{:.1f}" cy="{:.1f}" r="5" fill="none" stroke="{}"/>)svg", x(p->outcome.ranks),
                                   y(p->outcome.busbw() * 1e-9), colour);
        }
        svg += fmt::format(R"svg(<polyline points="{}" fill="none" stroke="{}" stroke-width="2"/>)svg", line, colour);
        svg += fmt::format(R"svg(<text x="{}" y="{}" fill="{}">{}</text>)svg", W - R + 10, T + 14 * (k + 1), colour, escape(algo));
        ++k;
    }
    return svg + "</svg>\n";
}
}  // namespace

std::string html(const std::vector<Row>& rows, const std::string& platformSummary) {
    std::map<std::pair<std::string, uint64_t>, std::vector<const Row*>> groups;
    for (const Row& r : rows) groups[{collectiveKey(r.outcome.spec.type), r.outcome.spec.bytes}].push_back(&r);
    std::string out = "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>hostccl-sim</title></head><body>\n";
    out += "<h1>hostccl-sim: bus bandwidth against ranks</h1>\n<p>Platform: " + escape(platformSummary) +
           ". Circles: what the selector picks.</p>\n";
    for (auto& [key, group] : groups)
        out += plot(fmt::format("{} {} B", key.first, key.second), group);
    out += "<h2>Table</h2>\n<pre>" + escape(tableHeader());
    for (size_t i = 0; i < rows.size(); ++i) out += escape(tableLine(rows, i));
    return out + "</pre>\n</body></html>\n";
}

}  // namespace hostccl::sim
