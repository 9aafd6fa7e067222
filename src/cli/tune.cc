// SPDX-License-Identifier: Apache-2.0
// `ignis tune`: opens the model once per batch size with Tuning::Measure, so that every node
// with more than one kernel or algorithm is timed on its real shapes and the fastest is
// written to the tuning cache, then reports what differs from the built-in rules.
#include <chrono>
#include <cstdio>

#include "cli/commands.h"
#include "core/cpu_features.h"
#include "core/strings.h"

namespace ignis::cli {

int run_tune(const TuneOptions& opts) {
  using Clock = std::chrono::steady_clock;
  auto dims = parse_dim_specs(opts.inputs.dim_specs);
  if (!dims) return fail(dims.error());
  std::vector<int64_t> batches = opts.batches;
  if (batches.empty()) batches.push_back(0);
  std::printf("cpu     %s\n", cpu_features().identity().c_str());
  for (int64_t batch : batches) {
    SessionOptions so;
    so.threads = opts.threads;
    so.precision = parse_precision(opts.precision);
    so.tuning = opts.again ? Tuning::Remeasure : Tuning::Measure;
    so.tuning_cache = opts.cache;
    so.plan_dims = *dims;
    so.plan_batch = batch;
    std::vector<TunedNode> tuned;
    so.on_tuned = [&tuned](const TunedNode& n) { tuned.push_back(n); };
    const auto t0 = Clock::now();
    auto session = open_model(opts.model, so);
    const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    if (!session) return fail(session.error());
    double rules_us = 0, chosen_us = 0;
    int changed = 0;
    std::printf("\nbatch %s: %zu nodes measured in %.1f s%s\n", batch > 0 ? str_cat(batch).c_str() : "(model default)",
                tuned.size(), seconds, opts.again ? "" : " (nodes already in the cache are not; --again re-measures them)");
    for (const TunedNode& n : tuned) {
      rules_us += n.rules_us;
      chosen_us += n.chosen_us;
      const bool differs = n.rules_us > 0 && n.chosen_us < n.rules_us && n.candidates.size() > 1 &&
                           n.candidates.front().first.rfind(n.chosen, 0) != 0;
      changed += differs;
      if (!differs && !opts.verbose) continue;
      std::printf("  %-28s %-10s %9.1f us -> %9.1f us  %s\n", n.node.c_str(), n.op_type.c_str(), n.rules_us,
                  n.chosen_us, n.chosen.c_str());
      if (opts.verbose)
        for (const auto& [label, us] : n.candidates) std::printf("      %-44s %9.1f us\n", label.c_str(), us);
    }
    std::printf("  %d of %zu choices differ from the rules; measured nodes: %.2f ms -> %.2f ms per run\n", changed,
                tuned.size(), rules_us / 1e3, chosen_us / 1e3);
  }
  return 0;
}

}  // namespace ignis::cli
