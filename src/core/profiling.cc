#include "core/profiling.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>

#include "common/log.h"
#include "core/comm.h"
#include "common/trace/trace.h"

namespace hostccl::profiling {

namespace {
struct Session {
    std::mutex mutex;
    std::string dir;
    uint64_t switches = 0;
    uint64_t number = 0;  // sessions started in this process: file names never collide
    std::map<const Comm*, std::shared_ptr<Tracer>> live;
    std::vector<std::shared_ptr<Tracer>> detached;
};
Session& session() {
    static Session* s = new Session;  // used until the process ends
    return *s;
}
std::atomic<bool> gRunning{false};  // read on every op: no lock on the fast path

// mkdir -p
bool makeDirectories(const std::string& dir, std::string* why) {
    for (size_t at = 1; at <= dir.size(); ++at) {
        if (at < dir.size() && dir[at] != '/') continue;
        const std::string part = dir.substr(0, at);
        if (mkdir(part.c_str(), 0755) != 0 && errno != EEXIST) {
            *why = fmt::format("cannot create {}: {}", part, std::strerror(errno));
            return false;
        }
    }
    struct stat st {};
    if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
        *why = fmt::format("{} is not a directory", dir);
        return false;
    }
    return true;
}
}  // namespace

bool setDirectory(const std::string& dir, std::string* why) {
    if (dir.empty()) {
        *why = "the result path is empty";
        return false;
    }
    if (!makeDirectories(dir, why)) return false;
    Session& s = session();
    std::lock_guard<std::mutex> lock(s.mutex);
    s.dir = dir;
    return true;
}

bool hasDirectory() {
    Session& s = session();
    std::lock_guard<std::mutex> lock(s.mutex);
    return !s.dir.empty();
}

bool start(uint64_t switches, std::string* why) {
    Session& s = session();
    std::lock_guard<std::mutex> lock(s.mutex);
    if (s.dir.empty()) {
        *why = "aclprofInit has not named a result directory";
        return false;
    }
    if (gRunning.load()) {
        *why = "a profiling session is already running (aclprofStop it first)";
        return false;
    }
    s.switches = switches;
    ++s.number;
    gRunning.store(true);
    return true;
}

bool running() { return gRunning.load(); }

std::vector<std::string> stop() {
    Session& s = session();
    std::vector<std::shared_ptr<Tracer>> done;
    {
        std::lock_guard<std::mutex> lock(s.mutex);
        gRunning.store(false);
        for (auto& [comm, tracer] : s.live) done.push_back(std::move(tracer));
        for (auto& tracer : s.detached) done.push_back(std::move(tracer));
        s.live.clear();
        s.detached.clear();
    }
    std::vector<std::string> files;
    for (auto& tracer : done) {
        std::string path = tracer->flush();
        if (!path.empty()) files.push_back(std::move(path));
    }
    return files;
}

void finalize() {
    if (running()) stop();
    Session& s = session();
    std::lock_guard<std::mutex> lock(s.mutex);
    s.dir.clear();
}

std::shared_ptr<Tracer> tracerFor(const Comm* comm) {
    if (!gRunning.load(std::memory_order_relaxed)) return nullptr;
    Session& s = session();
    std::lock_guard<std::mutex> lock(s.mutex);
    if (!gRunning.load()) return nullptr;
    auto it = s.live.find(comm);
    if (it != s.live.end()) return it->second;
    const std::string path =
        fmt::format("{}/hostccl_prof.{}.rank{}.{}.json", s.dir, Tracer::safeName(comm->name()), comm->rank(), s.number);
    std::shared_ptr<Tracer> tracer = Tracer::toFile(path, comm->name(), comm->rank(), comm->peers()[comm->rank()].hostId,
                                                    fmt::format(R"("profSwitches":{})", s.switches));
    s.live.emplace(comm, tracer);
    return tracer;
}

void detach(const Comm* comm) {
    Session& s = session();
    std::lock_guard<std::mutex> lock(s.mutex);
    auto it = s.live.find(comm);
    if (it == s.live.end()) return;
    s.detached.push_back(std::move(it->second));
    s.live.erase(it);
}

}  // namespace hostccl::profiling
