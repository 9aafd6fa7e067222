// SPDX-License-Identifier: Apache-2.0
// Reference kernels for the recurrent ops: LSTM, GRU, RNN.
//
// Per direction, the input projection of every time step, X·W^T (+ the biases that only add),
// is one GEMM over all seq*batch rows before the time loop; each step then runs only the
// recurrent GEMM h·R^T over the batch and the element-wise gate math. Rows keep the order X
// has, so layout 1 ([batch, seq, ...]) needs no transposition: only the row index changes.
// Batch entries whose sequence_lens ended keep their state (it becomes Y_h / Y_c) and leave
// zeros in Y. float16/bfloat16 run through float32 copies.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "core/dtype_dispatch.h"
#include "core/strings.h"
#include "kernels/ref/nn_internal.h"
#include "kernels/ref/recurrent.h"

namespace ignis::kernels::ref {

namespace {

using Cell = RecurrentCell;

// ---- Activation functions -----------------------------------------------------------------

enum class ActKind {
  Relu,
  Tanh,
  Sigmoid,
  Affine,
  LeakyRelu,
  ThresholdedRelu,
  ScaledTanh,
  HardSigmoid,
  Elu,
  Softsign,
  Softplus
};

struct Activation {
  ActKind kind = ActKind::Sigmoid;
  float alpha = 0.0f;
  float beta = 0.0f;
};

struct ActInfo {
  const char* name;  // lower case; matched case-insensitively
  ActKind kind;
  bool uses_alpha, uses_beta;
  float alpha, beta;  // defaults: those of the ONNX operator of the same name
};

constexpr ActInfo kActs[] = {
    {"relu", ActKind::Relu, false, false, 0.0f, 0.0f},
    {"tanh", ActKind::Tanh, false, false, 0.0f, 0.0f},
    {"sigmoid", ActKind::Sigmoid, false, false, 0.0f, 0.0f},
    {"affine", ActKind::Affine, true, true, 1.0f, 0.0f},
    {"leakyrelu", ActKind::LeakyRelu, true, false, 0.01f, 0.0f},
    {"thresholdedrelu", ActKind::ThresholdedRelu, true, false, 1.0f, 0.0f},
    {"scaledtanh", ActKind::ScaledTanh, true, true, 1.0f, 1.0f},
    {"hardsigmoid", ActKind::HardSigmoid, true, true, 0.2f, 0.5f},
    {"elu", ActKind::Elu, true, false, 1.0f, 0.0f},
    {"softsign", ActKind::Softsign, false, false, 0.0f, 0.0f},
    {"softplus", ActKind::Softplus, false, false, 0.0f, 0.0f},
};

template <class C>
C activate(const Activation& a, C x) {
  const C alpha = static_cast<C>(a.alpha), beta = static_cast<C>(a.beta);
  switch (a.kind) {
    case ActKind::Relu: return x > C(0) ? x : C(0);
    case ActKind::Tanh: return std::tanh(x);
    case ActKind::Sigmoid: {
      // Written so that exp never overflows.
      if (x >= C(0)) return C(1) / (C(1) + std::exp(-x));
      const C e = std::exp(x);
      return e / (C(1) + e);
    }
    case ActKind::Affine: return alpha * x + beta;
    case ActKind::LeakyRelu: return x >= C(0) ? x : alpha * x;
    case ActKind::ThresholdedRelu: return x >= alpha ? x : C(0);
    case ActKind::ScaledTanh: return alpha * std::tanh(beta * x);
    case ActKind::HardSigmoid: return std::min(std::max(alpha * x + beta, C(0)), C(1));
    case ActKind::Elu: return x >= C(0) ? x : alpha * (std::exp(x) - C(1));
    case ActKind::Softsign: return x / (C(1) + std::fabs(x));
    case ActKind::Softplus: return x > C(0) ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
  }
  return x;
}

// The activation list, `per_dir` functions per direction. activation_alpha/beta values are
// consumed in list order by the functions that take an alpha (beta); the others use their
// operator's default. A single set for a bidirectional op serves both directions.
Result<std::vector<Activation>> parse_activations(const AttrMap& attrs, Cell cell, int64_t dirs) {
  std::vector<std::string> names;
  if (attrs.has("activations")) names = attrs.get_strings("activations");
  const size_t per_dir = cell == Cell::Lstm ? 3 : cell == Cell::Gru ? 2 : 1;
  if (names.empty()) {
    static const std::vector<std::string> kLstm = {"Sigmoid", "Tanh", "Tanh"}, kGru = {"Sigmoid", "Tanh"},
                                          kRnn = {"Tanh"};
    names = cell == Cell::Lstm ? kLstm : cell == Cell::Gru ? kGru : kRnn;
  }
  const std::vector<float> alphas = attrs.get_floats("activation_alpha"), betas = attrs.get_floats("activation_beta");
  size_t next_alpha = 0, next_beta = 0;
  std::vector<Activation> out;
  for (const std::string& raw : names) {
    std::string name = raw;
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    const ActInfo* info = nullptr;
    for (const ActInfo& a : kActs)
      if (name == a.name) info = &a;
    if (!info) return unsupported(str_cat("recurrent op: activation function '", raw, "'"));
    Activation act{info->kind, info->alpha, info->beta};
    if (info->uses_alpha && next_alpha < alphas.size()) act.alpha = alphas[next_alpha++];
    if (info->uses_beta && next_beta < betas.size()) act.beta = betas[next_beta++];
    out.push_back(act);
  }
  if (out.size() == per_dir && dirs == 2) {
    const std::vector<Activation> forward = out;
    out.insert(out.end(), forward.begin(), forward.end());
  }
  if (out.size() != per_dir * static_cast<size_t>(dirs))
    return invalid_argument(str_cat("recurrent op: expected ", per_dir * dirs, " activations, got ", out.size()));
  return out;
}

// ---- Problem description ---------------------------------------------------------------

struct Params {
  Cell cell = Cell::Rnn;
  int64_t seq = 0, batch = 0, input = 0, hidden = 0, dirs = 1;
  int gates = 1;
  bool layout1 = false;
  bool reverse = false;  // direction == "reverse" (bidirectional: direction 1 is reversed)
  bool has_clip = false;
  float clip = 0.0f;
  bool input_forget = false;
  bool linear_before_reset = false;
  std::vector<Activation> acts;  // per direction, `acts.size() / dirs` functions

