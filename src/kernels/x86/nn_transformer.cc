// SPDX-License-Identifier: Apache-2.0
// x86 kernels of the transformer ops (float32): ai.ignis Attention and SkipLayerNorm, ai.onnx
// LayerNormalization and Softmax. This file holds the op-level logic (shapes, broadcasting,
// the split over the thread pool, delegation) and runs no vector code; the row and block
// bodies are in attention_avx2.cc and norm_avx2.cc (transformer_avx2.h).
//
// Attention is split into tasks of (batch, head, block of query rows); each pool thread runs
// a contiguous range of tasks with its own slice of scratch (scores block + GEMM workspace).
// A head is one task unless its score block would outgrow L2 or there are too few heads to
// keep every thread busy. Configurations the fast kernels do not cover (a Softmax axis other
// than the last, LayerNormalization scale/bias of another broadcast form, SkipLayerNorm with
// X and Skip broadcast, zero-width heads) run on the reference kernel.
#include <algorithm>
#include <cmath>
#include <vector>

#include "core/broadcast.h"
#include "kernels/attention_shape.h"
#include "kernels/x86/transformer_avx2.h"
#include "kernels/x86/x86_internal.h"

namespace ignis::kernels::x86 {

namespace {

constexpr DTypeSet kF32{DType::F32};

// Rows per chunk of the row-wise kernels: about 8 Ki floats, so that small tensors stay on one
// thread.
int64_t row_grain(int64_t n) { return std::max<int64_t>(1, (int64_t{8} << 10) / std::max<int64_t>(n, 1)); }

// ---- Attention ------------------------------------------------------------------------------

// Upper bound of a score block (rows x sk floats): 64 Ki floats = 256 KiB, which stays in L2
// next to the packed operands of the two products.
constexpr int64_t kScoreBlockFloats = int64_t{64} << 10;
// Query rows of a block are a multiple of this (a whole number of GEMM row tiles).
constexpr int64_t kRowQuantum = 8;

class AttentionKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init) {
    auto k = std::make_unique<AttentionKernel>();
    IGNIS_ASSIGN_OR_RETURN(k->reference_, make_reference_kernel("ai.ignis", "Attention", init));
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
    if (sk == 0) {  // softmax over nothing: the weighted sum is empty
      std::fill(y.data_as<float>(), y.data_as<float>() + y.numel(), 0.0f);
      return Status::ok();
    }
    if (d == 0) return reference_->run(ctx);
    // Mask element (b, h, i, j) at mask[b * ms[0] + h * ms[1] + i * ms[2] + j * ms[3]]; the
    // last stride is 0 or 1.
    const float* mask = ctx.has_input(3) ? ctx.input(3).data_as<float>() : nullptr;
    std::vector<int64_t> ms(4, 0);
    if (mask) ms = broadcast_strides(ctx.input(3).shape(), Shape{batch, heads, sq, sk});
    if (ms[3] != 0 && ms[3] != 1) return reference_->run(ctx);

    ThreadPool* pool = ctx.pool();
    const int threads = pool ? pool->threads() : 1;
    const int64_t bh = batch * heads;
    const int64_t cache_rows = std::max<int64_t>(kRowQuantum, kScoreBlockFloats / sk / kRowQuantum * kRowQuantum);
    int64_t blocks = (sq + cache_rows - 1) / cache_rows;
    // Too few (batch, head) pairs to balance: cut heads into more row blocks (at least
    // kRowQuantum rows each) until every thread has several tasks.
    if (threads > 1 && (bh * blocks) % threads != 0 && bh * blocks < 4 * threads)
      blocks = std::max(blocks, std::min((4 * threads + bh - 1) / bh, (sq + kRowQuantum - 1) / kRowQuantum));
    int64_t rows = (sq + blocks - 1) / blocks;
    rows = (rows + kRowQuantum - 1) / kRowQuantum * kRowQuantum;
    blocks = (sq + rows - 1) / rows;
    const int64_t tasks = bh * blocks;

