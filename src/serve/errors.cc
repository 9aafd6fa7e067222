// SPDX-License-Identifier: Apache-2.0
#include "serve/errors.h"

namespace ignis::serve {

ServeError serve_error(const Status& s) {
  switch (s.code()) {
    case StatusCode::NotFound: return {ErrorKind::NotFound, s.message()};
    case StatusCode::Internal: return {ErrorKind::Internal, s.message()};
    case StatusCode::Ok: return {ErrorKind::Internal, "no error"};
    default: return {ErrorKind::BadRequest, s.message()};
  }
}

int http_status(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::BadRequest: return 400;
    case ErrorKind::NotFound: return 404;
    case ErrorKind::TooLarge: return 413;
    case ErrorKind::Overloaded: return 429;
    case ErrorKind::Unavailable: return 503;
    case ErrorKind::Timeout: return 504;
    case ErrorKind::Unsupported: return 501;
    case ErrorKind::Internal: return 500;
  }
  return 500;
}

const char* failure_reason(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::BadRequest:
    case ErrorKind::TooLarge:
    case ErrorKind::Unsupported: return "bad_request";
    case ErrorKind::NotFound: return "not_found";
    case ErrorKind::Overloaded: return "rejected";
    case ErrorKind::Unavailable: return "unavailable";
    case ErrorKind::Timeout: return "timeout";
    case ErrorKind::Internal: return "internal";
  }
  return "internal";
}

}  // namespace ignis::serve
