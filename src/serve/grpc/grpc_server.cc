// SPDX-License-Identifier: Apache-2.0
// inference.GRPCInferenceService on gRPC's callback API: handlers decode, hand the request to
// InferenceServer and return at once; the answer is sent when the engine (or the control
// thread, for load/unload) completes, so no gRPC thread waits on inference.
#include "serve/grpc/grpc_server.h"

#include <grpc/support/log.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/resource_quota.h>

#include <climits>
#include <exception>

#include "core/strings.h"
#include "grpc_service.grpc.pb.h"
#include "serve/datatype.h"
#include "serve/grpc/grpc_codec.h"
#include "serve/log.h"
#include "serve/protocol_info.h"
#include "serve/server.h"

namespace ignis::serve {
namespace {

grpc::StatusCode grpc_code(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::BadRequest: return grpc::StatusCode::INVALID_ARGUMENT;
    case ErrorKind::NotFound: return grpc::StatusCode::NOT_FOUND;
    case ErrorKind::TooLarge: return grpc::StatusCode::RESOURCE_EXHAUSTED;
    case ErrorKind::Overloaded: return grpc::StatusCode::RESOURCE_EXHAUSTED;
    case ErrorKind::Unavailable: return grpc::StatusCode::UNAVAILABLE;
    case ErrorKind::Timeout: return grpc::StatusCode::DEADLINE_EXCEEDED;
    case ErrorKind::Unsupported: return grpc::StatusCode::UNIMPLEMENTED;
    case ErrorKind::Internal: return grpc::StatusCode::INTERNAL;
  }
  return grpc::StatusCode::INTERNAL;
}

grpc::Status grpc_status(const ServeError& e) { return grpc::Status(grpc_code(e.kind), e.message); }

grpc::ServerUnaryReactor* finish(grpc::CallbackServerContext* ctx, const grpc::Status& status) {
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  reactor->Finish(status);
  return reactor;
}

grpc::ServerUnaryReactor* finish(grpc::CallbackServerContext* ctx, const ServeError& e) {
  return finish(ctx, grpc_status(e));
}

void fill_tensors(const std::vector<TensorMetadata>& ts,
                  google::protobuf::RepeatedPtrField<inference::ModelMetadataResponse::TensorMetadata>* out) {
  for (const auto& t : ts) {
    inference::ModelMetadataResponse::TensorMetadata* m = out->Add();
    m->set_name(t.name);
    m->set_datatype(std::string(kserve_name(t.dtype)));
    for (int64_t d : t.shape) m->add_shape(d);
  }
}

void fill_duration(uint64_t count, uint64_t ns, inference::StatisticDuration* out) {
  out->set_count(count);
  out->set_ns(ns);
}

// The same numbers as statistics_json() writes for one version.
void fill_statistics(ModelVersion& v, inference::ModelStatistics* out) {
  VersionStats& s = v.stats();
  auto ld = [](const std::atomic<uint64_t>& a) { return a.load(std::memory_order_relaxed); };
  out->set_name(v.name());
  out->set_version(std::to_string(v.version()));
  out->set_last_inference(ld(s.last_inference_ms));
  out->set_inference_count(ld(s.inference_count));
  out->set_execution_count(ld(s.execution_count));
  inference::InferStatistics* is = out->mutable_inference_stats();
  fill_duration(ld(s.success_count), ld(s.success_ns), is->mutable_success());
  fill_duration(ld(s.fail_count), ld(s.fail_ns), is->mutable_fail());
  fill_duration(ld(s.queue_count), ld(s.queue_ns), is->mutable_queue());
  fill_duration(ld(s.compute_count), ld(s.compute_input_ns), is->mutable_compute_input());
  fill_duration(ld(s.compute_count), ld(s.compute_infer_ns), is->mutable_compute_infer());
  fill_duration(ld(s.compute_count), ld(s.compute_output_ns), is->mutable_compute_output());
  fill_duration(ld(s.cache_hit_count), ld(s.cache_hit_ns), is->mutable_cache_hit());
  fill_duration(ld(s.cache_miss_count), ld(s.cache_miss_ns), is->mutable_cache_miss());
  for (const auto& [rows, e] : s.by_batch_size()) {
    inference::InferBatchStatistics* b = out->add_batch_stats();
    b->set_batch_size(static_cast<uint64_t>(rows));
    fill_duration(e.count, e.input_ns, b->mutable_compute_input());
    fill_duration(e.count, e.infer_ns, b->mutable_compute_infer());
    fill_duration(e.count, e.output_ns, b->mutable_compute_output());
  }
}

class Service final : public inference::GRPCInferenceService::CallbackService {
 public:
  explicit Service(InferenceServer* s) : s_(s) {}

