// SPDX-License-Identifier: Apache-2.0
// Reference kernel for TfIdfVectorizer on integer token ids or strings. Strings become ids
// first: each pool string its first position in pool_strings, any other string -1, which no
// pool n-gram holds.
//
// For each row, each skip distance d = 1 .. max_skip_count + 1 and each start position, the
// tokens at start, start + d, start + 2d ... form n-grams of growing length; those in the pool
// with min_gram_length <= n <= max_gram_length are counted at their ngram_indexes slot.
// 1-grams do not depend on d and are counted on the first pass only. The counts become the
// output by mode: TF the count, IDF the weight (or 1) where the count is non-zero, TFIDF the
// count times the weight.
#include <algorithm>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/dtype_dispatch.h"
#include "kernels/registry.h"

namespace ignis::kernels::ref {
namespace {

// Pool n-grams of the allowed lengths -> their position among all pool n-grams; prefixes of
// those n-grams map to -1 so the scan knows to keep extending.
std::map<std::vector<int64_t>, int64_t> pool_grams(const AttrMap& a, const std::vector<int64_t>& pool, int64_t min_n,
                                                   int64_t max_n) {
  const std::vector<int64_t> counts = a.get_ints("ngram_counts");
  std::map<std::vector<int64_t>, int64_t> grams;
  int64_t id = 0;
  for (size_t k = 0; k < counts.size(); ++k) {
    const int64_t n = static_cast<int64_t>(k + 1);
    const int64_t end = k + 1 < counts.size() ? counts[k + 1] : static_cast<int64_t>(pool.size());
    for (int64_t p = counts[k]; p + n <= end; p += n, ++id) {
      if (n < min_n || n > max_n) continue;
      std::vector<int64_t> gram(pool.begin() + p, pool.begin() + p + n);
      for (size_t len = 1; len < gram.size(); ++len) grams.emplace(std::vector<int64_t>(gram.begin(), gram.begin() + static_cast<std::ptrdiff_t>(len)), -1);
      grams[gram] = id;
    }
  }
  return grams;
}

Status tfidf_vectorizer_kernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  const AttrMap& a = ctx.attrs();
  const int64_t min_n = a.get_int("min_gram_length"), max_n = a.get_int("max_gram_length");
  const int64_t max_skip = a.get_int("max_skip_count", 0);
  const std::vector<int64_t> indexes = a.get_ints("ngram_indexes");
  const std::vector<float> weights = a.get_floats("weights");
  const std::string mode = a.get_string("mode");
  std::vector<int64_t> pool = a.get_ints("pool_int64s");
  std::unordered_map<std::string, int64_t> string_ids;
  if (x.dtype() == DType::String) {
    for (const std::string& s : a.get_strings("pool_strings")) {
      string_ids.emplace(s, static_cast<int64_t>(string_ids.size()));
      pool.push_back(string_ids.at(s));
    }
  }
  auto token = [&](int64_t i) -> int64_t {
    if (x.dtype() != DType::String) return load_as_int64(x.dtype(), x.data(), i);
    const auto it = string_ids.find(x.data_as<const std::string>()[i]);
    return it == string_ids.end() ? -1 : it->second;
  };
  const auto grams = pool_grams(a, pool, min_n, max_n);
  const int64_t rows = x.rank() == 2 ? x.dim(0) : 1;
  const int64_t cols = x.rank() == 0 ? 1 : x.dim(x.rank() - 1);
  const int64_t width = y.dim(y.rank() - 1);
  std::vector<int64_t> counts(static_cast<size_t>(width));
  float* out = y.data_as<float>();
  for (int64_t r = 0; r < rows; ++r) {
    std::fill(counts.begin(), counts.end(), 0);
    std::vector<int64_t> tokens(static_cast<size_t>(cols));
    for (int64_t c = 0; c < cols; ++c) tokens[static_cast<size_t>(c)] = token(r * cols + c);
    int64_t shortest = min_n;
    for (int64_t d = 1; d <= max_skip + 1 && shortest <= max_n; ++d) {
      for (int64_t s = 0; s + d * (shortest - 1) < cols; ++s) {
        std::vector<int64_t> gram;
        for (int64_t n = 1, at = s; n <= max_n && at < cols; ++n, at += d) {
          gram.push_back(tokens[static_cast<size_t>(at)]);
          auto it = grams.find(gram);
          if (it == grams.end()) break;  // no pool n-gram starts this way
          if (n >= shortest && it->second >= 0) ++counts[static_cast<size_t>(indexes[static_cast<size_t>(it->second)])];
        }
      }
      if (shortest == 1) shortest = 2;  // 1-grams are the same for every skip distance
    }
    for (int64_t i = 0; i < width; ++i) {
      const auto k = static_cast<size_t>(i);
      const float w = weights.empty() ? 1.0f : weights[k];
      float v = static_cast<float>(counts[k]);
      if (mode == "IDF") v = counts[k] > 0 ? w : 0.0f;
      else if (mode == "TFIDF") v *= w;
      out[r * width + i] = v;
    }
  }
  return Status::ok();
}

}  // namespace

void register_text(KernelRegistry& r) {
  r.add({.domain = "", .op_type = "TfIdfVectorizer", .since_opset = 9, .types = {DType::String, DType::I32, DType::I64},
         .id = "ref/tfidfvectorizer", .fn = tfidf_vectorizer_kernel});
}

}  // namespace ignis::kernels::ref