  // Row of X (and of the projected X·W^T) holding time t of batch entry b.
  int64_t x_row(int64_t t, int64_t b) const { return layout1 ? b * seq + t : t * batch + b; }
  // Offset of Y[t, d, b, :] (layout 0) or Y[b, t, d, :] (layout 1).
  int64_t y_offset(int64_t t, int64_t d, int64_t b) const {
    return (layout1 ? (b * seq + t) * dirs + d : (t * dirs + d) * batch + b) * hidden;
  }
  // Offset of state[d, b, :] (layout 0) or state[b, d, :] (layout 1): initial_h/c, Y_h/Y_c.
  int64_t state_offset(int64_t d, int64_t b) const { return (layout1 ? b * dirs + d : d * batch + b) * hidden; }
};

Params make_params(const KernelContext& ctx, Cell cell) {
  Params p;
  p.cell = cell;
  p.gates = cell == Cell::Lstm ? 4 : cell == Cell::Gru ? 3 : 1;
  p.layout1 = ctx.opset() >= 14 && ctx.attrs().get_int("layout", 0) == 1;
  const Tensor& x = ctx.input(0);
  p.seq = p.layout1 ? x.dim(1) : x.dim(0);
  p.batch = p.layout1 ? x.dim(0) : x.dim(1);
  p.input = x.dim(2);
  p.dirs = ctx.input(1).dim(0);
  p.hidden = ctx.input(2).dim(2);
  p.reverse = ctx.attrs().get_string("direction", "forward") == "reverse";
  p.has_clip = ctx.attrs().has("clip");
  p.clip = ctx.attrs().get_float("clip", 0.0f);
  p.input_forget = cell == Cell::Lstm && ctx.attrs().get_int("input_forget", 0) != 0;
  p.linear_before_reset = cell == Cell::Gru && ctx.attrs().get_int("linear_before_reset", 0) != 0;
  return p;
}

// Buffers in the compute type C; absent optional inputs/outputs are null. Layouts as the op
// defines them (Params' offset helpers index them).
template <class C>
struct Io {
  const C* x = nullptr;
  const C* w = nullptr;
  const C* r = nullptr;
  const C* b = nullptr;
  const int32_t* lens = nullptr;
  const C* h0 = nullptr;
  const C* c0 = nullptr;
  const C* p = nullptr;
  C* y = nullptr;
  C* yh = nullptr;
  C* yc = nullptr;
};

// Scratch for one direction, reused by the next.
template <class C>
struct Work {
  C* xw;    // [seq*batch, gates*hidden]: X·W^T + biases, rows in X's order
  C* hr;    // [batch, gates*hidden]: h·R^T of the current step
  C* h;     // [batch, hidden] hidden state
  C* c;     // [batch, hidden] LSTM cell state
  C* rh;    // [batch, hidden] GRU r (.) h
  C* hh;    // [batch, hidden] GRU (r (.) h)·Rh^T
  C* bias;  // [gates*hidden] Wb + Rb (GRU with linear_before_reset: Wbh alone for the h gate)
  C* rbh;   // [hidden] GRU Rbh, applied inside the reset product when linear_before_reset
};

template <class C>
Work<C> carve_work(const Params& p, C* base) {
  const int64_t gh = p.gates * p.hidden, bh = p.batch * p.hidden;
  Work<C> w;
  w.xw = base;
  w.hr = w.xw + p.seq * p.batch * gh;
  w.h = w.hr + p.batch * gh;
  w.c = w.h + bh;
  w.rh = w.c + bh;
  w.hh = w.rh + bh;
  w.bias = w.hh + bh;
  w.rbh = w.bias + gh;
  return w;
}

size_t work_elements(const Params& p) {
  const int64_t gh = p.gates * p.hidden, bh = p.batch * p.hidden;
  return static_cast<size_t>(p.seq * p.batch * gh + p.batch * gh + 4 * bh + gh + p.hidden);
}

// The step-independent part: xw = X·W_d^T + biases, for every time step at once.
template <class C>
void project_inputs(const Params& p, const Io<C>& io, int64_t d, const Work<C>& w, const RecurrentKernels* prod,
                    ThreadPool* pool) {
  const int64_t gh = p.gates * p.hidden, rows = p.seq * p.batch;
  if constexpr (std::is_same_v<C, float>) {
    if (prod) prod->project(d, rows, io.x, w.xw, pool);
  }
  if (!prod)
    gemm<C>(false, true, rows, gh, p.input, C(1), io.x, p.input, io.w + d * gh * p.input, p.input, C(0), w.xw, gh,
            pool);
  std::fill(w.bias, w.bias + gh, C(0));
  std::fill(w.rbh, w.rbh + p.hidden, C(0));
  if (!io.b) return;
  const C* wb = io.b + d * 2 * gh;
  const C* rb = wb + gh;
  for (int64_t j = 0; j < gh; ++j) w.bias[j] = wb[j] + rb[j];
  if (p.linear_before_reset) {
    for (int64_t j = 0; j < p.hidden; ++j) {
      w.bias[2 * p.hidden + j] = wb[2 * p.hidden + j];
      w.rbh[j] = rb[2 * p.hidden + j];
    }
  }
  parallel_for(pool, rows, std::max<int64_t>(1, 4096 / std::max<int64_t>(gh, 1)), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r)
      for (int64_t j = 0; j < gh; ++j) w.xw[r * gh + j] += w.bias[j];
  });
}

