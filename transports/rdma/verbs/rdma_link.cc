#include "transports/rdma/verbs/rdma_link.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <random>

#include <fmt/format.h>

#include "common/env.h"
#include "common/log.h"
#include "runtime/memory.h"

namespace hostccl::transport::rdma {
namespace {

constexpr uint32_t kEndpointMagic = 0x52444d41;  // "RDMA"
constexpr uint32_t kCreditFlag = 0x80000000u;     // immediate of a credit return
constexpr uint64_t kCreditWrId = ~uint64_t(0);

// The configured rings, shrunk to the rank's budget for a communicator of `ranks`.
// Slots hold whole 16-byte elements after the 48-byte header too.
RingShape shapeFor(uint32_t ranks) {
    RingShape wanted;
    wanted.slots = uint32_t(env::getInt("HOSTCCL_RDMA_SLOTS", 2, 1024));
    wanted.slotBytes = uint32_t(env::getInt("HOSTCCL_RDMA_SLOT_BYTES", 4096, 1 << 24)) / 16 * 16;
    const uint64_t budget = uint64_t(env::getInt("HOSTCCL_RDMA_RING_BUDGET", 1 << 20, int64_t(1) << 50));
    const RingShape shape = ringShapeFor(ranks, budget, wanted);
    static std::once_flag told;
    if (shape.ringBytes() < wanted.ringBytes())
        std::call_once(told, [&] {
            log::info("RDMA rings of {} x {} KiB per direction (configured {} x {} KiB): {} ranks' links must fit "
                      "HOSTCCL_RDMA_RING_BUDGET = {} MiB per rank",
                      shape.slots, shape.slotBytes / 1024, wanted.slots, wanted.slotBytes / 1024, ranks, budget >> 20);
        });
    return shape;
}

size_t zeroCopyMin() { return size_t(env::getInt("HOSTCCL_RDMA_ZERO_COPY_BYTES", 0, int64_t(1) << 40)); }

uint64_t address(const void* p) { return reinterpret_cast<uint64_t>(p); }

char* allocRing(size_t bytes) { return static_cast<char*>(std::aligned_alloc(4096, (bytes + 4095) / 4096 * 4096)); }

bool modifyQp(ibv_qp* qp, ibv_qp_attr& attr, int mask, const char* state, std::string* why) {
    int rc = ibv_modify_qp(qp, &attr, mask);
    if (rc != 0) *why = fmt::format("moving the queue pair to {} failed: {}", state, std::strerror(rc));
    return rc == 0;
}

}  // namespace

RdmaLink::RdmaLink(uint32_t peer, uint64_t commId, RingShape shape, std::shared_ptr<VerbsDevice> device)
    : QueuedLink(peer, commId),
      device_(std::move(device)),
      slots_(shape.slots),
      slotBytes_(shape.slotBytes),
      credits_(slots_),
      returns_(slots_),
      stagingBusy_(slots_, false),
      zeroCopyMin_(zeroCopyMin()),
      injectAfter_(env::getInt("HOSTCCL_RDMA_INJECT_QP_ERROR", -1, INT32_MAX)) {}

RdmaLink::~RdmaLink() {
    // A send completes once it is in staging; its writes must reach the peer before
    // the queue pair goes (a TCP socket would deliver after close, a queue pair not).
    const Deadline drain = Deadline::after(std::chrono::seconds(2));
    while (cq_ != nullptr && !broken() && !drain.expired() &&
           std::find(stagingBusy_.begin(), stagingBusy_.end(), true) != stagingBusy_.end())
        pollCompletions();
    releasePins();
    if (zeroCopySends_ + stagedSends_ > 0)
        log::info("RDMA link to {} closed: {} sends, {} zero-copy from registered memory", peerName(),
                  zeroCopySends_ + stagedSends_, zeroCopySends_);
    if (qp_ != nullptr) {
        device_->unwatchQp(qp_->qp_num);
        ibv_destroy_qp(qp_);
    }
    if (cq_ != nullptr) {
        armAndDrainEvents();  // unacknowledged events would block the CQ's destruction
        ibv_destroy_cq(cq_);
    }
    if (channel_ != nullptr) ibv_destroy_comp_channel(channel_);
    if (sendMr_ != nullptr) ibv_dereg_mr(sendMr_);
    if (recvMr_ != nullptr) ibv_dereg_mr(recvMr_);
    std::free(sendRing_);
    std::free(recvRing_);
}

bool RdmaLink::setUp(std::string* why) {
    ibv_context* ctx = device_->context();
    channel_ = ibv_create_comp_channel(ctx);
    if (channel_ == nullptr) return *why = "ibv_create_comp_channel failed", false;
    ::fcntl(channel_->fd, F_SETFL, ::fcntl(channel_->fd, F_GETFL) | O_NONBLOCK);
    const int depth = int(2 * slots_ + 4);
    cq_ = ibv_create_cq(ctx, 2 * depth, nullptr, channel_, 0);
    if (cq_ == nullptr) return *why = fmt::format("ibv_create_cq failed: {}", std::strerror(errno)), false;
    ibv_qp_init_attr init{};
    init.send_cq = init.recv_cq = cq_;
    init.qp_type = IBV_QPT_RC;
    init.cap.max_send_wr = init.cap.max_recv_wr = uint32_t(depth);
    init.cap.max_send_sge = 2;  // zero-copy: the header from staging, the payload from the caller
    init.cap.max_recv_sge = 1;
    qp_ = ibv_create_qp(device_->pd(), &init);
    if (qp_ == nullptr) return *why = fmt::format("ibv_create_qp failed: {}", std::strerror(errno)), false;
    device_->watchQp(qp_->qp_num, [this](const std::string& what) {
        std::lock_guard<std::mutex> lock(asyncMutex_);
        asyncError_ = what;
        asyncFailed_.store(true, std::memory_order_release);
    });
    const size_t ringBytes = size_t(slots_) * slotBytes_;
    sendRing_ = allocRing(ringBytes);
    recvRing_ = allocRing(ringBytes);
    if (sendRing_ == nullptr || recvRing_ == nullptr) return *why = "out of memory for the RDMA rings", false;
    sendMr_ = (ibv_reg_mr)(device_->pd(), sendRing_, ringBytes, IBV_ACCESS_LOCAL_WRITE);
    recvMr_ = (ibv_reg_mr)(device_->pd(), recvRing_, ringBytes, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
    if (sendMr_ == nullptr || recvMr_ == nullptr)
        return *why = fmt::format("ibv_reg_mr of the rings failed: {} (locked-memory limit, ulimit -l?)",
                                  std::strerror(errno)),
               false;
    psn_ = std::random_device{}() & 0xffffff;
    return true;
}

Endpoint RdmaLink::local() const {
    Endpoint e;
    std::memset(&e, 0, sizeof e);
    e.qpn = qp_->qp_num;
    e.psn = psn_;
    e.lid = device_->lid();
    e.mtu = uint8_t(device_->activeMtu());
    std::memcpy(e.gid, device_->gid().data(), 16);
    e.ringAddr = reinterpret_cast<uint64_t>(recvRing_);
    e.ringRkey = recvMr_->rkey;
    e.slots = slots_;
    e.slotBytes = slotBytes_;
    e.magic = kEndpointMagic;
    return e;
}

bool RdmaLink::connectTo(const Endpoint& r, std::string* why) {
    if (r.slots != slots_ || r.slotBytes != slotBytes_)
        return *why = fmt::format("the peer's rings ({} x {} B) differ from ours ({} x {} B): set HOSTCCL_RDMA_SLOTS, "
                                  "HOSTCCL_RDMA_SLOT_BYTES and HOSTCCL_RDMA_RING_BUDGET alike on every rank",
                                  r.slots, r.slotBytes, slots_, slotBytes_),
               false;
    remoteRing_ = r.ringAddr;
    remoteRkey_ = r.ringRkey;
    ibv_qp_attr a{};
    a.qp_state = IBV_QPS_INIT;
    a.port_num = device_->port();
    a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
    if (!modifyQp(qp_, a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS, "INIT", why))
        return false;
    // Receives can be posted from INIT on. Every data slot and every credit return
    // consumes one: twice the ring.
    for (uint64_t i = 0; i < 2 * slots_; ++i)
        if (!postRecv(i)) return *why = "ibv_post_recv failed", false;
    a = {};
    a.qp_state = IBV_QPS_RTR;
    a.path_mtu = ibv_mtu(std::min<int>(r.mtu, device_->activeMtu()));
    a.dest_qp_num = r.qpn;
    a.rq_psn = r.psn;
    a.max_dest_rd_atomic = 1;
    a.min_rnr_timer = 12;
    a.ah_attr.is_global = 1;  // RoCE: routed by GID
    std::memcpy(a.ah_attr.grh.dgid.raw, r.gid, 16);
    a.ah_attr.grh.sgid_index = uint8_t(device_->gidIndex());
    a.ah_attr.grh.hop_limit = 64;
    a.ah_attr.dlid = r.lid;
    a.ah_attr.port_num = device_->port();
    if (!modifyQp(qp_, a,
                  IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                      IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER,
                  "RTR", why))
        return false;
    a = {};
    a.qp_state = IBV_QPS_RTS;
    a.timeout = 14;  // ~67 ms per try
    a.retry_cnt = 7;
    a.rnr_retry = 7;
    a.sq_psn = psn_;
    a.max_rd_atomic = 1;
    return modifyQp(qp_, a,
                    IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
                        IBV_QP_MAX_QP_RD_ATOMIC,
                    "RTS", why);
}

// Both sides: endpoints one way, a verdict byte the other, so neither keeps an RDMA
// link the other gave up on.
std::unique_ptr<RdmaLink> RdmaLink::connect(uint32_t peer, uint64_t commId, uint32_t commSize,
                                            std::shared_ptr<VerbsDevice> device, net::Fd& sock, Deadline deadline,
                                            std::string* why) {
    const int fd = sock.get();
    std::unique_ptr<RdmaLink> link(new RdmaLink(peer, commId, shapeFor(commSize), std::move(device)));
    std::string err;
    bool ok = link->setUp(why);
    Endpoint mine;
    std::memset(&mine, 0, sizeof mine);
    if (ok) mine = link->local();
    Endpoint theirs;
    if (!net::sendAll(fd, &mine, sizeof mine, deadline, &err) || !net::recvAll(fd, &theirs, sizeof theirs, deadline, &err)) {
        *why = "RDMA endpoint exchange: " + err;
        return nullptr;
    }
    if (ok && theirs.magic != kEndpointMagic) {
        ok = false;
        *why = "the peer could not set up its queue pair";
    }
    if (ok) ok = link->connectTo(theirs, why);
    char verdict = ok ? 'Y' : 'N', peerVerdict = 'N';
    if (!net::sendAll(fd, &verdict, 1, deadline, &err) || !net::recvAll(fd, &peerVerdict, 1, deadline, &err)) {
        *why = "RDMA verdict exchange: " + err;
        return nullptr;
    }
    if (ok && peerVerdict != 'Y') {
        *why = "the peer could not connect its queue pair";
        ok = false;
    }
    if (!ok) return nullptr;
    // Waiters poll one descriptor: an epoll set of the completion channel and the socket.
    link->waitFd_ = net::Fd(::epoll_create1(EPOLL_CLOEXEC));
    epoll_event ev{};
    ev.events = EPOLLIN;
    if (!link->waitFd_.valid() || ::epoll_ctl(link->waitFd_.get(), EPOLL_CTL_ADD, link->channel_->fd, &ev) != 0 ||
        ::epoll_ctl(link->waitFd_.get(), EPOLL_CTL_ADD, fd, &ev) != 0) {
        *why = std::string("epoll for the RDMA link: ") + std::strerror(errno);
        return nullptr;
    }
    link->sock_ = std::move(sock);
    return link;
}

int RdmaLink::pollFd() const { return waitFd_.get(); }
short RdmaLink::pollEvents() const { return idle() && unacked_.empty() ? 0 : POLLIN; }

bool RdmaLink::progress() {
    if (asyncFailed_.load(std::memory_order_acquire) && !broken()) {
        std::lock_guard<std::mutex> lock(asyncMutex_);
        failAll(HCCL_E_ROCE_TRANSFER, "RDMA asynchronous event: " + asyncError_);
        return true;
    }
    bool moved = pollCompletions();
    moved |= progressSends();
    moved |= progressRecvs();
    moved |= returnCredits();
    if (moved || broken()) return moved;
    if (peerClosed()) {
        failAll(HCCL_E_ROCE_TRANSFER, "the peer's connection closed: it exited or was killed");
        return true;
    }
    // About to sleep on the channel: arm it, then look once more so a completion
    // that came before the arming is not slept through.
    armAndDrainEvents();
    if (!pollCompletions()) return false;
    progressSends();
    progressRecvs();
    returnCredits();
    return true;
}

bool RdmaLink::peerClosed() {
    char byte;
    ssize_t got = ::recv(sock_.get(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    return got == 0 || (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

void RdmaLink::armAndDrainEvents() {
    ibv_cq* cq = nullptr;
    void* context = nullptr;
    unsigned events = 0;
    while (ibv_get_cq_event(channel_, &cq, &context) == 0) ++events;  // the fd is non-blocking
    if (events > 0) ibv_ack_cq_events(cq_, events);
    ibv_req_notify_cq(cq_, 0);
}

bool RdmaLink::pollCompletions() {
    ibv_wc wc[32];
    bool any = false;
    for (;;) {
        int n = ibv_poll_cq(cq_, 32, wc);
        if (n < 0) {
            failAll(HCCL_E_ROCE_TRANSFER, "ibv_poll_cq failed");
            return true;
        }
        if (n == 0) return any;
        any = true;
        for (int i = 0; i < n; ++i) {
            const ibv_wc& c = wc[i];
            if (broken()) continue;  // flushed work after a failure says nothing new
            if (c.status != IBV_WC_SUCCESS) {
                failAll(HCCL_E_ROCE_TRANSFER,
                        fmt::format("RDMA {} failed: {} (vendor error {:#x}, queue pair {})",
                                    c.opcode & IBV_WC_RECV ? "receive" : "write", ibv_wc_status_str(c.status),
                                    c.vendor_err, qp_->qp_num));
                continue;
            }
            if (c.opcode == IBV_WC_RDMA_WRITE) {
                if (c.wr_id == kCreditWrId) continue;
                stagingBusy_[c.wr_id] = false;
                ++writesDone_;  // an RC send queue completes in posting order
                completeAcknowledged();
                continue;
            }
            if (c.opcode != IBV_WC_RECV_RDMA_WITH_IMM || !postRecv(c.wr_id)) {
                failAll(HCCL_E_ROCE_TRANSFER, fmt::format("RDMA: unexpected completion (opcode {})", int(c.opcode)));
                continue;
            }
            const uint32_t imm = ntohl(c.imm_data);
            if (imm & kCreditFlag) {
                if (!credits_.returned(imm & ~kCreditFlag))
                    failAll(HCCL_E_ROCE_TRANSFER, fmt::format("RDMA: the peer returned {} credits, more than it held",
                                                              imm & ~kCreditFlag));
            } else if (imm > slotBytes_) {
                failAll(HCCL_E_ROCE_TRANSFER, fmt::format("RDMA: a slot of {} bytes in a ring of {}-byte slots", imm,
                                                          slotBytes_));
            } else {
                arrived_.push_back({nextRecvSlot_, imm, 0});
                nextRecvSlot_ = (nextRecvSlot_ + 1) % slots_;
            }
        }
    }
}

bool RdmaLink::postRecv(uint64_t id) {
    ibv_recv_wr wr{};
    ibv_recv_wr* bad = nullptr;
    wr.wr_id = id;
    wr.num_sge = 0;  // writes with immediate land in the ring; the receive carries only the immediate
    return ibv_post_recv(qp_, &wr, &bad) == 0;
}

bool RdmaLink::postWrite(uint32_t slot, ibv_sge* sge, int sges, uint32_t bytes) {
    if (injectAfter_ >= 0 && int64_t(dataWrites_) == injectAfter_) {
        ibv_qp_attr a{};
        a.qp_state = IBV_QPS_ERR;
        ibv_modify_qp(qp_, &a, IBV_QP_STATE);
        log::warn("RDMA: HOSTCCL_RDMA_INJECT_QP_ERROR={}: queue pair {} to {} moved to the error state",
                  injectAfter_, qp_->qp_num, peerName());
    }
    ++dataWrites_;
    ibv_send_wr wr{};
    ibv_send_wr* bad = nullptr;
    wr.wr_id = slot;
    wr.sg_list = sge;
    wr.num_sge = sges;
    wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.imm_data = htonl(bytes);
    wr.wr.rdma.remote_addr = remoteRing_ + uint64_t(slot) * slotBytes_;
    wr.wr.rdma.rkey = remoteRkey_;
    stagingBusy_[slot] = true;
    int rc = ibv_post_send(qp_, &wr, &bad);
    if (rc != 0) failAll(HCCL_E_ROCE_TRANSFER, fmt::format("ibv_post_send failed: {}", std::strerror(rc)));
    return rc == 0;
}

bool RdmaLink::postCredits(uint32_t n) {
    ibv_send_wr wr{};
    ibv_send_wr* bad = nullptr;
    wr.wr_id = kCreditWrId;
    wr.num_sge = 0;
    wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.imm_data = htonl(kCreditFlag | n);
    wr.wr.rdma.remote_addr = remoteRing_;
    wr.wr.rdma.rkey = remoteRkey_;
    int rc = ibv_post_send(qp_, &wr, &bad);
    if (rc != 0) failAll(HCCL_E_ROCE_TRANSFER, fmt::format("ibv_post_send (credits) failed: {}", std::strerror(rc)));
    return rc == 0;
}

// Writes the front send slot by slot while credits last.
bool RdmaLink::progressSends() {
    bool moved = false;
    while (!sends_.empty() && !broken()) {
        Transfer* t = sends_.front();
        if (!t->headerDone) beginSend(t);
        const size_t total = sizeof(WireHeader) + t->bytes;
        while (sendOffset_ < total) {
            if (!credits_.canSend() || stagingBusy_[credits_.peek()]) return moved;
            if (!postSlot(t, credits_.take())) return true;
            moved = true;
        }
        sends_.pop_front();
        finishPosting(t);
    }
    return moved;
}

void RdmaLink::beginSend(Transfer* t) {
    outHeader_ = makeHeader(commId(), t->tag, t->bytes);
    t->headerDone = true;
    sendOffset_ = 0;
    zeroCopy_ = zeroCopyMin_ > 0 && t->bytes >= zeroCopyMin_ && pinSource(t);
    ++(zeroCopy_ ? zeroCopySends_ : stagedSends_);
}

// Zero-copy needs the whole payload inside one aclrtMalloc allocation (whose free
// the registration cache hears of); the allocation is registered whole, so every
// later send from any part of it is a cache hit.
bool RdmaLink::pinSource(const Transfer* t) {
    const std::optional<runtime::Allocation> a = runtime::findAllocation(t->src);
    if (!a || static_cast<const char*>(t->src) + t->bytes > static_cast<const char*>(a->base) + a->size) return false;
    std::string why;
    if (device_->pinRegistration(a->base, a->size, &zeroCopyLkey_, &zeroCopyPin_, &why)) return true;
    if (!warnedRegistration_) log::warn("RDMA to {}: sending through staging: {}", peerName(), why);
    warnedRegistration_ = true;
    return false;
}

// One slot's write: the header (first slot only) from staging; the payload copied into
// staging, or zero-copy gathered straight from the caller's buffer.
bool RdmaLink::postSlot(Transfer* t, uint32_t slot) {
    char* staging = sendRing_ + size_t(slot) * slotBytes_;
    size_t header = 0, payloadAt = 0;
    if (sendOffset_ == 0) {
        std::memcpy(staging, &outHeader_, sizeof outHeader_);
        header = sizeof outHeader_;
    } else {
        payloadAt = sendOffset_ - sizeof(WireHeader);
    }
    const size_t chunk = std::min(t->bytes - payloadAt, slotBytes_ - header);
    const char* payload = static_cast<const char*>(t->src) + payloadAt;
    ibv_sge sge[2];
    int n = 0;
    if (zeroCopy_) {
        if (header > 0) sge[n++] = {address(staging), uint32_t(header), sendMr_->lkey};
        if (chunk > 0) sge[n++] = {address(payload), uint32_t(chunk), zeroCopyLkey_};
    } else {
        if (chunk > 0) std::memcpy(staging + header, payload, chunk);
        sge[n++] = {address(staging), uint32_t(header + chunk), sendMr_->lkey};
    }
    if (!postWrite(slot, sge, n, uint32_t(header + chunk))) return false;
    sendOffset_ += header + chunk;
    t->moved = sendOffset_ - sizeof(WireHeader);
    return true;
}

// A staged send is done once posted (staging holds its bytes), unless a zero-copy
// send before it still waits for its writes; a zero-copy send waits for its own.
void RdmaLink::finishPosting(Transfer* t) {
    if (!zeroCopy_ && unacked_.empty()) {
        t->complete = true;
        return;
    }
    unacked_.push_back({t, dataWrites_, zeroCopy_ ? zeroCopyPin_ : RegistrationPin{}});
    zeroCopy_ = false;
}

void RdmaLink::completeAcknowledged() {
    while (!unacked_.empty() && unacked_.front().lastWrite <= writesDone_) {
        if (unacked_.front().pin.id != 0) device_->unpin(unacked_.front().pin);
        unacked_.front().t->complete = true;
        unacked_.pop_front();
    }
}

void RdmaLink::releasePins() {
    if (zeroCopy_) device_->unpin(zeroCopyPin_);
    zeroCopy_ = false;
    for (const Unacked& u : unacked_)
        if (u.pin.id != 0) device_->unpin(u.pin);
}

bool RdmaLink::progressRecvs() {
    bool moved = false;
    while (!recvs_.empty() && !arrived_.empty()) {
        int rc = consumeSlot(recvs_.front());
        if (rc < 0) return true;
        if (rc == 0) break;
        moved = true;
        if (recvs_.front()->complete) recvs_.pop_front();
    }
    return moved;
}

bool RdmaLink::unclaimedHeader(WireHeader* h) const {
    if (!recvs_.empty() || arrived_.empty() || broken()) return false;
    const Arrived& a = arrived_.front();
    if (a.offset != 0 || a.bytes < sizeof(WireHeader)) return false;
    std::memcpy(h, recvRing_ + size_t(a.slot) * slotBytes_, sizeof *h);
    return true;
}

int RdmaLink::consumeSlot(Transfer* t) {
    Arrived& a = arrived_.front();
    const char* slot = recvRing_ + size_t(a.slot) * slotBytes_;
    if (!t->headerDone) {
        if (a.offset != 0 || a.bytes < sizeof(WireHeader)) {
            failAll(HCCL_E_ROCE_TRANSFER, "RDMA: a message does not start at a slot boundary");
            return -1;
        }
        WireHeader h;
        std::memcpy(&h, slot, sizeof h);
        std::string mismatch = headerMismatch(h, commId(), t->tag, t->bytes);
        if (!mismatch.empty()) {
            failAll(HCCL_E_PARA, mismatch);
            return -1;
        }
        t->headerDone = true;
        a.offset = sizeof(WireHeader);
    }
    const size_t n = std::min<size_t>(a.bytes - a.offset, t->bytes - t->moved);
    if (n > 0) {
        char* dst = static_cast<char*>(t->dst) + t->moved;
        if (t->reduce != nullptr) {  // slots hold whole elements: see the header comment
            t->reduce(dst, static_cast<const char*>(t->local) + t->moved, slot + a.offset, n / t->elemSize);
        } else {
            std::memcpy(dst, slot + a.offset, n);
        }
        t->moved += n;
        a.offset += uint32_t(n);
    }
    if (t->moved == t->bytes) {
        t->complete = true;
        if (a.offset != a.bytes) {
            failAll(HCCL_E_ROCE_TRANSFER, "RDMA: a slot holds bytes past the end of its message");
            return -1;
        }
    }
    if (a.offset == a.bytes) {
        arrived_.pop_front();
        returns_.consumed();
    }
    return 1;
}

bool RdmaLink::returnCredits() {
    const uint32_t n = broken() ? 0 : returns_.due(arrived_.empty());
    if (n == 0) return false;
    if (postCredits(n)) returns_.sent(n);
    return true;
}

void RdmaLink::onBroken() {
    releasePins();
    for (const Unacked& u : unacked_) failWithLinkError(u.t);
    unacked_.clear();
    if (qp_ == nullptr) return;
    ibv_qp_attr a{};
    a.qp_state = IBV_QPS_ERR;
    ibv_modify_qp(qp_, &a, IBV_QP_STATE);
}

}  // namespace hostccl::transport::rdma
