// SPDX-License-Identifier: Apache-2.0
#include "serve/http/kserve_routes.h"

#include <charconv>

#include "core/strings.h"
#include "serve/codec/kserve_http.h"
#include "serve/datatype.h"
#include "serve/json_writer.h"
#include "serve/protocol_info.h"

namespace ignis::serve {
namespace {

HttpResponse json_response(int status, std::string body) {
  HttpResponse r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

HttpResponse error_response(const ServeError& e) {
  HttpResponse r = json_response(http_status(e.kind), json_error_body(e.message));
  if (e.kind == ErrorKind::Overloaded) r.headers.emplace_back("Retry-After", "1");
  return r;
}

HttpResponse error_response(ErrorKind kind, const std::string& message) { return error_response({kind, message}); }

std::optional<std::string> percent_decode(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out.push_back(s[i]);
      continue;
    }
    if (i + 2 >= s.size()) return std::nullopt;
    int v = 0;
    auto [p, ec] = std::from_chars(s.data() + i + 1, s.data() + i + 3, v, 16);
    if (ec != std::errc() || p != s.data() + i + 3) return std::nullopt;
    out.push_back(static_cast<char>(v));
    i += 2;
  }
  return out;
}

std::vector<std::string> split_path(std::string_view path) {
  std::vector<std::string> parts;
  size_t i = 0;
  while (i < path.size()) {
    while (i < path.size() && path[i] == '/') ++i;
    const size_t j = path.find('/', i);
    const size_t end = j == std::string_view::npos ? path.size() : j;
    if (end > i) parts.emplace_back(path.substr(i, end - i));
    i = end;
  }
  return parts;
}

class Router {
 public:
  explicit Router(InferenceServer* s) : s_(s) {}

  void operator()(HttpRequest&& req, HttpResponder respond) {
    auto parts = split_path(req.path);
    for (auto& p : parts) {
      auto d = percent_decode(p);
      if (!d) return respond(error_response(ErrorKind::BadRequest, "malformed percent-encoding in the URL"));
      p = std::move(*d);
    }
    const bool get = req.method == "GET" || req.method == "HEAD";
    const bool post = req.method == "POST";
    const size_t n = parts.size();
    auto at = [&](size_t i, const char* s) { return i < n && parts[i] == s; };

    if (n == 1 && parts[0] == "metrics" && get) {
      HttpResponse r;
      r.content_type = "text/plain; version=0.0.4; charset=utf-8";
      r.body = s_->metrics().render();
      return respond(std::move(r));
    }
    if (!at(0, "v2")) return respond(not_found(req));
    if (n == 1 && get) return respond(json_response(200, server_metadata_json()));
    if (n == 3 && at(1, "health") && get) {
      if (parts[2] == "live") return respond(json_response(s_->live() ? 200 : 503, ""));
      if (parts[2] == "ready")
        return respond(s_->ready() ? json_response(200, "")
                                   : error_response(ErrorKind::Unavailable, s_->draining() ? "the server is shutting down"
                                                                                          : "the server is starting"));
    }
    if (at(1, "repository")) return repository(parts, post, std::move(req), std::move(respond));
    if (!at(1, "models")) return respond(not_found(req));
    if (n == 3 && parts[2] == "stats" && get) return respond(json_response(200, statistics_json(*s_, "", "")));
    if (n < 3) return respond(not_found(req));
    const std::string& model = parts[2];
    std::string version;
    size_t rest = 3;
    if (at(3, "versions")) {
      if (n < 5) return respond(not_found(req));
      version = parts[4];
      rest = 5;
    }
    if (rest == n && get) return respond(metadata(model, version));
    if (rest + 1 != n) return respond(not_found(req));
    const std::string& action = parts[rest];
    if (action == "infer" && post) return infer(model, version, std::move(req), std::move(respond));
    if (action == "ready" && get) return respond(model_ready(model, version));
    if (action == "config" && get) return respond(with_version(model, version, [](ModelVersion& v) {
      return json_response(200, model_config_json(v.config()));
    }));
    if (action == "stats" && get) {
      auto found = s_->repository().find(model, version);
      if (auto* e = std::get_if<ServeError>(&found); e && e->kind == ErrorKind::NotFound) return respond(error_response(*e));
      return respond(json_response(200, statistics_json(*s_, model, version)));
    }
    return respond(not_found(req));
  }

 private:
  static HttpResponse not_found(const HttpRequest& req) {
    return error_response(ErrorKind::NotFound, str_cat("no endpoint ", req.method, " ", req.path));
  }

