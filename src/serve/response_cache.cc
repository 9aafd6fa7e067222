// SPDX-License-Identifier: Apache-2.0
// The response cache: request keys (XXH3-128 over a length-prefixed stream), the byte-budgeted
// LRU with TTL, and the per-model hit-rate window that drives the auto bypass.
#include "serve/response_cache.h"

#include <iterator>
#include <string_view>
#include <utility>

#define XXH_STATIC_LINKING_ONLY  // XXH3_state_t's layout, so the state can live on the stack
#include <xxhash.h>

namespace ignis::serve {
namespace {

class KeyHasher {
 public:
  KeyHasher() {
    XXH3_INITSTATE(&state_);
    XXH3_128bits_reset(&state_);
  }
  void bytes(const void* data, size_t n) {
    if (n > 0) XXH3_128bits_update(&state_, data, n);
  }
  void u64(uint64_t v) { bytes(&v, sizeof v); }
  void str(std::string_view s) {
    u64(s.size());
    bytes(s.data(), s.size());
  }
  CacheKey digest() const {
    const XXH128_hash_t h = XXH3_128bits_digest(&state_);
    return {h.low64, h.high64};
  }

 private:
  XXH3_state_t state_;
};

}  // namespace

CacheKey response_cache_key(const std::string& model, int64_t version, const InferRequest& request) {
  KeyHasher h;
  h.str(model);
  h.u64(static_cast<uint64_t>(version));
  h.u64(request.outputs.size());
  for (const auto& out : request.outputs) h.str(out.name);
  h.u64(request.inputs.size());
  for (const auto& in : request.inputs) {
    h.str(in.name);
    h.u64(static_cast<uint64_t>(in.dtype));
    h.u64(in.shape.size());
    for (int64_t d : in.shape) h.u64(static_cast<uint64_t>(d));
    if (in.dtype == DType::String) {
      const std::string* elements = in.tensor.data_as<std::string>();
      h.u64(static_cast<uint64_t>(in.tensor.numel()));
      for (int64_t i = 0; i < in.tensor.numel(); ++i) h.str(elements[i]);
    } else {
      h.str({static_cast<const char*>(in.tensor.data()), in.tensor.nbytes()});
    }
  }
  return h.digest();
}

ResponseCache::ResponseCache(Options options, MetricsRegistry* metrics, ClockFn clock)
    : options_(options), metrics_(metrics), clock_(std::move(clock)) {
  if (metrics_ && enabled()) {
    bytes_gauge_ = metrics_->gauge("ignis_cache_bytes",
                                   "Bytes the response cache holds (output data, names and bookkeeping).");
    entries_gauge_ = metrics_->gauge("ignis_cache_entries", "Responses the response cache holds.");
  }
}

bool ResponseCache::should_try(const std::string& model) {
  if (!enabled()) return false;
  std::lock_guard<std::mutex> lock(mu_);
  ModelState& state = model_state(model);
  if (state.bypass_left == 0) return true;
  --state.bypass_left;
  ++counts_.bypassed;
  if (state.bypassed) state.bypassed->add();
  return false;
}

std::optional<InferResponse> ResponseCache::lookup(const std::string& model, int64_t version, const CacheKey& key) {
  if (!enabled()) return std::nullopt;
  const Clock::time_point now = clock_();
  // Handles to the stored buffers, copied out under the lock and cloned after it: a handle
  // keeps its buffer alive even if another thread evicts the entry meanwhile.
  std::vector<InferOutput> found;
  bool hit = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ModelState& state = model_state(model);
    auto it = index_.find(key);
    // A key stored for another model or version (a 128-bit collision) is a miss and stays.
    if (it != index_.end() && it->second->model == model && it->second->version == version) {
      const EntryList::iterator entry = it->second;
      if (now >= entry->expires) {
        erase(entry);
        update_gauges();
      } else {
        lru_.splice(lru_.begin(), lru_, entry);
        found = entry->outputs;
        hit = true;
      }
    }
    record_lookup(state, hit);
  }
  if (!hit) return std::nullopt;
  InferResponse response;
  response.model = model;
  response.version = std::to_string(version);
  response.outputs.reserve(found.size());
  for (const auto& out : found) response.outputs.push_back({out.name, out.tensor.clone(), false});
  return response;
}

