// SPDX-License-Identifier: Apache-2.0
// A cache of inference responses keyed by a 128-bit hash of the request: LRU by bytes under one
// budget shared by every model, optional TTL, and a per-model bypass that stops hashing when
// a model's hit rate is too low to pay for it.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "serve/infer_request.h"
#include "serve/metrics.h"

namespace ignis::serve {

struct CacheKey {
  uint64_t low = 0;
  uint64_t high = 0;
  bool operator==(const CacheKey&) const = default;
};

// XXH3-128 over the model name, the version, the requested output names in order (not their
// binary flags: those pick an encoding per request), and each input in request order: name,
// dtype, shape and data (BYTES: each element's length and bytes). Every field is length- or
// count-prefixed, so no two different requests hash the same input stream. Reads the input
// tensors; takes no lock, so callers hash outside the cache's mutex.
CacheKey response_cache_key(const std::string& model, int64_t version, const InferRequest& request);

// Thread-safe; every method may be called from any thread. Stored outputs own their data
// (responses may view engine buffers), and lookups return copies that own theirs.
class ResponseCache {
 public:
  using Clock = std::chrono::steady_clock;
  using ClockFn = std::function<Clock::time_point()>;

  // An entry's size: its output tensors' bytes and names, the model name, and these overheads
  // for the bookkeeping (list and index nodes, tensor handles) that the budget also pays for.
  static constexpr size_t kEntryOverheadBytes = 160;
  static constexpr size_t kOutputOverheadBytes = 96;

  struct Options {
    size_t max_bytes = 0;             // budget over all models; 0 disables the cache
    std::chrono::nanoseconds ttl{0};  // 0: entries never expire by age
    // Auto bypass: when a model's hit rate over `window` lookups is below `min_hit_rate`, the
    // next `bypass_requests` should_try() calls for it say no, then a fresh window starts.
    // min_hit_rate <= 0 or window == 0 turns the bypass off.
    double min_hit_rate = 0.02;
    uint64_t window = 1000;
    uint64_t bypass_requests = 10000;
  };

  // `metrics` may be null (no series are exported); otherwise it must outlive the cache.
  ResponseCache(Options options, MetricsRegistry* metrics, ClockFn clock = Clock::now);

  bool enabled() const { return options_.max_bytes > 0; }

  // False when the cache is disabled or the model is in a bypass period (counted as bypassed):
  // the caller then neither hashes nor looks up, and runs the request as usual.
  bool should_try(const std::string& model);

  // A copy of the stored response: `model` and `version` from the arguments, `id` empty and
  // every output's `binary` false (the caller applies its own request's). A missing or expired
  // entry (then removed) is a miss; hits and misses both count toward the model's hit rate.
  std::optional<InferResponse> lookup(const std::string& model, int64_t version, const CacheKey& key);

  // Stores a copy of `response`'s outputs, replacing any entry under `key`, and evicts least
  // recently used entries until the budget holds. Entries over max_bytes / 8 are not stored,
  // nor responses with a BYTES output (its elements are not in a tensor buffer).
  void insert(const std::string& model, int64_t version, const CacheKey& key, const InferResponse& response);

  // Removes every entry of that version (it was unloaded or replaced). Linear in the entries.
  void drop_version(const std::string& model, int64_t version);

  // evictions: entries removed to make room (not expiry, replacement or drop_version).
  struct Stats {
    uint64_t hits = 0;
    uint64_t misses = 0;
    uint64_t evictions = 0;
    uint64_t bypassed = 0;
    uint64_t entries = 0;
    uint64_t bytes = 0;
    bool operator==(const Stats&) const = default;
  };
  Stats stats() const;

 private:
  struct Entry {
    CacheKey key;
    std::string model;
    int64_t version = 0;
    std::vector<InferOutput> outputs;  // owning tensors, binary = false
    size_t bytes = 0;
    Clock::time_point expires = Clock::time_point::max();
  };
  using EntryList = std::list<Entry>;  // front: most recently used

  struct KeyHash {
    size_t operator()(const CacheKey& k) const { return static_cast<size_t>(k.low); }
  };

  struct ModelState {
    Counter* hits = nullptr;  // null when there is no registry
    Counter* misses = nullptr;
    Counter* evictions = nullptr;
    Counter* bypassed = nullptr;
    uint64_t window_lookups = 0;
    uint64_t window_hits = 0;
    uint64_t bypass_left = 0;
  };

  // The caller holds mu_ for all of these.
  ModelState& model_state(const std::string& model);
  void record_lookup(ModelState& state, bool hit);
  void erase(EntryList::iterator it);
  void update_gauges();

  const Options options_;
  MetricsRegistry* const metrics_;
  const ClockFn clock_;
  Gauge* bytes_gauge_ = nullptr;
  Gauge* entries_gauge_ = nullptr;

  mutable std::mutex mu_;
  EntryList lru_;
  std::unordered_map<CacheKey, EntryList::iterator, KeyHash> index_;
  std::map<std::string, ModelState, std::less<>> models_;
  size_t bytes_ = 0;
  Stats counts_;  // hits, misses, evictions, bypassed; stats() adds entries and bytes
};

}  // namespace ignis::serve
