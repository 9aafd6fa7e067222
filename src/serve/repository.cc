// SPDX-License-Identifier: Apache-2.0
#include "serve/repository.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/strings.h"
#include "serve/log.h"

namespace ignis::serve {
namespace fs = std::filesystem;
namespace {

bool valid_model_name(const std::string& n) {
  if (n.empty() || n.size() > 255 || n == "." || n == "..") return false;
  return std::all_of(n.begin(), n.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.'; });
}

std::optional<int64_t> version_number(const std::string& s) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || v < 0) return std::nullopt;
  return v;
}

// Names, sizes and modification times of a folder's files (one level), sorted.
std::string folder_fingerprint(const fs::path& dir, bool recurse_one) {
  std::vector<std::string> parts;
  std::error_code ec;
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    std::error_code e2;
    const auto& p = it->path();
    if (it->is_regular_file(e2)) {
      const auto t = fs::last_write_time(p, e2).time_since_epoch().count();
      parts.push_back(str_cat(p.filename().string(), ":", it->file_size(e2), ":", t));
    } else if (recurse_one && it->is_directory(e2)) {
      parts.push_back(str_cat(p.filename().string(), "/{", folder_fingerprint(p, false), "}"));
    }
  }
  std::sort(parts.begin(), parts.end());
  return str_join(parts, ";");
}

Result<std::string> read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  if (!f) return not_found(str_cat("cannot read '", p.string(), "'"));
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void retire(std::vector<std::shared_ptr<ModelVersion>>& old, const RepositoryOptions& options) {
  for (auto& v : old) {
    log_info(str_cat("model '", v->name(), "' version ", v->version(), ": draining ", v->pending(),
                     " requests and unloading"));
    v->drain_and_stop();
    if (options.on_retired) options.on_retired(*v);
  }
  old.clear();
}

}  // namespace

ModelRepository::ModelRepository(RepositoryOptions options, MetricsRegistry* metrics)
    : options_(std::move(options)), metrics_(metrics) {}

ModelRepository::~ModelRepository() { stop_all(); }

