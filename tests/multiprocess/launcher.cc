#include "tests/multiprocess/launcher.h"

#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

extern char** environ;

namespace hostccl::test {

namespace {
void killAll(std::vector<pid_t>& pids, std::vector<ProcessResult>& results, bool timedOut) {
    for (size_t i = 0; i < pids.size(); ++i) {
        if (pids[i] <= 0) continue;
        kill(pids[i], SIGKILL);
        waitpid(pids[i], nullptr, 0);
        results[i].timedOut = timedOut;
        pids[i] = 0;
    }
}
}  // namespace

std::vector<ProcessResult> runProcesses(const std::vector<std::vector<std::string>>& argvs, int timeoutSec,
                                        const std::vector<bool>& linger) {
    std::vector<pid_t> pids;
    for (const auto& args : argvs) {
        std::vector<char*> argv;
        for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
        argv.push_back(nullptr);
        pid_t pid = -1;
        if (posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ) != 0) pid = -1;
        pids.push_back(pid);
    }
    std::vector<ProcessResult> results(pids.size());
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeoutSec);
    size_t remaining = 0;
    for (pid_t p : pids) remaining += p > 0 ? 1 : 0;
    size_t lingering = 0;
    for (size_t i = 0; i < pids.size(); ++i) lingering += i < linger.size() && linger[i] && pids[i] > 0 ? 1 : 0;
    while (remaining > 0) {
        if (remaining == lingering) {
            killAll(pids, results, false);
            break;
        }
        for (size_t i = 0; i < pids.size(); ++i) {
            if (pids[i] <= 0) continue;
            int status = 0;
            if (waitpid(pids[i], &status, WNOHANG) == pids[i]) {
                results[i].exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
                pids[i] = 0;
                --remaining;
                if (i < linger.size() && linger[i]) --lingering;
            }
        }
        if (remaining == 0) break;
        if (std::chrono::steady_clock::now() > deadline) {
            killAll(pids, results, true);
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return results;
}

std::string tempPath(const std::string& stem) {
    return "/tmp/hostccl-test-" + std::to_string(getpid()) + "-" + stem;
}

uint16_t freeTcpPort() {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa);
    socklen_t len = sizeof sa;
    getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len);
    close(fd);
    return ntohs(sa.sin_port);
}

}  // namespace hostccl::test