// One direction's time loop. Step s of batch entry b is time s (forward) or len-1-s
// (reverse) and does nothing once s >= len.
template <class C>
class DirectionRunner {
 public:
  DirectionRunner(const Params& p, const Io<C>& io, int64_t d, const Work<C>& w, const RecurrentKernels* prod,
                  ThreadPool* pool)
      : p_(p), io_(io), d_(d), w_(w), fast_(prod), pool_(pool), gh_(p.gates * p.hidden), hid_(p.hidden),
        rev_(p.reverse || d == 1), r_(io.r ? io.r + d * gh_ * hid_ : nullptr),
        act_(p.acts.data() + d * static_cast<int64_t>(p.acts.size()) / p.dirs),
        grain_(std::max<int64_t>(1, 2048 / std::max<int64_t>(gh_, 1))) {}

  void run() {
    load_state(io_.h0, w_.h);
    load_state(io_.c0, w_.c);
    for (int64_t s = 0; s < p_.seq; ++s) {
      switch (p_.cell) {
        case Cell::Lstm: lstm_step(s); break;
        case Cell::Gru: gru_step(s); break;
        case Cell::Rnn: rnn_step(s); break;
      }
    }
    store_state(w_.h, io_.yh);
    store_state(w_.c, io_.yc);
  }

