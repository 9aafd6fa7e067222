// SPDX-License-Identifier: Apache-2.0
// gRPC load in C++, so that the client's own cost does not hide the server's. Prints one JSON
// line: throughput, p50_ms, p99_ms, errors (and, with --rate, offered_rate and sent).
//
//   ignis_grpc_load HOST:PORT REQUESTS CONCURRENCY SECONDS [--rate R] [--seed N]
//
// REQUESTS is one inference.ModelInferRequest in protobuf wire format, or a folder of them
// (every file in it; bench/serve/*.py write them with tritonclient's protobuf classes, which
// share the wire format). Each call picks one at random from a generator seeded with --seed.
//
// Closed loop (default): CONCURRENCY threads, each on its own channel, send back to back for
// SECONDS and time every call.
// Open loop (--rate R): arrivals follow a Poisson process of R requests/s (exponential gaps
// from the seeded generator), spread over CONCURRENCY channels. Each call is issued at its
// scheduled time whether or not earlier ones have been answered, and its latency counts from
// that scheduled time, so a server (or client) falling behind shows in the latency instead of
// slowing the arrivals (no coordinated omission).
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "grpc_service.grpc.pb.h"

namespace {

using Clock = std::chrono::steady_clock;
using Stub = inference::GRPCInferenceService::Stub;

struct Options {
  std::string url;
  std::string requests;
  int concurrency = 1;
  double seconds = 0;
  double rate = 0;  // requests/s; 0: closed loop
  uint64_t seed = 0;
};

// The answers of one run, shared by the threads that time calls.
struct Tally {
  std::mutex mu;
  std::vector<double> latencies_ms;
  int64_t errors = 0;
  std::string first_error;

  void add(const grpc::Status& st, double ms) {
    std::lock_guard<std::mutex> lock(mu);
    if (st.ok()) {
      latencies_ms.push_back(ms);
    } else if (errors++ == 0) {
      first_error = st.error_message();
    }
  }
};

std::optional<Options> parse_options(int argc, char** argv) {
  Options o;
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--rate" && i + 1 < argc) {
      o.rate = std::atof(argv[++i]);
    } else if (a == "--seed" && i + 1 < argc) {
      o.seed = std::strtoull(argv[++i], nullptr, 10);
    } else {
      positional.push_back(a);
    }
  }
  if (positional.size() != 4) return std::nullopt;
  o.url = positional[0];
  o.requests = positional[1];
  o.concurrency = std::max(1, std::atoi(positional[2].c_str()));
  o.seconds = std::atof(positional[3].c_str());
  return o;
}

bool read_request(const std::filesystem::path& path, inference::ModelInferRequest* request) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return f && request->ParseFromString(ss.str());
}

// One request, or every file of a folder in name order (so that a seed picks the same ones).
std::vector<inference::ModelInferRequest> read_requests(const std::string& where) {
  std::vector<std::filesystem::path> paths;
  if (std::filesystem::is_directory(where)) {
    for (const auto& e : std::filesystem::directory_iterator(where))
      if (e.is_regular_file()) paths.push_back(e.path());
    std::sort(paths.begin(), paths.end());
  } else {
    paths.push_back(where);
  }
  std::vector<inference::ModelInferRequest> requests(paths.size());
  for (size_t i = 0; i < paths.size(); ++i) {
    if (!read_request(paths[i], &requests[i])) {
      std::fprintf(stderr, "cannot read a ModelInferRequest from '%s'\n", paths[i].c_str());
      return {};
    }
  }
  return requests;
}

std::unique_ptr<Stub> connect(const std::string& url, int index) {
  grpc::ChannelArguments args;
  args.SetInt("ignis.bench.channel", index);  // a distinct argument keeps channels from being shared
  args.SetMaxReceiveMessageSize(-1);
  return inference::GRPCInferenceService::NewStub(
      grpc::CreateCustomChannel(url, grpc::InsecureChannelCredentials(), args));
}

// One call before the clock starts, so that connecting is not timed.
void warm_up(Stub& stub, const inference::ModelInferRequest& request) {
  grpc::ClientContext ctx;
  inference::ModelInferResponse response;
  (void)stub.ModelInfer(&ctx, request, &response);
}

