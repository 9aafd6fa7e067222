// SPDX-License-Identifier: Apache-2.0
#include "serve/response_cache.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "serve/datatype.h"

namespace ignis::serve {
namespace {

using namespace std::chrono_literals;
using Clock = ResponseCache::Clock;

Tensor f32_tensor(const std::vector<float>& values, const Shape& shape) {
  Tensor t = Tensor::empty(DType::F32, shape);
  std::memcpy(t.data(), values.data(), values.size() * sizeof(float));
  return t;
}

InferInput f32_input(const std::string& name, const std::vector<float>& values, const std::vector<int64_t>& shape) {
  InferInput in;
  in.name = name;
  in.dtype = DType::F32;
  in.shape = shape;
  in.tensor = f32_tensor(values, Shape(shape));
  return in;
}

InferInput bytes_input(const std::string& name, const std::vector<std::string>& elements) {
  InferInput in;
  in.name = name;
  in.dtype = DType::String;
  in.shape = {static_cast<int64_t>(elements.size())};
  in.tensor = string_tensor(in.shape, elements);
  return in;
}

InferRequest sample_request() {
  InferRequest r;
  r.model = "m";
  r.id = "42";
  r.inputs.push_back(f32_input("x", {1, 2, 3, 4}, {2, 2}));
  r.inputs.push_back(bytes_input("s", {"ab", "c"}));
  r.outputs.push_back({"y", std::nullopt});
  r.outputs.push_back({"z", true});
  return r;
}

CacheKey key_of(const InferRequest& r) { return response_cache_key("m", 1, r); }

// A response with one float output "y" of `n` elements, element i = base + i.
InferResponse response_of(size_t n, float base = 0) {
  std::vector<float> values(n);
  for (size_t i = 0; i < n; ++i) values[i] = base + static_cast<float>(i);
  InferResponse r;
  r.outputs.push_back({"y", f32_tensor(values, Shape{static_cast<int64_t>(n)}), true});
  return r;
}

// The documented size of an entry: output data and names, the model name, fixed overheads.
size_t entry_bytes(const std::string& model, const InferResponse& r) {
  size_t bytes = ResponseCache::kEntryOverheadBytes + model.size();
  for (const auto& out : r.outputs)
    bytes += ResponseCache::kOutputOverheadBytes + out.name.size() + out.tensor.nbytes();
  return bytes;
}

CacheKey numbered_key(uint64_t i) { return {i, ~i}; }

std::string describe(const ResponseCache::Stats& s) {
  return "{hits " + std::to_string(s.hits) + ", misses " + std::to_string(s.misses) + ", evictions " +
         std::to_string(s.evictions) + ", bypassed " + std::to_string(s.bypassed) + ", entries " +
         std::to_string(s.entries) + ", bytes " + std::to_string(s.bytes) + "}";
}

// Every field at once, so each check states the cache's whole state.
testing::AssertionResult has_stats(const ResponseCache& cache, const ResponseCache::Stats& want) {
  const ResponseCache::Stats got = cache.stats();
  if (got == want) return testing::AssertionSuccess();
  return testing::AssertionFailure() << "stats are " << describe(got) << ", expected " << describe(want);
}

class FakeClock {
 public:
  ResponseCache::ClockFn fn() {
    return [this] { return now; };
  }
  Clock::time_point now = Clock::time_point{} + 1000s;
};

ResponseCache::Options no_bypass(size_t max_bytes) {
  ResponseCache::Options o;
  o.max_bytes = max_bytes;
  o.min_hit_rate = 0;
  return o;
}

TEST(ResponseCacheKey, EqualForIdenticalRequestsBuiltSeparately) {
  const InferRequest a = sample_request();
  InferRequest b = sample_request();
  b.id = "other";  // neither the id nor the outputs' binary flags are part of the key
  b.binary_output = true;
  b.outputs[0].binary = true;
  b.outputs[1].binary = false;
  // The same bytes seen through a view of another buffer.
  const std::vector<float> values{1, 2, 3, 4};
  b.inputs[0].tensor = Tensor::view(DType::F32, Shape{2, 2}, values.data());
  EXPECT_EQ(key_of(a), key_of(b));
}

TEST(ResponseCacheKey, DiffersByModelAndVersion) {
  const InferRequest r = sample_request();
  EXPECT_NE(response_cache_key("m", 1, r), response_cache_key("n", 1, r));
  EXPECT_NE(response_cache_key("m", 1, r), response_cache_key("m", 2, r));
  EXPECT_NE(response_cache_key("m", 1, r), response_cache_key("m1", 1, r));
}

TEST(ResponseCacheKey, DiffersByRequestedOutputs) {
  const CacheKey base = key_of(sample_request());
  InferRequest swapped = sample_request();
  std::swap(swapped.outputs[0], swapped.outputs[1]);
  EXPECT_NE(key_of(swapped), base);
  InferRequest fewer = sample_request();
  fewer.outputs.pop_back();
  EXPECT_NE(key_of(fewer), base);
  InferRequest all = sample_request();
  all.outputs.clear();
  EXPECT_NE(key_of(all), base);
  InferRequest renamed = sample_request();
  renamed.outputs[1].name = "w";
  EXPECT_NE(key_of(renamed), base);
  // Output names run together differently: ("y", "z") vs ("yz").
  InferRequest joined = sample_request();
  joined.outputs = {{"yz", std::nullopt}};
  EXPECT_NE(key_of(joined), base);
}

TEST(ResponseCacheKey, DiffersByInputNameDtypeAndShape) {
  const CacheKey base = key_of(sample_request());
  InferRequest renamed = sample_request();
  renamed.inputs[0].name = "x2";
  EXPECT_NE(key_of(renamed), base);

  // Same 16 bytes declared as int32.
  InferRequest retyped = sample_request();
  retyped.inputs[0].dtype = DType::I32;
  EXPECT_NE(key_of(retyped), base);

  // Same elements, shape [4] and [1, 4] instead of [2, 2].
  InferRequest flat = sample_request();
  flat.inputs[0].shape = {4};
  EXPECT_NE(key_of(flat), base);
  InferRequest row = sample_request();
  row.inputs[0].shape = {1, 4};
  EXPECT_NE(key_of(row), base);

  InferRequest reordered = sample_request();
  std::swap(reordered.inputs[0], reordered.inputs[1]);
  EXPECT_NE(key_of(reordered), base);
}

TEST(ResponseCacheKey, DiffersByOneByteOfData) {
  const CacheKey base = key_of(sample_request());
  for (size_t byte = 0; byte < 4 * sizeof(float); ++byte) {
    InferRequest r = sample_request();
    static_cast<unsigned char*>(r.inputs[0].tensor.data())[byte] ^= 1;
    EXPECT_NE(key_of(r), base) << "byte " << byte;
  }
  InferRequest s = sample_request();
  s.inputs[1].tensor.data_as<std::string>()[1] = "d";
  EXPECT_NE(key_of(s), base);
}

TEST(ResponseCacheKey, DiffersByBytesElementBoundaries) {
  InferRequest a;
  a.inputs.push_back(bytes_input("s", {"ab", "c"}));
  InferRequest b;
  b.inputs.push_back(bytes_input("s", {"a", "bc"}));
  InferRequest c;
  c.inputs.push_back(bytes_input("s", {"abc", ""}));
  EXPECT_NE(key_of(a), key_of(b));
  EXPECT_NE(key_of(a), key_of(c));
  EXPECT_NE(key_of(b), key_of(c));
  // A field boundary between the input name and its data: name "sa" with "b" vs name "s" with "ab".
  InferRequest d;
  d.inputs.push_back(bytes_input("sa", {"b"}));
  InferRequest e;
  e.inputs.push_back(bytes_input("s", {"ab"}));
  EXPECT_NE(key_of(d), key_of(e));
}

TEST(ResponseCache, HitReturnsOwningCopiesOfTheStoredOutputs) {
  ResponseCache cache(no_bypass(1 << 20), nullptr);
  // The response views a buffer that the caller reuses after insert (like an engine arena).
  std::vector<float> arena{1.5f, -2, 3, 4, 5, 6};
  InferResponse resp;
  resp.model = "m";
  resp.version = "3";
  resp.id = "first";
  resp.outputs.push_back({"y", Tensor::view(DType::F32, Shape{2, 3}, arena.data()), true});
  const std::vector<float> expected = arena;
  const CacheKey key{7, 8};
  cache.insert("m", 3, key, resp);
  std::fill(arena.begin(), arena.end(), -1.0f);

  for (int round = 0; round < 2; ++round) {
    std::optional<InferResponse> got = cache.lookup("m", 3, key);
    ASSERT_TRUE(got.has_value());
    EXPECT_EQ(got->model, "m");
    EXPECT_EQ(got->version, "3");
    EXPECT_EQ(got->id, "");
    ASSERT_EQ(got->outputs.size(), 1u);
    const InferOutput& y = got->outputs[0];
    EXPECT_EQ(y.name, "y");
    EXPECT_FALSE(y.binary);
    EXPECT_EQ(y.tensor.dtype(), DType::F32);
    EXPECT_EQ(y.tensor.shape(), (Shape{2, 3}));
    EXPECT_TRUE(y.tensor.owns_data());
    ASSERT_EQ(y.tensor.nbytes(), expected.size() * sizeof(float));
    EXPECT_EQ(std::memcmp(y.tensor.data(), expected.data(), y.tensor.nbytes()), 0);
    // Scribbling on a returned copy does not change what the next lookup sees.
    std::memset(y.tensor.data(), 0xff, y.tensor.nbytes());
  }
  EXPECT_FALSE(cache.lookup("m", 3, CacheKey{7, 9}).has_value());
}

TEST(ResponseCache, EvictsLeastRecentlyUsedUntilUnderTheBudget) {
  const InferResponse small = response_of(1);
  const InferResponse large = response_of(64);
  const size_t s = entry_bytes("m", small);
  const size_t l = entry_bytes("m", large);
  // Room for 16 small entries, not 17. The large one is under an eighth of the budget, and
  // needs two small entries gone to fit, not one.
  const size_t budget = 16 * s + s / 2;
  ASSERT_LE(l, budget / 8);
  ASSERT_GT(15 * s + l, budget);
  ASSERT_LE(14 * s + l, budget);
  ResponseCache cache(no_bypass(budget), nullptr);
  for (uint64_t i = 0; i < 16; ++i) cache.insert("m", 1, numbered_key(i), small);
  EXPECT_TRUE(has_stats(cache, {.entries = 16, .bytes = 16 * s}));

  // Touch 0 and 1: key 2 is now the least recently used.
  ASSERT_TRUE(cache.lookup("m", 1, numbered_key(0)));
  ASSERT_TRUE(cache.lookup("m", 1, numbered_key(1)));
  cache.insert("m", 1, numbered_key(16), small);
  EXPECT_TRUE(has_stats(cache, {.hits = 2, .evictions = 1, .entries = 16, .bytes = 16 * s}));

  // The large entry pushes out the next two in LRU order, 3 and 4.
  cache.insert("m", 1, numbered_key(17), large);
  EXPECT_TRUE(has_stats(cache, {.hits = 2, .evictions = 3, .entries = 15, .bytes = 14 * s + l}));

  for (uint64_t gone : {2, 3, 4}) EXPECT_FALSE(cache.lookup("m", 1, numbered_key(gone))) << gone;
  for (uint64_t kept : {0, 1, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17})
    EXPECT_TRUE(cache.lookup("m", 1, numbered_key(kept))) << kept;
}

TEST(ResponseCache, ReplacesAnEntryInsertedTwiceUnderOneKey) {
  ResponseCache cache(no_bypass(1 << 20), nullptr);
  cache.insert("m", 1, numbered_key(1), response_of(4, 0));
  const InferResponse second = response_of(8, 100);
  cache.insert("m", 1, numbered_key(1), second);
  EXPECT_TRUE(has_stats(cache, {.entries = 1, .bytes = entry_bytes("m", second)}));
  std::optional<InferResponse> got = cache.lookup("m", 1, numbered_key(1));
  ASSERT_TRUE(got);
  ASSERT_EQ(got->outputs[0].tensor.numel(), 8);
  EXPECT_EQ(got->outputs[0].tensor.data_as<float>()[0], 100.0f);
}

TEST(ResponseCache, DoesNotStoreEntriesOverAnEighthOfTheBudget) {
  const InferResponse r = response_of(64);
  const size_t e = entry_bytes("m", r);
  {
    ResponseCache cache(no_bypass(8 * e - 1), nullptr);
    cache.insert("m", 1, numbered_key(1), r);
    EXPECT_TRUE(has_stats(cache, {}));
    EXPECT_FALSE(cache.lookup("m", 1, numbered_key(1)));
  }
  {
    ResponseCache cache(no_bypass(8 * e), nullptr);
    cache.insert("m", 1, numbered_key(1), r);
    EXPECT_TRUE(has_stats(cache, {.entries = 1, .bytes = e}));
    EXPECT_TRUE(cache.lookup("m", 1, numbered_key(1)));
  }
}

TEST(ResponseCache, ExpiredEntriesAreMissesAndAreRemoved) {
  FakeClock clock;
  ResponseCache::Options o = no_bypass(1 << 20);
  o.ttl = 10s;
  ResponseCache cache(o, nullptr, clock.fn());
  cache.insert("m", 1, numbered_key(1), response_of(4));
  clock.now += 10s - 1ns;
  EXPECT_TRUE(cache.lookup("m", 1, numbered_key(1)));
  clock.now += 1ns;
  EXPECT_FALSE(cache.lookup("m", 1, numbered_key(1)));
  EXPECT_TRUE(has_stats(cache, {.hits = 1, .misses = 1}));
}

TEST(ResponseCache, EntriesNeverExpireWithoutATtl) {
  FakeClock clock;
  ResponseCache cache(no_bypass(1 << 20), nullptr, clock.fn());
  cache.insert("m", 1, numbered_key(1), response_of(4));
  clock.now += 24h * 365;
  EXPECT_TRUE(cache.lookup("m", 1, numbered_key(1)));
}

TEST(ResponseCache, DropVersionDropsOnlyThatVersion) {
  ResponseCache cache(no_bypass(1 << 20), nullptr);
  const InferResponse r = response_of(4);
  cache.insert("m", 1, numbered_key(1), r);
  cache.insert("m", 1, numbered_key(2), r);
  cache.insert("m", 2, numbered_key(3), r);
  cache.insert("n", 1, numbered_key(4), r);
  cache.drop_version("m", 1);
  EXPECT_TRUE(has_stats(cache, {.entries = 2, .bytes = entry_bytes("m", r) + entry_bytes("n", r)}));
  EXPECT_FALSE(cache.lookup("m", 1, numbered_key(1)));
  EXPECT_FALSE(cache.lookup("m", 1, numbered_key(2)));
  EXPECT_TRUE(cache.lookup("m", 2, numbered_key(3)));
  EXPECT_TRUE(cache.lookup("n", 1, numbered_key(4)));
}

TEST(ResponseCache, KeyStoredForAnotherVersionIsAMiss) {
  ResponseCache cache(no_bypass(1 << 20), nullptr);
  cache.insert("m", 1, numbered_key(1), response_of(4));
  EXPECT_FALSE(cache.lookup("m", 2, numbered_key(1)));
  EXPECT_FALSE(cache.lookup("n", 1, numbered_key(1)));
  EXPECT_TRUE(cache.lookup("m", 1, numbered_key(1)));
}

TEST(ResponseCache, BypassesAfterALowHitRateWindowAndProbesAgain) {
  ResponseCache::Options o;
  o.max_bytes = 1 << 20;
  o.min_hit_rate = 0.2;
  o.window = 10;
  o.bypass_requests = 5;
  ResponseCache cache(o, nullptr);
  cache.insert("m", 1, numbered_key(0), response_of(4));

  // A window with 2 hits in 10 lookups is exactly at the rate: no bypass.
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(cache.should_try("m"));
    cache.lookup("m", 1, numbered_key(i < 2 ? 0 : 100 + i));
  }
  EXPECT_TRUE(cache.should_try("m"));

