// The handshake of the direct algorithms, which read and write the other ranks'
// buffers in place when every rank shares memory with every other (one host).
//
// open(): every rank sends every peer the regions of its buffers that this peer
// may touch, plus one flag saying whether it can take part at all (its buffers
// are mappable by the other processes and the algorithm's own conditions hold).
// When every region lies in one registered symmetric window (HcclCommSymWinRegister,
// symmetric_windows.h), whose description every rank already holds, a region is
// sent as an offset into that window: no buffer is described (no allocation looked
// up) and the peer's window is found mapped already.
// Every rank receives every flag, so all reach the same usable() answer and either
// all run the direct path or all fall back to a message-passing algorithm.
//
// close(): every rank tells every peer that it is done and whether it failed, so no
// rank returns (and lets its caller reuse the buffers) while a peer still touches
// them, and a failure on one rank fails the op on all of them.
//
// When every rank is a thread of this process, both exchanges happen on the
// communicator's process board instead (process_board.h): each rank publishes its
// describe function, which peers call themselves, and the board's barriers stand
// for the two all-pairs exchanges. No links, whatever the number of ranks.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "algorithms/context.h"
#include "algorithms/direct/process_board.h"
#include "algorithms/direct/symmetric_windows.h"
#include "transports/shared_region.h"

namespace hostccl {

class PeerWindows {
public:
    // A range of this rank's memory that a peer may touch (empty: nothing).
    struct Range {
        const void* p;
        uint64_t bytes;
    };
    // Fills the `regionsPerPeer` ranges this rank offers `peer`.
    using Describe = std::function<void(uint32_t peer, Range* ranges)>;

    // `canJoin`: the calling algorithm's own conditions (for example no overlap of
    // the send and receive buffers) hold on this rank.
    HcclResult open(Context& ctx, size_t regionsPerPeer, bool canJoin, Describe describe);
    bool usable() const { return usable_; }

    // Peer's i-th region in this process, mapped on first use. nullptr when the
    // region is empty, or when it cannot be mapped (recorded; close() reports it).
    char* region(Context& ctx, uint32_t peer, size_t i);
    uint64_t regionBytes(uint32_t peer, size_t i) {
        return board_ != nullptr ? fromBoard(peer, i).bytes : received(peer, i).bytes;
    }

    // Records a failure of this rank (close() reports it on every rank).
    void fail(std::string why, HcclResult code = HCCL_E_INTERNAL);

    HcclResult close(Context& ctx);

private:
    // What a rank publishes on the process board: enough for a peer to check that
    // both run the same op and to find the ranges offered to it.
    struct Published {
        transport::MsgTag tag;
        size_t regions;
        const Describe* describe;
    };
    HcclResult openOnBoard(Context& ctx, bool canJoin);
    HcclResult closeOnBoard(Context& ctx);
    // Peer's i-th range as its published describe function gives it; empty, with the
    // failure recorded, when that peer runs another op.
    Range fromBoard(uint32_t peer, size_t i);
    // Whether `peer` runs the same op as this rank (recorded as a failure if not).
    // Checked before any access to its buffers, and at open() for the next rank
    // around, so any disagreement is seen by some rank before anyone returns.
    bool sameOpAs(uint32_t peer);

    struct Header {
        uint32_t canJoin;
        uint32_t regions;
        uint64_t window;  // a symmetric window's id: regions are offsets into it; 0: described
    };
    // The one shareable window holding every non-empty range, or nullptr.
    static const SymmetricWindow* commonWindow(const Context& ctx, const std::vector<Range>& ranges);
    transport::SharedRegion received(uint32_t peer, size_t i) const;
    static size_t messageBytes(size_t regions) { return sizeof(Header) + regions * sizeof(transport::SharedRegion); }

    ProcessBoard* board_ = nullptr;  // set: the ranks are threads of this process
    Describe describe_;  // kept here: peers on the board call it until close()
    Published published_{};
    uint32_t rank_ = 0;
    const SymmetricWindows* windows_ = nullptr;  // the communicator's, for windows peers name
    size_t regionsPerPeer_ = 0;
    bool usable_ = false;
    std::vector<char> sent_, received_;  // one message per peer, back to back
    std::string failure_;
    HcclResult failureCode_ = HCCL_SUCCESS;
};

}  // namespace hostccl
