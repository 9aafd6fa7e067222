// SPDX-License-Identifier: Apache-2.0
// Runs ONNX backend node test cases (<dir>/<case>/model.onnx + test_data_set_*/) through the
// public API and compares with the stored expected outputs, using the tolerances of ONNX's
// own backend runner (rtol 1e-3, atol 1e-7). Each case runs in a child process so a crash is
// reported as a failure of that case instead of ending the run.
//
// A case is PASS, FAIL (wrong answer, crash, or a valid model rejected as invalid), or
// UNSUPPORTED (ignis said so with an Unsupported status). Exit status is non-zero when any
// case fails or the pass rate is below --min-pass-rate.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/dtype_dispatch.h"
#include "core/strings.h"
#include "ignis/ignis.h"
#include "ir/op_schema.h"
#include "kernels/registry.h"
#include "onnx/import.h"

namespace fs = std::filesystem;
using namespace ignis;

namespace {

enum class Outcome { Pass, Fail, Unsupported, Skipped, Training };

// Cases whose stored data contradict their own model or the current spec in ONNX 1.12's
// test data (Debian's suite). They are not run and do not count as passed. The suite written
// by tools/make_node_suite.py (a folder with a VERSION file) has correct data for them.
const std::map<std::string, std::string> kOnnx112DataDefects = {
    {"test_cast_FLOAT_to_BFLOAT16", "expected output truncates to bfloat16; the spec (and onnx >= 1.13 data) rounds to nearest even"},
    {"test_castlike_BFLOAT16_to_FLOAT", "input 'like' is [1] while the model declares [3, 4]"},
    {"test_castlike_BFLOAT16_to_FLOAT_expanded", "input 'like' is [1] while the model declares [3, 4]"},
    {"test_castlike_FLOAT_to_BFLOAT16", "input 'like' is [1] while the model declares [3, 4]; output truncates"},
    {"test_castlike_FLOAT_to_BFLOAT16_expanded", "input 'like' is [1] while the model declares [3, 4]; output truncates"},
};

// The same for the suite tools/make_node_suite.py writes from PyPI's onnx.
const std::map<std::string, std::string> kGeneratedDataDefects = {
    {"test_dft_inverse", "the exact imaginary part of bin 5 is 0; the stored 1.9e-7 is float32 FFT rounding noise above "
                         "the case's atol of 1e-7 (onnxruntime fails it too)"},
    {"test_dft_inverse_opset19", "as test_dft_inverse"},
};

// Cases of training ops, which an inference engine does not run: the optimizer-update ops of
// ai.onnx.preview.training, and Dropout in training mode (random masks drawn by numpy's
// generator). They are excluded from the pass rate in both suites, each listed here.
const std::map<std::string, std::string> kTrainingCases = {
    {"test_adagrad", "Adagrad (ai.onnx.preview.training)"},
    {"test_adagrad_multiple", "Adagrad (ai.onnx.preview.training)"},
    {"test_adam", "Adam (ai.onnx.preview.training)"},
    {"test_adam_multiple", "Adam (ai.onnx.preview.training)"},
    {"test_momentum", "Momentum (ai.onnx.preview.training)"},
    {"test_momentum_multiple", "Momentum (ai.onnx.preview.training)"},
    {"test_nesterov_momentum", "Momentum (ai.onnx.preview.training)"},
    {"test_training_dropout", "Dropout in training mode"},
    {"test_training_dropout_default", "Dropout in training mode"},
    {"test_training_dropout_default_mask", "Dropout in training mode"},
    {"test_training_dropout_mask", "Dropout in training mode"},
};

struct CaseResult {
  Outcome outcome = Outcome::Fail;
  std::string detail;
};

// ONNX 1.12's test data stores bfloat16 tensors as uint16 bit patterns; read them as bfloat16.
Tensor bfloat16_from_bits(const Tensor& t) { return Tensor::wrap(DType::BF16, t.shape(), t.data(), std::make_shared<Tensor>(t)); }

std::string compare(const Tensor& got, const Tensor& want_in, double rtol, double atol);

// Sequences item by item, optionals by presence then value, maps by keys then values.
std::string compare_container(const Tensor& got, const Tensor& want, double rtol, double atol) {
  switch (want.dtype()) {
    case DType::Sequence: {
      const auto& g = got.as_sequence().items;
      const auto& w = want.as_sequence().items;
      if (g.size() != w.size()) return str_cat("sequence of ", g.size(), " tensors != expected ", w.size());
      for (size_t i = 0; i < w.size(); ++i) {
        std::string diff = compare(g[i], w[i], rtol, atol);
        if (!diff.empty()) return str_cat("item ", i, ": ", diff);
      }
      return "";
    }
    case DType::Optional: {
      const auto& g = got.as_optional();
      const auto& w = want.as_optional();
      if (g.has_value() != w.has_value())
        return str_cat("optional ", g.has_value() ? "has a value" : "is empty", "; expected ", w.has_value() ? "a value" : "empty");
      return w.has_value() ? compare(g.value, w.value, rtol, atol) : "";
    }
    default: {
      std::string diff = compare(got.as_map().keys, want.as_map().keys, 0, 0);
      if (!diff.empty()) return "map keys: " + diff;
      diff = compare(got.as_map().values, want.as_map().values, rtol, atol);
      return diff.empty() ? "" : "map values: " + diff;
    }
  }
}

std::string compare(const Tensor& got, const Tensor& want_in, double rtol, double atol) {
  const Tensor want = got.dtype() == DType::BF16 && want_in.dtype() == DType::U16 ? bfloat16_from_bits(want_in) : want_in;
  if (got.dtype() != want.dtype())
    return str_cat("dtype ", dtype_name(got.dtype()), " != expected ", dtype_name(want.dtype()));
  if (dtype_is_container(want.dtype())) return compare_container(got, want, rtol, atol);
  if (!(got.shape() == want.shape())) return str_cat("shape ", got.shape().str(), " != expected ", want.shape().str());
  if (want.dtype() == DType::String) {
    for (int64_t i = 0; i < want.numel(); ++i)
      if (got.data_as<std::string>()[i] != want.data_as<std::string>()[i])
        return str_cat("element ", i, ": got \"", got.data_as<std::string>()[i], "\", expected \"",
                       want.data_as<std::string>()[i], "\"");
    return "";
  }
  const bool is_float = dtype_is_float(want.dtype());
  for (int64_t i = 0; i < want.numel(); ++i) {
    const double g = load_as_double(got.dtype(), got.data(), i);
    const double w = load_as_double(want.dtype(), want.data(), i);
    bool ok;
    if (!is_float) ok = load_as_int64(got.dtype(), got.data(), i) == load_as_int64(want.dtype(), want.data(), i);
    else if (std::isnan(w)) ok = std::isnan(g);
    else if (std::isinf(w)) ok = g == w;
    else ok = std::fabs(g - w) <= atol + rtol * std::fabs(w);
    if (!ok) return str_cat("element ", i, ": got ", g, ", expected ", w);
  }
  return "";
}

// The case's tolerances: "rtol atol" in <case>/tolerance.txt (written by tools/make_node_suite.py
// from each generator's own values), else ONNX's backend defaults.
std::pair<double, double> case_tolerance(const fs::path& dir) {
  double rtol = 1e-3, atol = 1e-7;
  std::ifstream in(dir / "tolerance.txt");
  if (in) in >> rtol >> atol;
  return {rtol, atol};
}

// float16/bfloat16 outputs of a function's expansion (cases named *_expanded) are compared
// within 2 epsilons of the type: every node of the expansion rounds to the type, and where
// ignis accumulates in float32 inside a node (Softmax's sum, MatMul's dot products) the
// reference rounds after each addition, so the two differ by an ulp or two after a chain of
// nodes. The single-op cases keep their own tolerance.
double expanded_half_rtol(const fs::path& dir, DType dtype, double rtol) {
  if (dir.filename().string().find("_expanded") == std::string::npos) return rtol;
  if (dtype == DType::F16) return std::max(rtol, 2.0 / 1024);  // 2 * 2^-10
  if (dtype == DType::BF16) return std::max(rtol, 2.0 / 128);  // 2 * 2^-7
  return rtol;
}

CaseResult run_case(const fs::path& dir) {
  const auto [rtol, atol] = case_tolerance(dir);
  auto session = Session::open((dir / "model.onnx").string());
  if (!session) {
    const auto& e = session.error();
    return {e.code() == StatusCode::Unsupported ? Outcome::Unsupported : Outcome::Fail, e.to_string()};
  }
  std::vector<fs::path> sets;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0) sets.push_back(e.path());
  std::sort(sets.begin(), sets.end());
  if (sets.empty()) return {Outcome::Fail, "no test_data_set_* folder"};
  for (const auto& set : sets) {
    NamedTensors inputs;
    for (size_t i = 0; i < session->inputs().size(); ++i) {
      const auto path = set / str_cat("input_", i, ".pb");
      if (!fs::exists(path)) break;  // optional trailing inputs may be left out
      auto t = read_onnx_value(path.string(), session->inputs()[i].dtype);
      if (!t) return {t.error().code() == StatusCode::Unsupported ? Outcome::Unsupported : Outcome::Fail,
                      t.error().to_string()};
      if (session->inputs()[i].dtype == DType::BF16 && t->dtype() == DType::U16) *t = bfloat16_from_bits(*t);
      inputs.emplace_back(session->inputs()[i].name, std::move(*t));
    }
    auto outputs = session->run(inputs);
    if (!outputs) {
      const auto& e = outputs.error();
      return {e.code() == StatusCode::Unsupported ? Outcome::Unsupported : Outcome::Fail, e.to_string()};
    }
    for (size_t o = 0; o < outputs->size(); ++o) {
      const auto path = set / str_cat("output_", o, ".pb");
      auto want = read_onnx_value(path.string(), session->outputs()[o].dtype);
      if (!want) return {Outcome::Unsupported, "expected output: " + want.error().to_string()};
      std::string diff = compare((*outputs)[o], *want, expanded_half_rtol(dir, (*outputs)[o].dtype(), rtol), atol);
      if (!diff.empty())
        return {Outcome::Fail, str_cat("output ", o, " ('", session->outputs()[o].name, "'): ", diff)};
    }
  }
  return {Outcome::Pass, ""};
}

