// SPDX-License-Identifier: Apache-2.0
#include "serve/log.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>
#include <string>

#include "serve/json_writer.h"

namespace ignis::serve {
namespace {

std::atomic<LogFormat> g_format{LogFormat::Text};
std::mutex g_mu;

const char* severity_name(LogSeverity s) {
  switch (s) {
    case LogSeverity::Info: return "info";
    case LogSeverity::Warning: return "warning";
    case LogSeverity::Error: return "error";
  }
  return "info";
}

std::string timestamp() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[96];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms));
  return buf;
}

}  // namespace

void set_log_format(LogFormat format) { g_format = format; }

void log_event(LogSeverity severity, std::string_view message) {
  std::string line;
  if (g_format == LogFormat::Json) {
    JsonWriter w(&line);
    w.begin_object().member("time", timestamp()).member("level", severity_name(severity)).member("msg", message);
    w.end_object();
  } else {
    line = timestamp() + " " + severity_name(severity) + " " + std::string(message);
  }
  line += '\n';
  std::lock_guard<std::mutex> lock(g_mu);
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace ignis::serve
