// SPDX-License-Identifier: Apache-2.0
// `ignis inspect`: what a model declares and contains.
#include <cstdio>

#include "cli/commands.h"
#include "cli/common.h"

namespace ignis::cli {

namespace {
std::string human(double v, const char* unit) {
  const char* prefixes[] = {"", "K", "M", "G", "T"};
  int p = 0;
  while (v >= 1000 && p < 4) {
    v /= 1000;
    ++p;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f %s%s", v, prefixes[p], unit);
  return buf;
}
}  // namespace

int run_inspect(const InspectOptions& opts) {
  SessionOptions so;
  so.threads = 1;
  auto session = open_model(opts.model, so);
  if (!session) return fail(session.error());
  const ModelInfo& info = session->model_info();
  std::printf("model: %s\n", opts.model.c_str());
  std::printf("ir version: %lld   producer: %s\n", static_cast<long long>(info.ir_version),
              info.producer.empty() ? "-" : info.producer.c_str());
  std::printf("opsets:");
  for (const auto& [domain, v] : info.opsets) std::printf(" %s=%lld", domain.empty() ? "ai.onnx" : domain.c_str(), static_cast<long long>(v));
  std::printf("\ninputs:\n");
  for (const auto& in : session->inputs())
    std::printf("  %-24s %-8s %s\n", in.name.c_str(), std::string(dtype_name(in.dtype)).c_str(),
                in.type_text.empty() ? in.shape_string().c_str() : in.type_text.c_str());
  std::printf("outputs:\n");
  for (const auto& out : session->outputs())
    std::printf("  %-24s %-8s %s\n", out.name.c_str(), std::string(dtype_name(out.dtype)).c_str(),
                out.type_text.empty() ? out.shape_string().c_str() : out.type_text.c_str());
  std::printf("nodes: %lld\n", static_cast<long long>(info.node_count));
  for (const auto& [op, n] : info.op_histogram) std::printf("  %-28s %d\n", op.c_str(), n);
  std::printf("parameters: %lld (%s)\n", static_cast<long long>(info.parameter_count),
              human(static_cast<double>(info.parameter_bytes), "B").c_str());
  if (info.flops >= 0)
    std::printf("flops per run (symbolic dims = 1): %s\n", human(static_cast<double>(info.flops), "FLOP").c_str());
  else
    std::printf("flops per run: unknown (shapes depend on input values or are not declared)\n");
  return 0;
}

}  // namespace ignis::cli
