// SPDX-License-Identifier: Apache-2.0
// One Connection per socket, on its own strand: read a request (headers first, to answer
// `Expect: 100-continue`), hand it to the handler, write the response when the handler
// answers, then read the next one. Only one request per connection is in flight, so HTTP
// pipelining is served in order.
#include "serve/http/http_server.h"

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <sys/socket.h>

#include <array>
#include <cerrno>
#include <atomic>
#include <list>
#include <mutex>
#include <optional>
#include <thread>

#include "core/strings.h"
#include "serve/json_writer.h"
#include "serve/log.h"

namespace ignis::serve {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

std::string_view HttpRequest::header(std::string_view name) const {
  for (const auto& [k, v] : headers)
    if (k == name) return v;
  return {};
}

class ConnectionBase {
 public:
  virtual ~ConnectionBase() = default;
  virtual void close_if_idle() = 0;
};

namespace {

std::string lowercase(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

struct HttpServer::Impl {
  HttpServerOptions options;
  HttpHandler handler;
  std::atomic<int> connections{0};
  Gauge* connections_gauge = nullptr;
  MetricsRegistry* metrics = nullptr;
  std::array<std::atomic<Counter*>, 600> responses{};
  std::atomic<bool> stopped{false};
  // Every open connection, so a shutdown can close the idle ones.
  std::mutex live_mu;
  std::list<std::weak_ptr<class ConnectionBase>> live;
  // Declared after what a Connection's destructor touches: destroying the io_context destroys
  // the handlers still queued (connections a shutdown left open), and with them connections.
  asio::io_context ioc;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work;
  tcp::acceptor acceptor{ioc};
  std::vector<std::thread> threads;

  Counter* response_counter(int status) {
    if (status < 100 || status >= 600) status = 500;
    Counter* c = responses[status].load(std::memory_order_acquire);
    if (!c) {
      c = metrics->counter("ignis_http_responses_total", "HTTP responses sent, by status code.",
                           {{"code", std::to_string(status)}});
      responses[status].store(c, std::memory_order_release);
    }
    return c;
  }

  void accept();
};

namespace {

class Connection : public ConnectionBase, public std::enable_shared_from_this<Connection> {
 public:
  Connection(tcp::socket socket, HttpServer::Impl* server) : stream_(std::move(socket)), server_(server) {
    server_->connections.fetch_add(1);
    server_->connections_gauge->add(1);
    beast::error_code ec;
    stream_.socket().set_option(tcp::no_delay(true), ec);
    // Without room reserved Beast reads in 512-byte pieces (docs/serve_http_library.md: 1.4-2x
    // fewer requests/s at concurrency 1 for 3 KB requests).
    buffer_.reserve(16 * 1024);
  }
  ~Connection() override {
    {
      std::lock_guard<std::mutex> lock(server_->live_mu);
      if (registered_) server_->live.erase(*registered_);
    }
    server_->connections.fetch_sub(1);
    server_->connections_gauge->add(-1);
  }

  void start() {
    {
      std::lock_guard<std::mutex> lock(server_->live_mu);
      server_->live.push_back(weak_from_this());
      registered_ = std::prev(server_->live.end());
    }
    asio::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->read_header(); });
  }

  void close_if_idle() override {
    asio::post(stream_.get_executor(), [self = shared_from_this()] {
      if (!self->busy_) self->close();
    });
  }

 private:
  void read_header() {
    if (server_->stopped) return close();
    parser_.emplace();
    parser_->body_limit(server_->options.max_body_bytes);
    parser_->header_limit(static_cast<uint32_t>(server_->options.max_header_bytes));
    stream_.expires_after(std::chrono::milliseconds(static_cast<int64_t>(server_->options.read_timeout_s * 1000)));
    http::async_read_header(stream_, buffer_, *parser_,
                            [self = shared_from_this()](beast::error_code ec, size_t) { self->on_header(ec); });
  }

  void on_header(beast::error_code ec) {
    if (ec) return on_read_error(ec);
    busy_ = true;
    auto& req = parser_->get();
    if (beast::iequals(req[http::field::expect], "100-continue")) {
      if (parser_->content_length() && *parser_->content_length() > server_->options.max_body_bytes)
        return reject(413, str_cat("the request body of ", *parser_->content_length(), " bytes is over the limit of ",
                                   server_->options.max_body_bytes, " bytes"));
      continue_.emplace(http::status::continue_, req.version());
      http::async_write(stream_, *continue_, [self = shared_from_this()](beast::error_code ec2, size_t) {
        if (ec2) return self->close();
        self->read_body();
      });
      return;
    }
    read_body();
  }

  void read_body() {
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](beast::error_code ec, size_t) { self->on_read(ec); });
  }

