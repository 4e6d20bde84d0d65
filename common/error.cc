#include "common/error.h"

#include <fmt/format.h>

namespace hostccl {

namespace {
struct ResultInfo {
    HcclResult code;
    const char* name;
    const char* text;
};
// Texts are HCCL's own strings, so programs that print them read the same.
constexpr ResultInfo kResults[] = {
    {HCCL_SUCCESS, "HCCL_SUCCESS", "no error"},
    {HCCL_E_PARA, "HCCL_E_PARA", "parameter error"},
    {HCCL_E_PTR, "HCCL_E_PTR", "empty pointer"},
    {HCCL_E_MEMORY, "HCCL_E_MEMORY", "memory error"},
    {HCCL_E_INTERNAL, "HCCL_E_INTERNAL", "internal error"},
    {HCCL_E_NOT_SUPPORT, "HCCL_E_NOT_SUPPORT", "not support feature"},
    {HCCL_E_NOT_FOUND, "HCCL_E_NOT_FOUND", "not found specific resource"},
    {HCCL_E_UNAVAIL, "HCCL_E_UNAVAIL", "resource unavailable"},
    {HCCL_E_SYSCALL, "HCCL_E_SYSCALL", "call system interface error"},
    {HCCL_E_TIMEOUT, "HCCL_E_TIMEOUT", "timeout"},
    {HCCL_E_OPEN_FILE_FAILURE, "HCCL_E_OPEN_FILE_FAILURE", "open file fail"},
    {HCCL_E_TCP_CONNECT, "HCCL_E_TCP_CONNECT", "tcp connect fail"},
    {HCCL_E_ROCE_CONNECT, "HCCL_E_ROCE_CONNECT", "roce connect fail"},
    {HCCL_E_TCP_TRANSFER, "HCCL_E_TCP_TRANSFER", "tcp transfer fail"},
    {HCCL_E_ROCE_TRANSFER, "HCCL_E_ROCE_TRANSFER", "roce transfer fail"},
    {HCCL_E_RUNTIME, "HCCL_E_RUNTIME", "call runtime api fail"},
    {HCCL_E_DRV, "HCCL_E_DRV", "call driver api fail"},
    {HCCL_E_PROFILING, "HCCL_E_PROFILING", "call profiling api fail"},
    {HCCL_E_CCE, "HCCL_E_CCE", "call cce api fail"},
    {HCCL_E_NETWORK, "HCCL_E_NETWORK", "call network api fail"},
    {HCCL_E_AGAIN, "HCCL_E_AGAIN", "try again"},
    {HCCL_E_REMOTE, "HCCL_E_REMOTE", "error cqe"},
    {HCCL_E_SUSPENDING, "HCCL_E_SUSPENDING", "error communicator suspending"},
    {HCCL_E_OPRETRY_FAIL, "HCCL_E_OPRETRY_FAIL", "retry constraint"},
    {HCCL_E_OOM, "HCCL_E_OOM", "out of memory"},
};
}  // namespace

const char* resultName(HcclResult r) {
    for (const auto& e : kResults)
        if (e.code == r) return e.name;
    return r == HCCL_E_IN_STATUS ? "HCCL_E_IN_STATUS" : "HCCL_E_UNKNOWN";
}

const char* resultText(HcclResult r) {
    for (const auto& e : kResults)
        if (e.code == r) return e.text;
    return "unknown error";
}

std::string describe(const ErrorSite& s) {
    std::string out;
    auto add = [&out](const std::string& part) {
        if (!out.empty()) out += ' ';
        out += part;
    };
    if (!s.comm.empty()) add("comm " + s.comm);
    if (s.rank >= 0) add(fmt::format("rank {}", s.rank));
    if (s.op != nullptr) add(fmt::format("op {}", s.op));
    if (s.seq != 0) add(fmt::format("seq {}", s.seq));
    if (s.peer >= 0) add(fmt::format("peer {}", s.peer));
    return out;
}

namespace {
thread_local std::string lastReason;
}  // namespace

const std::string& lastFailureReason() { return lastReason; }

HcclResult failAt(HcclResult code, const ErrorSite& site, const std::string& reason) {
    lastReason = reason;
    std::string where = describe(site);
    if (where.empty())
        log::error("{} ({})", reason, resultName(code));
    else
        log::error("{}: {} ({})", where, reason, resultName(code));
    return code;
}

HcclResult failAgain(HcclResult code, const ErrorSite& site, const std::string& reason) {
    lastReason = reason;
    log::debug("{}: {} ({})", describe(site), reason, resultName(code));
    return code;
}

}  // namespace hostccl
