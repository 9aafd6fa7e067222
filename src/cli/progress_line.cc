// SPDX-License-Identifier: Apache-2.0
#include "cli/progress_line.h"

#include <unistd.h>

#include <cstdio>
#include <optional>
#include <regex>
#include <utility>

namespace ignis::cli {

namespace {

// The first " K/N" with 0 <= K <= N, N > 0, in `line`.
std::optional<std::pair<long, long>> step_of(const std::string& line) {
  static const std::regex pair(R"((?:^| )(\d+)/(\d+)\b)");
  std::smatch m;
  if (!std::regex_search(line, m, pair)) return std::nullopt;
  const long k = std::stol(m[1].str()), n = std::stol(m[2].str());
  if (n <= 0 || k < 0 || k > n) return std::nullopt;
  return std::pair{k, n};
}

}  // namespace

ProgressLine::ProgressLine() : terminal_(isatty(fileno(stderr)) != 0) {}

std::string ProgressLine::in_place(const std::string& line) {
  constexpr long kWidth = 24;
  std::string bar;
  if (const auto step = step_of(line)) {
    const long filled = step->first * kWidth / step->second;
    bar = "[" + std::string(static_cast<size_t>(filled), '#') + std::string(static_cast<size_t>(kWidth - filled), '.') +
          "] ";
  }
  return "\r\033[K" + bar + line;
}

void ProgressLine::report(const std::string& line) {
  if (terminal_ && step_of(line)) {
    std::fputs(in_place(line).c_str(), stderr);
    std::fflush(stderr);
    open_ = true;
    return;
  }
  finish();
  std::fprintf(stderr, "%s\n", line.c_str());
}

void ProgressLine::finish() {
  if (!open_) return;
  std::fputc('\n', stderr);
  open_ = false;
}

}  // namespace ignis::cli
