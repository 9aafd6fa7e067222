// SPDX-License-Identifier: Apache-2.0
// x86 MatMul and Gemm (float32) on the sgemm (gemm.h), registered once per GEMM backend
// (AVX2 4x24 and AVX-512 8x32; the registry picks the widest the CPU runs). Constant B operands
// (weights) are packed once when the kernel is created; everything else is packed on the
// fly. MatMul follows numpy broadcasting over the batch dims; when B is one matrix shared by
// a dense A, the batches fold into one tall GEMM. Gemm's C input becomes the GEMM epilogue
// bias (any unidirectional broadcast of C to [M, N] is a row/column stride pair), so no
// separate pass over the output is needed. ai.ignis FusedMatMul, act(MatMul(A, B) + bias),
// is the MatMul kernel with the bias and activation applied as each output tile is stored, and
// its transA / transB become the GEMM's operand transposes (B packed transposed when constant).
// In sessions of precision bf16 / fp16 constant B operands are packed for the bfloat16 or the
// half-weight backend instead (weight_backend); products of two computed inputs stay float32.
#include <algorithm>
#include <vector>

#include "core/broadcast.h"
#include "core/strings.h"
#include "kernels/x86/gemm.h"
#include "kernels/x86/x86_internal.h"

namespace ignis::kernels::x86 {

namespace {

constexpr DTypeSet kF32{DType::F32};

// The backend that packs (and so runs against) constant weights: the kernel's own, the
// bfloat16 one when the session asks for bfloat16 and the kernel's is the AVX-512 backend, or
// the half-weight variant of its own when the session asks for float16.
const GemmBackend& weight_backend(const GemmBackend& own, Precision precision) {
  return gemm_backend_for_b_weights(own, precision);
}

// Runs `count` independent GEMMs that share one shape: spread over the pool when there are
// enough of them to balance, otherwise one after another, each split over the pool.
template <class ArgsOf>
void run_gemm_batch(int64_t count, const GemmArgs& shape, ThreadPool* pool, KernelContext& ctx, ArgsOf args_of) {
  const int threads = pool ? pool->threads() : 1;
  const size_t per_thread = gemm_f32_thread_workspace(shape);
  float* ws = static_cast<float*>(ctx.scratch(per_thread * static_cast<size_t>(threads) * sizeof(float)));
  const bool across = threads > 1 && count > 1 && (count % threads == 0 || count >= 4 * threads);
  if (!across) {
    for (int64_t i = 0; i < count; ++i) gemm_f32(args_of(i), pool, ws);
    return;
  }
  parallel_for(pool, threads, 1, [&](int64_t begin, int64_t end) {
    for (int64_t part = begin; part < end; ++part) {
      float* mine = ws + per_thread * static_cast<size_t>(part);
      for (int64_t i = count * part / threads; i < count * (part + 1) / threads; ++i) {
        const GemmArgs g = args_of(i);
        gemm_f32_range(g, 0, g.m, 0, g.n, mine);
      }
    }
  });
}

// ---- MatMul -----------------------------------------------------------------------------

class MatMulKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init, bool fused, const GemmBackend& backend) {
    auto k = std::make_unique<MatMulKernel>();
    k->backend_ = &backend;
    k->fused_ = fused;
    if (fused) {
      k->epilogue_ = fused_activation(init.attrs);
      k->trans_a_ = init.attrs.get_int("transA", 0) != 0;
      k->trans_b_ = init.attrs.get_int("transB", 0) != 0;
    }
    const Tensor* b = init.constants.size() > 1 ? init.constants[1] : nullptr;
    const GemmBackend& weights = weight_backend(backend, init.precision);
    if (b && b->dtype() == DType::F32 && b->rank() >= 2) {
      // Each batch matrix of B is stored [rows x cols]; op(B) is its transpose under transB.
      const int64_t rows = b->dim(b->rank() - 2), cols = b->dim(b->rank() - 1);
      const int64_t count = rows * cols > 0 ? b->numel() / (rows * cols) : 0;
      const bool tb = k->trans_b_;
      for (int64_t i = 0; i < count; ++i)
        k->packed_b_.push_back(PackedMatrix::pack(PackedMatrix::Side::B, tb ? cols : rows, tb ? rows : cols,
                                                  b->data_as<float>() + i * rows * cols, cols, tb, weights));
    }
    return std::unique_ptr<Kernel>(std::move(k));
  }

  // A prepacked B is all run() reads of input 1 (its shape aside).
  bool uses_constant_data(int input) const override { return input != 1 || packed_b_.empty(); }

