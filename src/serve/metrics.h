// SPDX-License-Identifier: Apache-2.0
// Prometheus metrics: counters, gauges and histograms with labels, rendered in the text
// exposition format. Series are created once (at model load) and updated with atomics on
// the request path; pointers to them stay valid for the registry's lifetime.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace ignis::serve {

using Labels = std::vector<std::pair<std::string, std::string>>;

class Counter {
 public:
  void add(double v = 1) { v_.fetch_add(v, std::memory_order_relaxed); }
  double value() const { return v_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> v_{0};
};

class Gauge {
 public:
  void set(double v) { v_.store(v, std::memory_order_relaxed); }
  void add(double v) { v_.fetch_add(v, std::memory_order_relaxed); }
  double value() const { return v_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> v_{0};
};

class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds);
  void observe(double v);
  const std::vector<double>& bounds() const { return bounds_; }
  // Per-bucket (not cumulative) counts, the last one for +Inf; and the sum.
  std::vector<uint64_t> counts() const;
  double sum() const { return sum_.load(std::memory_order_relaxed); }

 private:
  std::vector<double> bounds_;
  std::unique_ptr<std::atomic<uint64_t>[]> buckets_;
  std::atomic<double> sum_{0};
};

// Bucket bounds of the duration histograms, in seconds: 100 us to 10 s.
const std::vector<double>& latency_buckets();

class MetricsRegistry {
 public:
  Counter* counter(const std::string& name, const std::string& help, const Labels& labels = {});
  Gauge* gauge(const std::string& name, const std::string& help, const Labels& labels = {});
  Histogram* histogram(const std::string& name, const std::string& help, const std::vector<double>& bounds,
                       const Labels& labels = {});

  // Every family, then the process's RSS, virtual memory, CPU time, start time and open files.
  std::string render() const;

 private:
  enum class Type { Counter, Gauge, Histogram };
  struct Family {
    Type type;
    std::string help;
    std::map<std::string, std::unique_ptr<Counter>> counters;  // by rendered label set
    std::map<std::string, std::unique_ptr<Gauge>> gauges;
    std::map<std::string, std::unique_ptr<Histogram>> histograms;
  };
  Family& family(const std::string& name, Type type, const std::string& help);

  mutable std::mutex mu_;
  std::map<std::string, Family> families_;
};

}  // namespace ignis::serve
