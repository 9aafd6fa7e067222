// SPDX-License-Identifier: Apache-2.0
// Kernels of the ai.ignis fused ops (docs/ops_ai_ignis.md), float32 only.
// Reference kernels ("ref/..."): FusedConv and FusedMatMul run the reference ai.onnx Conv /
// MatMul kernel into their output and then apply the epilogue (bias, residual, activation)
// in place, so they agree with the unfused graph by construction (FusedMatMul's transA /
// transB operands are transposed into scratch first). Gelu and SkipLayerNorm are
// plain loops (row statistics in double); Attention runs the reference GEMM on each head's
// strided slices of Q, K and V, with the softmax in between.
// Composed kernels ("cpu/..._composed", preferred over the reference ones): FusedConv and
// FusedMatMul run the best Conv / MatMul kernel the registry offers for the node (an ISA
// kernel, with its weight prepacking, unless IGNIS_KERNELS=ref) and then the same epilogue
// (FusedMatMul with transA / transB runs the reference kernel);
// Attention runs its two batched products on the best MatMul kernel. Fusing thus keeps the
// speed of the optimized base kernels where no fused ISA kernel applies.
#include <algorithm>
#include <cmath>
#include <vector>

#include "core/activation.h"
#include "core/broadcast.h"
#include "core/strings.h"
#include "kernels/attention_shape.h"
#include "kernels/ref/nn_internal.h"
#include "kernels/registry.h"

namespace ignis::kernels::ref {

namespace {

// The reference (ISA-less) float32 kernel of an ai.onnx op, found once.
KernelFn find_reference(std::string_view op_type) {
  for (const auto& d : KernelRegistry::global().all())
    if (d.implements("", op_type, 13) && d.isa == Isa::None && d.backend == Backend::Cpu && d.fn &&
        d.types.contains(DType::F32))
      return d.fn;
  return nullptr;
}

// Runs the reference kernel of `op_type` (ai.onnx, opset 13 semantics) on `inputs` into `out`.
Status run_reference(KernelContext& ctx, std::string_view op_type, KernelFn fn, std::vector<const Tensor*> inputs,
                     Tensor& out) {
  if (fn == nullptr) return internal_error(str_cat("no reference ", op_type, " kernel is registered"));
  Tensor* outs[1] = {&out};
  Scratch scratch;
  KernelContext inner(ctx.attrs(), 13, inputs, outs, ctx.pool(), &scratch);
  return fn(inner);
}

// Splits n elements into chunks of about 16 Ki for the pool.
template <class F>
void for_chunks(ThreadPool* pool, int64_t n, F&& f) {
  constexpr int64_t kChunk = 16 << 10;
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  parallel_for(pool, chunks, 1, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) f(c * kChunk, std::min(n, (c + 1) * kChunk));
  });
}

// ---- FusedConv, FusedMatMul -----------------------------------------------------------------

// y = act(y + z), z optional (the residual, same shape as y).
void conv_epilogue(KernelContext& ctx, Tensor& y) {
  const ActivationSpec act = read_activation(ctx.attrs());
  const float* z = ctx.has_input(3) ? ctx.input(3).data_as<float>() : nullptr;
  float* out = y.data_as<float>();
  for_chunks(ctx.pool(), y.numel(), [&](int64_t begin, int64_t end) {
    if (z)
      for (int64_t i = begin; i < end; ++i) out[i] += z[i];
    activate(act, out + begin, end - begin);
  });
}

// y = act(y + bias) with bias (optional) along the last axis.
void matmul_epilogue(KernelContext& ctx, Tensor& y) {
  const ActivationSpec act = read_activation(ctx.attrs());
  const float* bias = ctx.has_input(2) ? ctx.input(2).data_as<float>() : nullptr;
  const int64_t n = y.rank() ? y.shape().back() : 1;
  float* out = y.data_as<float>();
  const int64_t rows = n > 0 ? y.numel() / n : 0;
  parallel_for(ctx.pool(), rows, 64, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      float* row = out + r * n;
      if (bias)
        for (int64_t j = 0; j < n; ++j) row[j] += bias[j];
      activate(act, row, n);
    }
  });
}