void ModelRepository::load_all() {
  std::error_code ec;
  std::vector<std::string> names;
  for (auto it = fs::directory_iterator(options_.root, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    std::error_code e2;
    if (it->is_directory(e2)) names.push_back(it->path().filename().string());
  }
  std::sort(names.begin(), names.end());
  for (const auto& n : names) {
    if (!valid_model_name(n)) {
      log_warning(str_cat("repository: skipping folder '", n, "': not a valid model name"));
      continue;
    }
    (void)load(n);
  }
}

void ModelRepository::set_failed(const std::string& name, const std::string& reason) {
  std::lock_guard<std::mutex> lock(mu_);
  Entry& e = models_[name];
  e.unavailable = e.versions.empty();
  e.reason = reason;
}

std::optional<ServeError> ModelRepository::load(const std::string& name) {
  std::lock_guard<std::mutex> guard(load_mu_);
  return load_locked(name);
}

std::optional<ServeError> ModelRepository::load_locked(const std::string& name) {
  if (!valid_model_name(name)) return ServeError{ErrorKind::BadRequest, str_cat("'", name, "' is not a valid model name")};
  const fs::path dir = fs::path(options_.root) / name;
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return ServeError{ErrorKind::NotFound, str_cat("no model folder '", name, "' in the repository")};
  const std::string fingerprint = folder_fingerprint(dir, true);
  auto fail = [&](ErrorKind kind, const std::string& why) {
    log_error(str_cat("model '", name, "' failed to load: ", why));
    set_failed(name, why);
    {
      std::lock_guard<std::mutex> lock(mu_);
      models_[name].fingerprint = fingerprint;
    }
    return ServeError{kind, str_cat("model '", name, "' failed to load: ", why)};
  };

  ModelConfig config;
  bool from_file = false;
  const fs::path config_path = dir / "config.pbtxt";
  std::string config_fp;
  if (fs::is_regular_file(config_path, ec)) {
    auto text = read_file(config_path);
    if (!text) return fail(ErrorKind::BadRequest, text.error().message());
    config_fp = *text;
    std::vector<std::string> ignored;
    auto parsed = parse_model_config(*text, &ignored);
    if (!parsed) return fail(ErrorKind::BadRequest, str_cat("config.pbtxt: ", parsed.error().message()));
    if (!ignored.empty())
      log_warning(str_cat("model '", name, "': config.pbtxt fields ignored by ignis: ", str_join(ignored)));
    config = std::move(*parsed);
    from_file = true;
    if (!config.name.empty() && config.name != name)
      return fail(ErrorKind::BadRequest, str_cat("config.pbtxt names the model '", config.name,
                                                 "' but its folder is '", name, "'"));
  }
  config.name = name;

  std::vector<int64_t> available;
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    std::error_code e2;
    if (!it->is_directory(e2)) continue;
    auto v = version_number(it->path().filename().string());
    if (v && fs::is_regular_file(it->path() / config.default_model_filename, e2)) available.push_back(*v);
  }
  const std::vector<int64_t> wanted = config.version_policy.select(available);
  if (wanted.empty())
    return fail(ErrorKind::NotFound, available.empty()
                                         ? str_cat("no version folder holds ", config.default_model_filename)
                                         : str_cat("the version policy selects none of the versions ",
                                                   str_list(available)));

  SessionOptions so = options_.session;
  if (config.threads) so.threads = *config.threads;
  else if (so.threads > 0) so.threads = std::max(1, so.threads / std::max(1, config.instance_count));
  if (config.optimization) so.optimization = *config.optimization;
  if (config.precision) so.precision = *config.precision;
  if (config.tuning) so.tuning = *config.tuning;
  // With dynamic batching the kernels are chosen for the largest batch the batcher forms:
  // those that pay only over several images (Winograd F(2x2) on 7x7 maps) then exist for the
  // batched runs, and single rows still take the paths chosen for one image at run time.
  if (config.dynamic_batching && config.max_batch_size > 1 && so.plan_batch == 0) so.plan_batch = config.max_batch_size;

  // Load what is new or changed outside the lock; requests keep using the current versions.
  std::map<int64_t, std::shared_ptr<ModelVersion>> next;
  std::map<int64_t, std::string> next_fps, errors;
  {
    std::lock_guard<std::mutex> lock(mu_);
    Entry& e = models_[name];
    for (int64_t v : wanted) {
      auto it = e.versions.find(v);
      const std::string vfp = folder_fingerprint(dir / std::to_string(v), false);
      if (it != e.versions.end() && e.version_fingerprints[v] == vfp && e.config_fingerprint == config_fp) {
        next[v] = it->second;
        next_fps[v] = vfp;
      } else {
        next_fps[v] = vfp;
      }
    }
  }
  for (int64_t v : wanted) {
    if (next.count(v)) continue;
    const fs::path model_path = dir / std::to_string(v) / config.default_model_filename;
    auto loaded = ModelVersion::load(model_path.string(), v, config, !from_file, options_.default_max_batch_size, so,
                                     metrics_);
    if (!loaded) {
      errors[v] = loaded.error().message();
      log_error(str_cat("model '", name, "' version ", v, " failed to load: ", loaded.error().message()));
      continue;
    }
    log_info(str_cat("model '", name, "' version ", v, " loaded (", (*loaded)->config().instance_count,
                     " instance(s), max_batch_size ", (*loaded)->config().max_batch_size, ")"));
    next[v] = std::move(*loaded);
  }

  std::vector<std::shared_ptr<ModelVersion>> old;
  std::optional<ServeError> result;
  {
    std::lock_guard<std::mutex> lock(mu_);
    Entry& e = models_[name];
    // A version that failed to reload keeps serving its previous copy.
    for (const auto& [v, why] : errors) {
      auto it = e.versions.find(v);
      if (it != e.versions.end()) {
        next[v] = it->second;
        next_fps[v] = e.version_fingerprints[v];
      }
    }
    for (auto& [v, ptr] : e.versions)
      if (!next.count(v) || next[v] != ptr) old.push_back(ptr);
    e.versions = std::move(next);
    e.version_fingerprints = std::move(next_fps);
    e.version_errors = errors;
    e.config_fingerprint = config_fp;
    e.fingerprint = fingerprint;
    e.unloaded = false;
    e.unavailable = e.versions.empty();
    e.reason.clear();
    if (!errors.empty()) {
      std::vector<std::string> parts;
      for (const auto& [v, why] : errors) parts.push_back(str_cat("version ", v, ": ", why));
      e.reason = str_join(parts, "; ");
      result = ServeError{ErrorKind::BadRequest, str_cat("model '", name, "' failed to load: ", e.reason)};
    }
  }
  retire(old, options_);
  return result;
}

