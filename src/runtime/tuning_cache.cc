// SPDX-License-Identifier: Apache-2.0
#include "runtime/tuning_cache.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "core/cpu_features.h"
#include "core/strings.h"

namespace ignis::runtime {

namespace {

constexpr const char* kHeader =
    "# ignis tuning cache, format 1: cpu, threads, node signature, kernel, tactic, microseconds (tab-separated)\n";

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> fields;
  size_t start = 0;
  while (true) {
    const size_t tab = line.find('\t', start);
    fields.push_back(line.substr(start, tab == std::string::npos ? std::string::npos : tab - start));
    if (tab == std::string::npos) return fields;
    start = tab + 1;
  }
}

// Fields must not hold the separators.
std::string clean_field(std::string s) {
  for (char& c : s)
    if (c == '\t' || c == '\n' || c == '\r') c = ' ';
  return s;
}

Result<std::string> read_text(const std::string& path, bool* exists) {
  std::error_code ec;
  *exists = std::filesystem::exists(path, ec);
  if (!*exists) return std::string();
  std::ifstream in(path, std::ios::binary);
  if (!in) return invalid_argument(str_cat("cannot read the tuning cache '", path, "': ", std::strerror(errno)));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TuningCache::TuningCache(std::string cpu) : cpu_(clean_field(std::move(cpu))) {}

void TuningCache::parse(const std::string& text, std::map<Key, TunedChoice>* into, size_t* malformed) const {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    const std::vector<std::string> f = split_tabs(line);
    char* end = nullptr;
    bool ok = f.size() == 6 && !f[0].empty() && !f[2].empty() && !f[3].empty();
    long threads = 0;
    double micros = 0;
    if (ok) {
      errno = 0;
      threads = std::strtol(f[1].c_str(), &end, 10);
      ok = errno == 0 && end != f[1].c_str() && *end == '\0' && threads > 0 && threads < 1 << 16;
    }
    if (ok) {
      micros = std::strtod(f[5].c_str(), &end);
      ok = end != f[5].c_str() && *end == '\0' && micros >= 0 && micros < 1e12;
    }
    if (!ok) {
      ++*malformed;
      continue;
    }
    (*into)[{f[0], {static_cast<int>(threads), f[2]}}] = TunedChoice{f[3], f[4], micros};
  }
}

Result<std::unique_ptr<TuningCache>> TuningCache::load(const std::string& path, const std::string& cpu) {
  auto cache = std::make_unique<TuningCache>(cpu);
  bool exists = false;
  IGNIS_ASSIGN_OR_RETURN(const std::string text, read_text(path, &exists));
  cache->parse(text, &cache->entries_, &cache->malformed_);
  return cache;
}

bool TuningCache::find(int threads, const std::string& key, TunedChoice* out) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find({cpu_, {threads, key}});
  if (it == entries_.end()) return false;
  *out = it->second;
  return true;
}

void TuningCache::put(int threads, const std::string& key, TunedChoice choice) {
  choice.kernel_id = clean_field(std::move(choice.kernel_id));
  choice.tactic = clean_field(std::move(choice.tactic));
  std::lock_guard<std::mutex> lock(mu_);
  entries_[{cpu_, {threads, clean_field(key)}}] = std::move(choice);
}

size_t TuningCache::entries() const {
  std::lock_guard<std::mutex> lock(mu_);
  size_t n = 0;
  for (const auto& [k, v] : entries_) n += k.first == cpu_;
  return n;
}

size_t TuningCache::foreign_entries() const {
  std::lock_guard<std::mutex> lock(mu_);
  size_t n = 0;
  for (const auto& [k, v] : entries_) n += k.first != cpu_;
  return n;
}

Status TuningCache::save(const std::string& path) const {
  namespace fs = std::filesystem;
  std::map<Key, TunedChoice> merged;
  bool exists = false;
  auto current = read_text(path, &exists);
  size_t dropped = 0;
  if (current) parse(*current, &merged, &dropped);
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [k, v] : entries_) merged[k] = v;
  }
  std::error_code ec;
  const fs::path parent = fs::path(path).parent_path();
  if (!parent.empty()) fs::create_directories(parent, ec);
  const std::string tmp = str_cat(path, ".tmp.", static_cast<long>(::getpid()));
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return invalid_argument(str_cat("cannot write the tuning cache '", tmp, "': ", std::strerror(errno)));
    out << kHeader;
    char micros[32];
    for (const auto& [k, v] : merged) {
      std::snprintf(micros, sizeof micros, "%.2f", v.micros);
      out << k.first << '\t' << k.second.first << '\t' << k.second.second << '\t' << v.kernel_id << '\t' << v.tactic
          << '\t' << micros << '\n';
    }
    out.flush();
    if (!out) {
      fs::remove(tmp, ec);
      return invalid_argument(str_cat("cannot write the tuning cache '", tmp, "'"));
    }
  }
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    return invalid_argument(str_cat("cannot replace the tuning cache '", path, "': ", ec.message()));
  }
  return Status::ok();
}

std::string default_tuning_cache_path() {
  if (const char* p = std::getenv("IGNIS_TUNING_CACHE"); p && *p) return p;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return str_cat(x, "/ignis/tuning-cache.tsv");
  if (const char* h = std::getenv("HOME"); h && *h) return str_cat(h, "/.cache/ignis/tuning-cache.tsv");
  return "";
}

std::shared_ptr<TuningCache> shared_tuning_cache(const std::string& path) {
  // Keyed by the file's bytes, not its timestamp: rewrites within one timestamp tick happen.
  struct Loaded {
    std::shared_ptr<TuningCache> cache;
    std::string text;
  };
  static std::mutex mu;
  static std::map<std::string, Loaded> loaded;
  const std::string cpu = cpu_features().identity();
  bool exists = false;
  auto text = read_text(path, &exists);
  std::lock_guard<std::mutex> lock(mu);
  if (!text) {
    std::fprintf(stderr, "ignis: warning: %s; planning without it\n", text.error().message().c_str());
    return std::make_shared<TuningCache>(cpu);
  }
  auto it = loaded.find(path);
  if (it != loaded.end() && it->second.text == *text) return it->second.cache;
  auto cache = std::make_shared<TuningCache>(cpu);
  cache->parse(*text, &cache->entries_, &cache->malformed_);
  if (cache->malformed_ > 0)
    std::fprintf(stderr, "ignis: warning: tuning cache '%s': ignored %zu malformed lines\n", path.c_str(),
                 cache->malformed_);
  loaded[path] = Loaded{cache, std::move(*text)};
  return cache;
}

}  // namespace ignis::runtime
