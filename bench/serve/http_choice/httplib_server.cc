// SPDX-License-Identifier: Apache-2.0
// HTTP library candidate for `ignis serve`: cpp-httplib (Debian's split header + shared library),
// blocking server with a pool of N threads; each keep-alive connection holds one pool thread.
#include <httplib.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace {

constexpr std::string_view kInferReply =
    R"({"model_name":"m","model_version":"1","outputs":[{"name":"y","datatype":"FP32","shape":[1,10],)"
    R"("data":[0.1,0.0,0.0,0.7,0.0,0.0,0.2,0.0,0.0,0.0]}]})";

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s PORT THREADS [KEEPALIVE_MAX_COUNT]\n", argv[0]);
    return 2;
  }
  const int port = std::atoi(argv[1]);
  const std::size_t threads = static_cast<std::size_t>(std::max(1, std::atoi(argv[2])));
  // The library default closes a connection after 5 requests; a large count keeps it open.
  const std::size_t keepalive_max = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 1000000;

  httplib::Server svr;
  svr.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  svr.set_tcp_nodelay(true);  // without it headers and body leave in two writes: ~40 ms stalls
  svr.set_keep_alive_max_count(keepalive_max);

  svr.Post("/v2/models/m/infer", [](const httplib::Request& req, httplib::Response& res) {
    if (req.body.empty()) {
      res.status = 400;
      return;
    }
    res.set_content(kInferReply.data(), kInferReply.size(), "application/json");
  });
  svr.Get("/v2/health/ready",
          [](const httplib::Request&, httplib::Response& res) { res.status = 200; });

  if (!svr.listen("127.0.0.1", port)) {
    std::fprintf(stderr, "cannot listen on 127.0.0.1:%d\n", port);
    return 1;
  }
  return 0;
}
