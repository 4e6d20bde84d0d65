// Sets an environment variable for one scope and puts back what was there before,
// also when an ASSERT leaves the test early: later tests in the same binary must
// not run with a setting one test forced.
#pragma once

#include <cstdlib>
#include <optional>
#include <string>

namespace hostccl::test {

class ScopedEnv {
public:
    ScopedEnv(const char* name, const char* value) : name_(name) {
        if (const char* old = std::getenv(name)) before_ = old;
        setenv(name, value, 1);
    }
    ~ScopedEnv() {
        if (before_) setenv(name_.c_str(), before_->c_str(), 1);
        else unsetenv(name_.c_str());
    }
    ScopedEnv(const ScopedEnv&) = delete;
    ScopedEnv& operator=(const ScopedEnv&) = delete;

private:
    std::string name_;
    std::optional<std::string> before_;
};

}  // namespace hostccl::test
