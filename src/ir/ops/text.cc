// SPDX-License-Identifier: Apache-2.0
// Schema for TfIdfVectorizer, on integer token ids (pool_int64s) or strings (pool_strings).
#include <algorithm>
#include <string>
#include <vector>

#include "core/strings.h"
#include "ir/op_schema.h"

namespace ignis::ir {
namespace {

// TfIdfVectorizer(X [C] or [N, C] of strings, int32 or int64) -> float [max(ngram_indexes) + 1] or [N, ...].
Status infer_tfidf_vectorizer(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(1, 1));
  IGNIS_RETURN_IF_ERROR(ctx.expect_dtype(0, DTypeSet{DType::String, DType::I32, DType::I64}));
  const Shape& x = ctx.input_shape(0);
  if (x.rank() > 2) return ctx.fail("input must be 1-D or 2-D, got ", x.str());
  const AttrMap& a = ctx.attrs();
  // The pool holds tokens of the input's kind: strings, or integer ids.
  const bool strings = ctx.input_dtype(0) == DType::String;
  const char* pool_name = strings ? "pool_strings" : "pool_int64s";
  if (a.has(strings ? "pool_int64s" : "pool_strings"))
    return ctx.fail("a ", dtype_name(ctx.input_dtype(0)), " input needs attribute '", pool_name, "', not '",
                    strings ? "pool_int64s" : "pool_strings", "'");
  const size_t pool_size = strings ? a.get_strings(pool_name).size() : a.get_ints(pool_name).size();
  const std::string mode = a.get_string("mode", "");
  if (mode != "TF" && mode != "IDF" && mode != "TFIDF") return ctx.fail("attribute 'mode' \"", mode, "\" is not TF, IDF or TFIDF");
  const int64_t min_n = a.get_int("min_gram_length", 0), max_n = a.get_int("max_gram_length", 0);
  if (min_n < 1 || max_n < min_n) return ctx.fail("gram lengths [", min_n, ", ", max_n, "] are not a range of positive lengths");
  if (a.get_int("max_skip_count", 0) < 0) return ctx.error("attribute 'max_skip_count' must be >= 0");
  const std::vector<int64_t> counts = a.get_ints("ngram_counts"), indexes = a.get_ints("ngram_indexes");
  if (indexes.empty()) return ctx.error("attribute 'ngram_indexes' is required");
  const auto pool = static_cast<int64_t>(pool_size);
  int64_t grams = 0;
  for (size_t k = 0; k < counts.size(); ++k) {
    const int64_t end = k + 1 < counts.size() ? counts[k + 1] : pool;
    if (counts[k] < 0 || end < counts[k] || end > pool || (end - counts[k]) % static_cast<int64_t>(k + 1) != 0)
      return ctx.fail("attribute 'ngram_counts' entry ", k, " does not split '", pool_name, "' into ", k + 1,
                      "-grams");
    grams += (end - counts[k]) / static_cast<int64_t>(k + 1);
  }
  if (grams != static_cast<int64_t>(indexes.size()))
    return ctx.fail("the pool holds ", grams, " n-grams but 'ngram_indexes' has ", indexes.size(), " entries");
  int64_t width = 0;
  for (int64_t i : indexes) {
    if (i < 0) return ctx.fail("attribute 'ngram_indexes' has a negative entry ", i);
    width = std::max(width, i + 1);
  }
  const std::vector<float> weights = a.get_floats("weights");
  if (!weights.empty() && static_cast<int64_t>(weights.size()) < width)
    return ctx.fail("attribute 'weights' has ", weights.size(), " entries for ", width, " outputs");
  Shape out = x.rank() == 2 ? Shape{x[0], width} : Shape{width};
  ctx.set_output(0, DType::F32, out);
  return Status::ok();
}

}  // namespace

void register_text_schemas(OpSchemaRegistry& r) { r.add({"", "TfIdfVectorizer", 9, 9, infer_tfidf_vectorizer}); }

}  // namespace ignis::ir
