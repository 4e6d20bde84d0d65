// The one registry of every environment variable hostccl reads. Each variable is
// declared once here with its default and meaning; docs/environment.md lists the
// same set and a test checks the two agree.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hostccl::env {

struct Var {
    const char* name;
    const char* defaultValue;  // as the user would write it; "" = unset
    const char* meaning;
};

// Every variable, in documentation order.
const std::vector<Var>& registry();

// The raw value if set (and non-empty). Aborts in debug builds when `name` is not
// in the registry, so no code can read an undeclared variable.
std::optional<std::string> raw(const char* name);

// Typed readers. A malformed value logs a warning naming the variable and falls back
// to the registry default; the caller never sees garbage.
std::string getString(const char* name);
int64_t getInt(const char* name, int64_t min, int64_t max);
bool getBool(const char* name);

// Names of variables that are set in this process (for the one-time init report).
std::vector<std::string> setVariables();

}  // namespace hostccl::env
