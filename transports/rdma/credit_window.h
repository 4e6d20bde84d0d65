// Credit-based flow control over a ring of receive slots. The receiver owns `slots`
// registered slots; the sender may write into a slot only while it holds a credit
// for it, and the receiver returns credits once it has consumed slots. Nothing is
// ever written into a slot the receiver has not finished with, so RDMA WRITEs need
// no receive-side copy-out race and the ring never overflows.
#pragma once

#include <cstdint>

namespace hostccl::transport::rdma {

// The sender's view: which slot comes next and how many it may still fill.
class SendCredits {
public:
    explicit SendCredits(uint32_t slots) : slots_(slots), available_(slots) {}
    bool canSend() const { return available_ > 0; }
    uint32_t available() const { return available_; }
    uint32_t peek() const { return next_; }  // the slot take() will return
    // The next slot to write (in ring order); only when canSend().
    uint32_t take() {
        --available_;
        uint32_t slot = next_;
        next_ = (next_ + 1) % slots_;
        return slot;
    }
    // `n` credits came back. False (and nothing changes) when that is more than were
    // taken: a corrupt or hostile peer.
    bool returned(uint32_t n) {
        if (n > slots_ - available_) return false;
        available_ += n;
        return true;
    }

private:
    const uint32_t slots_;
    uint32_t available_;
    uint32_t next_ = 0;
};

// The receiver's view: slots consumed but not yet credited back. Credits go back in
// batches (half the ring) so a credit message is not sent per slot, and all at once
// when the receiver has nothing else to do (so a sender never waits on a batch).
class CreditReturns {
public:
    explicit CreditReturns(uint32_t slots) : batch_(slots / 2 == 0 ? 1 : slots / 2) {}
    void consumed() { ++owed_; }
    // How many to return now.
    uint32_t due(bool idle) const { return owed_ >= batch_ || (idle && owed_ > 0) ? owed_ : 0; }
    void sent(uint32_t n) { owed_ -= n; }
    uint32_t owed() const { return owed_; }

private:
    const uint32_t batch_;
    uint32_t owed_ = 0;
};

}  // namespace hostccl::transport::rdma
