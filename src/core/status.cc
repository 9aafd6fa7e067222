// SPDX-License-Identifier: Apache-2.0
#include "ignis/status.h"

namespace ignis {

const char* status_code_name(StatusCode code) {
  switch (code) {
    case StatusCode::Ok: return "ok";
    case StatusCode::InvalidArgument: return "invalid argument";
    case StatusCode::InvalidModel: return "invalid model";
    case StatusCode::Unsupported: return "unsupported";
    case StatusCode::NotFound: return "not found";
    case StatusCode::OutOfRange: return "out of range";
    case StatusCode::ValueRequired: return "value required";
    case StatusCode::ResourceExhausted: return "resource exhausted";
    case StatusCode::Internal: return "internal error";
  }
  return "unknown";
}

std::string Status::to_string() const {
  if (is_ok()) return "ok";
  return std::string(status_code_name(code_)) + ": " + message_;
}

Status invalid_argument(std::string m) { return {StatusCode::InvalidArgument, std::move(m)}; }
Status invalid_model(std::string m) { return {StatusCode::InvalidModel, std::move(m)}; }
Status unsupported(std::string m) { return {StatusCode::Unsupported, std::move(m)}; }
Status not_found(std::string m) { return {StatusCode::NotFound, std::move(m)}; }
Status out_of_range(std::string m) { return {StatusCode::OutOfRange, std::move(m)}; }
Status resource_exhausted(std::string m) { return {StatusCode::ResourceExhausted, std::move(m)}; }
Status internal_error(std::string m) { return {StatusCode::Internal, std::move(m)}; }

}  // namespace ignis
