// SPDX-License-Identifier: Apache-2.0
// LSTM, GRU and RNN in float32 with the x86 sgemm: W and R are packed once per direction when
// the kernel is made, and the reference time loop (kernels/ref/recurrent.h) calls back for its
// products and for the AVX2 Sigmoid and Tanh of each row of gates. At batch 1 or 2 (the
// latency case) the step product is a matrix-vector product per sequence over R as the model
// stores it; larger batches run h · R_d^T through the sgemm with R packed.
#include <algorithm>
#include <vector>

#include "core/aligned_alloc.h"
#include "kernels/ref/recurrent.h"
#include "kernels/x86/elementwise_avx2.h"
#include "kernels/x86/gemm.h"
#include "kernels/x86/gemv_avx2.h"
#include "kernels/x86/x86_internal.h"

namespace ignis::kernels::x86 {
namespace {

using ref::RecurrentCell;

class PackedKernels final : public ref::RecurrentKernels {
 public:
  PackedKernels(const GemmBackend& backend, RecurrentCell cell, const Tensor& w, const Tensor& r)
      : backend_(&backend), dirs_(w.dim(0)), gh_(w.dim(1)), input_(w.dim(2)), hid_(r.dim(2)) {
    // The rows of R the step product reads first: all gates, or z and r of a GRU whose
    // candidate gate multiplies r (.) h (a second product, over R's last hidden rows).
    const bool gru_split = cell == RecurrentCell::Gru;
    for (int64_t d = 0; d < dirs_; ++d) {
      const float* wd = w.data_as<float>() + d * gh_ * input_;
      const float* rd = r.data_as<float>() + d * gh_ * hid_;
      w_.push_back(PackedMatrix::pack(PackedMatrix::Side::B, input_, gh_, wd, input_, true, backend));
      r_.push_back(PackedMatrix::pack(PackedMatrix::Side::B, hid_, gh_, rd, hid_, true, backend));
      r_plain_.emplace_back(rd, rd + gh_ * hid_);
      if (gru_split)
        r_h_.push_back(PackedMatrix::pack(PackedMatrix::Side::B, hid_, hid_, rd + 2 * hid_ * hid_, hid_, true, backend));
    }
  }

  void project(int64_t d, int64_t rows, const float* x, float* xw, ThreadPool* pool) const override {
    multiply(x, input_, rows, w_[static_cast<size_t>(d)], gh_, input_, xw, gh_, pool);
  }

  void recur(int64_t d, int64_t row0, int64_t n, const float* h, int64_t batch, float* out, int64_t ldo,
             ThreadPool* pool) const override {
    if (batch <= kGemvMaxBatch) {
      const float* r = r_plain_[static_cast<size_t>(d)].data() + row0 * hid_;
      // Rows split over the pool in blocks of 64 when the product is worth a hand-off.
      const int64_t grain = n * hid_ >= (int64_t{1} << 15) ? 64 : n;
      for (int64_t b = 0; b < batch; ++b)
        parallel_for(pool, n, grain, [&](int64_t i0, int64_t i1) {
          gemv_f32_avx2(r + i0 * hid_, hid_, i1 - i0, hid_, h + b * hid_, out + b * ldo + i0);
        });
      return;
    }
    // out = h · R_d[row0 : row0 + n]^T with R packed as the B operand (columns [0, n) of the
    // whole-R packing: the sgemm stops at n).
    const PackedMatrix& b = row0 == 0 ? r_[static_cast<size_t>(d)] : r_h_[static_cast<size_t>(d)];
    multiply(h, hid_, batch, b, n, hid_, out, ldo, pool);
  }

  void sigmoid(float* v, int64_t n) const override { sigmoid_f32_in_place(v, n); }
  void tanh(float* v, int64_t n) const override { tanh_f32_in_place(v, n); }

