// SPDX-License-Identifier: Apache-2.0
// `ignis run`: one inference, outputs summarized and optionally saved as .npy.
#include <cstdio>
#include <filesystem>

#include "cli/commands.h"
#include "core/strings.h"

namespace ignis::cli {

int run_run(const RunOptions& opts) {
  SessionOptions so;
  so.threads = opts.threads;
  so.pin_threads = opts.pin_threads;
  so.precision = parse_precision(opts.precision);
  apply_session_cli(so, opts.tuning, opts.inputs);
  so.plan_at_open = opts.inputs.files.empty() && opts.inputs.dir.empty();  // see run_bench
  auto session = open_model(opts.model, so);
  if (!session) return fail(session.error());
  auto inputs = make_inputs(*session, opts.inputs);
  if (!inputs) return fail(inputs.error());
  for (const auto& [name, t] : *inputs) std::printf("input  %-20s %s\n", name.c_str(), t.type_string().c_str());
  auto outputs = session->run(*inputs);
  if (!outputs) return fail(outputs.error());
  if (!opts.output_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(opts.output_dir, ec);
    if (ec) return fail(invalid_argument(str_cat("cannot create output folder '", opts.output_dir, "': ", ec.message())));
  }
  for (size_t i = 0; i < outputs->size(); ++i) {
    const std::string& name = session->outputs()[i].name;
    std::printf("output %-20s %s\n", name.c_str(), summarize((*outputs)[i]).c_str());
    if (!opts.output_dir.empty()) {
      Status s = write_npy(opts.output_dir + "/" + tensor_file_name(name) + ".npy", (*outputs)[i]);
      if (!s) return fail(s);
    }
  }
  return 0;
}

}  // namespace ignis::cli
