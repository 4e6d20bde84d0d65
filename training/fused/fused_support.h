// What the fused ops share: the shapes they accept (every dimension within BLAS's
// int range) and the wait that keeps buffers alive while unwinding.
#pragma once

#include <climits>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "hostccl/hostccl.hpp"

namespace hostccl {
inline namespace v1 {
namespace fused {

inline void checkShape(const char* op, std::initializer_list<uint64_t> dims) {
    for (uint64_t d : dims)
        if (d > uint64_t(INT_MAX)) throw Error(HCCL_E_PARA, std::string(op) + ": a dimension exceeds INT_MAX");
}

// Waits for every op still in flight when a scope is left by an exception, so the
// buffers they use outlive them.
class DrainOnExit {
public:
    explicit DrainOnExit(std::vector<Work>& works) : works_(works) {}
    ~DrainOnExit() {
        for (Work& w : works_) {
            try {
                w.wait();
            } catch (const Error&) {  // the first failure is already on its way to the caller
            }
        }
    }

private:
    std::vector<Work>& works_;
};

}  // namespace fused
}  // namespace v1
}  // namespace hostccl