 private:
  // Time index of step s for batch entry b, or -1 when b's sequence has ended.
  int64_t time_of(int64_t b, int64_t s) const {
    const int64_t len = io_.lens ? io_.lens[b] : p_.seq;
    if (s >= len) return -1;
    return rev_ ? len - 1 - s : s;
  }

  C clip(C v) const {
    if (!p_.has_clip) return v;
    const C c = static_cast<C>(p_.clip);
    return v < -c ? -c : (v > c ? c : v);
  }

  void load_state(const C* src, C* dst) const {
    for (int64_t b = 0; b < p_.batch; ++b)
      for (int64_t j = 0; j < hid_; ++j) dst[b * hid_ + j] = src ? src[p_.state_offset(d_, b) + j] : C(0);
  }

  void store_state(const C* src, C* dst) const {
    if (!dst) return;
    for (int64_t b = 0; b < p_.batch; ++b)
      std::copy(src + b * hid_, src + (b + 1) * hid_, dst + p_.state_offset(d_, b));
  }

  // out[:, 0:n] = h·R[row0 : row0 + n]^T, rows of out ldo apart.
  void recur(int64_t row0, int64_t n, const C* h, C* out, int64_t ldo) const {
    if constexpr (std::is_same_v<C, float>) {
      if (fast_) return fast_->recur(d_, row0, n, h, p_.batch, out, ldo, pool_);
    }
    gemm<C>(false, true, p_.batch, n, hid_, C(1), h, hid_, r_ + row0 * hid_, hid_, C(0), out, ldo, pool_);
  }

