// Connection handshake. The client opens with a Hello naming the communicator and
// the two ranks; each side then proves it holds the job secret by MACing the other's
// fresh nonce (SipHash). The secret itself never crosses the wire, and a peer that
// cannot prove it is dropped before anything is allocated for it.
#pragma once

#include <cstdint>
#include <string>

#include "common/deadline.h"
#include "common/siphash.h"
#include "common/net/socket.h"

namespace hostccl::net {

// Notice: a one-shot connection carrying one failure notice of the logarithmic broadcast.
// Table: the bootstrap table passed down the tree from a rank to its children.
// JoinFailure: a rank that cannot take part tells the rendezvous why, instead of
// registering, so the others stop waiting at once.
enum class Purpose : uint16_t { Rendezvous = 1, PeerLink = 2, Health = 3, Notice = 4, Table = 5, JoinFailure = 6 };

constexpr uint32_t kAnyRank = 0xffffffffu;

struct Hello {
    uint32_t magic;
    uint16_t version;
    uint16_t purpose;
    uint64_t commId;
    uint32_t fromRank;
    uint32_t toRank;
    uint64_t nonce;
};
static_assert(sizeof(Hello) == 32, "wire layout");

Hello makeHello(Purpose purpose, uint64_t commId, uint32_t fromRank, uint32_t toRank);

// Whether a Hello read from the wire is well formed (magic, version, purpose).
bool checkHello(const Hello& hello, std::string* err);
// Reads a Hello and checks it.
bool readHello(int fd, Hello* hello, Deadline deadline, std::string* err);

// Client: sends `hello`, checks the server's proof, sends its own, waits for acceptance.
// `turnedAway` (if given): whether it failed before the server proved anything (the
// connection closed or reset at the door), which a retry may get past.
bool clientHandshake(int fd, const Secret& secret, const Hello& hello, Deadline deadline, std::string* err,
                     bool* turnedAway = nullptr);
// Connects to `to` and runs the client side: a connection both ends have proven, or
// an invalid Fd with `err` naming the step that failed. A server that turns the
// connection away before proving itself (its handshake slots all taken by strangers,
// say) is dialled again, with back-off, until the deadline; a wrong proof is final.
Fd dialProven(const Endpoint& to, const Secret& secret, const Hello& hello, Deadline deadline, std::string* err);
// Server: `hello` was already read; proves itself and checks the client's proof.
bool serverHandshake(int fd, const Secret& secret, const Hello& hello, Deadline deadline, std::string* err);

}  // namespace hostccl::net
