// SPDX-License-Identifier: Apache-2.0
// `ignis serve`: loads a model repository and serves it over HTTP (KServe v2) until SIGTERM or
// SIGINT, then drains: readiness turns 503, new requests are refused, accepted ones finish.
#include <signal.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "cli/commands.h"
#include "core/strings.h"
#include "serve/grpc/grpc_server.h"
#include "serve/http/http_server.h"
#include "serve/http/kserve_routes.h"
#include "serve/log.h"
#include "serve/server.h"

namespace ignis::cli {

int run_serve(const ServeCliOptions& opts) {
  using namespace ignis::serve;
  set_log_format(opts.log_format == "json" ? LogFormat::Json : LogFormat::Text);
  std::error_code ec;
  if (!std::filesystem::is_directory(opts.model_repository, ec)) {
    std::fprintf(stderr, "ignis serve: model repository '%s' is not a folder\n", opts.model_repository.c_str());
    return 2;
  }
  // Every thread started from here on inherits the blocked signals; this thread waits for them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  ServerOptions so;
  so.repository = opts.model_repository;
  so.host = opts.host;
  so.http_port = opts.http_port;
  so.grpc_port = opts.grpc_port;
  so.threads = opts.threads;
  so.io_threads = opts.io_threads;
  so.exit_timeout_s = opts.exit_timeout;
  so.repository_poll_s = opts.repository_poll;
  so.default_max_batch_size = opts.default_max_batch_size;
  so.max_body_bytes = static_cast<size_t>(opts.max_body_mb * 1024 * 1024);
  so.max_connections = opts.max_connections;
  so.read_timeout_s = opts.read_timeout;
  so.memory_limit_bytes = static_cast<size_t>(opts.memory_limit_mb * 1024 * 1024);
  so.response_cache_bytes = static_cast<size_t>(opts.response_cache_mb * 1024 * 1024);
  so.response_cache_ttl_s = opts.response_cache_ttl;
  InferenceServer server(so);

  HttpServerOptions ho;
  ho.host = so.host;
  ho.port = so.http_port;
  ho.io_threads = so.io_threads;
  ho.max_body_bytes = so.max_body_bytes;
  ho.max_connections = so.max_connections;
  ho.read_timeout_s = so.read_timeout_s;
  HttpServer http(ho, make_kserve_handler(&server), &server.metrics());
  if (Status st = http.start(); !st) {
    log_error(str_cat("http: ", st.message()));
    return 1;
  }
  log_info(str_cat("http: listening on ", so.host, ":", http.port(), " (", so.io_threads, " I/O thread(s); engine ",
                   engine_threads(so.threads, so.io_threads), " thread(s))"));
  std::unique_ptr<GrpcServer> grpc;
  if (so.grpc_port >= 0) {
    grpc = std::make_unique<GrpcServer>(&server, so.host, so.grpc_port, so.io_threads);
    if (Status st = grpc->start(); !st) {
      log_error(str_cat("grpc: ", st.message()));
      return 1;
    }
    log_info(str_cat("grpc: listening on ", so.host, ":", grpc->port()));
  }
  server.start();
  const auto index = server.repository().index();
  size_t ready = 0;
  for (const auto& e : index) ready += e.state == "READY";
  log_info(str_cat("repository '", so.repository, "': ", ready, " model version(s) ready, ", index.size() - ready,
                   " unavailable; server ready"));

  int sig = 0;
  sigwait(&signals, &sig);
  log_info(str_cat("received ", sig == SIGTERM ? "SIGTERM" : "SIGINT", "; draining (up to ", so.exit_timeout_s, " s)"));
  const auto start = std::chrono::steady_clock::now();
  const bool drained = server.drain(std::chrono::duration<double>(so.exit_timeout_s));
  const double left = so.exit_timeout_s - std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  http.shutdown(std::chrono::duration<double>(std::max(0.5, left)));
  if (grpc) grpc->shutdown(std::chrono::duration<double>(std::max(0.5, left)));
  server.stop();
  if (!drained) {
    log_warning("exit timeout reached with requests still running");
    return 1;
  }
  log_info("drained; exiting");
  return 0;
}

}  // namespace ignis::cli
