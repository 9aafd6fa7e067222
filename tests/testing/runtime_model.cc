// SPDX-License-Identifier: Apache-2.0
#include "testing/runtime_model.h"

#include <gtest/gtest.h>

#include <span>
#include <string>

#include "onnx/import.h"

namespace ignis::testing {

std::shared_ptr<runtime::Model> load_runtime_model(const ModelBuilder& b) {
  const std::string bytes = b.bytes();
  auto g = onnx_io::import_model(std::as_bytes(std::span<const char>(bytes.data(), bytes.size())), "");
  EXPECT_TRUE(g) << g.error().to_string();
  if (!g) return nullptr;
  auto m = runtime::build_model(std::move(*g));
  EXPECT_TRUE(m) << m.error().to_string();
  if (!m) return nullptr;
  return *m;
}

Result<Session> open_unoptimized(const ModelBuilder& b, SessionOptions options) {
  options.optimization = OptLevel::None;
  const std::string bytes = b.bytes();
  return Session::open_bytes(std::as_bytes(std::span<const char>(bytes.data(), bytes.size())), options);
}

}  // namespace ignis::testing