    const size_t per_thread = attention_f32_block_scratch(rows, sk, d, dv);
    float* scratch = static_cast<float*>(ctx.scratch(per_thread * static_cast<size_t>(threads) * sizeof(float)));
    const float* qs = q.data_as<float>();
    const float* ks = k.data_as<float>();
    const float* vs = v.data_as<float>();
    float* out = y.data_as<float>();
    parallel_for(pool, threads, 1, [&](int64_t begin, int64_t end) {
      for (int64_t part = begin; part < end; ++part) {
        float* mine = scratch + per_thread * static_cast<size_t>(part);
        for (int64_t t = tasks * part / threads; t < tasks * (part + 1) / threads; ++t) {
          const int64_t pair = t / blocks, i0 = t % blocks * rows;
          const int64_t b = pair / heads, h = pair % heads;
          AttentionBlock blk;
          blk.rows = std::min(rows, sq - i0);
          blk.sk = sk;
          blk.d = d;
          blk.dv = dv;
          blk.q = qs + (b * sq + i0) * hidden + h * d;
          blk.ldq = hidden;
          blk.k = ks + b * sk * hidden + h * d;
          blk.ldk = hidden;
          blk.v = vs + b * sk * hidden_v + h * dv;
          blk.ldv = hidden_v;
          blk.y = out + (b * sq + i0) * hidden_v + h * dv;
          blk.ldy = hidden_v;
          if (mask) {
            blk.mask = mask + b * ms[0] + h * ms[1] + i0 * ms[2];
            blk.mask_rs = ms[2];
            blk.mask_cs = ms[3];
          }
          blk.scale = scale;
          attention_f32_block(blk, mine);
        }
      }
    });
    return Status::ok();
  }

 private:
  std::unique_ptr<Kernel> reference_;
};

Result<std::unique_ptr<Kernel>> create_attention(const KernelInit& init) { return AttentionKernel::create(init); }

// ---- Softmax --------------------------------------------------------------------------------

class SoftmaxKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init) {
    auto k = std::make_unique<SoftmaxKernel>();
    IGNIS_ASSIGN_OR_RETURN(k->reference_, make_reference_kernel("", "Softmax", init));
    return std::unique_ptr<Kernel>(std::move(k));
  }

  Status run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const int rank = x.rank();
    if (rank == 0) return reference_->run(ctx);
    int64_t n = 0;
    if (ctx.opset() < 13) {
      // Coerced to 2-D [prod(dims[:axis]), prod(dims[axis:])]; each row is one softmax.
      int64_t axis = ctx.attrs().get_int("axis", 1);
      if (axis < 0) axis += rank;
      if (axis < 0 || axis > rank) return reference_->run(ctx);
      n = x.shape().numel(static_cast<int>(axis), rank);
    } else {
      int64_t axis = ctx.attrs().get_int("axis", -1);
      if (axis < 0) axis += rank;
      if (axis != rank - 1) return reference_->run(ctx);
      n = x.dim(rank - 1);
    }
    if (n == 0 || x.numel() == 0) return Status::ok();
    const int64_t rows = x.numel() / n;
    const float* xs = x.data_as<float>();
    float* ys = ctx.output(0).data_as<float>();
    parallel_for(ctx.pool(), rows, row_grain(n), [&](int64_t begin, int64_t end) {
      softmax_f32_rows(xs + begin * n, n, ys + begin * n, n, end - begin, n, nullptr, 0, 0);
    });
    return Status::ok();
  }

 private:
  std::unique_ptr<Kernel> reference_;
};

Result<std::unique_ptr<Kernel>> create_softmax(const KernelInit& init) { return SoftmaxKernel::create(init); }

// ---- LayerNormalization, SkipLayerNorm ------------------------------------------------------

// True when `p` broadcast to `x` is one value per position within the normalized axes
// [axis, rank) and the same for every row: its trailing dims match x's and any leading dims
// are 1.
bool row_shaped(const Shape& p, const Shape& x, int axis) {
  const int64_t inner = x.numel(axis, x.rank());
  if (p.numel() != inner || p.rank() > x.rank()) return false;
  const int offset = x.rank() - p.rank();
  for (int i = 0; i < p.rank(); ++i)
    if (offset + i >= axis ? p[i] != x[offset + i] : p[i] != 1) return false;
  return true;
}

class LayerNormKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init) {
    auto k = std::make_unique<LayerNormKernel>();
    IGNIS_ASSIGN_OR_RETURN(k->reference_, make_reference_kernel("", "LayerNormalization", init));
    return std::unique_ptr<Kernel>(std::move(k));
  }

  Status run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const int rank = x.rank();
    int64_t axis = ctx.attrs().get_int("axis", -1);
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) return reference_->run(ctx);
    const int a = static_cast<int>(axis);
    const int64_t inner = x.shape().numel(a, rank);
    if (x.numel() == 0) return Status::ok();
    if (!row_shaped(ctx.input(1).shape(), x.shape(), a) ||
        (ctx.has_input(2) && !row_shaped(ctx.input(2).shape(), x.shape(), a)))
      return reference_->run(ctx);
    const int64_t rows = x.numel() / inner;
    const float eps = ctx.attrs().get_float("epsilon", 1e-5f);
    const float* xs = x.data_as<float>();
    const float* gamma = ctx.input(1).data_as<float>();
    const float* beta = ctx.has_input(2) ? ctx.input(2).data_as<float>() : nullptr;
    float* ys = ctx.output(0).data_as<float>();
    float* mean = ctx.has_output(1) ? ctx.output(1).data_as<float>() : nullptr;
    float* inv = ctx.has_output(2) ? ctx.output(2).data_as<float>() : nullptr;
    parallel_for(ctx.pool(), rows, row_grain(inner), [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        LayerNormRow row;
        row.a = xs + r * inner;
        row.gamma = gamma;
        row.beta = beta;
        row.y = ys + r * inner;
        row.mean_out = mean ? mean + r : nullptr;
        row.inv_out = inv ? inv + r : nullptr;
        row.n = inner;
        row.eps = eps;
        layer_norm_f32_row(row);
      }
    });
    return Status::ok();
  }

 private:
  std::unique_ptr<Kernel> reference_;
};

