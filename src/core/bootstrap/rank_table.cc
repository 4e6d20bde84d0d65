#include "core/bootstrap/rank_table.h"

#include <arpa/inet.h>
#include <sys/stat.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

namespace hostccl {

namespace {
using nlohmann::json;

// Thrown inside the parser only; parseRankTable turns it into (code, text).
struct FieldError {
    std::string path;
    std::string why;
};

[[noreturn]] void bad(const std::string& path, const std::string& why) { throw FieldError{path, why}; }

const json& member(const json& obj, const std::string& key, const std::string& path) {
    auto it = obj.find(key);
    if (it == obj.end()) bad(path + key, "missing");
    return *it;
}

std::string text(const json& v, const std::string& path) {
    if (!v.is_string()) bad(path, "must be a string");
    return v.get<std::string>();
}

// v1.0 writes numbers as strings ("3"); integers are accepted too.
int64_t number(const json& v, const std::string& path, int64_t min, int64_t max) {
    int64_t x = 0;
    if (v.is_number_integer()) {
        x = v.get<int64_t>();
    } else if (v.is_string()) {
        const std::string s = v.get<std::string>();
        if (s.empty() || s.size() > 18 || s.find_first_not_of("0123456789") != std::string::npos)
            bad(path, "'" + s + "' is not a non-negative integer");
        x = std::stoll(s);
    } else {
        bad(path, "must be an integer or a string holding one");
    }
    if (x < min || x > max) bad(path, std::to_string(x) + " is outside [" + std::to_string(min) + ", " + std::to_string(max) + "]");
    return x;
}

std::string ipv4(const json& v, const std::string& path) {
    std::string s = text(v, path);
    in_addr a{};
    if (inet_pton(AF_INET, s.c_str(), &a) != 1) bad(path, "'" + s + "' is not an IPv4 address");
    return s;
}

uint16_t optionalPort(const json& obj, const char* key, const std::string& path) {
    auto it = obj.find(key);
    return it == obj.end() ? 0 : static_cast<uint16_t>(number(*it, path + key, 1, 65535));
}

void parseDevice(const json& d, const std::string& path, RankTableEntry* e) {
    if (!d.is_object()) bad(path, "must be an object");
    e->deviceId = static_cast<int32_t>(number(member(d, "device_id", path + "."), path + ".device_id", 0, 65535));
    e->rankId = static_cast<uint32_t>(number(member(d, "rank_id", path + "."), path + ".rank_id", 0, 1 << 20));
    if (d.contains("device_ip")) e->deviceIp = ipv4(d["device_ip"], path + ".device_ip");
    e->devicePort = optionalPort(d, "device_port", path + ".");
    e->hostPort = optionalPort(d, "host_port", path + ".");
}

void parseServers(const json& list, RankTable* out) {
    if (!list.is_array() || list.empty()) bad("server_list", "must be a non-empty array");
    std::set<std::string> serverIds;
    for (size_t s = 0; s < list.size(); ++s) {
        const std::string path = "server_list[" + std::to_string(s) + "]";
        const json& server = list[s];
        if (!server.is_object()) bad(path, "must be an object");
        std::string serverId = text(member(server, "server_id", path + "."), path + ".server_id");
        if (serverId.empty() || serverId.size() > 64) bad(path + ".server_id", "must be 1 to 64 characters");
        if (!serverIds.insert(serverId).second) bad(path + ".server_id", "duplicate server_id '" + serverId + "'");
        std::string hostIp = server.contains("host_ip") ? ipv4(server["host_ip"], path + ".host_ip") : "";
        const json& devices = member(server, "device", path + ".");
        if (!devices.is_array() || devices.empty()) bad(path + ".device", "must be a non-empty array");
        std::set<int32_t> deviceIds;
        for (size_t d = 0; d < devices.size(); ++d) {
            RankTableEntry e;
            const std::string dpath = path + ".device[" + std::to_string(d) + "]";
            parseDevice(devices[d], dpath, &e);
            if (!deviceIds.insert(e.deviceId).second)
                bad(dpath + ".device_id", "duplicate device_id " + std::to_string(e.deviceId) + " on this server");
            e.serverIndex = static_cast<uint32_t>(s);
            e.serverId = serverId;
            e.hostIp = hostIp;
            out->ranks.push_back(e);
        }
    }
}

// rank ids 0..N-1 each once, and each server's ranks one contiguous run.
void checkRanks(RankTable* t) {
    const size_t n = t->ranks.size();
    std::vector<int64_t> where(n, -1);
    for (size_t i = 0; i < n; ++i) {
        uint32_t r = t->ranks[i].rankId;
        if (r >= n) bad("rank_id", "rank " + std::to_string(r) + " is not below the rank count " + std::to_string(n));
        if (where[r] >= 0) bad("rank_id", "duplicate rank " + std::to_string(r));
        where[r] = static_cast<int64_t>(i);
    }
    std::vector<RankTableEntry> byRank(n);
    for (size_t r = 0; r < n; ++r) byRank[r] = t->ranks[static_cast<size_t>(where[r])];
    for (size_t r = 1; r < n; ++r) {
        if (byRank[r].serverIndex < byRank[r - 1].serverIndex)
            bad("rank_id", "ranks of server '" + byRank[r].serverId + "' are interleaved with other servers' (rank " +
                               std::to_string(r) + ")");
        if (byRank[r].serverIndex > byRank[r - 1].serverIndex + 1)
            bad("rank_id", "rank " + std::to_string(r) + " skips a server: server ranks must be contiguous");
    }
    t->ranks = std::move(byRank);
}

void parseTop(const json& j, RankTable* out) {
    if (!j.is_object()) bad("(top level)", "must be a JSON object");
    std::string status = text(member(j, "status", ""), "status");
    if (status == "initializing") bad("status", "is 'initializing': the table is not ready to use");
    if (status != "completed") bad("status", "'" + status + "' is not 'completed'");
    out->version = text(member(j, "version", ""), "version");
    if (out->version != "1.0" && out->version != "1.2")
        bad("version", "'" + out->version + "' is not supported (1.0 or 1.2)");
    const json& servers = member(j, "server_list", "");
    if (j.contains("server_count") || out->version == "1.0") {
        out->serverCount = static_cast<uint32_t>(number(member(j, "server_count", ""), "server_count", 1, 1 << 20));
        if (!servers.is_array() || out->serverCount != servers.size())
            bad("server_count", std::to_string(out->serverCount) + " does not match the " +
                                    std::to_string(servers.is_array() ? servers.size() : 0) + " entries of server_list");
    }
    parseServers(servers, out);
    out->serverCount = static_cast<uint32_t>(servers.size());
    checkRanks(out);
}
}  // namespace

HcclResult parseRankTable(const std::string& text, RankTable* out, std::string* why) {
    json j = json::parse(text, nullptr, false);
    if (j.is_discarded()) {
        *why = "not valid JSON";
        return HCCL_E_PARA;
    }
    RankTable t;
    try {
        parseTop(j, &t);
    } catch (const FieldError& e) {
        *why = e.path + ": " + e.why;
        return HCCL_E_PARA;
    } catch (const std::exception& e) {  // nlohmann type errors on odd shapes
        *why = std::string("malformed: ") + e.what();
        return HCCL_E_PARA;
    }
    *out = std::move(t);
    return HCCL_SUCCESS;
}

HcclResult loadRankTable(const std::string& path, RankTable* out, std::string* content, std::string* why) {
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
        *why = "cannot read: not a regular file";
        return HCCL_E_OPEN_FILE_FAILURE;
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        *why = "cannot open: " + std::string(std::strerror(errno));
        return HCCL_E_OPEN_FILE_FAILURE;
    }
    std::ostringstream ss;
    ss << in.rdbuf();
    if (in.bad()) {
        *why = "cannot read";
        return HCCL_E_OPEN_FILE_FAILURE;
    }
    *content = ss.str();
    return parseRankTable(*content, out, why);
}

}  // namespace hostccl
