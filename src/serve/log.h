// SPDX-License-Identifier: Apache-2.0
// The server's log: one line per event on stderr, as text or as JSON objects
// (--log-format json) for log collectors. Thread-safe.
#pragma once

#include <string_view>

namespace ignis::serve {

enum class LogFormat { Text, Json };
enum class LogSeverity { Info, Warning, Error };

void set_log_format(LogFormat format);
void log_event(LogSeverity severity, std::string_view message);
inline void log_info(std::string_view m) { log_event(LogSeverity::Info, m); }
inline void log_warning(std::string_view m) { log_event(LogSeverity::Warning, m); }
inline void log_error(std::string_view m) { log_event(LogSeverity::Error, m); }

}  // namespace ignis::serve
