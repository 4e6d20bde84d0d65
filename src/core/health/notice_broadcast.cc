#include "core/health/notice_broadcast.h"

#include <algorithm>
#include <cstring>
#include <thread>

#include "common/detached_thread.h"
#include "common/deadline.h"
#include "common/log.h"
#include "core/health/health_monitor.h"
#include "core/health/health_session.h"
#include "core/net/handshake.h"
#include "common/net/socket.h"

namespace hostccl::health {

namespace {
// A notice target that does not take the connection by then counts as unreachable.
constexpr auto kNoticeStep = std::chrono::milliseconds(1000);
// The tree's radix: every hop costs a scheduling delay on a crowded host, so a wide,
// shallow tree (depth log8 n: 3 at 256 ranks, 4 at 4096) beats a binomial one.
constexpr uint32_t kRadix = 8;

// Hands the notice to a rank of this process, kept for it when it is still being
// created (its subtree is covered from here either way).
void deliverHere(const Membership& m, uint32_t target, const Frame& f) {
    HealthMonitor& monitor = HealthMonitor::instance();
    std::lock_guard<std::mutex> lock(monitor.mutex());
    monitor.deliver(m.commId, target, f);
}

constexpr char kNoticeTaken = 'K';

// The MAC that proves a notice comes from a member: the Hello (with its fresh nonce)
// and the frame, under the job secret.
uint64_t noticeMac(const Secret& secret, const net::Hello& hello, const std::string& frame) {
    std::string signed_(reinterpret_cast<const char*>(&hello), sizeof hello);
    signed_ += frame;
    return siphash24(secret, signed_.data(), signed_.size());
}

bool sendRemote(const Membership& m, uint32_t target, const Frame& f) {
    const PeerInfo& p = (*m.peers)[target];
    const Deadline deadline = Deadline::after(kNoticeStep);
    std::string err;
    // Refused: the target's process is gone (its listener lives as long as it does).
    // Retrying until the step's deadline held up a survivor's destroy by a second
    // when the rank it passed a notice to had destroyed and exited first.
    net::Fd fd = net::connectTcp(net::Endpoint{p.ip, p.port}, deadline, &err, net::OnRefused::Fail);
    const net::Hello hello = net::makeHello(net::Purpose::Notice, m.commId, m.rank, target);
    const std::string frame = encodeFrame(f);
    const uint64_t mac = noticeMac(m.secret, hello, frame);
    std::string wire(reinterpret_cast<const char*>(&hello), sizeof hello);
    wire += frame;
    wire.append(reinterpret_cast<const char*>(&mac), sizeof mac);
    char taken = 0;
    if (fd.valid() && net::sendAll(fd.get(), wire.data(), wire.size(), deadline, &err) &&
        net::recvAll(fd.get(), &taken, 1, deadline, &err) && taken == kNoticeTaken)
        return true;
    if (err.empty()) err = "not taken";
    log::warn("comm {} rank {}: could not pass a notice to rank {}: {}; covering its part of the broadcast",
              m.comm, m.rank, target, err);
    return false;
}

using MembershipPtr = std::shared_ptr<const Membership>;
void cover(const MembershipPtr& m, Frame f, uint32_t x, uint32_t d, const std::shared_ptr<SpreadsInFlight>& tracker);

// The children of the node at distance `x` with span `d` (a power of kRadix): for
// each c = d/k, d/k^2, ..., 1 the nodes x + j c, j = 1..k-1, each with span c. Those in
// other processes are sent to at once, each on a thread of its own, so one slow rank
// delays only its own subtree.
void coverChildren(const MembershipPtr& m, const Frame& f, uint32_t x, uint32_t d,
                   const std::shared_ptr<SpreadsInFlight>& tracker) {
    for (uint32_t c = d / kRadix; c >= 1; c /= kRadix)
        for (uint32_t j = 1; j < kRadix; ++j)
            if (uint64_t(x) + uint64_t(j) * c < m->size()) cover(m, f, x + j * c, c, tracker);
}

// Delivers to the node at distance `x` (span `d`) and makes sure its subtree is
// covered: by the node itself when it is reached in another process, else from here.
void cover(const MembershipPtr& m, Frame f, uint32_t x, uint32_t d, const std::shared_ptr<SpreadsInFlight>& tracker) {
    const uint32_t target = (f.origin + x) % m->size();
    f.span = d;
    if (sameProcess((*m->peers)[m->rank], (*m->peers)[target])) {
        deliverHere(*m, target, f);
        coverChildren(m, f, x, d, tracker);
        return;
    }
    // A rank the notice blames for dying or going silent is not waited for (a rank
    // blamed for a mismatch is alive and hears of it like everyone else).
    const bool gone = f.type == FrameType::Failure && (f.code == HCCL_E_REMOTE || f.code == HCCL_E_TIMEOUT);
    if (gone && f.culprit >= 0 && uint32_t(f.culprit) == target) {
        coverChildren(m, f, x, d, tracker);
        return;
    }
    tracker->begin();
    startDetached([m, f, x, d, tracker, target] {
        if (!sendRemote(*m, target, f)) coverChildren(m, f, x, d, tracker);
        tracker->end();
    });
}
}  // namespace

uint32_t rootSpan(uint32_t n) {
    uint64_t s = 1;
    while (s < n) s *= kRadix;
    return static_cast<uint32_t>(std::min<uint64_t>(s, uint64_t(1) << 31));
}

void SpreadsInFlight::begin() {
    std::lock_guard<std::mutex> lock(mutex_);
    ++count_;
}

void SpreadsInFlight::end() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (--count_ == 0) done_.notify_all();
}

