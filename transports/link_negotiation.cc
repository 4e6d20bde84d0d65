#include "transports/link_negotiation.h"

#include <cstring>

#include "common/log.h"
#include "transports/tcp/tcp_transport.h"
#include "transports/transport_table.h"

namespace hostccl::transport {

namespace {

enum : char { kGiveUp = 'N', kYes = 'A', kNo = 'F' };

struct Offer {
    char tag;
    char payload[63];  // NUL-terminated
};

bool sendOffer(int fd, char tag, const std::string& payload, Deadline deadline, std::string* err) {
    Offer o{};
    o.tag = tag;
    std::strncpy(o.payload, payload.c_str(), sizeof o.payload - 1);
    return net::sendAll(fd, &o, sizeof o, deadline, err);
}

// The transports the offering rank tries, in order.
std::vector<const TransportEntry*> candidates(const PairEnds& ends, const TransportEntry* forced) {
    if (forced != nullptr) return {forced};
    std::vector<const TransportEntry*> out;
    for (const TransportEntry* t : transportTable())
        if (t->wanted(ends)) out.push_back(t);
    return out;
}

// Both ends agreed on `t`: its link, else (unless it was forced or is the fallback)
// TCP over the same socket.
HcclResult connectAgreed(const TransportEntry& t, PendingLink& pending, bool forced, const PairEnds& ends,
                         net::Fd fd, Deadline deadline, const ErrorSite& site, std::unique_ptr<Link>* out) {
    std::string why;
    *out = pending.connect(fd, deadline, &why);
    if (*out != nullptr) return HCCL_SUCCESS;
    if (forced || &t == transportTable().back())
        return fail(t.failCode, site, "{} link{}: {}", t.name, forced ? " (HOSTCCL_TRANSPORT)" : "", why);
    log::warn("{}: {} link failed, using TCP: {}", describe(site), t.name, why);
    *out = singleSocketTcpLink(ends, std::move(fd));
    return HCCL_SUCCESS;
}

HcclResult offerSide(const PairEnds& ends, net::Fd fd, Deadline deadline, const ErrorSite& site,
                     std::unique_ptr<Link>* out) {
    const TransportEntry* forced = nullptr;
    std::string why, err;
    if (!forcedTransport(&forced, &why)) return fail(HCCL_E_PARA, site, "{}", why);
    for (const TransportEntry* t : candidates(ends, forced)) {
        std::unique_ptr<PendingLink> pending = t->offer(ends, &why);
        if (pending == nullptr && forced != nullptr) {
            sendOffer(fd.get(), kGiveUp, t->name, deadline, &err);  // so the peer does not wait for an offer
            return fail(t->failCode, site, "HOSTCCL_TRANSPORT={}, but {}", t->name, why);
        }
        if (pending == nullptr) {
            log::debug("{}: {} not offered: {}", describe(site), t->name, why);
            continue;
        }
        char reply = 0;
        if (!sendOffer(fd.get(), t->tag, pending->payload(), deadline, &err) ||
            !net::recvAll(fd.get(), &reply, 1, deadline, &err)) {
            pending->answered();
            return fail(HCCL_E_TCP_CONNECT, site, "transport offer ({}): {}", t->name, err);
        }
        pending->answered();
        if (reply == kYes) return connectAgreed(*t, *pending, forced != nullptr, ends, std::move(fd), deadline, site, out);
        if (reply != kNo) return fail(HCCL_E_TCP_CONNECT, site, "malformed answer to the transport offer");
        if (forced != nullptr)
            return fail(t->failCode, site, "HOSTCCL_TRANSPORT={}, but the peer cannot use it", t->name);
        log::debug("{}: the peer declined {}", describe(site), t->name);
    }
    return fail(HCCL_E_INTERNAL, site, "no transport agreed (the last row of the table must always agree)");
}

HcclResult answerSide(const PairEnds& ends, net::Fd fd, Deadline deadline, const ErrorSite& site,
                      std::unique_ptr<Link>* out) {
    const TransportEntry* forced = nullptr;
    std::string why, err;
    if (!forcedTransport(&forced, &why)) return fail(HCCL_E_PARA, site, "{}", why);
    for (;;) {
        Offer o{};
        if (!net::recvAll(fd.get(), &o, sizeof o, deadline, &err))
            return fail(HCCL_E_TCP_CONNECT, site, "transport offer: {}", err);
        if (std::memchr(o.payload, '\0', sizeof o.payload) == nullptr)
            return fail(HCCL_E_TCP_CONNECT, site, "malformed transport offer");
        if (o.tag == kGiveUp) {
            const TransportEntry* gaveUpOn = transportNamed(o.payload);
            return fail(gaveUpOn ? gaveUpOn->failCode : HCCL_E_TCP_CONNECT, site,
                        "the peer could not set up {}, which its HOSTCCL_TRANSPORT forces", o.payload);
        }
        const TransportEntry* t = transportTagged(o.tag);
        if (t == nullptr) return fail(HCCL_E_TCP_CONNECT, site, "malformed transport offer");
        std::unique_ptr<PendingLink> pending;
        if (forced != nullptr && t != forced)
            why = std::string("the peer offered ") + t->name;
        else
            pending = t->accept(ends, o.payload, &why);
        const char reply = pending != nullptr ? kYes : kNo;
        if (!net::sendAll(fd.get(), &reply, 1, deadline, &err))
            return fail(HCCL_E_TCP_CONNECT, site, "transport answer: {}", err);
        if (pending != nullptr)
            return connectAgreed(*t, *pending, forced != nullptr, ends, std::move(fd), deadline, site, out);
        if (forced != nullptr) return fail(forced->failCode, site, "HOSTCCL_TRANSPORT={}, but {}", forced->name, why);
        log::debug("{}: declined {}: {}", describe(site), t->name, why);
    }
}

}  // namespace

HcclResult negotiateLink(const PairEnds& ends, net::Fd fd, Deadline deadline, const ErrorSite& site,
                         std::unique_ptr<Link>* out) {
    return ends.offering() ? offerSide(ends, std::move(fd), deadline, site, out)
                           : answerSide(ends, std::move(fd), deadline, site, out);
}

bool linksInProcess(const PairEnds& ends) {
    return ends.sameProcess && firstChoice(ends).inProcessPair != nullptr;
}

bool makeInProcessLinks(const PairEnds& ends, std::unique_ptr<Link>* mine, std::unique_ptr<Link>* theirs,
                        std::string* why) {
    const TransportEntry& t = firstChoice(ends);
    if (t.inProcessPair == nullptr) {
        *why = std::string(t.name) + " cannot link two threads of one process without a connection";
        return false;
    }
    return t.inProcessPair(ends, mine, theirs, why);
}

}  // namespace hostccl::transport