Status fused_conv_kernel(KernelContext& ctx) {
  static const KernelFn conv = find_reference("Conv");
  Tensor& y = ctx.output(0);
  IGNIS_RETURN_IF_ERROR(run_reference(ctx, "Conv", conv,
                                      {&ctx.input(0), &ctx.input(1), ctx.has_input(2) ? &ctx.input(2) : nullptr}, y));
  conv_epilogue(ctx, y);
  return Status::ok();
}

bool has_trans_flag(const AttrMap& attrs) { return attrs.get_int("transA", 0) != 0 || attrs.get_int("transB", 0) != 0; }

// `t` (rank >= 2) with its last two axes swapped, written to `dst` (t.numel() floats).
Tensor swap_last_two_axes(const Tensor& t, float* dst) {
  const int r = t.rank();
  const int64_t rows = t.dim(r - 2), cols = t.dim(r - 1);
  const int64_t batches = rows * cols > 0 ? t.numel() / (rows * cols) : 0;
  const float* src = t.data_as<float>();
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) dst[b * rows * cols + j * rows + i] = src[b * rows * cols + i * cols + j];
  Shape s = t.shape();
  s[r - 2] = cols;
  s[r - 1] = rows;
  return Tensor::view(DType::F32, s, dst);
}

// transA / transB: the reference MatMul runs on transposed copies of the flagged operands,
// made in scratch.
Status fused_matmul_kernel(KernelContext& ctx) {
  static const KernelFn matmul = find_reference("MatMul");
  Tensor operands[2] = {ctx.input(0), ctx.input(1)};
  const bool trans[2] = {ctx.attrs().get_int("transA", 0) != 0, ctx.attrs().get_int("transB", 0) != 0};
  size_t floats = 0;
  for (int i = 0; i < 2; ++i) floats += trans[i] ? static_cast<size_t>(operands[i].numel()) : 0;
  float* copies = floats ? static_cast<float*>(ctx.scratch(floats * sizeof(float))) : nullptr;
  for (int i = 0; i < 2; ++i) {
    if (!trans[i]) continue;
    operands[i] = swap_last_two_axes(operands[i], copies);
    copies += operands[i].numel();
  }
  Tensor& y = ctx.output(0);
  IGNIS_RETURN_IF_ERROR(run_reference(ctx, "MatMul", matmul, {&operands[0], &operands[1]}, y));
  matmul_epilogue(ctx, y);
  return Status::ok();
}

// The best registered ai.onnx kernel for the first `base_inputs` inputs, then the epilogue.
// The base kernel sees only its own attributes (the Conv ones for FusedConv, none for
// FusedMatMul), so it cannot mistake the activation attributes for its own.
class ComposedKernel final : public Kernel {
 public:
  using Epilogue = void (*)(KernelContext&, Tensor&);

  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init, std::string_view op_type, int base_inputs,
                                                Epilogue epilogue) {
    auto k = std::make_unique<ComposedKernel>();
    k->epilogue_ = epilogue;
    for (const auto& [name, a] : init.attrs.items())
      if (!name.starts_with("activation")) k->base_attrs_.set(name, a);
    const size_t n = std::min(static_cast<size_t>(base_inputs), init.input_dtypes.size());
    k->base_inputs_ = static_cast<int>(n);
    const auto dtypes = init.input_dtypes.first(n);
    const KernelDef* def = KernelRegistry::global().find("", op_type, kBaseOpset, dtypes);
    if (def == nullptr) return unsupported(str_cat("no ", op_type, " kernel for the fused op"));
    const KernelInit base_init{k->base_attrs_, kBaseOpset, dtypes, init.constants.first(std::min(n, init.constants.size()))};
    IGNIS_ASSIGN_OR_RETURN(k->base_, make_kernel(*def, base_init));
    return std::unique_ptr<Kernel>(std::move(k));
  }

  Status run(KernelContext& ctx) const override {
    std::vector<const Tensor*> inputs;
    for (int i = 0; i < base_inputs_; ++i) inputs.push_back(ctx.has_input(i) ? &ctx.input(i) : nullptr);
    Tensor* outs[1] = {&ctx.output(0)};
    // Scratch for the base kernel, kept per thread across runs (the context's own scratch is
    // not handed on); the kernel object itself stays immutable.
    thread_local Scratch scratch;
    KernelContext base_ctx(base_attrs_, kBaseOpset, inputs, outs, ctx.pool(), &scratch);
    IGNIS_RETURN_IF_ERROR(base_->run(base_ctx));
    epilogue_(ctx, ctx.output(0));
    return Status::ok();
  }

  // The base kernel alone reads the first base_inputs_ inputs; the epilogues read only later ones.
  bool uses_constant_data(int input) const override {
    return input >= base_inputs_ || base_->uses_constant_data(input);
  }

 private:
  static constexpr int64_t kBaseOpset = 13;
  Epilogue epilogue_ = nullptr;
  AttrMap base_attrs_;
  int base_inputs_ = 0;
  std::unique_ptr<Kernel> base_;
};

