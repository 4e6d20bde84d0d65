// A user-level thread for one simulated rank: the rank's code (the real algorithm)
// runs on its own stack and hands control back to the simulator whenever it waits,
// so thousands of ranks run on one OS thread, one at a time, in virtual-time order.
// Boost.Context switches in a few nanoseconds without a system call (ucontext's
// swapcontext makes two); stacks are mapped lazily behind a guard page.
#pragma once

#include <boost/context/fiber.hpp>
#include <cstddef>
#include <functional>

namespace hostccl::sim {

class Fiber {
public:
    static constexpr size_t kStackBytes = 256 * 1024;

    explicit Fiber(std::function<void()> body);
    Fiber(const Fiber&) = delete;
    Fiber& operator=(const Fiber&) = delete;

    // Runs the fiber until it yields or its body returns (called by the scheduler).
    void resume();
    // From inside the fiber: back to whoever resumed it.
    void yield();
    bool finished() const { return finished_; }

private:
    std::function<void()> body_;
    boost::context::fiber self_;    // where the fiber goes on, while it is suspended
    boost::context::fiber caller_;  // where the scheduler goes on, while the fiber runs
    bool finished_ = false;
};

}  // namespace hostccl::sim
