// SPDX-License-Identifier: Apache-2.0
// `ignis bench`: session-creation time, latency percentiles, throughput, memory, and an
// optional per-op profile (Chrome trace JSON + the top ops by time with achieved GFLOP/s).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <numeric>

#include "cli/commands.h"
#include "core/strings.h"
#include "kernels/registry.h"

namespace ignis::cli {

namespace {

using Clock = std::chrono::steady_clock;

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  const double idx = p / 100.0 * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(idx);
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (idx - static_cast<double>(lo));
}

std::string json_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') o.push_back('\\');
    if (static_cast<unsigned char>(c) < 0x20) continue;
    o.push_back(c);
  }
  return o;
}

Status write_trace(const std::string& path, const std::vector<OpTiming>& timings) {
  std::ofstream out(path);
  if (!out) return not_found(str_cat("cannot write profile '", path, "'"));
  out << "{\"traceEvents\":[\n";
  double ts = 0;
  for (size_t i = 0; i < timings.size(); ++i) {
    const auto& t = timings[i];
    out << (i ? ",\n" : "") << "{\"name\":\"" << json_escape(t.node) << "\",\"cat\":\"" << json_escape(t.op_type)
        << "\",\"ph\":\"X\",\"ts\":" << ts << ",\"dur\":" << t.micros << ",\"pid\":1,\"tid\":1,\"args\":{\"op\":\""
        << json_escape(t.op_type) << "\",\"kernel\":\"" << json_escape(t.kernel) << "\",\"flops\":" << t.flops << "}}";
    ts += t.micros;
  }
  out << "\n]}\n";
  return out ? Status::ok() : internal_error(str_cat("write to '", path, "' failed"));
}

void print_top_ops(const std::vector<OpTiming>& timings, int profiled_runs) {
  struct Agg {
    double micros = 0;
    int64_t flops = 0;
    int count = 0;
  };
  std::map<std::string, Agg> by_op;
  double total = 0;
  for (const auto& t : timings) {
    auto& a = by_op[t.op_type + " [" + t.kernel + "]"];
    a.micros += t.micros;
    a.flops += t.flops;
    a.count++;
    total += t.micros;
  }
  std::vector<std::pair<std::string, Agg>> rows(by_op.begin(), by_op.end());
  std::sort(rows.begin(), rows.end(), [](auto& a, auto& b) { return a.second.micros > b.second.micros; });
  std::printf("\ntop ops by time (mean per run over %d profiled runs):\n", profiled_runs);
  std::printf("  %-40s %6s %10s %7s %9s\n", "op [kernel]", "nodes", "ms/run", "share", "GFLOP/s");
  for (size_t i = 0; i < rows.size() && i < 15; ++i) {
    const auto& [name, a] = rows[i];
    const double gflops = a.micros > 0 ? static_cast<double>(a.flops) / (a.micros * 1e3) : 0.0;
    std::printf("  %-40s %6d %10.3f %6.1f%% %9.2f\n", name.c_str(), a.count / profiled_runs,
                a.micros / 1e3 / profiled_runs, 100.0 * a.micros / total, gflops);
  }
}

}  // namespace