  void on_read_error(beast::error_code ec) {
    if (ec == http::error::end_of_stream || ec == beast::error::timeout || ec == asio::error::operation_aborted ||
        ec == asio::error::connection_reset || ec == asio::error::eof)
      return close();
    if (ec == http::error::body_limit)
      return reject(413, str_cat("the request body is over the limit of ", server_->options.max_body_bytes, " bytes"));
    if (ec == http::error::header_limit)
      return reject(431, str_cat("the request headers are over the limit of ", server_->options.max_header_bytes,
                                 " bytes"));
    if (ec == http::error::partial_message) return close();
    return reject(400, str_cat("malformed HTTP request: ", ec.message()));
  }

  // Answers an unreadable request and closes the connection.
  void reject(int status, const std::string& message) {
    HttpResponse r;
    r.status = status;
    r.body = json_error_body(message);
    keep_alive_ = false;
    linger_ = true;
    write(std::move(r));
  }

  // After answering a request whose body was not read: stop sending, then read and drop what
  // the client still sends (until it closes, for 2 s at most), so that the close does not reset
  // the connection before the client has read the answer (RFC 9112 section 9.6).
  void linger() {
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
    if (ec) return close();
    stream_.expires_after(std::chrono::milliseconds(
        static_cast<int64_t>(std::min(2.0, server_->options.read_timeout_s) * 1000)));
    discard_.resize(64 * 1024);
    discard_some();
  }

  void discard_some() {
    stream_.async_read_some(asio::buffer(discard_), [self = shared_from_this()](beast::error_code ec, size_t) {
      if (ec) return self->close();  // the client closed, the time is up, or the server stops
      self->discard_some();
    });
  }

  void on_read(beast::error_code ec) {
    if (ec) return on_read_error(ec);
    stream_.expires_never();
    auto& msg = parser_->get();
    keep_alive_ = msg.keep_alive();
    HttpRequest req;
    req.method = std::string(msg.method_string());
    const std::string_view target(msg.target().data(), msg.target().size());
    const size_t q = target.find('?');
    req.path = std::string(target.substr(0, q));
    if (q != std::string_view::npos) req.query = std::string(target.substr(q + 1));
    for (const auto& f : msg) req.headers.emplace_back(lowercase(std::string_view(f.name_string().data(), f.name_string().size())),
                                                        std::string(f.value()));
    req.body = std::make_shared<std::string>(std::move(msg.body()));
    req.received = std::chrono::steady_clock::now();
    version_ = msg.version();
    auto self = shared_from_this();
    std::shared_ptr<std::atomic<bool>> answered = std::make_shared<std::atomic<bool>>(false);
    auto gone = std::make_shared<std::atomic<bool>>(false);
    req.client_gone = [gone] { return gone->load(std::memory_order_relaxed); };
    server_->handler(std::move(req), [self, answered](HttpResponse&& r) {
      if (answered->exchange(true)) return;
      // Inline when the answer comes on the connection's own strand (a run on the I/O thread).
      asio::dispatch(self->stream_.get_executor(), [self, r = std::move(r)]() mutable { self->write(std::move(r)); });
    });
    if (!answered->load()) watch_client(gone, answered);
  }

  // While a request waits for its answer the client sends nothing more (one request in flight
  // per connection), so the socket turning readable means it closed or reset the connection,
  // or pipelined its next request. A peek tells which, consuming nothing; a closed client's
  // request is then marked gone, so a queue can drop it instead of running it for nobody.
  void watch_client(std::shared_ptr<std::atomic<bool>> gone, std::shared_ptr<std::atomic<bool>> answered) {
    if (buffer_.size() > 0) return;  // the next request is already read: nothing to learn
    stream_.socket().async_wait(tcp::socket::wait_read, [self = shared_from_this(), gone,
                                                         answered](beast::error_code ec) {
      if (ec || answered->load()) return;
      char c;
      const ssize_t n = ::recv(self->stream_.socket().native_handle(), &c, 1, MSG_PEEK | MSG_DONTWAIT);
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) gone->store(true);
    });
  }

  void write(HttpResponse&& r) {
    if (r.render) r.render(r);
    server_->response_counter(r.status)->add();
    res_.emplace(static_cast<http::status>(r.status), version_ ? version_ : 11);
    res_->set(http::field::server, "ignis");
    if (!r.body.empty() || r.status != 200) res_->set(http::field::content_type, r.content_type);
    for (auto& [k, v] : r.headers) res_->set(k, v);
    if (server_->stopped) keep_alive_ = false;
    res_->keep_alive(keep_alive_);
    res_->body() = std::move(r.body);
    res_->prepare_payload();
    stream_.expires_after(std::chrono::milliseconds(static_cast<int64_t>(server_->options.read_timeout_s * 1000)));
    http::async_write(stream_, *res_, [self = shared_from_this()](beast::error_code ec, size_t) {
      self->busy_ = false;
      if (!ec && self->linger_) return self->linger();
      if (ec || !self->keep_alive_) return self->close();
      self->res_.reset();
      self->read_header();
    });
  }

  void close() {
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
    stream_.socket().close(ec);
  }

  beast::tcp_stream stream_;
  HttpServer::Impl* server_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::optional<http::response<http::empty_body>> continue_;
  std::optional<http::response<http::string_body>> res_;
  unsigned version_ = 11;
  bool keep_alive_ = true;
  bool linger_ = false;  // the request was not read to its end: linger before closing
  std::string discard_;
  bool busy_ = false;  // between a request's headers and the end of its response's write
  std::optional<std::list<std::weak_ptr<ConnectionBase>>::iterator> registered_;
};

}  // namespace