  grpc::ServerUnaryReactor* ServerLive(grpc::CallbackServerContext* ctx, const inference::ServerLiveRequest*,
                                       inference::ServerLiveResponse* resp) override {
    resp->set_live(s_->live());
    return finish(ctx, grpc::Status::OK);
  }

  grpc::ServerUnaryReactor* ServerReady(grpc::CallbackServerContext* ctx, const inference::ServerReadyRequest*,
                                        inference::ServerReadyResponse* resp) override {
    resp->set_ready(s_->ready());
    return finish(ctx, grpc::Status::OK);
  }

  // Not ready (rather than an error) for unknown or unavailable models, as Triton answers.
  grpc::ServerUnaryReactor* ModelReady(grpc::CallbackServerContext* ctx, const inference::ModelReadyRequest* req,
                                       inference::ModelReadyResponse* resp) override {
    auto found = s_->repository().find(req->name(), req->version());
    if (auto* e = std::get_if<ServeError>(&found); e && e->kind == ErrorKind::BadRequest) return finish(ctx, *e);
    resp->set_ready(std::holds_alternative<std::shared_ptr<ModelVersion>>(found) && !s_->draining());
    return finish(ctx, grpc::Status::OK);
  }

  grpc::ServerUnaryReactor* ServerMetadata(grpc::CallbackServerContext* ctx, const inference::ServerMetadataRequest*,
                                           inference::ServerMetadataResponse* resp) override {
    resp->set_name(kServerName);
    resp->set_version(kServerVersion);
    for (const auto& e : server_extensions()) resp->add_extensions(e);
    return finish(ctx, grpc::Status::OK);
  }

  grpc::ServerUnaryReactor* ModelMetadata(grpc::CallbackServerContext* ctx, const inference::ModelMetadataRequest* req,
                                          inference::ModelMetadataResponse* resp) override {
    auto found = s_->repository().find(req->name(), req->version());
    if (auto* e = std::get_if<ServeError>(&found)) return finish(ctx, *e);
    const ModelVersion& v = *std::get<std::shared_ptr<ModelVersion>>(found);
    resp->set_name(v.name());
    for (int64_t x : s_->repository().ready_versions(req->name())) resp->add_versions(std::to_string(x));
    resp->set_platform(v.config().platform);
    fill_tensors(input_metadata(v), resp->mutable_inputs());
    fill_tensors(output_metadata(v), resp->mutable_outputs());
    return finish(ctx, grpc::Status::OK);
  }

  grpc::ServerUnaryReactor* ModelConfig(grpc::CallbackServerContext* ctx, const inference::ModelConfigRequest* req,
                                        inference::ModelConfigResponse* resp) override {
    auto found = s_->repository().find(req->name(), req->version());
    if (auto* e = std::get_if<ServeError>(&found)) return finish(ctx, *e);
    encode_grpc_model_config(std::get<std::shared_ptr<ModelVersion>>(found)->config(), resp->mutable_config());
    return finish(ctx, grpc::Status::OK);
  }

  grpc::ServerUnaryReactor* ModelStatistics(grpc::CallbackServerContext* ctx,
                                            const inference::ModelStatisticsRequest* req,
                                            inference::ModelStatisticsResponse* resp) override {
    if (!req->name().empty()) {
      auto found = s_->repository().find(req->name(), req->version());
      if (auto* e = std::get_if<ServeError>(&found); e && e->kind == ErrorKind::NotFound) return finish(ctx, *e);
    }
    for (const auto& v : s_->repository().all_versions()) {
      if (!req->name().empty() && v->name() != req->name()) continue;
      if (!req->version().empty() && std::to_string(v->version()) != req->version()) continue;
      fill_statistics(*v, resp->add_model_stats());
    }
    return finish(ctx, grpc::Status::OK);
  }

