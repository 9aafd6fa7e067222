// SPDX-License-Identifier: Apache-2.0
#include "serve/metrics.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace ignis::serve {

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)), buckets_(new std::atomic<uint64_t>[bounds_.size() + 1]) {
  for (size_t i = 0; i <= bounds_.size(); ++i) buckets_[i].store(0);
}

void Histogram::observe(double v) {
  const size_t i = static_cast<size_t>(std::lower_bound(bounds_.begin(), bounds_.end(), v) - bounds_.begin());
  buckets_[i].fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(v, std::memory_order_relaxed);
}

std::vector<uint64_t> Histogram::counts() const {
  std::vector<uint64_t> c(bounds_.size() + 1);
  for (size_t i = 0; i < c.size(); ++i) c[i] = buckets_[i].load(std::memory_order_relaxed);
  return c;
}

const std::vector<double>& latency_buckets() {
  static const std::vector<double> b{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                     0.05,   0.1,     0.25,   0.5,   1,      2.5,   5,    10};
  return b;
}

namespace {

std::string escape_label(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

// `{a="x",b="y"}`, or "" for no labels.
std::string render_labels(const Labels& labels) {
  if (labels.empty()) return "";
  std::string s = "{";
  for (size_t i = 0; i < labels.size(); ++i) {
    if (i) s += ",";
    s += labels[i].first + "=\"" + escape_label(labels[i].second) + "\"";
  }
  return s + "}";
}

// The label set with one more label appended (for histogram `le`).
std::string with_label(const std::string& rendered, const std::string& extra) {
  if (rendered.empty()) return "{" + extra + "}";
  return rendered.substr(0, rendered.size() - 1) + "," + extra + "}";
}

std::string number(double v) {
  if (v == static_cast<double>(static_cast<int64_t>(v)) && std::abs(v) < 1e15) return std::to_string(static_cast<int64_t>(v));
  char buf[40];
  auto [p, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, p);
}

void process_metrics(std::string& out) {
  const double page = static_cast<double>(sysconf(_SC_PAGESIZE));
  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  long vm_pages = 0, rss_pages = 0;
  if (std::FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld %ld", &vm_pages, &rss_pages) != 2) vm_pages = rss_pages = 0;
    std::fclose(f);
  }
  double cpu = 0, start = 0;
  {
    std::ifstream stat("/proc/self/stat");
    std::string line;
    std::getline(stat, line);
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15,
    // starttime field 22 (1-based, counting the pid as 1).
    const size_t close = line.rfind(')');
    if (close != std::string::npos) {
      std::istringstream rest(line.substr(close + 2));
      std::vector<std::string> f;
      std::string tok;
      while (rest >> tok) f.push_back(tok);
      if (f.size() > 19) {
        cpu = (std::atof(f[11].c_str()) + std::atof(f[12].c_str())) / ticks;
        double boot = 0;
        std::ifstream st("/proc/stat");
        std::string key;
        while (st >> key)
          if (key == "btime") {
            st >> boot;
            break;
          }
        start = boot + std::atof(f[19].c_str()) / ticks;
      }
    }
  }
  std::error_code ec;
  int fds = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/self/fd", ec); !ec && it != std::filesystem::directory_iterator();
       it.increment(ec))
    ++fds;
  out += "# HELP process_resident_memory_bytes Resident memory size in bytes.\n# TYPE process_resident_memory_bytes gauge\n";
  out += "process_resident_memory_bytes " + number(static_cast<double>(rss_pages) * page) + "\n";
  out += "# HELP process_virtual_memory_bytes Virtual memory size in bytes.\n# TYPE process_virtual_memory_bytes gauge\n";
  out += "process_virtual_memory_bytes " + number(static_cast<double>(vm_pages) * page) + "\n";
  out += "# HELP process_cpu_seconds_total User and system CPU time in seconds.\n# TYPE process_cpu_seconds_total counter\n";
  out += "process_cpu_seconds_total " + number(cpu) + "\n";
  out += "# HELP process_start_time_seconds Start time of the process since the Unix epoch in seconds.\n";
  out += "# TYPE process_start_time_seconds gauge\nprocess_start_time_seconds " + number(start) + "\n";
  out += "# HELP process_open_fds Number of open file descriptors.\n# TYPE process_open_fds gauge\n";
  out += "process_open_fds " + std::to_string(fds) + "\n";
}

}  // namespace

MetricsRegistry::Family& MetricsRegistry::family(const std::string& name, Type type, const std::string& help) {
  auto [it, inserted] = families_.try_emplace(name);
  if (inserted) {
    it->second.type = type;
    it->second.help = help;
  }
  return it->second;
}

Counter* MetricsRegistry::counter(const std::string& name, const std::string& help, const Labels& labels) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& slot = family(name, Type::Counter, help).counters[render_labels(labels)];
  if (!slot) slot = std::make_unique<Counter>();
  return slot.get();
}

Gauge* MetricsRegistry::gauge(const std::string& name, const std::string& help, const Labels& labels) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& slot = family(name, Type::Gauge, help).gauges[render_labels(labels)];
  if (!slot) slot = std::make_unique<Gauge>();
  return slot.get();
}

Histogram* MetricsRegistry::histogram(const std::string& name, const std::string& help,
                                      const std::vector<double>& bounds, const Labels& labels) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& slot = family(name, Type::Histogram, help).histograms[render_labels(labels)];
  if (!slot) slot = std::make_unique<Histogram>(bounds);
  return slot.get();
}

std::string MetricsRegistry::render() const {
  std::string out;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [name, f] : families_) {
      const char* type = f.type == Type::Counter ? "counter" : f.type == Type::Gauge ? "gauge" : "histogram";
      out += "# HELP " + name + " " + f.help + "\n# TYPE " + name + " " + type + "\n";
      for (const auto& [labels, c] : f.counters) out += name + labels + " " + number(c->value()) + "\n";
      for (const auto& [labels, g] : f.gauges) out += name + labels + " " + number(g->value()) + "\n";
      for (const auto& [labels, h] : f.histograms) {
        const std::vector<uint64_t> counts = h->counts();
        uint64_t cum = 0;
        for (size_t i = 0; i < counts.size(); ++i) {
          cum += counts[i];
          const std::string le = i < h->bounds().size() ? number(h->bounds()[i]) : "+Inf";
          out += name + "_bucket" + with_label(labels, "le=\"" + le + "\"") + " " + std::to_string(cum) + "\n";
        }
        out += name + "_sum" + labels + " " + number(h->sum()) + "\n";
        out += name + "_count" + labels + " " + std::to_string(cum) + "\n";
      }
    }
  }
  process_metrics(out);
  return out;
}

}  // namespace ignis::serve