  template <class F>
  HttpResponse with_version(const std::string& model, const std::string& version, F&& f) {
    auto found = s_->repository().find(model, version);
    if (auto* e = std::get_if<ServeError>(&found)) return error_response(*e);
    return f(*std::get<std::shared_ptr<ModelVersion>>(found));
  }

  HttpResponse metadata(const std::string& model, const std::string& version) {
    return with_version(model, version, [&](ModelVersion& v) {
      return json_response(200, model_metadata_json(v, s_->repository().ready_versions(model)));
    });
  }

  HttpResponse model_ready(const std::string& model, const std::string& version) {
    auto found = s_->repository().find(model, version);
    if (auto* e = std::get_if<ServeError>(&found)) return error_response(*e);
    if (s_->draining()) return error_response(ErrorKind::Unavailable, "the server is shutting down");
    return json_response(200, "");
  }

  void repository(const std::vector<std::string>& parts, bool post, HttpRequest&& req, HttpResponder respond) {
    const size_t n = parts.size();
    RepositoryRequest body;
    if (post && req.body) {
      if (Status st = decode_repository_request(*req.body, &body); !st)
        return respond(error_response(ErrorKind::BadRequest, st.message()));
    }
    if (n == 3 && parts[2] == "index" && post)
      return respond(json_response(200, repository_index_json(s_->repository().index(), body.ready_only)));
    if (n == 5 && parts[2] == "models" && post && (parts[4] == "load" || parts[4] == "unload")) {
      const bool load = parts[4] == "load";
      if (load && body.has_parameters)
        return respond(error_response(ErrorKind::Unsupported,
                                      "loading with parameters (a config or files override) is not supported; "
                                      "change the repository and load again"));
      std::string model = parts[3];
      // Loading and draining take long: they run on the control thread, never an I/O thread.
      s_->control([this, load, model, respond = std::move(respond)] {
        auto err = load ? s_->repository().load(model) : s_->repository().unload(model);
        respond(err ? error_response(*err) : json_response(200, ""));
      });
      return;
    }
    respond(not_found(req));
  }

  void infer(const std::string& model, const std::string& version, HttpRequest&& req, HttpResponder respond) {
    if (s_->draining()) return respond(error_response(ErrorKind::Unavailable, "the server is shutting down"));
    const std::string_view enc = req.header("content-encoding");
    if (!enc.empty() && enc != "identity")
      return respond(error_response(ErrorKind::Unsupported, str_cat("Content-Encoding '", enc, "' is not supported")));
    int64_t header_length = -1;
    const std::string_view hl = req.header("inference-header-content-length");
    if (!hl.empty()) {
      auto [p, ec] = std::from_chars(hl.data(), hl.data() + hl.size(), header_length);
      if (ec != std::errc() || p != hl.data() + hl.size() || header_length < 0)
        return respond(error_response(ErrorKind::BadRequest,
                                      str_cat("Inference-Header-Content-Length '", hl, "' is not a byte count")));
    }
    InferRequest r;
    Status st = decode_infer_request(std::move(req.body), header_length, s_->options().decode, &r);
    if (!st) return respond(error_response(st.code() == StatusCode::Unsupported ? ErrorKind::Unsupported
                                                                                : ErrorKind::BadRequest,
                                           st.message()));
    r.model = model;
    r.version = version;
    r.cancelled = req.client_gone;  // a request whose client closed its connection is not run
    s_->request_started();
    auto err = s_->infer(std::move(r), req.received, [this, respond](InferResult result) {
      HttpResponse resp;
      if (auto* e = std::get_if<ServeError>(&result)) {
        resp = error_response(*e);
      } else {
        auto out = std::make_shared<InferResponse>(std::get<InferResponse>(std::move(result)));
        resp.render = [out](HttpResponse& h) {
          int64_t json_len = -1;
          encode_infer_response(*out, &h.body, &json_len);
          if (json_len >= 0) {
            h.content_type = "application/octet-stream";
            h.headers.emplace_back("Inference-Header-Content-Length", std::to_string(json_len));
          }
        };
      }
      respond(std::move(resp));
      s_->request_finished();
    });
    if (err) {
      s_->request_finished();
      respond(error_response(*err));
    }
  }

  InferenceServer* s_;
};

}  // namespace

HttpHandler make_kserve_handler(InferenceServer* server) {
  auto router = std::make_shared<Router>(server);
  return [router](HttpRequest&& req, HttpResponder respond) { (*router)(std::move(req), std::move(respond)); };
}

}  // namespace ignis::serve