Result<std::unique_ptr<Kernel>> create_fused_conv(const KernelInit& init) {
  return ComposedKernel::create(init, "Conv", 3, conv_epilogue);
}

// With transA / transB set the composed kernel is the reference one: the base MatMul
// kernels have no transposed operands.
Result<std::unique_ptr<Kernel>> create_fused_matmul(const KernelInit& init) {
  if (has_trans_flag(init.attrs)) {
    static const KernelDef reference{.domain = "ai.ignis", .op_type = "FusedMatMul", .id = "ref/fusedmatmul",
                                     .fn = fused_matmul_kernel};
    return make_kernel(reference, init);
  }
  return ComposedKernel::create(init, "MatMul", 2, matmul_epilogue);
}

// ---- Gelu -----------------------------------------------------------------------------------

Status gelu_kernel(KernelContext& ctx) {
  ActivationSpec gelu;
  gelu.kind = ctx.attrs().get_string("approximate", "none") == "tanh" ? Activation::GeluTanh : Activation::Gelu;
  const float* x = ctx.input(0).data_as<float>();
  float* y = ctx.output(0).data_as<float>();
  for_chunks(ctx.pool(), ctx.output(0).numel(), [&](int64_t begin, int64_t end) {
    std::copy(x + begin, x + end, y + begin);
    activate(gelu, y + begin, end - begin);
  });
  return Status::ok();
}

// ---- SkipLayerNorm --------------------------------------------------------------------------

Status skip_layer_norm_kernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& skip = ctx.input(1);
  Tensor& y = ctx.output(0);
  const Shape& shape = y.shape();
  const int64_t total = shape.numel();
  const int64_t n = shape.rank() ? shape.back() : 1;
  const int64_t rows = n > 0 ? total / n : 0;
  // The sum goes to the Sum output when it is requested, else to scratch.
  float* sum = ctx.has_output(1) ? ctx.output(1).data_as<float>()
                                 : static_cast<float*>(ctx.scratch(static_cast<size_t>(total) * sizeof(float)));
  const float* xs = x.data_as<float>();
  const float* ss = skip.data_as<float>();
  if (x.shape() == shape && skip.shape() == shape) {
    for (int64_t i = 0; i < total; ++i) sum[i] = xs[i] + ss[i];
  } else if (total > 0) {
    StridedIndexer it(shape, {broadcast_strides(x.shape(), shape), broadcast_strides(skip.shape(), shape)});
    int64_t i = 0;
    do sum[i++] = xs[it.offset(0)] + ss[it.offset(1)];
    while (it.next());
  }
  const float* gamma = ctx.input(2).data_as<float>();
  const float* beta = ctx.has_input(3) ? ctx.input(3).data_as<float>() : nullptr;
  const float* bias = ctx.has_input(4) ? ctx.input(4).data_as<float>() : nullptr;
  const double eps = ctx.attrs().get_float("epsilon", 1e-5f);
  float* out = y.data_as<float>();
  parallel_for(ctx.pool(), rows, 16, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      float* s = sum + r * n;
      if (bias)
        for (int64_t j = 0; j < n; ++j) s[j] += bias[j];
      double mean = 0;
      for (int64_t j = 0; j < n; ++j) mean += s[j];
      mean /= static_cast<double>(n);
      double var = 0;
      for (int64_t j = 0; j < n; ++j) var += (s[j] - mean) * (s[j] - mean);
      var /= static_cast<double>(n);
      const double inv = 1.0 / std::sqrt(var + eps);
      float* o = out + r * n;
      for (int64_t j = 0; j < n; ++j)
        o[j] = static_cast<float>((s[j] - mean) * inv * gamma[j] + (beta ? beta[j] : 0.0));
    }
  });
  return Status::ok();
}