// Runs one case in a child process; the child reports "<outcome>\n<detail>" through a pipe.
CaseResult run_isolated(const fs::path& dir, int timeout_s) {
  int fds[2];
  if (pipe(fds) != 0) return {Outcome::Fail, "pipe failed"};
  std::fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    alarm(static_cast<unsigned>(timeout_s));
    CaseResult r = run_case(dir);
    std::string msg = str_cat(static_cast<int>(r.outcome), "\n", r.detail);
    ssize_t unused = write(fds[1], msg.data(), msg.size());
    (void)unused;
    close(fds[1]);
    _exit(0);
  }
  close(fds[1]);
  std::string msg;
  char buf[4096];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) > 0) msg.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    return {Outcome::Fail, sig == SIGALRM ? str_cat("timed out after ", timeout_s, " s") : str_cat("crashed with signal ", sig, " (", strsignal(sig), ")")};
  }
  if (msg.empty()) return {Outcome::Fail, str_cat("child exited with status ", WEXITSTATUS(status), " and no report")};
  const size_t nl = msg.find('\n');
  return {static_cast<Outcome>(std::stoi(msg.substr(0, nl))), msg.substr(nl + 1)};
}

// Op types of a case, read from its model (best effort: a model we cannot parse has none).
std::set<std::string> case_ops(const fs::path& dir) {
  std::set<std::string> ops;
  std::ifstream in(dir / "model.onnx", std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto g = onnx_io::import_model(std::as_bytes(std::span<const char>(bytes)), dir.string());
  if (g)
    for (const auto& n : g->nodes) ops.insert(n.op_type);
  return ops;
}

// Op name guessed from the case name when the model cannot be opened: test_<op>_...
std::string op_from_case_name(const std::string& name) {
  std::string s = name.substr(5);
  const size_t us = s.find('_');
  return us == std::string::npos ? s : s.substr(0, us);
}

// The op versions the schemas of (domain, op) cover, e.g. "1-22".
std::string schema_versions(std::string_view domain, std::string_view op) {
  std::vector<std::string> ranges;
  for (const auto& s : ir::OpSchemaRegistry::global().all())
    if (s.domain == domain && s.op_type == op)
      ranges.push_back(s.since_opset == s.until_opset ? str_cat(s.since_opset) : str_cat(s.since_opset, "-", s.until_opset));
  return ranges.empty() ? "-" : str_join(ranges, ", ");
}

void usage() {
  std::puts(
      "usage: ignis_conformance NODE_DIR [--filter SUBSTR]... [--min-pass-rate R] [--ops-doc FILE]\n"
      "                         [--verbose] [--timeout S]\n"
      "Runs ONNX backend node test cases and prints passed / failed / unsupported counts.");
}

}  // namespace

