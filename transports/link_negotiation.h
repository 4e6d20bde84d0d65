// How the two ends of a pair agree on a transport, over the authenticated TCP
// connection they already share, and build its link. The lower rank offers each
// transport of the table (transport_table.h) the pair wants, in order, that it can
// set up here; the higher rank answers yes or no; a no moves both to the next row.
// So the two sides can never disagree. On the wire an offer is 64 bytes (the row's
// tag and its payload), an answer one byte; an offering rank that cannot go on (a
// forced transport it cannot set up) sends a give-up offer naming it, so the peer
// fails at once too, with the same code.
#pragma once

#include <memory>

#include "transports/transport_entry.h"

namespace hostccl::transport {

HcclResult negotiateLink(const PairEnds& ends, net::Fd fd, Deadline deadline, const ErrorSite& site,
                         std::unique_ptr<Link>* out);

// Two threads of one process whose first choice can link them without a
// connection (shared memory): both ends at once. False when it cannot, with `why`
// when it was tried.
bool linksInProcess(const PairEnds& ends);
bool makeInProcessLinks(const PairEnds& ends, std::unique_ptr<Link>* mine, std::unique_ptr<Link>* theirs,
                        std::string* why);

}  // namespace hostccl::transport