  template <class F>
  void for_active_rows(int64_t s, F&& f) const {
    parallel_for(pool_, p_.batch, grain_, [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) {
        const int64_t t = time_of(b, s);
        if (t >= 0) f(b, t);
      }
    });
  }

  void emit(int64_t t, int64_t b, int64_t j, C v) const {
    if (io_.y) io_.y[p_.y_offset(t, d_, b) + j] = v;
  }

  // v[0:n] = f(clip(v)) in place for activation `a` (clip only where the op applies it: gate
  // inputs). Sigmoid and Tanh over whole rows go to the faster kernel's versions when it has them.
  void apply(const Activation& a, C* v, int64_t n, bool with_clip) const {
    if (with_clip && p_.has_clip)
      for (int64_t j = 0; j < n; ++j) v[j] = clip(v[j]);
    if constexpr (std::is_same_v<C, float>) {
      if (fast_ && a.kind == ActKind::Sigmoid) return fast_->sigmoid(v, n);
      if (fast_ && a.kind == ActKind::Tanh) return fast_->tanh(v, n);
    }
    for (int64_t j = 0; j < n; ++j) v[j] = activate(a, v[j]);
  }

  // Gates in W/R order i, o, f, c; peepholes P in order i, o, f. Each row's gate inputs are
  // summed in hr, activated a gate at a time, then combined.
  void lstm_step(int64_t s) {
    recur(0, gh_, w_.h, w_.hr, gh_);
    const C* peep = io_.p ? io_.p + d_ * 3 * hid_ : nullptr;
    for_active_rows(s, [&](int64_t b, int64_t t) {
      const C* gx = w_.xw + p_.x_row(t, b) * gh_;
      C* g = w_.hr + b * gh_;
      C* hb = w_.h + b * hid_;
      C* cb = w_.c + b * hid_;
      C* tc = w_.rh + b * hid_;  // act_2(c), scratch that LSTM does not otherwise use
      C* gi = g;
      C* go = g + hid_;
      C* gf = g + 2 * hid_;
      C* gc = g + 3 * hid_;
      for (int64_t j = 0; j < gh_; ++j) g[j] += gx[j];
      if (peep)
        for (int64_t j = 0; j < hid_; ++j) {
          gi[j] += peep[j] * cb[j];
          gf[j] += peep[2 * hid_ + j] * cb[j];
        }
      apply(act_[0], gi, hid_, true);
      if (!p_.input_forget) apply(act_[0], gf, hid_, true);
      apply(act_[1], gc, hid_, true);
      for (int64_t j = 0; j < hid_; ++j) {
        // input_forget couples the gates: what is let in replaces what is forgotten.
        const C fg = p_.input_forget ? C(1) - gi[j] : gf[j];
        const C c_new = fg * cb[j] + gi[j] * gc[j];
        cb[j] = c_new;
        tc[j] = c_new;
        if (peep) go[j] += peep[hid_ + j] * c_new;
      }
      apply(act_[0], go, hid_, true);
      // clip bounds the gate inputs only, not the cell state fed to h (as onnxruntime does).
      apply(act_[2], tc, hid_, false);
      for (int64_t j = 0; j < hid_; ++j) {
        hb[j] = go[j] * tc[j];
        emit(t, b, j, hb[j]);
      }
    });
  }

  // Gates in W/R order z, r, h. Without linear_before_reset the h gate's recurrent product
  // takes r (.) h, so it is a second product after r is known.
  void gru_step(int64_t s) {
    const bool lbr = p_.linear_before_reset;
    recur(0, lbr ? gh_ : 2 * hid_, w_.h, w_.hr, gh_);
    if (lbr) {
      for_active_rows(s, [&](int64_t b, int64_t t) {
        const C* gx = w_.xw + p_.x_row(t, b) * gh_;
        C* g = w_.hr + b * gh_;
        C* hb = w_.h + b * hid_;
        for (int64_t j = 0; j < 2 * hid_; ++j) g[j] += gx[j];
        apply(act_[0], g, 2 * hid_, true);  // z, r
        C* gh = g + 2 * hid_;
        for (int64_t j = 0; j < hid_; ++j) gh[j] = gx[2 * hid_ + j] + g[hid_ + j] * (gh[j] + w_.rbh[j]);
        apply(act_[1], gh, hid_, true);
        for (int64_t j = 0; j < hid_; ++j) {
          hb[j] = (C(1) - g[j]) * gh[j] + g[j] * hb[j];
          emit(t, b, j, hb[j]);
        }
      });
      return;
    }
    // Rows that have ended get r (.) h = 0; their product is computed but never read.
    std::fill(w_.rh, w_.rh + p_.batch * hid_, C(0));
    for_active_rows(s, [&](int64_t b, int64_t t) {
      const C* gx = w_.xw + p_.x_row(t, b) * gh_;
      C* g = w_.hr + b * gh_;
      for (int64_t j = 0; j < 2 * hid_; ++j) g[j] += gx[j];
      apply(act_[0], g, 2 * hid_, true);  // z (kept for the update below), r
      for (int64_t j = 0; j < hid_; ++j) w_.rh[b * hid_ + j] = g[hid_ + j] * w_.h[b * hid_ + j];
    });
    recur(2 * hid_, hid_, w_.rh, w_.hh, hid_);
    for_active_rows(s, [&](int64_t b, int64_t t) {
      const C* gx = w_.xw + p_.x_row(t, b) * gh_;
      const C* z = w_.hr + b * gh_;
      C* cand = w_.hh + b * hid_;
      C* hb = w_.h + b * hid_;
      for (int64_t j = 0; j < hid_; ++j) cand[j] += gx[2 * hid_ + j];
      apply(act_[1], cand, hid_, true);
      for (int64_t j = 0; j < hid_; ++j) {
        hb[j] = (C(1) - z[j]) * cand[j] + z[j] * hb[j];
        emit(t, b, j, hb[j]);
      }
    });
  }

  void rnn_step(int64_t s) {
    recur(0, gh_, w_.h, w_.hr, gh_);
    for_active_rows(s, [&](int64_t b, int64_t t) {
      const C* gx = w_.xw + p_.x_row(t, b) * gh_;
      C* g = w_.hr + b * gh_;
      C* hb = w_.h + b * hid_;
      for (int64_t j = 0; j < hid_; ++j) g[j] += gx[j];
      apply(act_[0], g, hid_, true);
      for (int64_t j = 0; j < hid_; ++j) {
        hb[j] = g[j];
        emit(t, b, j, hb[j]);
      }
    });
  }

  const Params& p_;
  const Io<C>& io_;
  int64_t d_;
  const Work<C>& w_;
  const RecurrentKernels* fast_;  // float32 products and activations, or null: the reference ones
  ThreadPool* pool_;
  int64_t gh_, hid_;
  bool rev_;
  const C* r_;
  const Activation* act_;
  int64_t grain_;
};

