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

int64_t model_flops(std::span<const std::byte> bytes, const std::string& dir) {
  SessionOptions so;
  so.threads = 1;
  so.optimization = OptLevel::None;
  auto s = Session::open_bytes(bytes, so, dir);
  return s ? s->model_info().flops : -1;
}

}  // namespace

Result<OptimizeReport> optimize_model(const std::string& input_path, const std::string& output_path,
                                      const OptimizeOptions& options) {
  std::ifstream in(input_path, std::ios::binary | std::ios::ate);
  if (!in) return not_found(str_cat("model file '", input_path, "' does not exist or cannot be read"));
  std::vector<char> bytes(static_cast<size_t>(std::max<std::streamoff>(0, in.tellg())));
  in.seekg(0);
  if (!bytes.empty() && !in.read(bytes.data(), static_cast<std::streamsize>(bytes.size())))
    return not_found(str_cat("reading model file '", input_path, "' failed"));
  std::error_code ec;
  const std::string dir = std::filesystem::absolute(input_path, ec).parent_path().string();
  const auto span = std::as_bytes(std::span<const char>(bytes));
  IGNIS_ASSIGN_OR_RETURN(ir::Graph g, onnx_io::import_model(span, dir));
  IGNIS_RETURN_IF_ERROR(ir::verify(g));

  OptimizeReport report;
  count_graph(g, &report.ops_before, &report.nodes_before, &report.parameters_before);
  report.flops_before = model_flops(span, dir);
  if (!options.dot_dir.empty()) {
    std::filesystem::create_directories(options.dot_dir, ec);
    const std::string path = options.dot_dir + "/before.dot";
    IGNIS_RETURN_IF_ERROR(write_text(path, ir::to_dot(g)));
    report.files_written.push_back(path);
  }

  if (options.level != OptLevel::None) {
    IGNIS_ASSIGN_OR_RETURN(auto counts, passes::optimize(g, runtime::pass_level(options.level), runtime::make_pass_context()));
    for (const auto& c : counts) report.passes.emplace_back(c.name, c.rewrites);
  }
  count_graph(g, &report.ops_after, &report.nodes_after, &report.parameters_after);
  IGNIS_ASSIGN_OR_RETURN(std::string out_bytes, onnx_io::export_model(g));
  IGNIS_RETURN_IF_ERROR(write_text(output_path, out_bytes));
  report.files_written.push_back(output_path);
  report.flops_after = model_flops(std::as_bytes(std::span<const char>(out_bytes.data(), out_bytes.size())), dir);

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