Result<std::unique_ptr<Kernel>> create_layer_norm(const KernelInit& init) { return LayerNormKernel::create(init); }

// ai.ignis.LayerNormalization is ONNX LayerNormalization-17 for models importing older opsets.
Result<std::unique_ptr<Kernel>> create_ignis_layer_norm(const KernelInit& init) {
  KernelInit onnx = init;
  onnx.opset = 17;
  return LayerNormKernel::create(onnx);
}

class SkipLayerNormKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init) {
    auto k = std::make_unique<SkipLayerNormKernel>();
    IGNIS_ASSIGN_OR_RETURN(k->reference_, make_reference_kernel("ai.ignis", "SkipLayerNorm", init));
    return std::unique_ptr<Kernel>(std::move(k));
  }

  Status run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Tensor& skip = ctx.input(1);
    Tensor& y = ctx.output(0);
    if (y.numel() == 0) return Status::ok();
    if (!(x.shape() == y.shape()) || !(skip.shape() == y.shape())) return reference_->run(ctx);
    const int64_t n = y.shape().back();
    const int64_t rows = y.numel() / n;
    const float eps = ctx.attrs().get_float("epsilon", 1e-5f);
    const float* xs = x.data_as<float>();
    const float* ss = skip.data_as<float>();
    const float* gamma = ctx.input(2).data_as<float>();
    const float* beta = ctx.has_input(3) ? ctx.input(3).data_as<float>() : nullptr;
    const float* bias = ctx.has_input(4) ? ctx.input(4).data_as<float>() : nullptr;
    float* ys = y.data_as<float>();
    float* sum = ctx.has_output(1) ? ctx.output(1).data_as<float>() : nullptr;
    parallel_for(ctx.pool(), rows, row_grain(n), [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        LayerNormRow row;
        row.a = xs + r * n;
        row.b = ss + r * n;
        row.bias = bias;
        row.gamma = gamma;
        row.beta = beta;
        row.sum = sum ? sum + r * n : nullptr;
        row.y = ys + r * n;
        row.n = n;
        row.eps = eps;
        layer_norm_f32_row(row);
      }
    });
    return Status::ok();
  }

 private:
  std::unique_ptr<Kernel> reference_;
};

Result<std::unique_ptr<Kernel>> create_skip_layer_norm(const KernelInit& init) {
  return SkipLayerNormKernel::create(init);
}

}  // namespace

void register_nn_transformer(KernelRegistry& r) {
  r.add({.domain = "ai.ignis", .op_type = "Attention", .since_opset = 1, .until_opset = 1, .types = kF32,
         .isa = Isa::Avx2, .priority = 10, .id = "x86/attention_f32_avx2", .factory = create_attention});
  r.add({.domain = "ai.ignis", .op_type = "SkipLayerNorm", .since_opset = 1, .until_opset = 1, .types = kF32,
         .isa = Isa::Avx2, .priority = 10, .id = "x86/skiplayernorm_f32_avx2", .factory = create_skip_layer_norm});
  r.add({.domain = "", .op_type = "LayerNormalization", .since_opset = 17, .types = kF32,
         .isa = Isa::Avx2, .priority = 10, .id = "x86/layernormalization_f32_avx2", .factory = create_layer_norm});
  r.add({.domain = "ai.ignis", .op_type = "LayerNormalization", .since_opset = 1, .until_opset = 1, .types = kF32,
         .isa = Isa::Avx2, .priority = 10, .id = "x86/ignis_layernormalization_f32_avx2",
         .factory = create_ignis_layer_norm});
  r.add({.domain = "", .op_type = "Softmax", .since_opset = 1, .types = kF32, .isa = Isa::Avx2,
         .priority = 10, .id = "x86/softmax_f32_avx2", .factory = create_softmax});
}

}  // namespace ignis::kernels::x86