int run_bench(const BenchOptions& opts) {
  SessionOptions so;
  so.threads = opts.threads;
  so.pin_threads = opts.pin_threads;
  so.optimization = parse_level(opts.level);
  so.precision = parse_precision(opts.precision);
  apply_session_cli(so, opts.tuning, opts.inputs);
  // Inputs read from files have shapes known only once read: the session then plans when it
  // first sees them, so kernels choose for the shapes measured. Creation time counts that plan.
  so.plan_at_open = opts.inputs.files.empty() && opts.inputs.dir.empty();
  const auto t_open = Clock::now();
  auto session = open_model(opts.model, so);
  if (!session) return fail(session.error());
  double create_ms = std::chrono::duration<double, std::milli>(Clock::now() - t_open).count();
  auto inputs = make_inputs(*session, opts.inputs);
  if (!inputs) return fail(inputs.error());
  const auto t_plan = Clock::now();
  if (auto planned = session->arena_bytes(*inputs); !planned) return fail(planned.error());
  create_ms += std::chrono::duration<double, std::milli>(Clock::now() - t_plan).count();
  int64_t batch = 1;
  if (!inputs->empty() && inputs->front().second.rank() > 0) batch = inputs->front().second.dim(0);

  const auto t_warm = Clock::now();
  for (int i = 0; i < opts.warmup || std::chrono::duration<double>(Clock::now() - t_warm).count() < opts.warmup_seconds;
       ++i) {
    auto r = session->run(*inputs);
    if (!r) return fail(r.error());
  }
  std::vector<double> lat;
  const auto t_start = Clock::now();
  for (;;) {
    const auto t0 = Clock::now();
    auto r = session->run(*inputs);
    const auto t1 = Clock::now();
    if (!r) return fail(r.error());
    lat.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    if (opts.runs > 0 ? static_cast<int>(lat.size()) >= opts.runs
                      : std::chrono::duration<double>(t1 - t_start).count() >= opts.seconds && lat.size() >= 3)
      break;
  }
  const double mean = std::accumulate(lat.begin(), lat.end(), 0.0) / static_cast<double>(lat.size());
  const double p50 = percentile(lat, 50), p90 = percentile(lat, 90), p99 = percentile(lat, 99);
  const double throughput = static_cast<double>(batch) * 1000.0 / mean;
  auto arena = session->arena_bytes(*inputs);
  const int64_t arena_bytes = arena ? static_cast<int64_t>(*arena) : 0;
  const ModelInfo& info = session->model_info();

  std::vector<OpTiming> timings;
  int profiled_runs = 0;
  if (!opts.profile.empty()) {
    profiled_runs = std::max(1, std::min(10, static_cast<int>(lat.size())));
    for (int i = 0; i < profiled_runs; ++i) {
      auto r = session->run_profiled(*inputs, &timings);
      if (!r) return fail(r.error());
    }
  }
  const int64_t rss = peak_rss_bytes();

  if (opts.json) {
    std::printf(
        "{\"model\":\"%s\",\"level\":\"%s\",\"precision\":\"%s\",\"threads\":%d,\"pin_threads\":%s,\"batch\":%lld,\"runs\":%zu,\"session_create_ms\":%.3f,"
        "\"latency_ms\":{\"p50\":%.4f,\"p90\":%.4f,\"p99\":%.4f,\"mean\":%.4f,\"min\":%.4f},"
        "\"throughput_per_s\":%.2f,\"weight_bytes\":%lld,\"activation_arena_bytes\":%lld,\"peak_rss_bytes\":%lld}\n",
        json_escape(opts.model).c_str(), opts.level.c_str(), opts.precision.c_str(), opts.threads, opts.pin_threads ? "true" : "false",
        static_cast<long long>(batch), lat.size(), create_ms, p50, p90,
        p99, mean, *std::min_element(lat.begin(), lat.end()), throughput, static_cast<long long>(info.parameter_bytes),
        static_cast<long long>(arena_bytes), static_cast<long long>(rss));
  } else {
    std::printf("model            %s\n", opts.model.c_str());
    std::printf("optimization     %s\n", opts.level.c_str());
    std::printf("precision        %s\n", opts.precision.c_str());
    std::printf("threads          %d%s%s\n", opts.threads, opts.threads == 0 ? " (physical cores)" : "",
                opts.pin_threads ? ", workers pinned to cores" : "");
    std::printf("kernels          %s\n", kernels::kernel_selection_summary().c_str());
    std::printf("batch            %lld\n", static_cast<long long>(batch));
    std::printf("session create   %.3f ms\n", create_ms);
    std::printf("runs             %zu (after %d warm-up)\n", lat.size(), opts.warmup);
    std::printf("latency ms       p50 %.4f  p90 %.4f  p99 %.4f  mean %.4f  min %.4f\n", p50, p90, p99, mean,
                *std::min_element(lat.begin(), lat.end()));
    std::printf("throughput       %.2f samples/s\n", throughput);
    std::printf("memory           weights %.2f MiB, activation arena %.2f MiB, peak RSS %.2f MiB\n",
                static_cast<double>(info.parameter_bytes) / 1048576.0, static_cast<double>(arena_bytes) / 1048576.0,
                static_cast<double>(rss) / 1048576.0);
  }
  if (!opts.profile.empty()) {
    Status s = write_trace(opts.profile, timings);
    if (!s) return fail(s);
    if (!opts.json) {
      print_top_ops(timings, profiled_runs);
      std::printf("trace written to %s (open in chrome://tracing or ui.perfetto.dev)\n", opts.profile.c_str());
    }
  }
  return 0;
}

}  // namespace ignis::cli
