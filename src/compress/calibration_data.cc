// SPDX-License-Identifier: Apache-2.0
// Listing and loading calibration samples (see calibration_data.h for the layout).
#include "compress/calibration_data.h"

#include <algorithm>
#include <filesystem>

#include "core/strings.h"
#include "ignis/tensor_io.h"

namespace ignis::compress {

namespace fs = std::filesystem;

namespace {

bool has_extension(const fs::path& p, const char* ext) { return p.extension() == ext; }

Result<NamedTensors> load_npz(const std::string& path, const std::vector<ValueInfo>& inputs) {
  IGNIS_ASSIGN_OR_RETURN(auto arrays, read_npz(path));
  if (inputs.size() == 1 && arrays.size() == 1) return NamedTensors{{inputs[0].name, arrays[0].second}};
  NamedTensors feeds;
  for (const auto& in : inputs) {
    auto it = std::find_if(arrays.begin(), arrays.end(), [&](const auto& a) {
      return a.first == in.name || a.first == tensor_file_name(in.name);
    });
    if (it == arrays.end()) {
      std::vector<std::string> names;
      for (const auto& a : arrays) names.push_back(a.first);
      return not_found(str_cat("calibration sample '", path, "' has no array named '", in.name, "' (it holds ",
                               names.empty() ? std::string("none") : str_join(names), ")"));
    }
    feeds.emplace_back(in.name, it->second);
  }
  return feeds;
}

Result<NamedTensors> load_folder(const std::string& dir, const std::vector<ValueInfo>& inputs) {
  NamedTensors feeds;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::string npy = str_cat(dir, "/", tensor_file_name(inputs[i].name), ".npy");
    const std::string pb = str_cat(dir, "/input_", i, ".pb");
    Result<Tensor> t = fs::exists(npy) ? read_npy(npy)
                       : fs::exists(pb) ? read_tensor_proto(pb)
                                        : Result<Tensor>(not_found(str_cat("calibration sample '", dir, "' has neither ",
                                                                           tensor_file_name(inputs[i].name),
                                                                           ".npy nor input_", i, ".pb for input '",
                                                                           inputs[i].name, "'")));
    if (!t) return t.error();
    feeds.emplace_back(inputs[i].name, std::move(*t));
  }
  return feeds;
}

}  // namespace

Result<std::vector<CalibrationSample>> list_calibration_samples(const std::string& data) {
  std::error_code ec;
  if (!fs::is_directory(data, ec)) return not_found(str_cat("calibration data folder '", data, "' does not exist"));
  if (fs::exists(fs::path(data) / "input_0.pb")) return std::vector<CalibrationSample>{{CalibrationSample::Kind::Folder, data}};
  std::vector<CalibrationSample> samples;
  for (const auto& entry : fs::directory_iterator(data, ec)) {
    const fs::path& p = entry.path();
    if (entry.is_directory()) samples.push_back({CalibrationSample::Kind::Folder, p.string()});
    else if (has_extension(p, ".npz")) samples.push_back({CalibrationSample::Kind::Npz, p.string()});
    else if (has_extension(p, ".npy")) samples.push_back({CalibrationSample::Kind::Npy, p.string()});
  }
  if (ec) return not_found(str_cat("cannot list calibration data folder '", data, "': ", ec.message()));
  if (samples.empty())
    return not_found(str_cat("calibration data folder '", data,
                             "' holds no samples (*.npz, *.npy, sub-folders of NAME.npy or input_0.pb, ...)"));
  std::sort(samples.begin(), samples.end(), [](const auto& a, const auto& b) { return a.path < b.path; });
  return samples;
}

Result<NamedTensors> load_calibration_sample(const CalibrationSample& sample, const std::vector<ValueInfo>& inputs) {
  switch (sample.kind) {
    case CalibrationSample::Kind::Npz:
      return load_npz(sample.path, inputs);
    case CalibrationSample::Kind::Folder:
      return load_folder(sample.path, inputs);
    case CalibrationSample::Kind::Npy:
      break;
  }
  if (inputs.size() != 1)
    return invalid_argument(str_cat("calibration sample '", sample.path, "' is one .npy file, but the model has ",
                                    inputs.size(), " inputs; use a .npz or a folder of NAME.npy per sample"));
  IGNIS_ASSIGN_OR_RETURN(Tensor t, read_npy(sample.path));
  return NamedTensors{{inputs[0].name, std::move(t)}};
}

}  // namespace ignis::compress