  // 1 hit in 10: the next 5 requests skip the cache, for this model only.
  for (int i = 0; i < 10; ++i) cache.lookup("m", 1, numbered_key(i < 1 ? 0 : 200 + i));
  for (int i = 0; i < 5; ++i) {
    EXPECT_FALSE(cache.should_try("m")) << i;
    EXPECT_TRUE(cache.should_try("n")) << i;
  }
  EXPECT_EQ(cache.stats().bypassed, 5u);
  EXPECT_TRUE(cache.should_try("m"));

  // A fresh window: 9 lookups of misses do not close it, the 10th does.
  for (int i = 0; i < 9; ++i) cache.lookup("m", 1, numbered_key(300 + i));
  EXPECT_TRUE(cache.should_try("m"));
  cache.lookup("m", 1, numbered_key(400));
  EXPECT_FALSE(cache.should_try("m"));
  EXPECT_EQ(cache.stats().bypassed, 6u);
}

TEST(ResponseCache, DisabledCacheDoesNothing) {
  MetricsRegistry metrics;
  ResponseCache cache(ResponseCache::Options{}, &metrics);
  EXPECT_FALSE(cache.enabled());
  EXPECT_FALSE(cache.should_try("m"));
  cache.insert("m", 1, numbered_key(1), response_of(4));
  EXPECT_FALSE(cache.lookup("m", 1, numbered_key(1)));
  EXPECT_TRUE(has_stats(cache, {}));
  EXPECT_EQ(metrics.render().find("ignis_cache_"), std::string::npos);
}

TEST(ResponseCache, CountsInStatsAndPerModelMetrics) {
  MetricsRegistry metrics;
  const InferResponse r = response_of(16);
  const size_t e = entry_bytes("m", r);
  ResponseCache::Options o;
  o.max_bytes = 8 * e;  // 8 entries of "m"; "n" has the same size
  o.min_hit_rate = 0.5;
  o.window = 4;
  o.bypass_requests = 3;
  ResponseCache cache(o, &metrics);

  for (uint64_t i = 0; i < 8; ++i) cache.insert("m", 1, numbered_key(i), r);
  cache.insert("n", 1, numbered_key(100), r);  // evicts m's key 0
  cache.insert("n", 1, numbered_key(101), r);  // evicts m's key 1
  cache.lookup("m", 1, numbered_key(5));       // hit
  cache.lookup("m", 1, numbered_key(0));       // miss
  cache.lookup("n", 1, numbered_key(100));     // hit
  // m's window closes at 1 hit in 4 lookups, under 0.5.
  cache.lookup("m", 1, numbered_key(50));
  cache.lookup("m", 1, numbered_key(51));
  for (int i = 0; i < 4; ++i) cache.should_try("m");  // 3 bypassed, then a probe

  EXPECT_TRUE(has_stats(cache, {.hits = 2, .misses = 3, .evictions = 2, .bypassed = 3, .entries = 8, .bytes = 8 * e}));

  auto counter = [&](const char* name, const char* model) {
    return metrics.counter(name, "", {{"model", model}})->value();
  };
  EXPECT_EQ(counter("ignis_cache_hits_total", "m"), 1);
  EXPECT_EQ(counter("ignis_cache_hits_total", "n"), 1);
  EXPECT_EQ(counter("ignis_cache_misses_total", "m"), 3);
  EXPECT_EQ(counter("ignis_cache_misses_total", "n"), 0);
  EXPECT_EQ(counter("ignis_cache_evictions_total", "m"), 2);  // by the evicted entry's model
  EXPECT_EQ(counter("ignis_cache_evictions_total", "n"), 0);
  EXPECT_EQ(counter("ignis_cache_bypassed_total", "m"), 3);
  EXPECT_EQ(metrics.gauge("ignis_cache_entries", "")->value(), 8);
  EXPECT_EQ(metrics.gauge("ignis_cache_bytes", "")->value(), static_cast<double>(8 * e));

  cache.drop_version("m", 1);
  EXPECT_EQ(metrics.gauge("ignis_cache_entries", "")->value(), 2);
  EXPECT_EQ(metrics.gauge("ignis_cache_bytes", "")->value(), static_cast<double>(2 * e));
  const std::string text = metrics.render();
  EXPECT_NE(text.find("# TYPE ignis_cache_hits_total counter\n"), std::string::npos) << text;
  EXPECT_NE(text.find("ignis_cache_bypassed_total{model=\"m\"} 3\n"), std::string::npos) << text;
}

TEST(ResponseCache, ConcurrentLookupsAndInsertsKeepTheCounts) {
  const InferResponse r = response_of(8);
  ResponseCache cache(no_bypass(16 * entry_bytes("m", r)), nullptr);
  constexpr int kThreads = 4;
  constexpr int kOps = 2000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kOps; ++i) {
        const CacheKey key = numbered_key(static_cast<uint64_t>((i * 7 + t) % 40));
        if (!cache.lookup("m", 1, key)) cache.insert("m", 1, key, r);
        if (i % 500 == 0) cache.drop_version("m", 1);
      }
    });
  for (auto& th : threads) th.join();
  const ResponseCache::Stats s = cache.stats();
  EXPECT_EQ(s.hits + s.misses, uint64_t{kThreads} * kOps);
  EXPECT_LE(s.bytes, 16 * entry_bytes("m", r));
  EXPECT_EQ(s.bytes, s.entries * entry_bytes("m", r));
}

}  // namespace
}  // namespace ignis::serve
