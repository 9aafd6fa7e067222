// SPDX-License-Identifier: Apache-2.0
// `ignis optimize`: run the graph passes offline and write a new ONNX file.
#include <cstdio>
#include <set>

#include "cli/commands.h"
#include "ignis/optimize.h"

namespace ignis::cli {

int run_optimize(const OptimizeCliOptions& opts) {
  OptimizeOptions o;
  o.level = parse_level(opts.level);
  o.dot_dir = opts.dot_dir;
  auto report = optimize_model(opts.model, opts.output, o);
  if (!report) return fail(report.error());
  std::printf("wrote %s: %lld -> %lld nodes (level %s)\n", opts.output.c_str(),
              static_cast<long long>(report->nodes_before), static_cast<long long>(report->nodes_after),
              opts.level.c_str());
  if (opts.report) {
    std::set<std::string> ops;
    for (const auto& [op, n] : report->ops_before) ops.insert(op);
    for (const auto& [op, n] : report->ops_after) ops.insert(op);
    std::printf("\n  %-28s %8s %8s\n", "op", "before", "after");
    for (const auto& op : ops) {
      auto count = [&](const std::map<std::string, int>& m) { auto it = m.find(op); return it == m.end() ? 0 : it->second; };
      std::printf("  %-28s %8d %8d\n", op.c_str(), count(report->ops_before), count(report->ops_after));
    }
    std::printf("  %-28s %8lld %8lld\n", "(total)", static_cast<long long>(report->nodes_before),
                static_cast<long long>(report->nodes_after));
    std::printf("\nparameters  %lld -> %lld\n", static_cast<long long>(report->parameters_before),
                static_cast<long long>(report->parameters_after));
    if (report->flops_before >= 0 && report->flops_after >= 0)
      std::printf("flops       %.4g -> %.4g (symbolic dims = 1)\n", static_cast<double>(report->flops_before),
                  static_cast<double>(report->flops_after));
    std::printf("\npasses (rewrites):\n");
    for (const auto& [name, n] : report->passes) std::printf("  %-28s %d\n", name.c_str(), n);
  }
  for (size_t i = 0; i < report->files_written.size(); ++i)
    if (report->files_written[i] != opts.output) std::printf("wrote %s\n", report->files_written[i].c_str());
  return 0;
}

}  // namespace ignis::cli
