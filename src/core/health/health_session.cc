#include "core/health/health_session.h"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "common/error.h"
#include "common/log.h"
#include "core/health/health_monitor.h"
#include "core/net/acceptor.h"
#include "common/net/socket.h"

namespace hostccl::health {

namespace {
constexpr size_t kMaxOutbox = 64 * 1024;  // a peer that takes nothing for this long is not reading
constexpr auto kSpreadDrain = std::chrono::milliseconds(2000);  // a notice step is bounded by 1 s per unreachable rank
}

HealthSession::HealthSession(Membership membership, CommFailure* failure)
    : membership_(std::make_shared<const Membership>(std::move(membership))),
      comm_(membership_->comm),
      rank_(membership_->rank),
      size_(membership_->size()),
      failure_(failure) {}

HealthSession::~HealthSession() { close(); }

void HealthSession::addPeer(uint32_t peer, net::Fd fd, std::string who) {
    net::setNonBlocking(fd.get());
    net::setNoDelay(fd.get());
    Peer p;
    p.rank = peer;
    p.fd = std::move(fd);
    p.who = std::move(who);
    p.lastHeard = p.lastSent = Clock::now();
    if (!started_) {
        peers_.push_back(std::move(p));
        return;
    }
    HealthMonitor& m = HealthMonitor::instance();
    std::lock_guard<std::mutex> lock(m.mutex());
    peers_.push_back(std::move(p));
    m.watch(this, peers_.size() - 1);
}

void HealthSession::start() {
    if (size_ < 2) return;
    started_ = true;
    HealthMonitor::instance().add(this);
    noticeTicket_ = net::Acceptor::instance().serve(membership_->commId, rank_, net::Purpose::Notice,
                                                    [this](net::Fd fd, const net::Hello& h) {
                                                        onNoticeConnection(std::move(fd), h);
                                                    });
}

void HealthSession::close() {
    if (!started_) return;
    HealthMonitor& m = HealthMonitor::instance();
    {
        std::lock_guard<std::mutex> lock(m.mutex());
        if (closed_) return;
        closed_ = true;
        sendToAll(frame(FrameType::Goodbye));
    }
    net::Acceptor::instance().unserve(noticeTicket_);  // not under the monitor's lock: handlers take it
    m.remove(this);
    // A notice this rank is passing on must reach its subtree even when the process
    // exits right after destroying the communicator.
    spreads_->drain(kSpreadDrain);
}

// A peer's notice connection (on a listener handler thread): proven, read, taken,
// and passed on down this rank's part of the tree.
void HealthSession::onNoticeConnection(net::Fd fd, const net::Hello& hello) {
    const uint32_t from = hello.fromRank;
    std::string why;
    Frame f;
    if (!readNotice(fd.get(), membership_->secret, hello, size_, &f, &why)) {
        log::warn("comm {} rank {}: dropped a notice connection claiming rank {} from {}: {}", comm_, rank_, from,
                  net::peerIp(fd.get()), why);
        return;
    }
    // Passed on first: taking it wakes this rank's op thread, which would compete
    // for the CPU with the threads that carry the notice to the rest of the subtree.
    {
        std::lock_guard<std::mutex> lock(HealthMonitor::instance().mutex());
        if (closed_) return;
        if (f.span > 1) spreadNotice(membership_, f, spreads_);
        takeNotice(f);
    }
}

Frame HealthSession::frame(FrameType type) const {
    Frame f;
    f.type = type;
    f.seq = seq_.load(std::memory_order_relaxed);
    return f;
}

void HealthSession::announceFailure() {
    if (!started_) return;
    std::lock_guard<std::mutex> lock(HealthMonitor::instance().mutex());
    CommFailure::Record r = failure_->record();
    if (closed_ || announced_ || !r.local || r.code == HCCL_SUCCESS) return;
    announced_ = true;
    Frame f = frame(FrameType::Failure);
    f.code = r.code;
    f.culprit = static_cast<int32_t>(r.culprit);
    f.text = r.text;
    spread(f);
}

void HealthSession::announceAbort() {
    if (!started_) return;
    std::lock_guard<std::mutex> lock(HealthMonitor::instance().mutex());
    if (closed_) return;
    announced_ = true;
    spread(frame(FrameType::Abort));
}

// This rank's own notice, to every other rank.
void HealthSession::spread(Frame notice) {
    notice.origin = rank_;
    spreadNotice(membership_, std::move(notice), spreads_);
}

std::string HealthSession::peerStatus(uint32_t peer) const {
    if (!started_) return "";
    std::lock_guard<std::mutex> lock(HealthMonitor::instance().mutex());
    for (const Peer& p : peers_) {
        if (p.rank != peer || p.state != State::Live) continue;
        double ago = std::chrono::duration<double>(Clock::now() - p.lastHeard).count();
        return fmt::format("{} is alive (heartbeat {:.1f} s ago) and was last seen at op {}: if that differs from "
                           "this op's, the ranks called different sequences of collectives",
                           p.who, ago, p.peerSeq);
    }
    return "";
}

// Raised here, then told to every peer (first failure only).
void HealthSession::raiseHere(HcclResult code, int64_t culprit, const std::string& text) {
    ErrorSite site;
    site.comm = comm_;
    site.rank = rank_;
    site.peer = culprit;
    site.op = "health";
    if (!failure_->raise(code, culprit, text)) return;
    failAt(code, site, text);
    if (closed_ || announced_) return;
    announced_ = true;
    Frame f = frame(FrameType::Failure);
    f.code = code;
    f.culprit = static_cast<int32_t>(culprit);
    f.text = text;
    spread(f);
}

void HealthSession::lose(Peer& p, HcclResult code, const std::string& why) {
    p.state = State::Lost;
    raiseHere(code, p.rank, fmt::format("{} {}", p.who, why));
}

// Frames are handled as they arrive, so a goodbye just before the close counts.
void HealthSession::onReadable(size_t i, Clock::time_point now) {
    // Closed, and about to leave the monitor: a peer that closes its end after our
    // goodbye is not a death (the monitor thread can get here between the two).
    if (closed_) return;
    Peer& p = peers_[i];
    char buf[4096];
    while (p.state == State::Live) {
        ssize_t got = ::recv(p.fd.get(), buf, sizeof buf, MSG_DONTWAIT);
        if (got > 0) {
            p.lastHeard = now;
            p.inbox.append(buf, size_t(got));
            takeFrames(p);
            continue;
        }
        if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
        if (got < 0 && errno == EINTR) continue;
        // Closed (0) or reset (< 0) without a goodbye first.
        lose(p, HCCL_E_REMOTE,
             got == 0 ? "is gone: its connection closed without a goodbye (process killed or exited)"
                      : std::string("is gone: its connection failed (") + std::strerror(errno) + ")");
    }
}

void HealthSession::takeFrames(Peer& p) {
    size_t off = 0;
    while (p.state == State::Live) {
        Frame f;
        size_t used = 0;
        std::string why;
        Decoded d = decodeFrame(p.inbox.data() + off, p.inbox.size() - off, size_, &f, &used, &why);
        if (d == Decoded::NeedMore) break;
        if (d == Decoded::Bad) {
            lose(p, HCCL_E_REMOTE, "sent a corrupt health frame: " + why);
            break;
        }
        off += used;
        handle(p, f);
    }
    p.inbox.erase(0, off);
}

// Channels carry heartbeats and goodbyes; notices come on connections of their own.
void HealthSession::handle(Peer& p, const Frame& f) {
    p.peerSeq = f.seq;
    if (f.type == FrameType::Goodbye) p.state = State::Left;
    if (f.type == FrameType::Failure || f.type == FrameType::Abort)
        lose(p, HCCL_E_REMOTE, "sent a notice on its health channel, where none belongs");
}

void HealthSession::takeNotice(const Frame& f) {
    if (closed_) return;
    if (f.type == FrameType::Abort) {
        failure_->raise(HCCL_E_REMOTE, f.origin, fmt::format("rank {} aborted the communicator", f.origin), false);
        return;
    }
    // The sender's own words: they name the rank to blame and both sides' values.
    if (failure_->raise(f.code, f.culprit, fmt::format("{} (reported by rank {})", f.text, f.origin), false))
        log::error("comm {} rank {}: {} reports: {} ({})", comm_, rank_, whoIs((*membership_->peers)[f.origin]), f.text,
                   resultName(f.code));
}

void HealthSession::tick(Clock::time_point now) {
    if (closed_) return;  // as in onReadable
    const auto silence = HealthMonitor::silenceLimit();
    for (Peer& p : peers_) {
        if (p.state != State::Live) continue;
        flush(p);
        // A heartbeat behind unsent bytes would say nothing new.
        if (now - p.lastSent >= HealthMonitor::interval() && p.outbox.empty())
            send(p, encodeFrame(frame(FrameType::Heartbeat)));
        if (silence.count() > 0 && now - p.lastHeard > silence)
            lose(p, HCCL_E_TIMEOUT,
                 fmt::format("sent no heartbeat for {:.1f} s (HOSTCCL_HEARTBEAT_TIMEOUT): stopped, hung or cut off",
                             std::chrono::duration<double>(now - p.lastHeard).count()));
    }
}

void HealthSession::forgiveSilence(Clock::time_point now) {
    for (Peer& p : peers_)
        if (p.state == State::Live) p.lastHeard = now;
}

void HealthSession::sendToAll(const Frame& f) {
    std::string bytes = encodeFrame(f);
    for (Peer& p : peers_)
        if (p.state == State::Live) send(p, bytes);
}

void HealthSession::send(Peer& p, const std::string& bytes) {
    p.lastSent = Clock::now();
    if (p.outbox.size() + bytes.size() > kMaxOutbox) return;  // the peer reads nothing; silence will tell
    p.outbox += bytes;
    flush(p);
}

void HealthSession::flush(Peer& p) {
    while (!p.outbox.empty()) {
        ssize_t n = ::send(p.fd.get(), p.outbox.data(), p.outbox.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n > 0) {
            p.outbox.erase(0, size_t(n));
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        return;  // full (EAGAIN) or broken: the read side reports a broken channel
    }
}

}  // namespace hostccl::health
