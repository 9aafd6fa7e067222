// SPDX-License-Identifier: Apache-2.0
// The model repository in Triton's layout: <root>/<model>/[config.pbtxt] and
// <root>/<model>/<version>/model.onnx. Loads the versions each model's version policy selects,
// reloads what changed on disk (poll) or on request (load/unload), and swaps versions so that
// a new one is loaded and warmed before traffic moves to it while the old one drains.
// A model that fails to load is reported with its reason; the others keep serving.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "ignis/session.h"
#include "serve/errors.h"
#include "serve/metrics.h"
#include "serve/model_version.h"

namespace ignis::serve {

struct RepositoryOptions {
  std::string root;
  SessionOptions session;            // threads: the engine's share of the budget
  int64_t default_max_batch_size = 32;  // for models without config.pbtxt that can batch
  // Called for each version after it is drained and unloaded (e.g. to drop its cached responses).
  std::function<void(const ModelVersion&)> on_retired;
};

struct ModelIndexEntry {
  std::string name;
  std::string version;  // empty for a model with no loaded version
  std::string state;    // READY, UNAVAILABLE, UNLOADING
  std::string reason;
};

class ModelRepository {
 public:
  ModelRepository(RepositoryOptions options, MetricsRegistry* metrics);
  ~ModelRepository();

  // Loads every model folder under the root; failures are recorded per model.
  void load_all();
  // (Re)loads one model from disk; the error is also recorded as the model's reason.
  std::optional<ServeError> load(const std::string& name);
  // Drains and unloads every version of the model.
  std::optional<ServeError> unload(const std::string& name);
  // Reloads models whose files changed, loads new folders, unloads removed ones.
  void poll();

  // The version to serve `version` ("" = the highest ready one).
  std::variant<std::shared_ptr<ModelVersion>, ServeError> find(const std::string& name,
                                                              const std::string& version) const;
  std::vector<int64_t> ready_versions(const std::string& name) const;
  std::vector<ModelIndexEntry> index() const;
  std::vector<std::shared_ptr<ModelVersion>> all_versions() const;
  // Requests queued or running in every version.
  size_t pending() const;
  // Drains every version (shutdown).
  void stop_all();

 private:
  struct Entry {
    bool unavailable = false;
    std::string reason;
    std::map<int64_t, std::shared_ptr<ModelVersion>> versions;
    std::map<int64_t, std::string> version_fingerprints;
    std::map<int64_t, std::string> version_errors;
    std::string config_fingerprint;
    std::string fingerprint;  // of the whole folder, for poll
    bool unloaded = false;    // by request; poll leaves it until its files change
  };
  std::optional<ServeError> load_locked(const std::string& name);  // caller holds load_mu_
  void set_failed(const std::string& name, const std::string& reason);

  RepositoryOptions options_;
  MetricsRegistry* metrics_;
  std::mutex load_mu_;       // one load/unload/poll at a time
  mutable std::mutex mu_;    // guards models_
  std::map<std::string, Entry> models_;
};

}  // namespace ignis::serve
