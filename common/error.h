// The one error path. Every failure is raised through fail(), which logs the
// precise HcclResult with the site (comm, rank, peer, op, sequence number) and
// returns the code unchanged, so nothing is re-mapped on the way up.
#pragma once

#include <cstdint>
#include <string>

#include "common/log.h"
#include "hccl/hccl_types.h"

namespace hostccl {

// Where an error happened. Unknown fields stay at their defaults and are omitted.
struct ErrorSite {
    std::string comm;
    int64_t rank = -1;
    int64_t peer = -1;
    const char* op = nullptr;
    uint64_t seq = 0;
};

const char* resultName(HcclResult r);  // "HCCL_E_PARA"
const char* resultText(HcclResult r);  // HcclGetErrorString's text

std::string describe(const ErrorSite& site);

// Logs "<site>: <reason> (<code name>)" at error level and returns `code`.
HcclResult failAt(HcclResult code, const ErrorSite& site, const std::string& reason);
// The same for a failure the log already holds (every call refused after a communicator
// failed): the reason is kept for the caller, the log gets it at debug level only, so
// thousands of queued ops do not bury the first report.
HcclResult failAgain(HcclResult code, const ErrorSite& site, const std::string& reason);
// The reason of this thread's latest failAt (what a caller passes on to the peers).
const std::string& lastFailureReason();

template <typename... Args>
HcclResult fail(HcclResult code, const ErrorSite& site, fmt::format_string<Args...> f, Args&&... args) {
    return failAt(code, site, fmt::format(f, std::forward<Args>(args)...));
}

// Error without a communicator context (argument checks, files, runtime).
template <typename... Args>
HcclResult fail(HcclResult code, fmt::format_string<Args...> f, Args&&... args) {
    return failAt(code, ErrorSite{}, fmt::format(f, std::forward<Args>(args)...));
}

#define HOSTCCL_CHECK(expr)                          \
    do {                                             \
        HcclResult hostccl_check_rc_ = (expr);       \
        if (hostccl_check_rc_ != HCCL_SUCCESS) {     \
            return hostccl_check_rc_;                \
        }                                            \
    } while (0)

}  // namespace hostccl
