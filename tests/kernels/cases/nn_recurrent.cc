// SPDX-License-Identifier: Apache-2.0
// Recurrent op cases: LSTM, GRU (both linear_before_reset settings) and RNN, forward,
// reverse and bidirectional, at batch 1 and 2 (the matrix-vector step) and 3 and 9 (the
// packed sgemm step), hidden sizes around the 8-lane width, with and without biases, with
// clip, and the batch-major layout of opset 14. W and R are the weights (also run as
// constants, the optimized kernels' prepacked path).
#include "core/strings.h"
#include "kernels/cases/cases.h"

namespace ignis::kernel_cases {

namespace {

KernelCase recurrent(const char* op, int gates, int64_t seq, int64_t batch, int64_t input, int64_t hidden,
                     const char* direction, bool bias) {
  KernelCase c;
  c.op_type = op;
  c.opset = 14;
  const int64_t dirs = std::string_view(direction) == "bidirectional" ? 2 : 1;
  c.attrs.set("hidden_size", int_attr(hidden));
  c.attrs.set("direction", string_attr(direction));
  c.inputs = {Shape{seq, batch, input}, Shape{dirs, gates * hidden, input}, Shape{dirs, gates * hidden, hidden}};
  if (bias) c.inputs.push_back(Shape{dirs, 2 * gates * hidden});
  c.weight_inputs = {1, 2};
  // Each step sums input + hidden products, and the state carries every earlier step's error.
  c.depth = (input + hidden) * seq;
  c.label = str_cat(op, " seq=", seq, " batch=", batch, " input=", input, " hidden=", hidden, " ", direction,
                    bias ? " bias" : "");
  return c;
}

std::vector<KernelCase> cases_for(const char* op, int gates) {
  std::vector<KernelCase> cases;
  for (int64_t batch : {1, 2, 3, 9})
    for (int64_t hidden : {5, 8, 33})
      for (const char* dir : {"forward", "reverse", "bidirectional"})
        cases.push_back(recurrent(op, gates, batch == 9 ? 3 : 6, batch, hidden == 33 ? 20 : 3, hidden, dir, batch != 2));
  KernelCase clipped = recurrent(op, gates, 4, 2, 7, 16, "forward", true);
  clipped.attrs.set("clip", float_attr(0.5f));
  clipped.label += " clip=0.5";
  cases.push_back(clipped);
  KernelCase batch_major = recurrent(op, gates, 5, 3, 4, 9, "bidirectional", true);
  batch_major.attrs.set("layout", int_attr(1));
  batch_major.inputs[0] = Shape{3, 5, 4};
  batch_major.label += " layout=1";
  cases.push_back(batch_major);
  return cases;
}

}  // namespace

std::vector<KernelCase> lstm_cases() { return cases_for("LSTM", 4); }

std::vector<KernelCase> gru_cases() {
  std::vector<KernelCase> cases = cases_for("GRU", 3);
  for (KernelCase c : cases_for("GRU", 3)) {
    c.attrs.set("linear_before_reset", int_attr(1));
    c.label += " linear_before_reset";
    cases.push_back(std::move(c));
  }
  return cases;
}

std::vector<KernelCase> rnn_cases() { return cases_for("RNN", 1); }

}  // namespace ignis::kernel_cases
