// SPDX-License-Identifier: Apache-2.0
// Failures as the serving protocols see them: one kind per HTTP status / gRPC code and
// failure-counter reason, with the message the client gets.
#pragma once

#include <string>

#include "ignis/status.h"

namespace ignis::serve {

enum class ErrorKind {
  BadRequest,   // 400: malformed request, wrong input name/shape/dtype
  NotFound,     // 404: unknown model or version
  TooLarge,     // 413: body over the limit
  Overloaded,   // 429: queue full
  Unavailable,  // 503: model not ready, server draining
  Timeout,      // 504: the request's deadline passed before it ran
  Unsupported,  // 501: a protocol feature ignis does not implement
  Internal,     // 500
};

struct ServeError {
  ErrorKind kind = ErrorKind::Internal;
  std::string message;
};

// An engine Status as a serving error: caller mistakes are bad requests.
ServeError serve_error(const Status& s);
int http_status(ErrorKind kind);
// The `reason` label of ignis_inference_failure_total.
const char* failure_reason(ErrorKind kind);

}  // namespace ignis::serve
