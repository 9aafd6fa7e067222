// SPDX-License-Identifier: Apache-2.0
// Weight discovery and model file reading/writing shared by quantize_model and prune_model.
#include "compress/weights.h"

#include <filesystem>
#include <map>

#include "core/strings.h"
#include "ir/rewrite.h"
#include "onnx/export.h"
#include "onnx/import.h"

namespace ignis::compress {

namespace {

// The output-channel axis of `n`'s input `input` when it is a weight operand, or -1.
int weight_axis(const ir::Node& n, size_t input, int rank) {
  if (!n.domain.empty() || input != 1) return -1;
  if (n.op_type == "Conv") return rank >= 3 ? 0 : -1;
  if (n.op_type == "ConvTranspose") return rank >= 3 ? 1 : -1;
  if (n.op_type == "MatMul") return rank >= 2 ? rank - 1 : -1;
  if (n.op_type == "Gemm") return rank == 2 ? (n.attrs.get_int("transB", 0) != 0 ? 0 : 1) : -1;
  return -1;
}

}  // namespace

std::vector<WeightTensor> find_weights(const ir::Graph& g, int64_t min_elements, std::vector<std::string>* skipped) {
  struct Reader {
    const ir::Node* node;
    size_t input;
    int axis;  // -1: not a weight operand
  };
  std::map<std::string, std::vector<Reader>> readers;  // ordered, so reports are stable
  for (const auto& n : g.nodes)
    for (size_t i = 0; i < n.inputs.size(); ++i)
      if (const Tensor* t = ir::constant_value(g, n.inputs[i]))
        readers[n.inputs[i]].push_back({&n, i, weight_axis(n, i, t->shape().rank())});

  std::vector<WeightTensor> out;
  for (const auto& [name, list] : readers) {
    const Reader* first = nullptr;
    for (const auto& r : list)
      if (r.axis >= 0 && first == nullptr) first = &r;
    if (first == nullptr) continue;  // not a weight at all
    std::string why;
    for (const auto& r : list) {
      if (r.axis < 0) why = str_cat("also read by ", r.node->label(), " as input ", r.input);
      else if (r.axis != first->axis) why = str_cat("read by ", first->node->label(), " and ", r.node->label(), " along different channel axes");
      if (!why.empty()) break;
    }
    const Tensor& t = g.initializers.at(name);
    if (why.empty() && t.dtype() != DType::F32)
      why = str_cat("dtype ", dtype_name(t.dtype()), " (only float32 weights are changed)");
    if (why.empty() && ir::is_graph_output(g, name)) why = "is a graph output";
    if (why.empty() && t.numel() < min_elements)
      why = str_cat(t.numel(), " elements, below the minimum of ", min_elements);
    if (why.empty()) out.push_back({name, first->node->op_type, first->axis});
    else if (skipped != nullptr) skipped->push_back(str_cat(name, ": ", why));
  }
  return out;
}

int64_t initializer_elements(const ir::Graph& g) {
  int64_t n = 0;
  for (const auto& [name, t] : g.initializers) n += t.numel();
  return n;
}

int64_t initializer_bytes(const ir::Graph& g) {
  int64_t n = 0;
  for (const auto& [name, t] : g.initializers) n += static_cast<int64_t>(t.nbytes());
  return n;
}

Result<ir::Graph> read_model_graph(const std::string& input_path, int64_t* file_bytes) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(input_path, ec);
  if (ec) return not_found(str_cat("model file '", input_path, "' does not exist or cannot be read"));
  *file_bytes = static_cast<int64_t>(size);
  const std::string dir = std::filesystem::absolute(input_path, ec).parent_path().string();
  int64_t external_bytes = 0;
  IGNIS_ASSIGN_OR_RETURN(ir::Graph g, onnx_io::import_model_file(input_path, dir, &external_bytes));
  IGNIS_RETURN_IF_ERROR(ir::verify(g));
  *file_bytes += external_bytes;
  return g;
}

Status write_model_graph(const ir::Graph& g, const std::string& output_path, int64_t* file_bytes) {
  IGNIS_ASSIGN_OR_RETURN(auto written, onnx_io::export_model_file(g, output_path));
  *file_bytes = written.model_bytes + written.data_bytes;
  return Status::ok();
}

}  // namespace ignis::compress
