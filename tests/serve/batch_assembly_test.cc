// SPDX-License-Identifier: Apache-2.0
// Batch assembly against index-by-index references written here: strided box copies on random
// shapes, requests padded into one batch, and outputs cut back per request.
#include "serve/batch_assembly.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

#include "serve/padding.h"

namespace ignis::serve {
namespace {

// Row-major offset of `index` in `dims`.
int64_t offset(const std::vector<int64_t>& index, const std::vector<int64_t>& dims) {
  int64_t o = 0;
  for (size_t d = 0; d < dims.size(); ++d) o = o * dims[d] + index[d];
  return o;
}

// Calls f(index) for every index of the box.
template <class F>
void for_each_index(const std::vector<int64_t>& box, F f) {
  int64_t n = 1;
  for (int64_t e : box) n *= e;
  std::vector<int64_t> index(box.size(), 0);
  for (int64_t k = 0; k < n; ++k) {
    int64_t r = k;
    for (size_t d = box.size(); d-- > 0;) {
      index[d] = r % box[d];
      r /= box[d];
    }
    f(index);
  }
}

TEST(CopyBox, MatchesAnIndexByIndexCopyOnRandomShapes) {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 200; ++trial) {
    const size_t rank = 1 + rng() % 4;
    std::vector<int64_t> src_dims(rank), dst_dims(rank), box(rank);
    for (size_t d = 0; d < rank; ++d) {
      box[d] = static_cast<int64_t>(rng() % 4);  // zero extents included
      src_dims[d] = box[d] + static_cast<int64_t>(rng() % 3);
      dst_dims[d] = box[d] + static_cast<int64_t>(rng() % 3);
      if (trial % 3 == 0) src_dims[d] = dst_dims[d] = box[d];  // whole rows: the merged path
    }
    int64_t src_n = 1, dst_n = 1;
    for (size_t d = 0; d < rank; ++d) src_n *= src_dims[d], dst_n *= dst_dims[d];
    std::vector<int32_t> src(static_cast<size_t>(src_n)), dst(static_cast<size_t>(dst_n), -1), want = dst;
    for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<int32_t>(i * 7 + 1);
    for_each_index(box, [&](const std::vector<int64_t>& idx) {
      want[static_cast<size_t>(offset(idx, dst_dims))] = src[static_cast<size_t>(offset(idx, src_dims))];
    });
    copy_box(reinterpret_cast<const std::byte*>(src.data()), src_dims, reinterpret_cast<std::byte*>(dst.data()),
             dst_dims, box, sizeof(int32_t));
    ASSERT_EQ(dst, want) << "trial " << trial;
  }
}

TEST(BucketExtent, RoundsUpToTheNextEdge) {
  const std::vector<int64_t> edges{16, 32, 64};
  EXPECT_EQ(bucket_extent(edges, 1), 16);
  EXPECT_EQ(bucket_extent(edges, 16), 16);
  EXPECT_EQ(bucket_extent(edges, 17), 32);
  EXPECT_EQ(bucket_extent(edges, 65), 65);  // above every edge: its own extent
}

InferRequest ids_request(const std::vector<std::vector<int64_t>>& rows, std::vector<std::vector<int64_t>>* storage) {
  // input "ids" [rows, len] and "mask" [rows, len] of ones; each row's values are given.
  InferRequest r;
  storage->push_back({});
  std::vector<int64_t>& data = storage->back();
  for (const auto& row : rows) data.insert(data.end(), row.begin(), row.end());
  storage->push_back(std::vector<int64_t>(data.size(), 1));
  std::vector<int64_t>& ones = storage->back();
  const std::vector<int64_t> shape{static_cast<int64_t>(rows.size()), static_cast<int64_t>(rows[0].size())};
  for (auto [name, buf] : {std::pair<const char*, std::vector<int64_t>*>{"ids", &data}, {"mask", &ones}}) {
    InferInput in;
    in.name = name;
    in.dtype = DType::I64;
    in.shape = shape;
    in.tensor = Tensor::view(DType::I64, Shape(shape), buf->data());
    r.inputs.push_back(std::move(in));
  }
  return r;
}

// Requests given by their rows of ids, assembled into one batch.
struct Batch {
  explicit Batch(const std::vector<std::vector<std::vector<int64_t>>>& requests,
                 const std::map<std::string, double>& pad_values = {}) {
    storage.reserve(2 * requests.size());  // the requests view it: no reallocation
    for (const auto& rows : requests) this->requests.push_back(ids_request(rows, &storage));
    std::vector<const InferRequest*> ptrs;
    for (const auto& r : this->requests) ptrs.push_back(&r);
    inputs = assemble_batch(ptrs, pad_values, &buffers, &layout);
  }
  std::vector<std::vector<int64_t>> storage;
  std::vector<InferRequest> requests;
  BatchBuffers buffers;
  BatchLayout layout;
  NamedTensors inputs;
};

TEST(AssembleBatch, PadsEachRequestToTheLongestWithThePadValue) {
  Batch batch({{{1, 2, 3}}, {{4, 5, 6, 7, 8}, {9, 10, 11, 12, 13}}, {{14, 15, 16, 17}}}, {{"ids", -1}});
  const NamedTensors& in = batch.inputs;
  const BatchLayout& layout = batch.layout;
  ASSERT_EQ(in.size(), 2u);
  EXPECT_EQ(layout.rows, (std::vector<int64_t>{1, 2, 1}));
  EXPECT_EQ(layout.total_rows, 4);
  EXPECT_TRUE(layout.padded);
  EXPECT_EQ(in[0].second.shape(), Shape({4, 5}));
  const std::vector<int64_t> ids_want{1, 2, 3, -1, -1, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, -1};
  const std::vector<int64_t> mask_want{1, 1, 1, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0};
  const int64_t* ids = static_cast<const int64_t*>(in[0].second.data());
  const int64_t* mask = static_cast<const int64_t*>(in[1].second.data());
  EXPECT_EQ(std::vector<int64_t>(ids, ids + 20), ids_want);
  EXPECT_EQ(std::vector<int64_t>(mask, mask + 20), mask_want);
  EXPECT_EQ(layout.real_elements, 2u * (3 + 10 + 4));
  EXPECT_EQ(layout.batch_elements, 2u * 20);
}

TEST(AssembleBatch, PadsToTheExtentTheCallerChooses) {
  std::vector<std::vector<int64_t>> storage;
  storage.reserve(4);
  const InferRequest a = ids_request({{1, 2}}, &storage);
  const InferRequest b = ids_request({{3, 4, 5}}, &storage);
  BatchBuffers buffers;
  BatchLayout layout;
  // "ids" padded to a bucket edge of 4; "mask" to its longest, 3.
  NamedTensors in = assemble_batch({&a, &b}, {}, &buffers, &layout,
                                   [](const std::string& input, size_t dim, int64_t largest) {
                                     return input == "ids" && dim == 1 ? int64_t{4} : largest;
                                   });
  EXPECT_EQ(in[0].second.shape(), Shape({2, 4}));
  EXPECT_EQ(in[1].second.shape(), Shape({2, 3}));
  const int64_t* ids = static_cast<const int64_t*>(in[0].second.data());
  EXPECT_EQ(std::vector<int64_t>(ids, ids + 8), (std::vector<int64_t>{1, 2, 0, 0, 3, 4, 5, 0}));
  EXPECT_EQ(layout.batch_elements, 8u + 6u);
}

TEST(AssembleBatch, EqualShapesAreConcatenatedWithoutPadding) {
  Batch batch({{{1, 2}}, {{3, 4}}});
  const NamedTensors& in = batch.inputs;
  const BatchLayout& layout = batch.layout;
  EXPECT_FALSE(layout.padded);
  const int64_t* ids = static_cast<const int64_t*>(in[0].second.data());
  EXPECT_EQ(std::vector<int64_t>(ids, ids + 4), (std::vector<int64_t>{1, 2, 3, 4}));
  EXPECT_EQ(layout.real_elements, layout.batch_elements);
}

TEST(RequestOutput, CutsRowsAndLinkedExtentsBack) {
  Batch batch({{{1, 2, 3}}, {{4, 5, 6, 7, 8}, {9, 10, 11, 12, 13}}});
  const InferRequest &a = batch.requests[0], &b = batch.requests[1];
  const BatchLayout& layout = batch.layout;
  // A batch output [3 rows, 5 positions, 2 features], value = 100 * row + 10 * position + feature.
  auto out = std::make_shared<Tensor>(Tensor::empty(DType::F32, Shape({3, 5, 2})));
  float* o = static_cast<float*>(out->data());
  for (int r = 0; r < 3; ++r)
    for (int p = 0; p < 5; ++p)
      for (int f = 0; f < 2; ++f) o[(r * 5 + p) * 2 + f] = static_cast<float>(100 * r + 10 * p + f);
  const std::vector<DimLink> links{{1, "ids", 1}};
  ASSERT_TRUE(splittable(*out, layout, links, a));
  const Tensor ta = request_output(*out, out, layout, 0, links, a);
  EXPECT_EQ(ta.shape(), Shape({1, 3, 2}));
  const float* pa = static_cast<const float*>(ta.data());
  EXPECT_EQ(std::vector<float>(pa, pa + 6), (std::vector<float>{0, 1, 10, 11, 20, 21}));
  const Tensor tb = request_output(*out, out, layout, 1, links, b);
  EXPECT_EQ(tb.shape(), Shape({2, 5, 2}));
  const float* pb = static_cast<const float*>(tb.data());
  EXPECT_EQ(pb[0], 100.f);
  EXPECT_EQ(pb[19], 241.f);  // row 2, position 4, feature 1
  // Without links only the rows are cut.
  const Tensor whole = request_output(*out, out, layout, 0, {}, a);
  EXPECT_EQ(whole.shape(), Shape({1, 5, 2}));
  EXPECT_EQ(static_cast<const float*>(whole.data())[9], 41.f);
}

TEST(RequestOutput, AnOutputWithoutTheBatchRowsIsNotSplittable) {
  Batch batch({{{1, 2}}, {{3, 4}}});
  const InferRequest& a = batch.requests[0];
  const BatchLayout& layout = batch.layout;
  EXPECT_FALSE(splittable(Tensor::empty(DType::F32, Shape({3, 2})), layout, {}, a));
  EXPECT_FALSE(splittable(Tensor::empty(DType::F32, Shape({})), layout, {}, a));
  EXPECT_FALSE(splittable(Tensor::empty(DType::F32, Shape({2, 3})), layout, {{1, "ids", 1}}, a));
  EXPECT_TRUE(splittable(Tensor::empty(DType::F32, Shape({2, 2})), layout, {{1, "ids", 1}}, a));
}


// A request with one BYTES input "text" of the given rows.
InferRequest text_request(const std::vector<std::vector<std::string>>& rows) {
  InferRequest r;
  InferInput in;
  in.name = "text";
  in.dtype = DType::String;
  in.shape = {static_cast<int64_t>(rows.size()), static_cast<int64_t>(rows.empty() ? 0 : rows[0].size())};
  in.tensor = Tensor::empty(DType::String, Shape(in.shape));
  std::string* p = in.tensor.data_as<std::string>();
  for (const auto& row : rows)
    for (const auto& s : row) *p++ = s;
  r.inputs.push_back(std::move(in));
  return r;
}

std::vector<std::string> strings_of(const Tensor& t) {
  const std::string* p = t.data_as<std::string>();
  return {p, p + t.numel()};
}

TEST(AssembleBatch, StringsAreCopiedAndPaddedWithEmptyStrings) {
  const InferRequest a = text_request({{"a long string that is not stored inline in std::string", "b"}});
  const InferRequest b = text_request({{"c", "d", "e"}, {"f", "g", "h"}});
  BatchBuffers buffers;
  BatchLayout layout;
  NamedTensors in = assemble_batch({&a, &b}, {}, &buffers, &layout);
  ASSERT_EQ(in.size(), 1u);
  EXPECT_EQ(in[0].second.dtype(), DType::String);
  EXPECT_EQ(in[0].second.shape(), Shape({3, 3}));
  EXPECT_TRUE(layout.padded);
  EXPECT_EQ(strings_of(in[0].second),
            (std::vector<std::string>{"a long string that is not stored inline in std::string", "b", "", "c", "d", "e",
                                      "f", "g", "h"}));
  EXPECT_EQ(layout.real_elements, 2u + 6u);
  // The batch owns its strings: the requests can go first.
  const NamedTensors unpadded = [&] {
    const InferRequest c = text_request({{"x", "y"}});
    const InferRequest d = text_request({{"z", "w"}});
    BatchLayout l;
    return assemble_batch({&c, &d}, {}, &buffers, &l);
  }();
  EXPECT_EQ(strings_of(unpadded[0].second), (std::vector<std::string>{"x", "y", "z", "w"}));
}

TEST(RequestOutput, StringOutputsAreSplitByRowsAndCutBack) {
  const InferRequest a = text_request({{"a", "b"}});
  const InferRequest b = text_request({{"c", "d", "e"}, {"f", "g", "h"}});
  BatchBuffers buffers;
  BatchLayout layout;
  assemble_batch({&a, &b}, {}, &buffers, &layout);
  // A batch output of labels [3 rows, 3 positions].
  auto out = std::make_shared<Tensor>(Tensor::empty(DType::String, Shape({3, 3})));
  for (int i = 0; i < 9; ++i) out->data_as<std::string>()[i] = "label " + std::to_string(i);
  const std::vector<DimLink> links{{1, "text", 1}};
  ASSERT_TRUE(splittable(*out, layout, links, a));
  const Tensor ta = request_output(*out, out, layout, 0, links, a);
  EXPECT_EQ(ta.shape(), Shape({1, 2}));
  EXPECT_EQ(strings_of(ta), (std::vector<std::string>{"label 0", "label 1"}));
  const Tensor tb = request_output(*out, out, layout, 1, links, b);
  EXPECT_EQ(tb.shape(), Shape({2, 3}));
  EXPECT_EQ(strings_of(tb), (std::vector<std::string>{"label 3", "label 4", "label 5", "label 6", "label 7", "label 8"}));
  const Tensor rows = request_output(*out, out, layout, 1, {}, b);  // rows only: a view
  EXPECT_EQ(strings_of(rows)[0], "label 3");
}

}  // namespace
}  // namespace ignis::serve