  grpc::ServerUnaryReactor* RepositoryIndex(grpc::CallbackServerContext* ctx,
                                            const inference::RepositoryIndexRequest* req,
                                            inference::RepositoryIndexResponse* resp) override {
    for (const auto& e : s_->repository().index()) {
      if (req->ready() && e.state != "READY") continue;
      inference::RepositoryIndexResponse::ModelIndex* m = resp->add_models();
      m->set_name(e.name);
      m->set_version(e.version);
      m->set_state(e.state);
      m->set_reason(e.reason);
    }
    return finish(ctx, grpc::Status::OK);
  }

  grpc::ServerUnaryReactor* RepositoryModelLoad(grpc::CallbackServerContext* ctx,
                                                const inference::RepositoryModelLoadRequest* req,
                                                inference::RepositoryModelLoadResponse*) override {
    // Loading from a config or files sent with the request is not implemented: ignis loads
    // what is on disk.
    if (!req->parameters().empty())
      return finish(ctx, ServeError{ErrorKind::Unsupported,
                                    str_cat("load parameter '", req->parameters().begin()->first,
                                            "' is not supported; ignis loads the model from the repository")});
    return control(ctx, true, req->model_name());
  }

  grpc::ServerUnaryReactor* RepositoryModelUnload(grpc::CallbackServerContext* ctx,
                                                  const inference::RepositoryModelUnloadRequest* req,
                                                  inference::RepositoryModelUnloadResponse*) override {
    // tritonclient always sends unload_dependents; ignis models have no dependents.
    for (const auto& [key, value] : req->parameters())
      if (key != "unload_dependents")
        return finish(ctx,
                      ServeError{ErrorKind::Unsupported, str_cat("unload parameter '", key, "' is not supported")});
    return control(ctx, false, req->model_name());
  }

  grpc::ServerUnaryReactor* ModelInfer(grpc::CallbackServerContext* ctx, const inference::ModelInferRequest* req,
                                       inference::ModelInferResponse* resp) override {
    const Clock::time_point received = Clock::now();
    if (s_->draining()) return finish(ctx, ServeError{ErrorKind::Unavailable, "the server is shutting down"});
    InferRequest r;
    Status st;
    try {
      // gRPC owns the message until the call ends; the decoder moves the raw buffers out of it
      // (it is not a const object) so the engine reads them without a copy.
      st = decode_grpc_infer_request(const_cast<inference::ModelInferRequest*>(req), s_->options().decode, &r);
    } catch (const std::exception& e) {
      st = internal_error(str_cat("decoding the request failed: ", e.what()));
    }
    if (!st) {
      const ErrorKind kind = st.code() == StatusCode::Unsupported ? ErrorKind::Unsupported
                             : st.code() == StatusCode::Internal  ? ErrorKind::Internal
                                                                  : ErrorKind::BadRequest;
      return finish(ctx, ServeError{kind, st.message()});
    }
    grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
    r.cancelled = [ctx] { return ctx->IsCancelled(); };  // ctx lives until the reactor finishes
    s_->request_started();
    auto err = s_->infer(std::move(r), received, [this, reactor, resp](InferResult result) {
      if (auto* e = std::get_if<ServeError>(&result)) {
        reactor->Finish(grpc_status(*e));
      } else {
        try {
          encode_grpc_infer_response(std::get<InferResponse>(result), resp);
          reactor->Finish(grpc::Status::OK);
        } catch (const std::exception& e) {
          reactor->Finish(
              grpc::Status(grpc::StatusCode::INTERNAL, str_cat("encoding the response failed: ", e.what())));
        }
      }
      s_->request_finished();
    });
    if (err) {
      s_->request_finished();
      reactor->Finish(grpc_status(*err));
    }
    return reactor;
  }