std::optional<ServeError> ModelRepository::unload(const std::string& name) {
  std::lock_guard<std::mutex> guard(load_mu_);
  std::vector<std::shared_ptr<ModelVersion>> old;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = models_.find(name);
    if (it == models_.end()) return ServeError{ErrorKind::NotFound, str_cat("unknown model '", name, "'")};
    for (auto& [v, ptr] : it->second.versions) old.push_back(ptr);
    it->second.versions.clear();
    it->second.unavailable = true;
    it->second.unloaded = true;
    it->second.reason = "unloaded";
  }
  retire(old, options_);
  log_info(str_cat("model '", name, "' unloaded"));
  return std::nullopt;
}

void ModelRepository::poll() {
  std::lock_guard<std::mutex> guard(load_mu_);
  std::error_code ec;
  std::vector<std::string> on_disk;
  for (auto it = fs::directory_iterator(options_.root, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    std::error_code e2;
    const std::string n = it->path().filename().string();
    if (it->is_directory(e2) && valid_model_name(n)) on_disk.push_back(n);
  }
  if (ec) {
    log_error(str_cat("repository poll: cannot list '", options_.root, "': ", ec.message()));
    return;
  }
  std::vector<std::string> changed, removed;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& n : on_disk) {
      auto it = models_.find(n);
      const std::string fp = folder_fingerprint(fs::path(options_.root) / n, true);
      if (it == models_.end() || it->second.fingerprint != fp) changed.push_back(n);
    }
    for (const auto& [n, e] : models_)
      if (std::find(on_disk.begin(), on_disk.end(), n) == on_disk.end()) removed.push_back(n);
  }
  for (const auto& n : changed) {
    log_info(str_cat("repository poll: model '", n, "' changed on disk; loading"));
    (void)load_locked(n);
  }
  for (const auto& n : removed) {
    std::vector<std::shared_ptr<ModelVersion>> old;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = models_.find(n);
      for (auto& [v, ptr] : it->second.versions) old.push_back(ptr);
      models_.erase(it);
    }
    log_info(str_cat("repository poll: model folder '", n, "' removed; unloading"));
    retire(old, options_);
  }
}

std::variant<std::shared_ptr<ModelVersion>, ServeError> ModelRepository::find(const std::string& name,
                                                                              const std::string& version) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = models_.find(name);
  if (it == models_.end()) return ServeError{ErrorKind::NotFound, str_cat("unknown model '", name, "'")};
  const Entry& e = it->second;
  if (version.empty()) {
    if (e.versions.empty())
      return ServeError{ErrorKind::Unavailable, str_cat("model '", name, "' is not ready: ", e.reason)};
    return e.versions.rbegin()->second;
  }
  auto v = version_number(version);
  if (!v) return ServeError{ErrorKind::BadRequest, str_cat("model version '", version, "' is not a number")};
  auto vit = e.versions.find(*v);
  if (vit != e.versions.end()) return vit->second;
  auto err = e.version_errors.find(*v);
  if (err != e.version_errors.end())
    return ServeError{ErrorKind::Unavailable, str_cat("model '", name, "' version ", *v, " is not ready: ", err->second)};
  return ServeError{ErrorKind::NotFound, str_cat("model '", name, "' has no version ", *v)};
}

std::vector<int64_t> ModelRepository::ready_versions(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<int64_t> out;
  auto it = models_.find(name);
  if (it == models_.end()) return out;
  for (auto v = it->second.versions.rbegin(); v != it->second.versions.rend(); ++v) out.push_back(v->first);
  return out;
}

std::vector<ModelIndexEntry> ModelRepository::index() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<ModelIndexEntry> out;
  for (const auto& [name, e] : models_) {
    for (const auto& [v, ptr] : e.versions) out.push_back({name, std::to_string(v), "READY", ""});
    for (const auto& [v, why] : e.version_errors)
      if (!e.versions.count(v)) out.push_back({name, std::to_string(v), "UNAVAILABLE", why});
    if (e.versions.empty() && e.version_errors.empty()) out.push_back({name, "", "UNAVAILABLE", e.reason});
  }
  return out;
}

std::vector<std::shared_ptr<ModelVersion>> ModelRepository::all_versions() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::shared_ptr<ModelVersion>> out;
  for (const auto& [name, e] : models_)
    for (const auto& [v, ptr] : e.versions) out.push_back(ptr);
  return out;
}

size_t ModelRepository::pending() const {
  size_t n = 0;
  for (const auto& v : all_versions()) n += v->pending();
  return n;
}

void ModelRepository::stop_all() {
  for (const auto& v : all_versions()) v->drain_and_stop();
}

}  // namespace ignis::serve