template <class C>
void run_recurrent(const Params& p, const Io<C>& io, KernelContext& ctx, const RecurrentKernels* prod) {
  // Entries past a sequence's end are never written by the steps; the spec wants zeros.
  if (io.y && io.lens) std::fill(io.y, io.y + p.seq * p.dirs * p.batch * p.hidden, C(0));
  // A bidirectional op on two or more threads runs its two time loops side by side, one
  // thread each: a step is too little work to split (a pool hand-off per step), and the
  // directions are independent.
  ThreadPool* pool = ctx.pool();
  const bool side_by_side = p.dirs == 2 && pool != nullptr && pool->threads() >= 2;
  const size_t elements = std::max<size_t>(1, work_elements(p));
  C* scratch = static_cast<C*>(ctx.scratch(elements * sizeof(C) * (side_by_side ? 2 : 1)));
  const Work<C> work[2] = {carve_work(p, scratch), carve_work(p, side_by_side ? scratch + elements : scratch)};
  if (!side_by_side) {
    for (int64_t d = 0; d < p.dirs; ++d) {
      project_inputs(p, io, d, work[0], prod, pool);
      DirectionRunner<C>(p, io, d, work[0], prod, pool).run();
    }
    return;
  }
  for (int64_t d = 0; d < 2; ++d) project_inputs(p, io, d, work[d], prod, pool);
  pool->parallel_for(2, 1, [&](int64_t begin, int64_t end) {
    for (int64_t d = begin; d < end; ++d) DirectionRunner<C>(p, io, d, work[d], prod, nullptr).run();
  });
}

// Inputs 0..7 and outputs 0..2 of the node as C buffers (null when absent).
template <class C, class In, class Out>
Io<C> make_io(const KernelContext& ctx, In in, Out out) {
  Io<C> io;
  io.x = in(0);
  io.w = in(1);
  io.r = in(2);
  io.b = in(3);
  io.lens = ctx.has_input(4) ? ctx.input(4).data_as<int32_t>() : nullptr;
  io.h0 = in(5);
  io.c0 = in(6);
  io.p = in(7);
  io.y = out(0);
  io.yh = out(1);
  io.yc = out(2);
  return io;
}