// ---- Attention ------------------------------------------------------------------------------

// row = softmax(row) given its maximum; the sum accumulates in double.
void softmax_row(float* row, int64_t n, float max_value) {
  double sum = 0;
  for (int64_t j = 0; j < n; ++j) {
    row[j] = std::exp(row[j] - max_value);
    sum += row[j];
  }
  const double inv = 1.0 / sum;
  for (int64_t j = 0; j < n; ++j) row[j] = static_cast<float>(row[j] * inv);
}

// Per (batch, head): scores = scale * Q_h K_h^T (+ mask), softmax over each row, Y_h = P V_h.
// Q_h, K_h, V_h and Y_h are column slices of the [B, S, H * D] tensors, read and written in
// place through the GEMM's leading dimensions.
Status attention_kernel(KernelContext& ctx) {
  const Tensor& q = ctx.input(0);
  const Tensor& k = ctx.input(1);
  const Tensor& v = ctx.input(2);
  Tensor& y = ctx.output(0);
  const AttentionShape shape = attention_shape(ctx);
  // Plain copies, not structured bindings: the lambdas below capture them.
  const int64_t batch = shape.batch, sq = shape.sq, sk = shape.sk, heads = shape.heads, d = shape.d,
                dv = shape.dv;
  const float scale = shape.scale;
  const int64_t hidden = q.dim(2), hidden_v = v.dim(2);
  const float* qs = q.data_as<float>();
  const float* ks = k.data_as<float>();
  const float* vs = v.data_as<float>();
  float* out = y.data_as<float>();
  if (sk == 0) {  // softmax over nothing: the weighted sum is empty
    std::fill(out, out + y.numel(), 0.0f);
    return Status::ok();
  }
  // Mask element (b, h, i, j) at mask[b * ms[0] + h * ms[1] + i * ms[2] + j * ms[3]].
  const float* mask = ctx.has_input(3) ? ctx.input(3).data_as<float>() : nullptr;
  std::vector<int64_t> ms(4, 0);
  if (mask) ms = broadcast_strides(ctx.input(3).shape(), Shape{batch, heads, sq, sk});
  parallel_for(ctx.pool(), batch * heads, 1, [&](int64_t begin, int64_t end) {
    std::vector<float> p(static_cast<size_t>(sq * sk));
    for (int64_t t = begin; t < end; ++t) {
      const int64_t b = t / heads, h = t % heads;
      gemm<float>(false, true, sq, sk, d, scale, qs + b * sq * hidden + h * d, hidden, ks + b * sk * hidden + h * d,
                  hidden, 0.0f, p.data(), sk, nullptr);
      for (int64_t i = 0; i < sq; ++i) {
        float* row = p.data() + i * sk;
        if (mask)
          for (int64_t j = 0; j < sk; ++j) row[j] += mask[b * ms[0] + h * ms[1] + i * ms[2] + j * ms[3]];
        float max_score = -INFINITY;
        for (int64_t j = 0; j < sk; ++j) max_score = std::max(max_score, row[j]);
        softmax_row(row, sk, max_score);
      }
      gemm<float>(false, false, sq, dv, sk, 1.0f, p.data(), sk, vs + b * sk * hidden_v + h * dv, hidden_v, 0.0f,
                  out + b * sq * hidden_v + h * dv, hidden_v, nullptr);
    }
  });
  return Status::ok();
}

