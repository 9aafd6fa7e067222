// SPDX-License-Identifier: Apache-2.0
// Progress of a long command on stderr. The library reports one line per step ("calibration
// sample 12/500 'x.npy': 98 tensors in 9 ms"); on a terminal those steps become one line
// redrawn in place behind a bar, elsewhere (a log, a pipe) every line is kept as it is.
#pragma once

#include <string>

namespace ignis::cli {

class ProgressLine {
 public:
  ProgressLine();  // draws in place when stderr is a terminal
  explicit ProgressLine(bool terminal) : terminal_(terminal) {}
  ~ProgressLine() { finish(); }
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // One reported line. A step line holds " K/N" (the first such pair): on a terminal it
  // replaces the line drawn before it; any other line is printed below.
  void report(const std::string& line);
  // Ends a line drawn in place, so that what follows starts on a line of its own.
  void finish();

  // What report() writes for `line` on a terminal (no newline): "\r\033[K[####......] line".
  static std::string in_place(const std::string& line);

 private:
  bool terminal_;
  bool open_ = false;
};

}  // namespace ignis::cli
