// Rank table (cluster info) JSON, version 1.0 (1.2 tolerated). Every field is
// checked; an error names the file and the field path, e.g.
// "rank table /x.json: server_list[1].device[0].rank_id: duplicate rank 3".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hccl/hccl_types.h"

namespace hostccl {

struct RankTableEntry {
    uint32_t rankId = 0;
    uint32_t serverIndex = 0;
    std::string serverId;
    int32_t deviceId = 0;
    std::string deviceIp;  // may be empty (single server)
    std::string hostIp;    // server's host_ip, may be empty
    uint16_t devicePort = 0;
    uint16_t hostPort = 0;
};

struct RankTable {
    std::string version;
    uint32_t serverCount = 0;
    std::vector<RankTableEntry> ranks;  // indexed by rank id
};

// On failure returns the HcclResult and fills `why` (which names the field).
HcclResult parseRankTable(const std::string& json, RankTable* out, std::string* why);
HcclResult loadRankTable(const std::string& path, RankTable* out, std::string* content, std::string* why);

}  // namespace hostccl