// Composed attention: the heads are copied out into contiguous [B, H, S, D] blocks (K as
// [B, H, D, Sk]) so the best registered MatMul kernel computes both batched products; the
// scale, mask and softmax run in between, as the unfused graph orders them.
class AttentionKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit&) {
    auto k = std::make_unique<AttentionKernel>();
    const DType f32[2] = {DType::F32, DType::F32};
    const KernelDef* def = KernelRegistry::global().find("", "MatMul", kBaseOpset, f32);
    if (def == nullptr) return unsupported("no MatMul kernel for Attention");
    const Tensor* none[2] = {nullptr, nullptr};
    const KernelInit base_init{k->no_attrs_, kBaseOpset, f32, none};
    IGNIS_ASSIGN_OR_RETURN(k->matmul_, make_kernel(*def, base_init));
    return std::unique_ptr<Kernel>(std::move(k));
  }

  Status run(KernelContext& ctx) const override {
    const Tensor& q = ctx.input(0);
    const Tensor& k = ctx.input(1);
    const Tensor& v = ctx.input(2);
    Tensor& y = ctx.output(0);
    const AttentionShape shape = attention_shape(ctx);
    // Plain copies, not structured bindings: the lambdas below capture them.
    const int64_t batch = shape.batch, sq = shape.sq, sk = shape.sk, heads = shape.heads, d = shape.d,
                  dv = shape.dv;
    const float scale = shape.scale;
    const int64_t hidden = q.dim(2), hidden_v = v.dim(2);
    if (y.numel() == 0) return Status::ok();
    if (sk == 0) {
      std::fill(y.data_as<float>(), y.data_as<float>() + y.numel(), 0.0f);
      return Status::ok();
    }
    const int64_t bh = batch * heads;
    const int64_t nq = bh * sq * d, nk = bh * d * sk, nv = bh * sk * dv, ns = bh * sq * sk, nc = bh * sq * dv;
    float* buf = static_cast<float*>(ctx.scratch(static_cast<size_t>(nq + nk + nv + ns + nc) * sizeof(float)));
    float *qh = buf, *kt = qh + nq, *vh = kt + nk, *sc = vh + nv, *cx = sc + ns;
    const float* qs = q.data_as<float>();
    const float* ks = k.data_as<float>();
    const float* vs = v.data_as<float>();
    parallel_for(ctx.pool(), bh, 1, [&](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t) {
        const int64_t b = t / heads, h = t % heads;
        for (int64_t i = 0; i < sq; ++i)
          std::copy_n(qs + (b * sq + i) * hidden + h * d, d, qh + (t * sq + i) * d);
        for (int64_t j = 0; j < sk; ++j) {
          const float* kj = ks + (b * sk + j) * hidden + h * d;
          for (int64_t e = 0; e < d; ++e) kt[(t * d + e) * sk + j] = kj[e];
          std::copy_n(vs + (b * sk + j) * hidden_v + h * dv, dv, vh + (t * sk + j) * dv);
        }
      }
    });
    Tensor qt = Tensor::view(DType::F32, Shape{batch, heads, sq, d}, qh);
    Tensor ktt = Tensor::view(DType::F32, Shape{batch, heads, d, sk}, kt);
    Tensor vt = Tensor::view(DType::F32, Shape{batch, heads, sk, dv}, vh);
    Tensor st = Tensor::view(DType::F32, Shape{batch, heads, sq, sk}, sc);
    Tensor ct = Tensor::view(DType::F32, Shape{batch, heads, sq, dv}, cx);
    // With no depth the scores are sums of nothing: 0 whatever the scale (1/sqrt(0) is inf).
    if (d == 0) std::fill(sc, sc + ns, 0.0f);
    else IGNIS_RETURN_IF_ERROR(matmul(ctx, qt, ktt, st));
    const float row_scale = d == 0 ? 1.0f : scale;
    const float* mask = ctx.has_input(3) ? ctx.input(3).data_as<float>() : nullptr;
    std::vector<int64_t> ms(4, 0);
    if (mask) ms = broadcast_strides(ctx.input(3).shape(), Shape{batch, heads, sq, sk});
    parallel_for(ctx.pool(), bh * sq, 16, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const int64_t b = r / (heads * sq), h = r / sq % heads, i = r % sq;
        float* row = sc + r * sk;
        float max_score = -INFINITY;
        for (int64_t j = 0; j < sk; ++j) {
          row[j] *= row_scale;
          if (mask) row[j] += mask[b * ms[0] + h * ms[1] + i * ms[2] + j * ms[3]];
          max_score = std::max(max_score, row[j]);
        }
        softmax_row(row, sk, max_score);
      }
    });
    IGNIS_RETURN_IF_ERROR(matmul(ctx, st, vt, ct));
    float* out = y.data_as<float>();
    parallel_for(ctx.pool(), bh, 1, [&](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t) {
        const int64_t b = t / heads, h = t % heads;
        for (int64_t i = 0; i < sq; ++i)
          std::copy_n(cx + (t * sq + i) * dv, dv, out + (b * sq + i) * hidden_v + h * dv);
      }
    });
    return Status::ok();
  }

 private:
  static constexpr int64_t kBaseOpset = 13;

  Status matmul(KernelContext& ctx, const Tensor& a, const Tensor& b, Tensor& c) const {
    const Tensor* inputs[2] = {&a, &b};
    Tensor* outs[1] = {&c};
    thread_local Scratch scratch;  // as in ComposedKernel
    KernelContext mm_ctx(no_attrs_, kBaseOpset, inputs, outs, ctx.pool(), &scratch);
    return matmul_->run(mm_ctx);
  }

  AttrMap no_attrs_;
  std::unique_ptr<Kernel> matmul_;
};