int main(int argc, char** argv) {
  std::string root;
  std::vector<std::string> filters;
  double min_rate = 0.0;
  std::string ops_doc;
  bool verbose = false;
  int timeout_s = 120;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "error: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--help" || a == "-h") {
      usage();
      return 0;
    } else if (a == "--filter") filters.push_back(next());
    else if (a == "--min-pass-rate") min_rate = std::stod(next());
    else if (a == "--ops-doc") ops_doc = next();
    else if (a == "--verbose" || a == "-v") verbose = true;
    else if (a == "--timeout") timeout_s = std::stoi(next());
    else if (!a.empty() && a[0] == '-') {
      std::fprintf(stderr, "error: unknown option %s\n", a.c_str());
      return 2;
    } else root = a;
  }
  if (root.empty() || !fs::is_directory(root)) {
    usage();
    std::fprintf(stderr, "error: NODE_DIR '%s' is not a folder\n", root.c_str());
    return 2;
  }

  std::vector<fs::path> cases;
  for (const auto& e : fs::directory_iterator(root)) {
    const std::string name = e.path().filename().string();
    if (!e.is_directory() || !fs::exists(e.path() / "model.onnx")) continue;
    bool keep = filters.empty();
    for (const auto& f : filters) keep = keep || name.find(f) != std::string::npos;
    if (keep) cases.push_back(e.path());
  }
  std::sort(cases.begin(), cases.end());
  const bool generated_suite = fs::exists(fs::path(root) / "VERSION");
  const std::map<std::string, std::string>& defects = generated_suite ? kGeneratedDataDefects : kOnnx112DataDefects;

  struct OpCount {
    int pass = 0, fail = 0, unsupported = 0;
  };
  std::map<std::string, OpCount> per_op;
  int pass = 0, fail = 0, unsup = 0, skipped = 0, training = 0;
  std::map<std::string, int> unsupported_reasons;
  for (const auto& dir : cases) {
    const std::string name = dir.filename().string();
    auto defect = defects.find(name);
    auto train = kTrainingCases.find(name);
    CaseResult r = defect != defects.end()  ? CaseResult{Outcome::Skipped, defect->second}
                   : train != kTrainingCases.end() ? CaseResult{Outcome::Training, train->second}
                                                   : run_isolated(dir, timeout_s);
    auto ops = case_ops(dir);
    if (ops.empty()) ops.insert(op_from_case_name(name));
    // Expanded cases exercise a function body; count them under "<op> (expanded)".
    if (name.find("_expanded") != std::string::npos) ops = {op_from_case_name(name) + " (expanded)"};
    for (const auto& op : ops) {
      auto& c = per_op[op];
      if (r.outcome == Outcome::Pass) c.pass++;
      else if (r.outcome == Outcome::Fail) c.fail++;
      else if (r.outcome == Outcome::Unsupported) c.unsupported++;
    }
    switch (r.outcome) {
      case Outcome::Pass:
        ++pass;
        if (verbose) std::printf("PASS        %s\n", name.c_str());
        break;
      case Outcome::Fail:
        ++fail;
        std::printf("FAIL        %s: %s\n", name.c_str(), r.detail.c_str());
        break;
      case Outcome::Skipped:
        ++skipped;
        std::printf("SKIPPED     %s: test data defect: %s\n", name.c_str(), r.detail.c_str());
        break;
      case Outcome::Training:
        ++training;
        std::printf("EXCLUDED    %s: training op: %s\n", name.c_str(), r.detail.c_str());
        break;
      case Outcome::Unsupported:
        ++unsup;
        if (verbose) std::printf("UNSUPPORTED %s: %s\n", name.c_str(), r.detail.c_str());
        break;
    }
  }

  std::printf("\n%-34s %6s %6s %12s\n", "op", "pass", "fail", "unsupported");
  for (const auto& [op, c] : per_op) std::printf("%-34s %6d %6d %12d\n", op.c_str(), c.pass, c.fail, c.unsupported);
  const int total = static_cast<int>(cases.size());
  // Unsupported cases count as not passed; listed defects and training ops are left out.
  const int counted = total - skipped - training;
  const double rate = counted ? static_cast<double>(pass) / counted : 0.0;
  std::printf("\nconformance: %d cases, %d passed, %d failed, %d unsupported, %d skipped as test-data defects, "
              "%d training ops excluded (pass rate %.1f%% of %d)\n",
              total, pass, fail, unsup, skipped, training, 100.0 * rate, counted);

  if (!ops_doc.empty()) {
    std::string suite_name = str_cat("`", root, "`");
    if (std::ifstream v(fs::path(root) / "VERSION"); v) {
      std::string version;
      std::getline(v, version);
      suite_name = str_cat("the suite of onnx ", version, " written by `tools/make_node_suite.py`");
    }
    std::ofstream doc(ops_doc);
    doc << "# Supported operators\n\n"
        << "Generated by `ignis_conformance` (tests/conformance/node_runner.cc) from the kernel registry and the\n"
        << "ONNX backend node tests: " << suite_name << ".\n"
        << "Do not edit by hand; rerun the conformance test to refresh it.\n\n"
        << str_cat("Conformance: ", total, " cases, ", pass, " passed, ", fail, " failed, ", unsup, " unsupported, ", skipped,
                   " skipped as test-data defects, ", training, " training ops excluded (both listed in the runner).\n\n")
        << "| op | domain | opsets | kernel | dtypes (main input) | node tests pass / fail / unsupported |\n"
        << "|---|---|---|---|---|---|\n";
    std::vector<const kernels::KernelDef*> defs;
    for (const auto& d : kernels::KernelRegistry::global().all()) defs.push_back(&d);
    std::sort(defs.begin(), defs.end(), [](auto* a, auto* b) {
      return std::tie(a->domain, a->op_type, a->id) < std::tie(b->domain, b->op_type, b->id);
    });
    const DType all_types[] = {DType::F32, DType::F64, DType::F16, DType::BF16, DType::I8,  DType::I16, DType::I32,
                               DType::I64, DType::U8,  DType::U16, DType::U32,  DType::U64, DType::Bool};
    for (const auto* d : defs) {
      std::vector<std::string> types;
      for (DType t : all_types)
        if (d->types.contains(t)) types.emplace_back(dtype_name(t));
      const OpCount c = per_op.count(std::string(d->op_type)) ? per_op[std::string(d->op_type)] : OpCount{};
      doc << "| " << d->op_type << " | " << (d->domain.empty() ? "ai.onnx" : d->domain) << " | "
          << schema_versions(d->domain, d->op_type) << " | " << d->id << " | " << str_join(types, " ") << " | " << c.pass << " / "
          << c.fail << " / " << c.unsupported << " |\n";
    }
  }
  if (fail > 0) return 1;
  if (rate < min_rate) {
    std::printf("pass rate %.1f%% is below the required %.1f%%\n", 100.0 * rate, 100.0 * min_rate);
    return 1;
  }
  return 0;
}
