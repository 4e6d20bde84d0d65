#include "sim/fiber.h"

#include <boost/context/protected_fixedsize_stack.hpp>

namespace hostccl::sim {

namespace ctx = boost::context;

Fiber::Fiber(std::function<void()> body)
    : body_(std::move(body)),
      self_(std::allocator_arg, ctx::protected_fixedsize_stack(kStackBytes), [this](ctx::fiber&& caller) {
          caller_ = std::move(caller);
          body_();
          finished_ = true;
          return std::move(caller_);
      }) {}

void Fiber::resume() {
    if (!finished_) self_ = std::move(self_).resume();
}

void Fiber::yield() { caller_ = std::move(caller_).resume(); }

}  // namespace hostccl::sim
