// SPDX-License-Identifier: Apache-2.0
// The tuning cache: which kernel and tactic measured fastest for a node signature, on one CPU
// at one thread count. Sessions read it when they plan (SessionOptions::tuning = cached) and
// add to it when they measure (tuning = measure, `ignis tune`).
//
// The file is text, one entry per line, six tab-separated fields:
//   cpu identity, threads, node signature, kernel id, tactic, microseconds per run
// Lines starting with '#' are comments. Entries of other CPUs are kept when the file is
// rewritten (one file may serve several machines sharing a home directory) and never used;
// lines that do not parse are dropped and counted. Whether an entry still names a kernel and
// tactic this build offers for the node is checked by the planner, which ignores it otherwise.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "ignis/status.h"

namespace ignis::runtime {

struct TunedChoice {
  std::string kernel_id;
  std::string tactic;  // empty: the kernel's built-in rules
  double micros = 0;   // measured time per run of the chosen kernel
};

class TuningCache {
 public:
  // A cache for the CPU named `cpu` (CpuFeatures::identity() in sessions; tests pass others).
  explicit TuningCache(std::string cpu);

  // Reads `path` into a cache for `cpu`. A missing file is an empty cache; a file that exists
  // but cannot be read is an error.
  static Result<std::unique_ptr<TuningCache>> load(const std::string& path, const std::string& cpu);

  // The entry for this CPU, `threads` and `key`, if any.
  bool find(int threads, const std::string& key, TunedChoice* out) const;
  void put(int threads, const std::string& key, TunedChoice choice);

  // Writes every entry, this CPU's and the foreign ones, to `path` through a temporary file
  // renamed over it, so readers never see a half-written file. Entries another process added
  // to the file since it was read are merged in first (ours win on the same key).
  Status save(const std::string& path) const;

  const std::string& cpu() const { return cpu_; }
  size_t entries() const;          // this CPU's
  size_t foreign_entries() const;  // other CPUs', kept for save()
  size_t malformed_lines() const { return malformed_; }

 private:
  friend std::shared_ptr<TuningCache> shared_tuning_cache(const std::string& path);
  // (cpu, threads, key) -> choice
  using Key = std::pair<std::string, std::pair<int, std::string>>;
  void parse(const std::string& text, std::map<Key, TunedChoice>* into, size_t* malformed) const;

  std::string cpu_;
  mutable std::mutex mu_;
  std::map<Key, TunedChoice> entries_;
  size_t malformed_ = 0;
};

// Where sessions look when SessionOptions::tuning_cache is empty: $IGNIS_TUNING_CACHE, else
// $XDG_CACHE_HOME/ignis/tuning-cache.tsv, else $HOME/.cache/ignis/tuning-cache.tsv; empty when
// none of these variables is set.
std::string default_tuning_cache_path();

// The process-wide cache for `path` and this CPU, parsed again whenever the file's content
// changed since the last call. Never null: an unreadable file gives an empty cache and a
// warning on stderr.
std::shared_ptr<TuningCache> shared_tuning_cache(const std::string& path);

}  // namespace ignis::runtime
