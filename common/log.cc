#include "common/log.h"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <unistd.h>

#include <mutex>

#include "common/env.h"

namespace hostccl::log {

static spdlog::level::level_enum levelFromEnv() {
    if (auto byName = env::raw("HOSTCCL_LOG_LEVEL")) {
        auto lvl = spdlog::level::from_str(*byName);
        // from_str returns off for unknown names; only accept "off" when asked for.
        if (lvl != spdlog::level::off || *byName == "off") return lvl;
    }
    // Parsed here without env::getInt, which would log while the logger is built.
    auto ascend = env::raw("ASCEND_GLOBAL_LOG_LEVEL");
    int level = (ascend && ascend->size() == 1 && (*ascend)[0] >= '0' && (*ascend)[0] <= '4') ? (*ascend)[0] - '0' : 3;
    switch (level) {
        case 0: return spdlog::level::debug;
        case 1: return spdlog::level::info;
        case 2: return spdlog::level::warn;
        case 4: return spdlog::level::off;
        default: return spdlog::level::err;
    }
}

namespace {
std::shared_ptr<spdlog::sinks::sink> stderrSink() {
    static auto* sink = new std::shared_ptr<spdlog::sinks::sink>(std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
    return *sink;
}
}  // namespace

spdlog::logger& logger() {
    // Built on first use and never destroyed, so logging from static destructors
    // and detached threads stays safe.
    static spdlog::logger* instance = [] {
        auto* l = new spdlog::logger("hostccl", stderrSink());
        l->set_pattern(fmt::format("[%Y-%m-%d %H:%M:%S.%e] [hostccl pid {}] [%^%l%$] %v", getpid()));
        l->set_level(spdlog::level::err);  // provisional while the env is read
        l->flush_on(spdlog::level::warn);
        return l;
    }();
    static std::once_flag levelSet;
    std::call_once(levelSet, [] { instance->set_level(levelFromEnv()); });
    return *instance;
}

spdlog::logger& diagnosisLogger() {
    static spdlog::logger* instance = [] {
        auto* l = new spdlog::logger("hostccl-monitor", stderrSink());
        l->set_pattern(fmt::format("[%Y-%m-%d %H:%M:%S.%e] [hostccl pid {}] [%^%l%$] %v", getpid()));
        const spdlog::level::level_enum general = logger().level();
        l->set_level(general == spdlog::level::off ? general : std::min(general, spdlog::level::warn));
        l->flush_on(spdlog::level::info);
        return l;
    }();
    return *instance;
}

bool entryLogEnabled() {
    static const bool enabled = env::getBool("HCCL_ENTRY_LOG_ENABLE");
    return enabled;
}

}  // namespace hostccl::log
