// SPDX-License-Identifier: Apache-2.0
// Closed-loop gRPC load in C++, so that the client's own cost does not hide the server's: C
// threads, each on its own channel, send one serialized ModelInferRequest back to back for S
// seconds and time every call. Prints one JSON line: throughput, p50_ms, p99_ms, errors.
//
//   ignis_grpc_load HOST:PORT REQUEST.bin CONCURRENCY SECONDS
//
// REQUEST.bin is an inference.ModelInferRequest in protobuf wire format (bench/serve/run.py
// writes it with tritonclient's protobuf classes, which share the wire format).
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "grpc_service.grpc.pb.h"

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s HOST:PORT REQUEST.bin CONCURRENCY SECONDS\n", argv[0]);
    return 2;
  }
  const std::string url = argv[1];
  std::ifstream f(argv[2], std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  inference::ModelInferRequest request;
  if (!f || !request.ParseFromString(ss.str())) {
    std::fprintf(stderr, "cannot read a ModelInferRequest from '%s'\n", argv[2]);
    return 2;
  }
  const int concurrency = std::max(1, std::atoi(argv[3]));
  const double seconds = std::atof(argv[4]);

  using Clock = std::chrono::steady_clock;
  std::mutex mu;
  std::vector<double> latencies;
  std::atomic<int64_t> errors{0};
  std::string first_error;
  const auto start = Clock::now() + std::chrono::milliseconds(500);
  const auto end = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  std::vector<std::thread> threads;
  for (int i = 0; i < concurrency; ++i) {
    threads.emplace_back([&, i] {
      grpc::ChannelArguments args;
      args.SetInt("ignis.bench.channel", i);  // a distinct argument keeps channels from being shared
      args.SetMaxReceiveMessageSize(-1);
      auto channel = grpc::CreateCustomChannel(url, grpc::InsecureChannelCredentials(), args);
      auto stub = inference::GRPCInferenceService::NewStub(channel);
      inference::ModelInferResponse response;
      {
        grpc::ClientContext warm;
        (void)stub->ModelInfer(&warm, request, &response);
      }
      std::vector<double> mine;
      std::this_thread::sleep_until(start);
      while (Clock::now() < end) {
        grpc::ClientContext ctx;
        const auto t0 = Clock::now();
        grpc::Status st = stub->ModelInfer(&ctx, request, &response);
        const auto t1 = Clock::now();
        if (st.ok()) {
          mine.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
        } else if (errors.fetch_add(1) == 0) {
          std::lock_guard<std::mutex> lock(mu);
          first_error = st.error_message();
        }
      }
      std::lock_guard<std::mutex> lock(mu);
      latencies.insert(latencies.end(), mine.begin(), mine.end());
    });
  }
  for (auto& t : threads) t.join();
  std::sort(latencies.begin(), latencies.end());
  const size_t n = latencies.size();
  auto pick = [&](double q) { return n ? latencies[std::min(n - 1, static_cast<size_t>(q * n))] : 0.0; };
  if (!first_error.empty()) std::fprintf(stderr, "first error: %s\n", first_error.c_str());
  std::printf("{\"throughput\": %.1f, \"p50_ms\": %.4f, \"p99_ms\": %.4f, \"errors\": %lld}\n", n / seconds, pick(0.5),
              pick(0.99), static_cast<long long>(errors.load()));
  return 0;
}
