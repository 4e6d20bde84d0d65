// One communicator seen across the whole job, put together from every process's
// /status.json (the endpoint's /job.json, hostccl-status): which ranks answered,
// how far each has got ("3 ranks have started up to op 64; rank 3 up to 60"), which
// collective is stuck and on whom, following each stuck rank's wait from peer to
// peer to the rank that has not arrived or does not answer, every process's
// findings about it, and the job's own: a link below half of the median rate of its
// transport's links (a straggler that receives over it is marked as explained by it).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace hostccl::monitor {

struct JobRank {
    uint32_t rank = 0;
    std::string who;        // "rank 3 (host h 10.0.0.2, pid 42)"
    std::string endpoint;   // its process's monitoring endpoint, "10.0.0.2:9400" ("": none)
    nlohmann::json status;  // this rank's entry of its process's "communicators" (null: no answer)
};

// `findings`: every answering process's findings (only this communicator's are kept).
nlohmann::json jobView(const std::string& comm, uint64_t commId, const std::vector<JobRank>& ranks,
                       const nlohmann::json& findings);

// hostccl-status's text for a /job.json document (an array of job views).
std::string jobText(const nlohmann::json& views);

}  // namespace hostccl::monitor