template <class C>
void run_direct(const Params& p, KernelContext& ctx, const RecurrentKernels* prod) {
  auto in = [&](int i) -> const C* { return ctx.has_input(i) ? ctx.input(i).data_as<C>() : nullptr; };
  auto out = [&](int i) -> C* { return ctx.has_output(i) ? ctx.output(i).data_as<C>() : nullptr; };
  run_recurrent<C>(p, make_io<C>(ctx, in, out), ctx, prod);
}

// float16 / bfloat16: float32 copies in, float32 results stored back.
void run_staged(const Params& p, KernelContext& ctx) {
  std::vector<std::vector<float>> ins(8), outs(3);
  for (int i = 0; i < 8; ++i)
    if (i != 4 && ctx.has_input(i)) ins[i] = to_float_vector(ctx.input(i));
  for (int i = 0; i < 3; ++i)
    if (ctx.has_output(i)) outs[i].resize(static_cast<size_t>(ctx.output(i).numel()));
  auto in = [&](int i) -> const float* { return ctx.has_input(i) && i != 4 ? ins[i].data() : nullptr; };
  auto out = [&](int i) -> float* { return ctx.has_output(i) ? outs[i].data() : nullptr; };
  run_recurrent<float>(p, make_io<float>(ctx, in, out), ctx, nullptr);
  for (int i = 0; i < 3; ++i)
    if (ctx.has_output(i)) store_float_vector(outs[i], ctx.output(i));
}

}  // namespace

Status run_recurrent_op(KernelContext& ctx, RecurrentCell cell, const RecurrentKernels* products) {
  const char* op = cell == Cell::Lstm ? "LSTM" : cell == Cell::Gru ? "GRU" : "RNN";
  Params p = make_params(ctx, cell);
  IGNIS_ASSIGN_OR_RETURN(p.acts, parse_activations(ctx.attrs(), cell, p.dirs));
  if (ctx.has_input(4)) {
    const int32_t* lens = ctx.input(4).data_as<int32_t>();
    for (int64_t b = 0; b < p.batch; ++b)
      if (lens[b] < 0 || lens[b] > p.seq)
        return invalid_argument(str_cat(op, ": sequence_lens[", b, "] = ", lens[b], " is outside [0, ", p.seq, "]"));
  }
  switch (ctx.input(0).dtype()) {
    case DType::F32: run_direct<float>(p, ctx, products); break;
    case DType::F64: run_direct<double>(p, ctx, nullptr); break;
    case DType::F16:
    case DType::BF16: run_staged(p, ctx); break;
    default: return unsupported(str_cat(op, ": dtype ", dtype_name(ctx.input(0).dtype())));
  }
  return Status::ok();
}

namespace {

Status lstm_kernel(KernelContext& ctx) { return run_recurrent_op(ctx, Cell::Lstm, nullptr); }
Status gru_kernel(KernelContext& ctx) { return run_recurrent_op(ctx, Cell::Gru, nullptr); }
Status rnn_kernel(KernelContext& ctx) { return run_recurrent_op(ctx, Cell::Rnn, nullptr); }

}  // namespace

void register_recurrent(KernelRegistry& r) {
  constexpr DTypeSet kTypes = {DType::F32, DType::F64, DType::F16, DType::BF16};
  r.add({.domain = "", .op_type = "LSTM", .since_opset = 1, .until_opset = 22, .types = kTypes, .id = "ref/lstm",
         .fn = lstm_kernel});
  r.add({.domain = "", .op_type = "GRU", .since_opset = 1, .until_opset = 22, .types = kTypes, .id = "ref/gru",
         .fn = gru_kernel});
  r.add({.domain = "", .op_type = "RNN", .since_opset = 1, .until_opset = 22, .types = kTypes, .id = "ref/rnn",
         .fn = rnn_kernel});
}

}  // namespace ignis::kernels::ref