void ResponseCache::insert(const std::string& model, int64_t version, const CacheKey& key,
                           const InferResponse& response) {
  if (!enabled()) return;
  size_t bytes = kEntryOverheadBytes + model.size();
  for (const auto& out : response.outputs) {
    if (out.tensor.dtype() == DType::String) return;
    bytes += kOutputOverheadBytes + out.name.size() + out.tensor.nbytes();
  }
  if (bytes > options_.max_bytes / 8) return;

  const Clock::time_point now = clock_();
  Entry entry{key, model, version, {}, bytes, Clock::time_point::max()};
  if (options_.ttl.count() > 0) entry.expires = now + std::chrono::duration_cast<Clock::duration>(options_.ttl);
  entry.outputs.reserve(response.outputs.size());
  for (const auto& out : response.outputs) entry.outputs.push_back({out.name, out.tensor.clone(), false});

  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = index_.find(key); it != index_.end()) erase(it->second);
  while (!lru_.empty() && bytes_ + bytes > options_.max_bytes) {
    const EntryList::iterator victim = std::prev(lru_.end());
    ++counts_.evictions;
    if (Counter* c = model_state(victim->model).evictions) c->add();
    erase(victim);
  }
  lru_.push_front(std::move(entry));
  index_[key] = lru_.begin();
  bytes_ += bytes;
  update_gauges();
}

void ResponseCache::drop_version(const std::string& model, int64_t version) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = lru_.begin(); it != lru_.end();) {
    const auto next = std::next(it);
    if (it->model == model && it->version == version) erase(it);
    it = next;
  }
  update_gauges();
}

ResponseCache::Stats ResponseCache::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  Stats s = counts_;
  s.entries = lru_.size();
  s.bytes = bytes_;
  return s;
}

ResponseCache::ModelState& ResponseCache::model_state(const std::string& model) {
  auto [it, inserted] = models_.try_emplace(model);
  ModelState& state = it->second;
  if (inserted && metrics_) {
    const Labels l{{"model", model}};
    state.hits = metrics_->counter("ignis_cache_hits_total", "Response cache lookups that found a stored response.", l);
    state.misses = metrics_->counter("ignis_cache_misses_total",
                                     "Response cache lookups that found no stored response, or an expired one.", l);
    state.evictions = metrics_->counter("ignis_cache_evictions_total",
                                        "Responses removed from the response cache to make room for others.", l);
    state.bypassed = metrics_->counter(
        "ignis_cache_bypassed_total", "Requests that skipped the response cache: the model's hit rate was too low.", l);
  }
  return state;
}

void ResponseCache::record_lookup(ModelState& state, bool hit) {
  ++(hit ? counts_.hits : counts_.misses);
  if (Counter* c = hit ? state.hits : state.misses) c->add();
  if (options_.window == 0 || options_.min_hit_rate <= 0) return;
  ++state.window_lookups;
  if (hit) ++state.window_hits;
  if (state.window_lookups < options_.window) return;
  // hits / lookups < min_hit_rate, without the division.
  if (static_cast<double>(state.window_hits) < options_.min_hit_rate * static_cast<double>(state.window_lookups))
    state.bypass_left = options_.bypass_requests;
  state.window_lookups = 0;
  state.window_hits = 0;
}

void ResponseCache::erase(EntryList::iterator it) {
  bytes_ -= it->bytes;
  index_.erase(it->key);
  lru_.erase(it);
}

void ResponseCache::update_gauges() {
  if (bytes_gauge_) bytes_gauge_->set(static_cast<double>(bytes_));
  if (entries_gauge_) entries_gauge_->set(static_cast<double>(lru_.size()));
}

}  // namespace ignis::serve
