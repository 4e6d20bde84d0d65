// The raw TCP limit between two endpoints: what the kernel moves with no library on
// top, the ceiling bench/compare.sh holds every collective over TCP against.
//   tcp_raw --listen PORT [--streams S] [--mib M] [--oneway] [--congestion NAME] [--buffer-mib B]   (one end)
//   tcp_raw --connect IP:PORT [--streams S] [--mib M] [--oneway] [--congestion NAME] [--buffer-mib B]
// S connections; on each, both ends send M MiB and receive M MiB at once (one thread
// per direction and connection, blocking 1 MiB calls), unless --oneway (only the
// connecting end sends). --congestion: the sockets' congestion control, set before
// they connect (default: the kernel's). --buffer-mib: the calls walk through buffers
// of B MiB in all, each direction's split among the connections, as a collective's
// B MiB message (default: each thread repeats one 1 MiB buffer, which stays in the
// cache). Prints one line: what this end received per second from the first
// connection up to its last byte, and what it sent.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Options {
    bool listen = false, oneway = false;
    std::string ip = "127.0.0.1", congestion;
    int port = 0, streams = 1;
    size_t bytes = size_t(256) << 20;
    size_t bufferBytes = 0;  // 0: 1 MiB per thread
};

[[noreturn]] void fail(const char* what) {
    std::fprintf(stderr, "tcp_raw: %s: %s\n", what, std::strerror(errno));
    std::exit(1);
}

Options parse(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
        if (a == "--oneway") { o.oneway = true; continue; }
        if (v == nullptr) { std::fprintf(stderr, "tcp_raw: %s needs a value\n", a.c_str()); std::exit(2); }
        ++i;
        if (a == "--listen") o.listen = true, o.port = std::atoi(v);
        else if (a == "--connect") {
            const std::string s = v;
            const size_t colon = s.rfind(':');
            if (colon == std::string::npos) { std::fprintf(stderr, "tcp_raw: --connect wants IP:PORT\n"); std::exit(2); }
            o.ip = s.substr(0, colon), o.port = std::atoi(s.c_str() + colon + 1);
        } else if (a == "--streams") o.streams = std::atoi(v);
        else if (a == "--mib") o.bytes = size_t(std::atoll(v)) << 20;
        else if (a == "--congestion") o.congestion = v;
        else if (a == "--buffer-mib") o.bufferBytes = size_t(std::atoll(v)) << 20;
        else { std::fprintf(stderr, "tcp_raw: unknown argument %s\n", a.c_str()); std::exit(2); }
    }
    if (o.port <= 0 || o.streams <= 0 || o.bytes == 0) { std::fprintf(stderr, "tcp_raw: bad arguments\n"); std::exit(2); }
    return o;
}

// Before connect or listen (an accepted socket takes its listener's): a connection
// that starts under BBR keeps the kernel's pacing after a switch.
void chooseCongestion(int fd, const Options& o) {
    if (!o.congestion.empty() &&
        setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, o.congestion.data(), socklen_t(o.congestion.size())) != 0)
        fail(("congestion control " + o.congestion).c_str());
}

std::vector<int> connectAll(const Options& o) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(uint16_t(o.port));
    if (inet_pton(AF_INET, o.ip.c_str(), &addr.sin_addr) != 1) { std::fprintf(stderr, "tcp_raw: bad IP %s\n", o.ip.c_str()); std::exit(2); }
    std::vector<int> fds;
    if (o.listen) {
        addr.sin_addr.s_addr = htonl(INADDR_ANY);
        const int l = socket(AF_INET, SOCK_STREAM, 0);
        const int one = 1;
        setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        chooseCongestion(l, o);
        if (bind(l, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || listen(l, o.streams) != 0) fail("listen");
        for (int s = 0; s < o.streams; ++s) {
            const int fd = accept(l, nullptr, nullptr);
            if (fd < 0) fail("accept");
            fds.push_back(fd);
        }
        close(l);
    } else {
        for (int s = 0; s < o.streams; ++s) {
            int fd = -1;
            for (int attempt = 0; attempt < 200; ++attempt) {  // the listener may start later
                fd = socket(AF_INET, SOCK_STREAM, 0);
                chooseCongestion(fd, o);
                if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) break;
                close(fd), fd = -1;
                std::this_thread::sleep_for(std::chrono::milliseconds(50));
            }
            if (fd < 0) fail("connect");
            fds.push_back(fd);
        }
    }
    for (int fd : fds) {
        const int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    return fds;
}

constexpr size_t kCall = size_t(1) << 20;

// One thread's buffer, its pages touched before the clock starts.
std::vector<char> bufferFor(const Options& o) {
    const size_t share = o.bufferBytes / size_t(o.streams) / kCall * kCall;
    return std::vector<char>(std::max(kCall, share), 'x');
}

void sendAll(int fd, size_t bytes, std::vector<char>* buf, std::atomic<size_t>* sent) {
    for (size_t left = bytes, at = 0; left > 0;) {
        const ssize_t n = send(fd, buf->data() + at, std::min({left, kCall, buf->size() - at}), 0);
        if (n <= 0) fail("send");
        left -= size_t(n), *sent += size_t(n), at = (at + size_t(n)) % buf->size();
    }
}

void receiveAll(int fd, size_t bytes, std::vector<char>* buf, std::atomic<size_t>* received) {
    for (size_t left = bytes, at = 0; left > 0;) {
        const ssize_t n = recv(fd, buf->data() + at, std::min({left, kCall, buf->size() - at}), 0);
        if (n <= 0) fail("recv");
        left -= size_t(n), *received += size_t(n), at = (at + size_t(n)) % buf->size();
    }
}

}  // namespace

int main(int argc, char** argv) {
    const Options o = parse(argc, argv);
    const std::vector<int> fds = connectAll(o);
    const bool sends = !o.oneway || !o.listen, receives = !o.oneway || o.listen;
    std::atomic<size_t> sent{0}, received{0};
    std::vector<std::vector<char>> sendBufs, recvBufs;
    for (size_t i = 0; i < fds.size(); ++i) sendBufs.push_back(bufferFor(o)), recvBufs.push_back(bufferFor(o));
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> threads;
    for (size_t i = 0; i < fds.size(); ++i) {
        if (sends) threads.emplace_back(sendAll, fds[i], o.bytes, &sendBufs[i], &sent);
        if (receives) threads.emplace_back(receiveAll, fds[i], o.bytes, &recvBufs[i], &received);
    }
    for (auto& t : threads) t.join();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    for (int fd : fds) close(fd);
    std::printf("tcp_raw streams %d received_GBps %.3f sent_GBps %.3f seconds %.3f\n", o.streams,
                double(received) / s / 1e9, double(sent) / s / 1e9, s);
    return 0;
}
