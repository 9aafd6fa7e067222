// SPDX-License-Identifier: Apache-2.0
// Schemas for the control-flow ops If, Loop and Scan. Their outputs come from running a body,
// so inference checks the node against its bodies and leaves the output types to the kernels
// (src/runtime/control_flow.cc), which run in a dynamic plan.
//
// Each node's inputs are its declared ones followed by the outer-scope values its bodies read
// (ir::outer_scope_names); the body graphs tell how many inputs are declared.
#include "core/strings.h"
#include "ir/graph.h"
#include "ir/op_schema.h"

namespace ignis::ir {
namespace {

Status known_after_run(const InferContext& ctx) {
  return Status(StatusCode::ValueRequired,
                str_cat("node (", ctx.op_type(), "): output shapes are known only after running its body"));
}

Result<const Graph*> body(const InferContext& ctx, std::string_view name) {
  const Graph* g = ctx.attrs().get_graph(name);
  if (g == nullptr) return ctx.fail("graph attribute '", name, "' is required");
  return g;
}

// Declared inputs = all inputs less the outer-scope values the bodies read.
int declared_inputs(const InferContext& ctx) {
  return ctx.num_inputs() - static_cast<int>(outer_scope_names(ctx.attrs()).size());
}

Status infer_if(InferContext& ctx) {
  IGNIS_ASSIGN_OR_RETURN(const Graph* then_branch, body(ctx, "then_branch"));
  IGNIS_ASSIGN_OR_RETURN(const Graph* else_branch, body(ctx, "else_branch"));
  if (declared_inputs(ctx) != 1 || !ctx.has_input(0)) return ctx.error("expects one input, the condition");
  if (ctx.input_dtype(0) != DType::Bool || ctx.input_shape(0).numel() != 1)
    return ctx.fail("the condition must be one bool, got ", dtype_name(ctx.input_dtype(0)), " ",
                    ctx.input_shape(0).str());
  for (const Graph* g : {then_branch, else_branch}) {
    if (!g->inputs.empty()) return ctx.fail("branch '", g->name, "' must have no inputs");
    if (static_cast<int>(g->outputs.size()) != ctx.num_outputs())
      return ctx.fail("branch '", g->name, "' has ", g->outputs.size(), " outputs; the node has ", ctx.num_outputs());
  }
  return known_after_run(ctx);
}

// Loop(M?, cond?, v_initial...): body(iteration_num, cond, v...) -> (cond, v..., scan...).
Status infer_loop(InferContext& ctx) {
  IGNIS_ASSIGN_OR_RETURN(const Graph* g, body(ctx, "body"));
  const int declared = declared_inputs(ctx);
  if (declared < 2) return ctx.fail("expects at least 2 inputs (M, cond; either may be empty), got ", declared);
  const int carried = declared - 2;
  if (static_cast<int>(g->inputs.size()) != carried + 2)
    return ctx.fail("body has ", g->inputs.size(), " inputs; it needs ", carried + 2,
                    " (iteration number, condition, ", carried, " loop-carried values)");
  if (static_cast<int>(g->outputs.size()) < carried + 1)
    return ctx.fail("body has ", g->outputs.size(), " outputs; it needs at least ", carried + 1);
  const int scans = static_cast<int>(g->outputs.size()) - 1 - carried;
  if (ctx.num_outputs() > carried + scans)
    return ctx.fail("node has ", ctx.num_outputs(), " outputs; the body gives ", carried, " loop-carried values and ",
                    scans, " scan outputs");
  if (ctx.has_input(0) && (!dtype_is_integer(ctx.input_dtype(0)) || ctx.input_shape(0).numel() != 1))
    return ctx.fail("M must be one integer, got ", dtype_name(ctx.input_dtype(0)), " ", ctx.input_shape(0).str());
  if (ctx.has_input(1) && (ctx.input_dtype(1) != DType::Bool || ctx.input_shape(1).numel() != 1))
    return ctx.fail("cond must be one bool, got ", dtype_name(ctx.input_dtype(1)), " ", ctx.input_shape(1).str());
  return known_after_run(ctx);
}

// Scan(initial_state..., scan_input...): body(state..., slice...) -> (state..., slice...).
// Scan-8 takes sequence_lens (may be empty) first, and a batch axis 0 on every input.
Status infer_scan(InferContext& ctx) {
  IGNIS_ASSIGN_OR_RETURN(const Graph* g, body(ctx, "body"));
  if (!ctx.attrs().has("num_scan_inputs")) return ctx.error("attribute 'num_scan_inputs' is required");
  const int64_t m = ctx.attrs().get_int("num_scan_inputs");
  const bool batched = ctx.opset() < 9;
  const int declared = declared_inputs(ctx) - (batched ? 1 : 0);
  if (m < 1 || m > declared) return ctx.fail("attribute 'num_scan_inputs' ", m, " must be in [1, ", declared, "]");
  const int states = declared - static_cast<int>(m);
  if (static_cast<int>(g->inputs.size()) != declared)
    return ctx.fail("body has ", g->inputs.size(), " inputs; the node gives ", declared);
  if (static_cast<int>(g->outputs.size()) < states || ctx.num_outputs() != static_cast<int>(g->outputs.size()))
    return ctx.fail("body has ", g->outputs.size(), " outputs and the node ", ctx.num_outputs(),
                    "; both need the ", states, " states followed by the scan outputs");
  for (std::string_view list : {"scan_input_axes", "scan_input_directions", "directions"})
    if (ctx.attrs().has(list) && static_cast<int64_t>(ctx.attrs().get_ints(list).size()) != m)
      return ctx.fail("attribute '", list, "' must have ", m, " entries");
  const int64_t scan_outputs = static_cast<int64_t>(g->outputs.size()) - states;
  for (std::string_view list : {"scan_output_axes", "scan_output_directions"})
    if (ctx.attrs().has(list) && static_cast<int64_t>(ctx.attrs().get_ints(list).size()) != scan_outputs)
      return ctx.fail("attribute '", list, "' must have ", scan_outputs, " entries");
  const int first = batched ? 1 : 0;  // Scan-8: states and scan inputs follow sequence_lens
  for (int i = first; i < first + declared; ++i) {
    if (!ctx.has_input(i)) return ctx.fail("input ", i, " is required");
    if (ctx.input_shape(i).rank() < (i - first >= states ? 1 : 0) + (batched ? 1 : 0))
      return ctx.fail("input ", i, " has too few dims: ", ctx.input_shape(i).str());
  }
  return known_after_run(ctx);
}

}  // namespace

void register_control_flow_schemas(OpSchemaRegistry& r) {
  // Versions after the first reviewed here add element types to the bodies' values.
  r.add({"", "If", 1, 25, infer_if, true});
  r.add({"", "Loop", 1, 25, infer_loop, true});
  r.add({"", "Scan", 8, 25, infer_scan, true});
}

}  // namespace ignis::ir
