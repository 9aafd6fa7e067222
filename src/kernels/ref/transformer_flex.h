// SPDX-License-Identifier: Apache-2.0
// The stages of ai.onnx.preview FlexAttention's reference kernel. The kernel that strings them
// together (src/runtime/flex_attention.cc) runs the optional score_mod and prob_mod subgraphs
// between them, which only the runtime can do.
//
// Rounding follows the ONNX reference: Q and K scaled by sqrt(scale) and QK^T in the inputs'
// dtype, then the scores and the softmax in the score dtype, P V in the score dtype and the
// result in the inputs' dtype.
#pragma once

#include "core/attribute.h"
#include "core/thread_pool.h"
#include "ignis/tensor.h"

namespace ignis::kernels::ref {

// The dtype of the scores and probabilities: softmax_precision (a TensorProto code) when set,
// else double for double inputs and float32 for the others.
DType flex_attention_score_dtype(const AttrMap& attrs, DType input);

// scores [B, Hq, L, S] = (Q sqrt(scale)) (K sqrt(scale))^T for Q [B, Hq, L, E], K [B, Hkv, S, E];
// query head h reads key head h / (Hq / Hkv). `scores` is allocated with the score dtype.
void flex_attention_scores(const AttrMap& attrs, const Tensor& q, const Tensor& k, Tensor& scores, ThreadPool* pool);

// probs = softmax of `scores` over the last axis, in the scores' dtype. As ONNX Softmax, a row
// whose every score is -inf gives NaN.
void flex_attention_softmax(const Tensor& scores, Tensor& probs, ThreadPool* pool);

// y [B, Hq, L, Ev] = probs V for V [B, Hkv, S, Ev] cast to the probs' dtype, rounded to y's dtype.
void flex_attention_output(const Tensor& probs, const Tensor& v, Tensor& y, ThreadPool* pool);

}  // namespace ignis::kernels::ref
