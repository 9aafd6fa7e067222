// SPDX-License-Identifier: Apache-2.0
// The HTTP/1.1 transport: keep-alive connections on a few I/O threads (Boost.Beast over Asio;
// docs/serve_http_library.md has the measurements behind the choice), with limits on body and
// header size, connections and read time. Requests go to one handler, which may answer later
// from any thread. Beast and Asio types stay inside http_server.cc.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ignis/status.h"
#include "serve/metrics.h"

namespace ignis::serve {

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string path;    // without the query string
  std::string query;
  std::vector<std::pair<std::string, std::string>> headers;  // names lowercased
  std::shared_ptr<std::string> body;
  std::chrono::steady_clock::time_point received;  // when the whole request was read
  // True once the client has closed or reset its connection while the request is unanswered
  // (checked without blocking, from any thread). Set by the server for every request.
  std::function<bool()> client_gone;

  // The header's value, or "" when absent.
  std::string_view header(std::string_view lowercase_name) const;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  // When set, fills the response on the connection's I/O thread just before it is written,
  // so encoding large outputs never runs on the thread that answered (an engine worker).
  std::function<void(HttpResponse&)> render;
};

// Sends the response; callable once, from any thread.
using HttpResponder = std::function<void(HttpResponse&&)>;
using HttpHandler = std::function<void(HttpRequest&&, HttpResponder)>;

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  int port = 8000;  // 0: any free port (see port())
  int io_threads = 1;
  size_t max_body_bytes = size_t{64} << 20;
  size_t max_header_bytes = 64 << 10;
  int max_connections = 1024;
  double read_timeout_s = 30;  // a request's headers and body must arrive within this
};

class HttpServer {
 public:
  HttpServer(HttpServerOptions options, HttpHandler handler, MetricsRegistry* metrics);
  ~HttpServer();

  // Binds and starts the I/O threads.
  Status start();
  int port() const;
  // Closes the listening socket; open connections keep being served.
  void stop_accepting();
  // Graceful end: stops accepting, closes idle connections, lets the others finish writing
  // their current response (up to `timeout`), then stops.
  void shutdown(std::chrono::duration<double> timeout);
  // Closes every connection and joins the I/O threads.
  void stop();

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace ignis::serve