void HttpServer::Impl::accept() {
  acceptor.async_accept(asio::make_strand(ioc), [this](beast::error_code ec, tcp::socket socket) {
    if (ec) {
      if (ec == asio::error::operation_aborted || !acceptor.is_open()) return;
      log_warning(str_cat("http: accept failed: ", ec.message()));
    } else if (connections.load() >= options.max_connections) {
      // Over the limit: refuse at once rather than queue a connection nobody will serve.
      beast::error_code ignored;
      const std::string body = json_error_body("too many connections; retry later");
      const std::string busy = str_cat(
          "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nConnection: close\r\n"
          "Content-Length: ", body.size(), "\r\n\r\n", body);
      asio::write(socket, asio::buffer(busy), ignored);
      socket.close(ignored);
    } else {
      std::make_shared<Connection>(std::move(socket), this)->start();
    }
    accept();
  });
}

HttpServer::HttpServer(HttpServerOptions options, HttpHandler handler, MetricsRegistry* metrics)
    : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  impl_->handler = std::move(handler);
  impl_->metrics = metrics;
  impl_->connections_gauge = metrics->gauge("ignis_http_connections", "Open HTTP connections.");
}

HttpServer::~HttpServer() { stop(); }

Status HttpServer::start() {
  beast::error_code ec;
  auto address = asio::ip::make_address(impl_->options.host, ec);
  if (ec) return invalid_argument(str_cat("--host '", impl_->options.host, "' is not an IP address: ", ec.message()));
  const tcp::endpoint ep(address, static_cast<uint16_t>(impl_->options.port));
  auto& a = impl_->acceptor;
  a.open(ep.protocol(), ec);
  if (!ec) a.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) a.bind(ep, ec);
  if (!ec) a.listen(asio::socket_base::max_listen_connections, ec);
  if (ec)
    return invalid_argument(str_cat("cannot listen on ", impl_->options.host, ":", impl_->options.port, ": ",
                                    ec.message()));
  impl_->work.emplace(impl_->ioc.get_executor());
  impl_->accept();
  for (int i = 0; i < std::max(1, impl_->options.io_threads); ++i)
    impl_->threads.emplace_back([this] { impl_->ioc.run(); });
  return Status::ok();
}

int HttpServer::port() const {
  beast::error_code ec;
  auto ep = impl_->acceptor.local_endpoint(ec);
  return ec ? -1 : ep.port();
}

void HttpServer::stop_accepting() {
  asio::post(impl_->ioc, [this] {
    beast::error_code ec;
    impl_->acceptor.close(ec);
  });
}

void HttpServer::shutdown(std::chrono::duration<double> timeout) {
  if (impl_->threads.empty()) return;
  impl_->stopped = true;
  stop_accepting();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(timeout);
  while (impl_->connections.load() > 0 && std::chrono::steady_clock::now() < deadline) {
    std::vector<std::shared_ptr<ConnectionBase>> open;
    {
      std::lock_guard<std::mutex> lock(impl_->live_mu);
      for (auto& w : impl_->live)
        if (auto c = w.lock()) open.push_back(std::move(c));
    }
    for (auto& c : open) c->close_if_idle();
    open.clear();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  stop();
}

void HttpServer::stop() {
  if (impl_->threads.empty()) return;
  impl_->stopped = true;
  stop_accepting();
  impl_->work.reset();
  impl_->ioc.stop();
  for (auto& t : impl_->threads) t.join();
  impl_->threads.clear();
}

}  // namespace ignis::serve
