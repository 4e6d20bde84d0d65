// The monitoring endpoint's HTTP server: GET only, one request per connection,
// driven by the monitor's thread in short slices (serve()). Whatever a client
// does, the job does not notice: requests over 8 KiB or not HTTP get a 400, a
// client that has not finished its request in 5 s (or reading the answer in 10 s)
// is cut off, and past 64 open connections new ones are closed at once.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>

#include "common/net/socket.h"

namespace hostccl::monitor {

struct HttpResponse {
    int status = 200;
    std::string contentType = "text/plain; charset=utf-8";
    std::string body;
};

class HttpServer {
public:
    using Handler = std::function<HttpResponse(const std::string& path)>;
    static constexpr size_t kMaxRequestBytes = 8192;
    static constexpr size_t kMaxClients = 64;
    static constexpr auto kRequestTime = std::chrono::seconds(5);
    static constexpr auto kAnswerTime = std::chrono::seconds(10);

    // Listens on `addr`:`port`, or the first of the `tries` ports from there that is
    // free (port 0: any). Null with `why` when none can be had.
    static std::unique_ptr<HttpServer> listen(const std::string& addr, uint16_t port, int tries, std::string* why);
    ~HttpServer();
    HttpServer(const HttpServer&) = delete;
    HttpServer& operator=(const HttpServer&) = delete;

    uint16_t port() const { return port_; }
    // Serves for up to `ms` milliseconds (returns earlier once something happened).
    void serve(int ms, const Handler& handler);

private:
    struct Client {
        net::Fd fd;
        std::string in, out;
        size_t sent = 0;
        bool answering = false;
        std::chrono::steady_clock::time_point deadline;
    };
    HttpServer(net::Fd listener, uint16_t port, int epoll);
    void accept();
    void onEvent(int fd, const Handler& handler);
    void answer(Client& c, const Handler& handler);
    bool flush(Client& c);  // false: done or broken (close it)
    void close(int fd);
    void expire();

    net::Fd listener_;
    uint16_t port_;
    int epoll_;
    std::unordered_map<int, Client> clients_;
};

// The answer to one request's bytes (exposed for tests): the path of a GET, or an
// error status with its reason.
struct ParsedRequest {
    bool complete = false;  // the header has ended
    int error = 0;          // 400, 405, 413: answer that and close
    std::string path;
};
ParsedRequest parseRequest(const std::string& bytes);
std::string formatResponse(const HttpResponse& r);

}  // namespace hostccl::monitor