 private:
  // c[m, n] (rows ldc apart) = a[m, k] (rows lda apart) · b, b packed as the B operand.
  void multiply(const float* a, int64_t lda, int64_t m, const PackedMatrix& b, int64_t n, int64_t k, float* c,
                int64_t ldc, ThreadPool* pool) const {
    GemmArgs g;
    g.backend = backend_;
    g.m = m;
    g.n = n;
    g.k = k;
    g.a.data = a;
    g.a.ld = lda;
    g.b.packed = &b;
    g.c = c;
    g.ldc = ldc;
    // The workspace is the calling thread's, kept between calls: this runs once per time step.
    thread_local std::shared_ptr<void> workspace;
    thread_local size_t workspace_floats = 0;
    const size_t floats = std::max<size_t>(gemm_f32_workspace(g, pool ? pool->threads() : 1), 1);
    if (floats > workspace_floats) {
      workspace = make_aligned_buffer(floats * sizeof(float));
      workspace_floats = floats;
    }
    gemm_f32(g, pool, static_cast<float*>(workspace.get()));
  }

  static constexpr int64_t kGemvMaxBatch = 2;

  const GemmBackend* backend_;
  int64_t dirs_, gh_, input_, hid_;
  std::vector<PackedMatrix> w_, r_, r_h_;
  std::vector<std::vector<float>> r_plain_;  // R_d as stored, for the matrix-vector path
};

class RecurrentKernel final : public Kernel {
 public:
  template <const GemmBackend& (*Backend)(), RecurrentCell kCell>
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init) {
    const char* op = kCell == RecurrentCell::Lstm ? "LSTM" : kCell == RecurrentCell::Gru ? "GRU" : "RNN";
    // Weights that arrive at run time (not initializers) take the reference loop.
    const bool constant = init.constants.size() > 2 && init.constants[1] && init.constants[2] &&
                          init.constants[1]->data() && init.constants[2]->data();
    if (!constant) return make_reference_kernel("", op, init);
    auto k = std::make_unique<RecurrentKernel>();
    k->cell_ = kCell;
    k->kernels_ = std::make_unique<PackedKernels>(Backend(), kCell, *init.constants[1], *init.constants[2]);
    return std::unique_ptr<Kernel>(std::move(k));
  }

  Status run(KernelContext& ctx) const override { return ref::run_recurrent_op(ctx, cell_, kernels_.get()); }
  // W and R live packed in kernels_.
  bool uses_constant_data(int input) const override { return input != 1 && input != 2; }

 private:
  RecurrentCell cell_ = RecurrentCell::Lstm;
  std::unique_ptr<PackedKernels> kernels_;
};

template <const GemmBackend& (*Backend)()>
void add_recurrent(KernelRegistry& r, Isa isa, int priority, std::string_view lstm, std::string_view gru,
                   std::string_view rnn) {
  const DTypeSet f32{DType::F32};
  r.add({.domain = "", .op_type = "LSTM", .since_opset = 1, .until_opset = 22, .types = f32, .isa = isa,
         .priority = priority, .id = lstm, .factory = RecurrentKernel::create<Backend, RecurrentCell::Lstm>});
  r.add({.domain = "", .op_type = "GRU", .since_opset = 1, .until_opset = 22, .types = f32, .isa = isa,
         .priority = priority, .id = gru, .factory = RecurrentKernel::create<Backend, RecurrentCell::Gru>});
  r.add({.domain = "", .op_type = "RNN", .since_opset = 1, .until_opset = 22, .types = f32, .isa = isa,
         .priority = priority, .id = rnn, .factory = RecurrentKernel::create<Backend, RecurrentCell::Rnn>});
}

}  // namespace

void register_nn_recurrent(KernelRegistry& r) {
  add_recurrent<gemm_backend_avx2>(r, Isa::Avx2, 10, "x86/lstm_f32_4x24", "x86/gru_f32_4x24", "x86/rnn_f32_4x24");
  add_recurrent<gemm_backend_avx512>(r, Isa::Avx512, 20, "x86/lstm_f32_8x32", "x86/gru_f32_8x32", "x86/rnn_f32_8x32");
}

}  // namespace ignis::kernels::x86