void SpreadsInFlight::drain(std::chrono::milliseconds limit) {
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait_for(lock, limit, [&] { return count_ == 0; });
}

void spreadNotice(std::shared_ptr<const Membership> m, Frame notice, std::shared_ptr<SpreadsInFlight> tracker) {
    tracker->begin();
    startDetached([m = std::move(m), notice, tracker]() {
        const uint32_t n = m->size();
        const uint32_t x = (m->rank + n - notice.origin) % n;
        coverChildren(m, notice, x, x == 0 ? rootSpan(n) : notice.span, tracker);
        tracker->end();
    });
}

bool readNotice(int fd, const Secret& secret, const net::Hello& hello, uint32_t ranks, Frame* out,
                std::string* why) {
    const Deadline deadline = Deadline::after(kNoticeStep);
    std::string buf(kHealthHeaderBytes, '\0');
    if (!net::recvAll(fd, buf.data(), buf.size(), deadline, why)) return false;
    size_t used = 0;
    Decoded d = decodeFrame(buf.data(), buf.size(), ranks, out, &used, why);
    if (d == Decoded::NeedMore) {  // the text follows; its length was checked against the cap
        uint16_t text = 0;
        std::memcpy(&text, buf.data() + 6, sizeof text);
        buf.resize(kHealthHeaderBytes + text);
        if (!net::recvAll(fd, buf.data() + kHealthHeaderBytes, text, deadline, why)) return false;
        d = decodeFrame(buf.data(), buf.size(), ranks, out, &used, why);
    }
    if (d != Decoded::Ok) return false;
    if (out->type != FrameType::Failure && out->type != FrameType::Abort) {
        *why = "a notice connection carried a frame that is not a notice";
        return false;
    }
    uint64_t mac = 0;
    if (!net::recvAll(fd, &mac, sizeof mac, deadline, why)) return false;
    if (mac != noticeMac(secret, hello, buf)) {
        *why = "the notice's proof of the job secret is wrong";
        return false;
    }
    const char taken = kNoticeTaken;
    net::sendAll(fd, &taken, 1, deadline, why);  // a sender that misses it covers our subtree too: harmless
    return true;
}

}  // namespace hostccl::health
