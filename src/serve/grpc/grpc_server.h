// SPDX-License-Identifier: Apache-2.0
// The gRPC front end: inference.GRPCInferenceService (KServe v2 with Triton's configuration,
// statistics and repository extensions) over InferenceServer, answering as the HTTP routes do.
// gRPC and protobuf types stay inside src/serve/grpc/.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "ignis/status.h"

namespace ignis::serve {

class InferenceServer;

class GrpcServer {
 public:
  // `server` must outlive this object. `port` 0 binds any free port (see port()). `threads`
  // caps the threads gRPC may start for handlers (part of the server's thread budget).
  GrpcServer(InferenceServer* server, std::string host, int port, int threads);
  ~GrpcServer();
  GrpcServer(const GrpcServer&) = delete;
  GrpcServer& operator=(const GrpcServer&) = delete;

  // Binds and starts serving; an error when the address cannot be bound.
  Status start();
  // The bound port, after start().
  int port() const;
  // Refuses new calls, waits up to `deadline` for running ones, then cancels the rest and
  // returns once every handler has answered. Safe to call twice; the destructor calls it.
  void shutdown(std::chrono::duration<double> deadline);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace ignis::serve
