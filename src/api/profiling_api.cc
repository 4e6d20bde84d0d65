// ACL's profiling calls (acl/acl_prof.h; libmsprofiler is an alias of libhccl):
// a session records every communicator's operators as hostccl traces
// (core/profiling.h). Nothing here throws across the C ABI.
#include <cstring>
#include <mutex>
#include <set>
#include <vector>

#include "acl/acl_prof.h"
#include "common/log.h"
#include "core/profiling.h"
#include "runtime/device.h"

struct aclprofConfig {
    std::vector<uint32_t> devices;
    aclprofAicoreMetrics metrics;
    uint64_t switches;
};

namespace {
constexpr size_t kMaxPathLength = 4096;

// Configs handed out and not destroyed: a stale or foreign pointer is refused.
struct Configs {
    std::mutex mutex;
    std::set<const aclprofConfig*> live;
    const aclprofConfig* started = nullptr;
};
Configs& configs() {
    static Configs* c = new Configs;
    return *c;
}

aclError refuse(const char* fn, const std::string& why) {
    hostccl::log::error("{}: {}", fn, why);
    return ACL_ERROR_INVALID_PARAM;
}

bool metricsValid(int m) { return (m >= ACL_AICORE_ARITHMETIC_UTILIZATION && m <= ACL_AICORE_PIPE_EXECUTE_UTILIZATION) || m == ACL_AICORE_NONE; }
}  // namespace

extern "C" {

aclError aclprofInit(const char* profilerResultPath, size_t length) {
    const char* fn = "aclprofInit";
    if (profilerResultPath == nullptr) return refuse(fn, "profilerResultPath is NULL");
    if (length == 0 || length > kMaxPathLength) return refuse(fn, "length must be 1 to 4096");
    if (strnlen(profilerResultPath, length + 1) != length) return refuse(fn, "length is not the path's length");
    if (hostccl::profiling::running()) return refuse(fn, "a profiling session is running");
    std::string why;
    if (!hostccl::profiling::setDirectory(std::string(profilerResultPath, length), &why)) return refuse(fn, why);
    hostccl::log::info("aclprofInit: profiling results go to {}", std::string(profilerResultPath, length));
    return ACL_SUCCESS;
}

aclError aclprofFinalize(void) {
    if (!hostccl::profiling::hasDirectory()) return refuse("aclprofFinalize", "aclprofInit was not called");
    hostccl::profiling::finalize();
    std::lock_guard<std::mutex> lock(configs().mutex);
    configs().started = nullptr;
    return ACL_SUCCESS;
}

aclprofConfig* aclprofCreateConfig(uint32_t* deviceIdList, uint32_t deviceNums, aclprofAicoreMetrics aicoreMetrics,
                                   const aclprofAicoreEvents* aicoreEvents, uint64_t dataTypeConfig) {
    const char* fn = "aclprofCreateConfig";
    if (deviceNums > 0 && deviceIdList == nullptr) return refuse(fn, "deviceIdList is NULL"), nullptr;
    if (deviceNums > hostccl::runtime::deviceCount()) return refuse(fn, "more devices than exist"), nullptr;
    if (aicoreEvents != nullptr) return refuse(fn, "aicoreEvents must be NULL"), nullptr;
    if (!metricsValid(static_cast<int>(aicoreMetrics))) return refuse(fn, "aicoreMetrics is not an aclprofAicoreMetrics"), nullptr;
    auto* c = new aclprofConfig{{}, aicoreMetrics, dataTypeConfig};
    for (uint32_t i = 0; i < deviceNums; ++i) {
        if (!hostccl::runtime::deviceValid(static_cast<int32_t>(deviceIdList[i]))) {
            delete c;
            return refuse(fn, "deviceIdList holds an id that is not a device"), nullptr;
        }
        c->devices.push_back(deviceIdList[i]);
    }
    std::lock_guard<std::mutex> lock(configs().mutex);
    configs().live.insert(c);
    return c;
}

aclError aclprofDestroyConfig(const aclprofConfig* profilerConfig) {
    std::lock_guard<std::mutex> lock(configs().mutex);
    if (configs().live.erase(profilerConfig) == 0) return refuse("aclprofDestroyConfig", "not a live config");
    if (configs().started == profilerConfig) configs().started = nullptr;
    delete profilerConfig;
    return ACL_SUCCESS;
}

aclError aclprofStart(const aclprofConfig* profilerConfig) {
    const char* fn = "aclprofStart";
    std::lock_guard<std::mutex> lock(configs().mutex);
    if (configs().live.count(profilerConfig) == 0) return refuse(fn, "not a live config (aclprofCreateConfig)");
    std::string why;
    if (!hostccl::profiling::start(profilerConfig->switches, &why)) return refuse(fn, why);
    configs().started = profilerConfig;
    return ACL_SUCCESS;
}

aclError aclprofStop(const aclprofConfig* profilerConfig) {
    const char* fn = "aclprofStop";
    std::lock_guard<std::mutex> lock(configs().mutex);
    if (configs().live.count(profilerConfig) == 0) return refuse(fn, "not a live config");
    if (!hostccl::profiling::running() || configs().started != profilerConfig)
        return refuse(fn, "this config's session is not running");
    configs().started = nullptr;
    const std::vector<std::string> files = hostccl::profiling::stop();
    hostccl::log::info("aclprofStop: wrote {} trace file(s)", files.size());
    return ACL_SUCCESS;
}

}  // extern "C"
