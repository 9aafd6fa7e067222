// SPDX-License-Identifier: Apache-2.0
// A model's opset selects, per op, the newest version ONNX published at or before it.
#include "core/onnx_op_versions.h"

#include <gtest/gtest.h>

namespace ignis {
namespace {

TEST(OnnxOpVersions, ResolvesToTheNewestVersionAtOrBeforeTheOpset) {
  // Add: versions 1, 6, 7, 13, 14.
  EXPECT_EQ(onnx_op_version("", "Add", 23), 14);
  EXPECT_EQ(onnx_op_version("", "Add", 14), 14);
  EXPECT_EQ(onnx_op_version("", "Add", 12), 7);
  // Conv: versions 1, 11, 22.
  EXPECT_EQ(onnx_op_version("", "Conv", 21), 11);
  EXPECT_EQ(onnx_op_version("", "Conv", 22), 22);
  // ai.onnx.ml: LinearClassifier has only version 1.
  EXPECT_EQ(onnx_op_version("ai.onnx.ml", "LinearClassifier", 3), 1);
  // Opset 27 introduced LinearAttention; opset 28 still runs it.
  EXPECT_EQ(onnx_op_version("", "LinearAttention", 28), 27);
  EXPECT_EQ(onnx_newest_opset("ai.onnx.preview"), 1);
}

TEST(OnnxOpVersions, AssumesNothingOutsideTheTable) {
  EXPECT_EQ(onnx_op_version("ai.ignis", "FusedConv", 1), 1);      // not an ONNX domain
  EXPECT_EQ(onnx_op_version("", "NoSuchOp", 17), 17);             // not an ONNX op
  const int64_t beyond = onnx_newest_opset("") + 1;              // an opset newer than the table
  EXPECT_EQ(onnx_op_version("", "Add", beyond), beyond);
  EXPECT_EQ(onnx_op_version("", "Gelu", 19), 19);                 // before the op's first version (20)
  EXPECT_GE(onnx_newest_opset(""), 23);
  EXPECT_EQ(onnx_newest_opset("com.example"), 0);
}

}  // namespace
}  // namespace ignis
