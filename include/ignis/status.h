// SPDX-License-Identifier: Apache-2.0
// Status and Result<T>: ignis reports failures as values, never by throwing.
// Result<T> follows std::expected's vocabulary (has_value, value, error, operator*).
#pragma once

#include <cstdlib>
#include <string>
#include <utility>
#include <variant>

namespace ignis {

enum class StatusCode {
  Ok,
  InvalidArgument,    // caller passed something wrong (input name, shape, dtype, option)
  InvalidModel,       // the model file is malformed or inconsistent
  Unsupported,        // valid ONNX that ignis does not implement (op, dtype, attribute)
  NotFound,           // file or named entity missing
  OutOfRange,         // data-dependent index outside its valid range
  ValueRequired,      // shape inference needs a tensor value that is unknown at plan time
  ResourceExhausted,  // the request needs more memory or another resource than allowed
  Internal,           // a broken invariant that was caught rather than crashing
};

const char* status_code_name(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok() { return {}; }
  bool is_ok() const { return code_ == StatusCode::Ok; }
  explicit operator bool() const { return is_ok(); }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "invalid_argument: input 'x' ..." — for logs and CLI output.
  std::string to_string() const;

 private:
  StatusCode code_ = StatusCode::Ok;
  std::string message_;
};

Status invalid_argument(std::string message);
Status invalid_model(std::string message);
Status unsupported(std::string message);
Status not_found(std::string message);
Status out_of_range(std::string message);
Status resource_exhausted(std::string message);
Status internal_error(std::string message);

// Holds either a T or a non-ok Status.
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit like std::expected
  Result(Status status) : v_(std::move(status)) {  // NOLINT
    if (std::get<Status>(v_).is_ok()) std::abort();  // an ok Status carries no value
  }

  bool has_value() const { return v_.index() == 0; }
  explicit operator bool() const { return has_value(); }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const Status& error() const { return std::get<Status>(v_); }
  Status status() const { return has_value() ? Status() : error(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace ignis

#define IGNIS_CONCAT_INNER_(a, b) a##b
#define IGNIS_CONCAT_(a, b) IGNIS_CONCAT_INNER_(a, b)

// Returns the Status from the enclosing function when `expr` is not ok.
#define IGNIS_RETURN_IF_ERROR(expr)                   \
  do {                                                \
    ::ignis::Status ignis_status_ = (expr);           \
    if (!ignis_status_.is_ok()) return ignis_status_; \
  } while (0)

#define IGNIS_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                 \
  if (!tmp.has_value()) return tmp.error();          \
  lhs = std::move(tmp).value()

// `IGNIS_ASSIGN_OR_RETURN(auto x, make_x());` unwraps a Result or returns its error.
#define IGNIS_ASSIGN_OR_RETURN(lhs, expr) \
  IGNIS_ASSIGN_OR_RETURN_IMPL_(IGNIS_CONCAT_(ignis_result_, __LINE__), lhs, expr)