 private:
  // Loading and draining take long: they run on the server's control thread, which answers.
  grpc::ServerUnaryReactor* control(grpc::CallbackServerContext* ctx, bool load, std::string model) {
    grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
    s_->control([this, reactor, load, model = std::move(model)] {
      auto err = load ? s_->repository().load(model) : s_->repository().unload(model);
      reactor->Finish(err ? grpc_status(*err) : grpc::Status::OK);
    });
    return reactor;
  }

  InferenceServer* s_;
};

// gRPC's own log lines (bind failures, transport errors) go to the server's log, so that
// --log-format json keeps one JSON object per line.
void forward_grpc_log(gpr_log_func_args* args) {
  const std::string message = str_cat("grpc: ", args->message);
  if (args->severity == GPR_LOG_SEVERITY_ERROR) log_error(message);
  else log_info(message);
}

std::string listen_address(const std::string& host, int port) {
  const bool ipv6 = host.find(':') != std::string::npos && host.front() != '[';
  return ipv6 ? str_cat("[", host, "]:", port) : str_cat(host, ":", port);
}

}  // namespace

struct GrpcServer::Impl {
  Impl(InferenceServer* s, std::string h, int p, int t)
      : server(s), host(std::move(h)), requested_port(p), threads(t) {}

  InferenceServer* server;
  std::string host;
  int requested_port;
  int threads;
  int bound_port = 0;
  std::unique_ptr<Service> service;
  std::unique_ptr<grpc::Server> grpc_server;
  bool shut_down = false;
};

GrpcServer::GrpcServer(InferenceServer* server, std::string host, int port, int threads)
    : impl_(std::make_unique<Impl>(server, std::move(host), port, threads)) {}

GrpcServer::~GrpcServer() { shutdown(std::chrono::seconds(0)); }

Status GrpcServer::start() {
  Impl& m = *impl_;
  gpr_set_log_function(forward_grpc_log);
  m.service = std::make_unique<Service>(m.server);
  grpc::ServerBuilder builder;
  const std::string address = listen_address(m.host, m.requested_port);
  builder.AddListeningPort(address, grpc::InsecureServerCredentials(), &m.bound_port);
  builder.RegisterService(m.service.get());
  // The same request-size limit as HTTP's body limit; larger messages fail with
  // RESOURCE_EXHAUSTED before any handler runs.
  builder.SetMaxReceiveMessageSize(
      static_cast<int>(std::min<size_t>(m.server->options().max_body_bytes, static_cast<size_t>(INT_MAX))));
  builder.SetMaxSendMessageSize(INT_MAX);
  // Thread budget: every method is a callback handler that decodes, queues and returns, so
  // inference stays on the engine's threads. gRPC 1.51 runs the handlers on its own small set
  // of threads (callback, poller, timer and executor threads: 8 to 10 on a 2-core Linux machine
  // with 2000 calls in flight, asleep when idle). The quota caps the threads gRPC would start
  // for synchronous handlers at the front end's share of the budget, so a blocking method
  // added later cannot grow the process past it.
  grpc::ResourceQuota quota("ignis-grpc");
  quota.SetMaxThreads(std::max(2, m.threads));
  builder.SetResourceQuota(quota);
  try {
    m.grpc_server = builder.BuildAndStart();
  } catch (const std::exception& e) {
    return internal_error(str_cat("starting the gRPC server failed: ", e.what()));
  }
  if (!m.grpc_server || m.bound_port == 0)
    return invalid_argument(str_cat("cannot listen on ", address, " (address in use or not valid)"));
  return Status::ok();
}

int GrpcServer::port() const { return impl_->bound_port; }

void GrpcServer::shutdown(std::chrono::duration<double> deadline) {
  Impl& m = *impl_;
  if (m.shut_down || !m.grpc_server) return;
  m.shut_down = true;
  // Shutdown() returns only once every handler has called Finish; pending infers and
  // load/unload calls finish on the engine and control threads, which still run.
  m.grpc_server->Shutdown(std::chrono::system_clock::now() +
                          std::chrono::duration_cast<std::chrono::system_clock::duration>(deadline));
  m.grpc_server->Wait();
}

}  // namespace ignis::serve