Result<std::unique_ptr<Kernel>> create_attention(const KernelInit& init) { return AttentionKernel::create(init); }

constexpr DTypeSet kF32{DType::F32};

}  // namespace

void register_fused(KernelRegistry& r) {
  r.add({.domain = "ai.ignis", .op_type = "FusedConv", .since_opset = 1, .until_opset = 1, .types = kF32,
         .id = "ref/fusedconv", .fn = fused_conv_kernel});
  r.add({.domain = "ai.ignis", .op_type = "FusedMatMul", .since_opset = 1, .until_opset = 1, .types = kF32,
         .id = "ref/fusedmatmul", .fn = fused_matmul_kernel});
  r.add({.domain = "ai.ignis", .op_type = "FusedConv", .since_opset = 1, .until_opset = 1, .types = kF32,
         .priority = 1, .role = KernelRole::Composed, .id = "cpu/fusedconv_f32_composed", .factory = create_fused_conv});
  r.add({.domain = "ai.ignis", .op_type = "FusedMatMul", .since_opset = 1, .until_opset = 1, .types = kF32,
         .priority = 1, .role = KernelRole::Composed, .id = "cpu/fusedmatmul_f32_composed", .factory = create_fused_matmul});
  r.add({.domain = "ai.ignis", .op_type = "Gelu", .since_opset = 1, .until_opset = 1, .types = kF32,
         .id = "ref/ignis_gelu", .fn = gelu_kernel});
  r.add({.domain = "ai.ignis", .op_type = "SkipLayerNorm", .since_opset = 1, .until_opset = 1, .types = kF32,
         .id = "ref/skiplayernorm", .fn = skip_layer_norm_kernel});
  r.add({.domain = "ai.ignis", .op_type = "Attention", .since_opset = 1, .until_opset = 1, .types = kF32,
         .id = "ref/attention", .fn = attention_kernel});
  r.add({.domain = "ai.ignis", .op_type = "Attention", .since_opset = 1, .until_opset = 1, .types = kF32,
         .priority = 1, .role = KernelRole::Composed, .id = "cpu/attention_f32_composed", .factory = create_attention});
}

}  // namespace ignis::kernels::ref
