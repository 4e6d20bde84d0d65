// Logging through spdlog. The level comes from HOSTCCL_LOG_LEVEL or CANN's
// ASCEND_GLOBAL_LOG_LEVEL (default: errors only), read once on first use.
#pragma once

#include <spdlog/spdlog.h>

namespace hostccl::log {

spdlog::logger& logger();
bool entryLogEnabled();  // HCCL_ENTRY_LOG_ENABLE=1
// Where live monitoring's findings go (stragglers, slow links, stuck ops): the same
// stream, at warning level or more verbose even when the general level is errors
// only (the default), because a finding is what the user turned monitoring on for.
// Off when the general level is off.
spdlog::logger& diagnosisLogger();

template <typename... Args>
void debug(spdlog::format_string_t<Args...> fmt, Args&&... args) {
    logger().debug(fmt, std::forward<Args>(args)...);
}
template <typename... Args>
void info(spdlog::format_string_t<Args...> fmt, Args&&... args) {
    logger().info(fmt, std::forward<Args>(args)...);
}
template <typename... Args>
void warn(spdlog::format_string_t<Args...> fmt, Args&&... args) {
    logger().warn(fmt, std::forward<Args>(args)...);
}
template <typename... Args>
void error(spdlog::format_string_t<Args...> fmt, Args&&... args) {
    logger().error(fmt, std::forward<Args>(args)...);
}

}  // namespace hostccl::log