double millis(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

Clock::duration to_duration(double seconds) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

// Returns the seconds over which the answers came (the measured window).
double run_closed_loop(const Options& o, const std::vector<inference::ModelInferRequest>& requests, Tally* tally) {
  const auto start = Clock::now() + std::chrono::milliseconds(500);
  const auto end = start + to_duration(o.seconds);
  std::vector<std::thread> threads;
  for (int i = 0; i < o.concurrency; ++i) {
    threads.emplace_back([&, i] {
      auto stub = connect(o.url, i);
      warm_up(*stub, requests[0]);
      std::mt19937_64 rng(o.seed * 1000003 + i);
      std::uniform_int_distribution<size_t> pick(0, requests.size() - 1);
      inference::ModelInferResponse response;
      std::this_thread::sleep_until(start);
      while (Clock::now() < end) {
        grpc::ClientContext ctx;
        const auto t0 = Clock::now();
        const grpc::Status st = stub->ModelInfer(&ctx, requests[pick(rng)], &response);
        tally->add(st, millis(Clock::now() - t0));
      }
    });
  }
  for (auto& t : threads) t.join();
  return o.seconds;
}

// A call in flight: gRPC's callback API owns it until the callback runs.
struct Call {
  grpc::ClientContext ctx;
  inference::ModelInferResponse response;
  Clock::time_point scheduled;
};

double run_open_loop(const Options& o, const std::vector<inference::ModelInferRequest>& requests, Tally* tally,
                     int64_t* sent) {
  std::vector<std::unique_ptr<Stub>> stubs;
  for (int i = 0; i < o.concurrency; ++i) {
    stubs.push_back(connect(o.url, i));
    warm_up(*stubs.back(), requests[0]);
  }
  std::mt19937_64 rng(o.seed);
  std::exponential_distribution<double> gap(o.rate);
  std::uniform_int_distribution<size_t> pick(0, requests.size() - 1);
  std::mutex mu;
  std::condition_variable all_done;
  int64_t outstanding = 0;
  Clock::time_point last_answer;
  // Calls still unanswered this long after the schedule ends fail, so the run always ends.
  const auto drain = to_duration(std::max(10.0, o.seconds));
  const auto start = Clock::now() + std::chrono::milliseconds(100);
  const auto end = start + to_duration(o.seconds);
  const auto deadline = std::chrono::system_clock::now() + (end + drain - Clock::now());  // gRPC takes system time
  Clock::time_point next = start + to_duration(gap(rng));
  for (int64_t k = 0; next < end; ++k, next += to_duration(gap(rng))) {
    std::this_thread::sleep_until(next);
    auto* call = new Call;
    call->scheduled = next;
    call->ctx.set_deadline(deadline);
    {
      std::lock_guard<std::mutex> lock(mu);
      ++outstanding;
    }
    stubs[k % stubs.size()]->async()->ModelInfer(
        &call->ctx, &requests[pick(rng)], &call->response, [&, call](grpc::Status st) {
          const auto now = Clock::now();
          tally->add(st, millis(now - call->scheduled));
          delete call;
          std::lock_guard<std::mutex> lock(mu);
          last_answer = std::max(last_answer, now);
          if (--outstanding == 0) all_done.notify_all();
        });
    ++*sent;
  }
  std::unique_lock<std::mutex> lock(mu);
  all_done.wait(lock, [&] { return outstanding == 0; });
  return std::max(o.seconds, std::chrono::duration<double>(last_answer - start).count());
}

}  // namespace

int main(int argc, char** argv) {
  const std::optional<Options> options = parse_options(argc, argv);
  if (!options) {
    std::fprintf(stderr, "usage: %s HOST:PORT REQUESTS CONCURRENCY SECONDS [--rate R] [--seed N]\n", argv[0]);
    return 2;
  }
  const Options& o = *options;
  const std::vector<inference::ModelInferRequest> requests = read_requests(o.requests);
  if (requests.empty()) {
    std::fprintf(stderr, "no requests in '%s'\n", o.requests.c_str());
    return 2;
  }
  Tally tally;
  int64_t sent = 0;
  const double window = o.rate > 0 ? run_open_loop(o, requests, &tally, &sent) : run_closed_loop(o, requests, &tally);
  std::vector<double>& lat = tally.latencies_ms;
  std::sort(lat.begin(), lat.end());
  const size_t n = lat.size();
  auto pick = [&](double q) { return n ? lat[std::min(n - 1, static_cast<size_t>(q * n))] : 0.0; };
  if (!tally.first_error.empty()) std::fprintf(stderr, "first error: %s\n", tally.first_error.c_str());
  std::printf("{\"throughput\": %.1f, \"p50_ms\": %.4f, \"p99_ms\": %.4f, \"errors\": %lld", n / window, pick(0.5),
              pick(0.99), static_cast<long long>(tally.errors));
  if (o.rate > 0) std::printf(", \"offered_rate\": %.1f, \"sent\": %lld", sent / o.seconds, static_cast<long long>(sent));
  std::printf("}\n");
  return 0;
}