  Status run(KernelContext& ctx) const override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    Tensor& y = ctx.output(0);
    if (y.numel() == 0) return Status::ok();
    // numpy matmul: a 1-D A is [1, K], a 1-D B is [K, 1]; the batch dims broadcast.
    // FusedMatMul's transA / transB swap the last two axes of A / B (rank >= 2, checked by
    // shape inference).
    const int ra = a.rank(), rb = b.rank();
    const int64_t m = ra == 1 ? 1 : (trans_a_ ? a.dim(ra - 1) : a.dim(ra - 2));
    const int64_t k = trans_a_ ? a.dim(ra - 2) : a.dim(ra - 1);
    const int64_t n = rb == 1 ? 1 : (trans_b_ ? b.dim(rb - 2) : b.dim(rb - 1));
    Shape a_batch, b_batch;
    for (int i = 0; i + 2 < a.rank(); ++i) a_batch.push_back(a.dim(i));
    for (int i = 0; i + 2 < b.rank(); ++i) b_batch.push_back(b.dim(i));
    const Shape out_batch = *broadcast_shapes(a_batch, b_batch);
    const int64_t batches = out_batch.numel();

    GemmArgs shape;
    shape.backend = backend_;
    shape.m = m;
    shape.n = n;
    shape.k = k;
    shape.ldc = n;
    shape.b.packed = packed_b_.empty() ? nullptr : &packed_b_[0];
    shape.epilogue = epilogue_;
    if (fused_ && ctx.has_input(2)) {  // FusedMatMul bias: one value per output column
      shape.epilogue.bias = ctx.input(2).data_as<float>();
      shape.epilogue.bias_rs = 0;
      shape.epilogue.bias_cs = 1;
    }
    const float* ad = a.data_as<float>();
    const float* bd = b.data_as<float>();
    float* yd = y.data_as<float>();
    auto operand_b = [&](int64_t index) {
      GemmOperand op;
      if (!packed_b_.empty()) op.packed = &packed_b_[static_cast<size_t>(index)];
      else op = {.data = bd + index * k * n, .ld = trans_b_ ? k : n, .trans = trans_b_};
      return op;
    };

    if (b_batch.numel() == 1 && a_batch == out_batch && !trans_a_) {
      // One B for every batch and A dense: a single [batches * M, K] x [K, N] product.
      GemmArgs g = shape;
      g.m = batches * m;
      g.a = {.data = ad, .ld = k};
      g.b = operand_b(0);
      g.c = yd;
      run_gemm_batch(1, g, ctx.pool(), ctx, [&](int64_t) { return g; });
      return Status::ok();
    }
    std::vector<int64_t> a_index, b_index;
    a_index.reserve(static_cast<size_t>(batches));
    b_index.reserve(static_cast<size_t>(batches));
    StridedIndexer it(out_batch, {broadcast_strides(a_batch, out_batch), broadcast_strides(b_batch, out_batch)});
    do {
      a_index.push_back(it.offset(0));
      b_index.push_back(it.offset(1));
    } while (it.next());
    run_gemm_batch(batches, shape, ctx.pool(), ctx, [&](int64_t i) {
      GemmArgs g = shape;
      g.a = {.data = ad + a_index[i] * m * k, .ld = trans_a_ ? m : k, .trans = trans_a_};
      g.b = operand_b(b_index[i]);
      g.c = yd + i * m * n;
      return g;
    });
    return Status::ok();
  }

 private:
  const GemmBackend* backend_ = nullptr;
  bool fused_ = false;                  // FusedMatMul: input 2 is the bias
  bool trans_a_ = false, trans_b_ = false;  // FusedMatMul's transA / transB
  GemmEpilogue epilogue_;               // FusedMatMul's activation
  std::vector<PackedMatrix> packed_b_;  // one per batch matrix of a constant B
};

template <const GemmBackend& (*kBackend)()>
Result<std::unique_ptr<Kernel>> create_matmul(const KernelInit& init) {
  return MatMulKernel::create(init, false, kBackend());
}
template <const GemmBackend& (*kBackend)()>
Result<std::unique_ptr<Kernel>> create_fused_matmul(const KernelInit& init) {
  return MatMulKernel::create(init, true, kBackend());
}

// ---- Gemm -------------------------------------------------------------------------------

class GemmKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init, const GemmBackend& backend) {
    auto k = std::make_unique<GemmKernel>();
    k->backend_ = &backend;
    const Tensor* b = init.constants.size() > 1 ? init.constants[1] : nullptr;
    if (b && b->dtype() == DType::F32 && b->rank() == 2) {
      const bool trans_b = init.attrs.get_int("transB", 0) != 0;
      const int64_t rows = trans_b ? b->dim(1) : b->dim(0), cols = trans_b ? b->dim(0) : b->dim(1);
      k->packed_b_ =
          PackedMatrix::pack(PackedMatrix::Side::B, rows, cols, b->data_as<float>(), b->dim(1), trans_b,
                             weight_backend(backend, init.precision));
    }
    return std::unique_ptr<Kernel>(std::move(k));
  }

  bool uses_constant_data(int input) const override { return input != 1 || packed_b_.empty(); }

  Status run(KernelContext& ctx) const override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    Tensor& y = ctx.output(0);
    if (y.numel() == 0) return Status::ok();
    const bool trans_a = ctx.attrs().get_int("transA", 0) != 0;
    const bool trans_b = ctx.attrs().get_int("transB", 0) != 0;
    GemmArgs g;
    g.backend = backend_;
    g.m = trans_a ? a.dim(1) : a.dim(0);
    g.k = trans_a ? a.dim(0) : a.dim(1);
    g.n = trans_b ? b.dim(0) : b.dim(1);
    g.a = {.data = a.data_as<float>(), .ld = a.dim(1), .trans = trans_a};
    if (!packed_b_.empty()) g.b.packed = &packed_b_;
    else g.b = {.data = b.data_as<float>(), .ld = b.dim(1), .trans = trans_b};
    g.c = y.data_as<float>();
    g.ldc = g.n;
    g.alpha = ctx.attrs().get_float("alpha", 1.0f);
    const float beta = ctx.attrs().get_float("beta", 1.0f);
    if (ctx.has_input(2) && beta != 0.0f) {
      const Tensor& c = ctx.input(2);
      const std::vector<int64_t> s = broadcast_strides(c.shape(), Shape{g.m, g.n});
      g.epilogue.bias = c.data_as<float>();
      g.epilogue.bias_rs = s[0];
      g.epilogue.bias_cs = s[1];
      g.epilogue.bias_scale = beta;
    }
    run_gemm_batch(1, g, ctx.pool(), ctx, [&](int64_t) { return g; });
    return Status::ok();
  }

 private:
  const GemmBackend* backend_ = nullptr;
  PackedMatrix packed_b_;  // op(B) when B is constant
};

template <const GemmBackend& (*kBackend)()>
Result<std::unique_ptr<Kernel>> create_gemm(const KernelInit& init) {
  return GemmKernel::create(init, kBackend());
}

}  // namespace

void register_nn_gemm(KernelRegistry& r) {
  // Priority 10: AVX2 4x24; 20: AVX-512 8x32, preferred where the CPU has it.
  r.add({.domain = "", .op_type = "MatMul", .since_opset = 1, .types = kF32, .isa = Isa::Avx2,
         .priority = 10, .id = "x86/matmul_f32_4x24", .factory = create_matmul<gemm_backend_avx2>});
  r.add({.domain = "", .op_type = "Gemm", .since_opset = 1, .types = kF32, .isa = Isa::Avx2,
         .priority = 10, .id = "x86/gemm_f32_4x24", .factory = create_gemm<gemm_backend_avx2>});
  r.add({.domain = "ai.ignis", .op_type = "FusedMatMul", .since_opset = 1, .until_opset = 1, .types = kF32,
         .isa = Isa::Avx2, .priority = 10, .id = "x86/fusedmatmul_f32_4x24",
         .factory = create_fused_matmul<gemm_backend_avx2>});
  r.add({.domain = "", .op_type = "MatMul", .since_opset = 1, .types = kF32, .isa = Isa::Avx512,
         .priority = 20, .id = "x86/matmul_f32_8x32", .factory = create_matmul<gemm_backend_avx512>});
  r.add({.domain = "", .op_type = "Gemm", .since_opset = 1, .types = kF32, .isa = Isa::Avx512,
         .priority = 20, .id = "x86/gemm_f32_8x32", .factory = create_gemm<gemm_backend_avx512>});
  r.add({.domain = "ai.ignis", .op_type = "FusedMatMul", .since_opset = 1, .until_opset = 1, .types = kF32,
         .isa = Isa::Avx512, .priority = 20, .id = "x86/fusedmatmul_f32_8x32",
         .factory = create_fused_matmul<gemm_backend_avx512>});
}

}  // namespace ignis::kernels::x86
