// SPDX-License-Identifier: Apache-2.0
// HTTP library candidate for `ignis serve`: Boost.Beast asynchronous server. One io_context run
// by N threads, one session object per connection (on its own strand), keep-alive read/write loop.
// Boost 1.74 asio/awaitable.hpp uses std::exchange without including <utility>; with
// GCC 12 in C++20 mode it fails to compile unless <utility> comes first.
#include <utility>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;

namespace {

constexpr std::string_view kInferReply =
    R"({"model_name":"m","model_version":"1","outputs":[{"name":"y","datatype":"FP32","shape":[1,10],)"
    R"("data":[0.1,0.0,0.0,0.7,0.0,0.0,0.2,0.0,0.0,0.0]}]})";

class Session : public std::enable_shared_from_this<Session> {
 public:
  explicit Session(tcp::socket socket) : stream_(std::move(socket)) {
    // Beast reads max(512, free capacity) bytes at a time and hands body bytes to the body as
    // they arrive, so an unreserved buffer stays at 512 bytes: 7 reads (and 7 timer re-arms)
    // for a 3.2 KB request. Reserving up front makes it one read.
    buffer_.reserve(64 * 1024);
  }

  void Start() {
    net::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->Read(); });
  }

 private:
  void Read() {
    parser_.emplace();
    parser_->body_limit(64u << 20);  // default request limit is 1 MiB, too small for tensors
    stream_.expires_after(std::chrono::seconds(60));
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](beast::error_code ec, std::size_t) {
                       self->OnRead(ec);
                     });
  }

  void OnRead(beast::error_code ec) {
    if (ec) {
      Close();
      return;
    }
    const auto& req = parser_->get();
    response_ = {};
    response_.version(req.version());
    response_.keep_alive(req.keep_alive());
    if (req.method() == http::verb::post && req.target() == "/v2/models/m/infer") {
      if (req.body().empty()) {
        response_.result(http::status::bad_request);
      } else {
        response_.result(http::status::ok);
        response_.set(http::field::content_type, "application/json");
        response_.body().assign(kInferReply.data(), kInferReply.size());
      }
    } else if (req.method() == http::verb::get && req.target() == "/v2/health/ready") {
      response_.result(http::status::ok);
    } else {
      response_.result(http::status::not_found);
    }
    response_.prepare_payload();
    http::async_write(stream_, response_,
                      [self = shared_from_this()](beast::error_code wec, std::size_t) {
                        self->OnWrite(wec);
                      });
  }

  void OnWrite(beast::error_code ec) {
    if (ec || !response_.keep_alive()) {
      Close();
      return;
    }
    Read();
  }

  void Close() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;  // reused across requests of the connection
  std::optional<http::request_parser<http::string_body>> parser_;
  http::response<http::string_body> response_;
};

class Listener : public std::enable_shared_from_this<Listener> {
 public:
  Listener(net::io_context& ioc, const tcp::endpoint& ep) : ioc_(ioc), acceptor_(ioc) {
    acceptor_.open(ep.protocol());
    acceptor_.set_option(net::socket_base::reuse_address(true));
    acceptor_.bind(ep);
    acceptor_.listen(1024);
  }

  void Accept() {
    acceptor_.async_accept(net::make_strand(ioc_),
                           [self = shared_from_this()](beast::error_code ec, tcp::socket s) {
                             if (!ec) {
                               s.set_option(tcp::no_delay(true), ec);
                               std::make_shared<Session>(std::move(s))->Start();
                             }
                             self->Accept();
                           });
  }

 private:
  net::io_context& ioc_;
  tcp::acceptor acceptor_;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s PORT THREADS\n", argv[0]);
    return 2;
  }
  const auto port = static_cast<unsigned short>(std::atoi(argv[1]));
  const int threads = std::max(1, std::atoi(argv[2]));
  net::io_context ioc(threads);
  std::make_shared<Listener>(ioc, tcp::endpoint(net::ip::make_address("127.0.0.1"), port))
      ->Accept();
  std::vector<std::thread> pool;
  for (int i = 1; i < threads; ++i) pool.emplace_back([&ioc] { ioc.run(); });
  ioc.run();
  for (auto& t : pool) t.join();
  return 0;
}
