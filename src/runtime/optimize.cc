// SPDX-License-Identifier: Apache-2.0
// optimize_model: import, run the passes, export, and report what changed.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "core/strings.h"
#include "ignis/optimize.h"
#include "ir/print.h"
#include "onnx/export.h"
#include "onnx/import.h"
#include "runtime/evaluate.h"

namespace ignis {

namespace {

void count_graph(const ir::Graph& g, std::map<std::string, int>* ops, int64_t* nodes, int64_t* params) {
  ops->clear();
  for (const auto& n : g.nodes) (*ops)[n.domain.empty() ? n.op_type : n.domain + "." + n.op_type]++;
  *nodes = static_cast<int64_t>(g.nodes.size());
  *params = 0;
  for (const auto& [name, t] : g.initializers) *params += t.numel();
}

Status write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  if (!out) return not_found(str_cat("cannot write '", path, "'"));
  out << text;
  return out ? Status::ok() : internal_error(str_cat("write to '", path, "' failed"));
}

int64_t model_flops(const std::string& path) {
  SessionOptions so;
  so.threads = 1;
  so.optimization = OptLevel::None;
  auto s = Session::open(path, so);
  return s ? s->model_info().flops : -1;
}

}  // namespace

Result<OptimizeReport> optimize_model(const std::string& input_path, const std::string& output_path,
                                      const OptimizeOptions& options) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(input_path, ec))
    return not_found(str_cat("model file '", input_path, "' does not exist or cannot be read"));
  const std::string dir = std::filesystem::absolute(input_path, ec).parent_path().string();
  // Streamed, with external data mapped: a model past 2 GiB of weights is never read whole.
  IGNIS_ASSIGN_OR_RETURN(ir::Graph g, onnx_io::import_model_file(input_path, dir));
  IGNIS_RETURN_IF_ERROR(ir::verify(g));

  OptimizeReport report;
  count_graph(g, &report.ops_before, &report.nodes_before, &report.parameters_before);
  report.flops_before = model_flops(input_path);
  if (!options.dot_dir.empty()) {
    std::filesystem::create_directories(options.dot_dir, ec);
    const std::string path = options.dot_dir + "/before.dot";
    IGNIS_RETURN_IF_ERROR(write_text(path, ir::to_dot(g)));
    report.files_written.push_back(path);
  }

  IGNIS_ASSIGN_OR_RETURN(const int expanded, passes::expand_qoperator_ops(g));
  if (expanded > 0) report.passes.emplace_back("expand_qoperator_ops", expanded);
  if (options.level != OptLevel::None) {
    IGNIS_ASSIGN_OR_RETURN(auto counts, passes::optimize(g, runtime::pass_level(options.level), runtime::make_pass_context()));
    for (const auto& c : counts) report.passes.emplace_back(c.name, c.rewrites);
  }
  count_graph(g, &report.ops_after, &report.nodes_after, &report.parameters_after);
  IGNIS_ASSIGN_OR_RETURN(auto written, onnx_io::export_model_file(g, output_path));
  report.files_written.push_back(output_path);
  if (!written.data_path.empty()) report.files_written.push_back(written.data_path);
  report.flops_after = model_flops(output_path);

  if (!options.dot_dir.empty()) {
    const std::string path = options.dot_dir + "/after.dot";
    IGNIS_RETURN_IF_ERROR(write_text(path, ir::to_dot(g)));
    report.files_written.push_back(path);
    const bool safe_path = options.dot_dir.find('\'') == std::string::npos;
    if (safe_path && std::system("command -v dot > /dev/null 2>&1") == 0) {
      for (const char* stem : {"before", "after"}) {
        const std::string base = options.dot_dir + "/" + stem;
        const std::string cmd = str_cat("dot -Tsvg '", base, ".dot' -o '", base, ".svg' > /dev/null 2>&1");
        if (std::system(cmd.c_str()) == 0) report.files_written.push_back(base + ".svg");
      }
    }
  }
  return report;
}

}  // namespace ignis
