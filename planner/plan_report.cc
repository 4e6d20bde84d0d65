#include "planner/plan_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "sim/report.h"

namespace hostccl::plan {

namespace {

struct Part {
    const char* name;
    const char* colour;
    double Prediction::*seconds;
};
constexpr std::array<Part, 6> kParts{{{"compute", "#1f77b4", &Prediction::computeSeconds},
                                      {"tensor-parallel allreduce", "#ff7f0e", &Prediction::tpSeconds},
                                      {"stage hops", "#9467bd", &Prediction::p2pSeconds},
                                      {"pipeline bubble", "#7f7f7f", &Prediction::bubbleSeconds},
                                      {"exposed gradient averaging", "#d62728", &Prediction::dpExposedSeconds},
                                      {"optimizer", "#2ca02c", &Prediction::optimizerSeconds}}};

// A bar per plan, the first-ranked on top, its parts side by side in step order.
std::string breakdownSvg(const std::vector<RankedPlan>& plans) {
    constexpr int kLabel = 400, kBarArea = 520, kRow = 22, kTop = 40, kRight = 90;
    double longest = 0;
    for (const RankedPlan& p : plans) longest = std::max(longest, p.prediction.stepSeconds);
    const int height = kTop + kRow * int(plans.size()) + 30;
    std::string svg = fmt::format(
        R"(<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" font-family="sans-serif" font-size="11">)",
        kLabel + kBarArea + kRight, height);
    int x = 4;
    for (const Part& part : kParts) {  // the legend
        svg += fmt::format(R"(<rect x="{}" y="8" width="10" height="10" fill="{}"/><text x="{}" y="17">{}</text>)", x,
                           part.colour, x + 14, part.name);
        x += 14 + 6 * int(std::string(part.name).size()) + 12;
    }
    for (size_t i = 0; i < plans.size(); ++i) {
        const Prediction& q = plans[i].prediction;
        const int y = kTop + kRow * int(i);
        svg += fmt::format(R"(<text x="4" y="{}">{}. {}{}</text>)", y + 14, i + 1, sim::htmlEscape(planLabel(plans[i].plan)),
                           lossyCompression(plans[i].plan.compression) ? " (lossy)" : "");
        double at = 0;
        for (const Part& part : kParts) {
            const double s = q.*part.seconds;
            if (s <= 0 || longest <= 0) continue;
            svg += fmt::format(R"(<rect x="{:.1f}" y="{}" width="{:.1f}" height="{}" fill="{}"><title>{}: {:.3f} ms</title></rect>)",
                               kLabel + at / longest * kBarArea, y + 3, s / longest * kBarArea, kRow - 6, part.colour,
                               part.name, s * 1e3);
            at += s;
        }
        svg += fmt::format(R"(<text x="{:.1f}" y="{}">{:.3f} ms</text>)", kLabel + at / longest * kBarArea + 4, y + 14,
                           q.stepSeconds * 1e3);
    }
    return svg + "</svg>\n";
}

}  // namespace

std::string planReportHtml(const PlanReport& r, size_t topPlans) {
    const Workload& w = *r.workload;
    const Cluster& c = *r.cluster;
    const auto& all = r.result->plans;
    const std::vector<RankedPlan> top(all.begin(), all.begin() + std::min(topPlans, all.size()));
    std::string out = "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>hostccl-plan: " +
                      sim::htmlEscape(w.model.name) + "</title></head><body style=\"font-family: sans-serif\">\n";
    out += "<h1>hostccl-plan: " + sim::htmlEscape(w.model.name) + "</h1>\n<ul>\n";
    out += fmt::format("<li>Model: {} layers, {} parameters, {:.4g} forward FLOPs per sample; global batch {}</li>\n",
                       w.model.layers.size(), w.model.parameterCount(), w.model.forwardFlopsPerSample(), w.globalBatch);
    out += "<li>Cluster: " + sim::htmlEscape(c.platform.summary()) + "</li>\n";
    out += "<li>Compute: " + sim::htmlEscape(c.gemm.summary()) + "; " +
           sim::htmlEscape(c.elementwise.summary("element-wise on one core", "GB/s", "MB")) + "</li>\n";
    const double gain = r.result->compressionMinGain;
    out += fmt::format("<li>{} plans predicted; {} over the memory limit; {} the same as a listed one but for a choice "
                       "that changes nothing; ranked by predicted step{}</li>\n</ul>\n",
                       r.result->considered, r.result->overMemory, r.result->equivalent,
                       gain > 0 ? fmt::format(", a compressed plan above an exact one only when the exact one is "
                                              "predicted more than {:g} % slower", gain * 100)
                                : std::string());
    out += fmt::format("<h2>Predicted step of the {} first-ranked plans</h2>\n", top.size()) + breakdownSvg(top);
    out += "<p>Measured on the machine: GEMM times per shape, element-wise rates, and (probed) the links, copy and "
           "reduce rates, how ranks sharing a host slow each other and what a sync costs there. Collective times come "
           "from hostccl's own algorithms run in the simulator on those numbers. Modelled: the pipeline schedule, "
           "bucket timing and overlap, memory.</p>\n";
    out += "<h2>Ranked plans</h2>\n<pre>" + sim::htmlEscape(rankedTable(r, 50)) + "</pre>\n</body></html>\n";
    return out;
}

}  // namespace hostccl::plan
