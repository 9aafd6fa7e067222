// SPDX-License-Identifier: Apache-2.0
// HTTP library candidate for `ignis serve`: libevent's evhttp. N threads, each with its own
// event_base and evhttp on its own SO_REUSEPORT listening socket (the kernel spreads connections).
#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <thread>
#include <vector>

namespace {

constexpr std::string_view kInferReply =
    R"({"model_name":"m","model_version":"1","outputs":[{"name":"y","datatype":"FP32","shape":[1,10],)"
    R"("data":[0.1,0.0,0.0,0.7,0.0,0.0,0.2,0.0,0.0,0.0]}]})";

void OnInfer(evhttp_request* req, void*) {
  if (evhttp_request_get_command(req) != EVHTTP_REQ_POST) {
    evhttp_send_error(req, 405, nullptr);
    return;
  }
  // evhttp has already read the whole body into the input buffer.
  evbuffer* in = evhttp_request_get_input_buffer(req);
  if (evbuffer_get_length(in) == 0) {
    evhttp_send_error(req, 400, nullptr);
    return;
  }
  evbuffer_drain(in, evbuffer_get_length(in));
  evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type", "application/json");
  evbuffer_add_reference(evhttp_request_get_output_buffer(req), kInferReply.data(),
                         kInferReply.size(), nullptr, nullptr);
  evhttp_send_reply(req, 200, "OK", nullptr);
}

void OnReady(evhttp_request* req, void*) {
  if (evhttp_request_get_command(req) != EVHTTP_REQ_GET) {
    evhttp_send_error(req, 405, nullptr);
    return;
  }
  evhttp_send_reply(req, 200, "OK", nullptr);
}

int Listen(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
  // Linux copies TCP_NODELAY from the listening socket to the accepted ones.
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || listen(fd, 1024) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s PORT THREADS\n", argv[0]);
    return 2;
  }
  const int port = std::atoi(argv[1]);
  const int threads = std::max(1, std::atoi(argv[2]));

  std::vector<event_base*> bases;
  for (int i = 0; i < threads; ++i) {
    event_base* base = event_base_new();
    evhttp* http = evhttp_new(base);
    evhttp_set_cb(http, "/v2/models/m/infer", OnInfer, nullptr);
    evhttp_set_cb(http, "/v2/health/ready", OnReady, nullptr);
    const int fd = Listen(port);
    if (!base || !http || fd < 0 || evhttp_accept_socket(http, fd) != 0) {
      std::fprintf(stderr, "cannot listen on 127.0.0.1:%d\n", port);
      return 1;
    }
    bases.push_back(base);
  }
  std::vector<std::thread> pool;
  for (int i = 1; i < threads; ++i) pool.emplace_back([b = bases[i]] { event_base_dispatch(b); });
  event_base_dispatch(bases[0]);
  for (auto& t : pool) t.join();
  return 0;
}
