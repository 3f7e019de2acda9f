// runOnnxConformance: each node test of libonnx-testdata, imported and run in the model.
#include "studies/onnx_conformance.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>

#include "arch/arch_model.hpp"
#include "common/fp.hpp"
#include "driver/inputs.hpp"
#include "driver/pipeline.hpp"
#include "support/diag.hpp"
#include "support/files.hpp"

namespace stepgen {

namespace fs = std::filesystem;

double onnxTolerance(const OnnxImport& imp, bool bf16Operands) {
  return imp.relErrorBound[bf16Operands ? 1 : 0] + std::ldexp(1.0, -23);
}

namespace {

struct Outcome {
  std::string test, ops, reason;
  bool supported = false, modelOk = false;
  double maxAbs = 0, maxRel = 0, tol = 0;
};

std::string csvSafe(std::string s) {
  for (char& c : s)
    if (c == ',' || c == '\n' || c == '"') c = c == '\n' ? ' ' : ';';
  return s;
}

/// The reason without the file path the diagnostic starts with.
std::string reasonOf(const DiagError& e) {
  const Diagnostic& d = e.diags.at(0);
  return fmt::format("[{}] {}", d.id, d.message);
}

std::vector<fs::path> sortedDirs(const fs::path& dir, const std::string& prefix) {
  std::vector<fs::path> v;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_directory() && e.path().filename().string().rfind(prefix, 0) == 0) v.push_back(e.path());
  std::sort(v.begin(), v.end());
  return v;
}

/// The .pb tensors of a data set in index order (input_0.pb, input_1.pb, ...).
std::vector<OnnxTensor> readSet(const fs::path& dir, const std::string& stem) {
  std::vector<OnnxTensor> v;
  for (int k = 0; fs::exists(dir / fmt::format("{}_{}.pb", stem, k)); ++k)
    v.push_back(readTensorFile((dir / fmt::format("{}_{}.pb", stem, k)).string()));
  return v;
}

void runTest(const fs::path& testDir, const OnnxConformanceOptions& o, bool bf16, Outcome& r) {
  const OnnxGraph g = readOnnx((testDir / "model.onnx").string());
  for (const auto& n : g.nodes) r.ops += (r.ops.empty() ? "" : " ") + n.op;
  OnnxImport imp;
  try {
    imp = lowerOnnx(g);
  } catch (const DiagError& e) {
    r.reason = reasonOf(e);
    return;
  }
  r.supported = true;
  r.tol = onnxTolerance(imp, bf16);
  const fs::path work = fs::path(o.workDir) / testDir.filename();
  fs::remove_all(work);
  fs::create_directories(work / "inputs");
  writeFile(work / "graph.yaml", imp.yaml);
  r.modelOk = true;
  for (const fs::path& set : sortedDirs(testDir, "test_data_set_")) {
    const std::vector<OnnxTensor> ins = readSet(set, "input"), outs = readSet(set, "output");
    std::map<std::string, OnnxTensor> given;
    for (size_t k = 0; k < ins.size() && k < g.inputs.size(); ++k) given[g.inputs[k]] = ins[k];
    for (const auto& [name, m] : onnxInputMatrices(imp, g, given)) toNpy(work / "inputs" / (name + ".npy"), m);
    const ModelResult res = runModelOnly(o.archPath, (work / "graph.yaml").string(), (work / "inputs").string(), 1);
    for (size_t k = 0; k < imp.outputs.size(); ++k) {
      const Matrix& got = res.outputs.at(imp.outputs[k].tensor);
      const OnnxTensor& want = outs.at(k);
      if (int64_t(got.data.size()) != want.count()) {
        r.modelOk = false;
        r.reason = fmt::format("output {} has {} values, expected {}", imp.outputs[k].name, got.data.size(), want.count());
        return;
      }
      double scale = 0;
      for (float e : want.f) scale = std::max(scale, std::fabs(double(e)));
      for (size_t i = 0; i < want.f.size(); ++i) {
        const double a = bitsToFloat(got.data[i]), e = want.f[i];
        if (std::isnan(e) && std::isnan(a)) continue;
        const double err = (a == e) ? 0.0 : std::fabs(a - e);  // equal infinities agree
        const double rel = err / std::max({std::fabs(e), 1e-3 * scale, 1e-30});
        r.maxAbs = std::max(r.maxAbs, std::isnan(err) ? INFINITY : err);
        r.maxRel = std::max(r.maxRel, std::isnan(rel) ? INFINITY : rel);
      }
    }
  }
  if (r.maxRel > r.tol) {
    r.modelOk = false;
    r.reason = "outside the tolerance";
  }
}

}  // namespace

int runOnnxConformance(const OnnxConformanceOptions& o) {
  if (!fs::is_directory(o.dataDir))
    throw DiagError("R-401", SourceLoc{o.dataDir}, "no ONNX node tests here (install libonnx-testdata)");
  const ArchModel arch = loadArch(o.archPath);
  const bool bf16 = arch.cu.format == NumberFormat::Bf16Fp32;
  std::vector<Outcome> rows;
  const std::vector<fs::path> tests = sortedDirs(o.dataDir, "test_");
  if (tests.empty()) throw DiagError("R-401", SourceLoc{o.dataDir}, "no test_* folders");
  for (const fs::path& t : tests) {
    if (!o.only.empty() && t.filename().string().find(o.only) == std::string::npos) continue;
    Outcome r;
    r.test = t.filename().string();
    try {
      runTest(t, o, bf16, r);
    } catch (const DiagError& e) {
      if (r.supported) r.modelOk = false;
      r.reason = reasonOf(e);
    } catch (const std::exception& e) {
      if (r.supported) r.modelOk = false;
      r.reason = std::string("model: ") + e.what();
    }
    rows.push_back(r);
    if (rows.size() % 100 == 0) std::cerr << fmt::format("onnx-conformance: {} of {} tests\n", rows.size(), tests.size());
  }
  int supported = 0, passed = 0;
  std::map<std::string, std::pair<int, int>> byOp;  // op: supported, passed
  std::string csv = "test,op,supported,model_ok,rtl_ok,max_abs_err,max_rel_err,tolerance,reason\n";
  for (const Outcome& r : rows) {
    supported += r.supported;
    passed += r.supported && r.modelOk;
    if (r.supported) {
      auto& c = byOp[r.ops];
      c.first++;
      c.second += r.modelOk;
    }
    csv += fmt::format("{},{},{},{},{},{},{},{},{}\n", r.test, csvSafe(r.ops), r.supported ? "yes" : "no",
                       r.supported ? (r.modelOk ? "yes" : "no") : "", "", r.supported ? fmt::format("{:.3e}", r.maxAbs) : "",
                       r.supported ? fmt::format("{:.3e}", r.maxRel) : "", r.supported ? fmt::format("{:.3e}", r.tol) : "",
                       csvSafe(r.reason));
  }
  std::string md = fmt::format(
      "# ONNX conformance: the backend node tests of ONNX 1.12 (libonnx-testdata)\n\n"
      "Each test: `stepgen import onnx` then `stepgen model` on `{}` for every test_data_set, compared with its "
      "output_*.pb. An element passes when |out - expected| <= tolerance x max(|expected|, 1e-3 x the output's largest "
      "|expected|); the tolerance is the sum of the error bounds of the graph's functions (studies/onnx_conformance.hpp). "
      "Tests the importer refuses keep its reason (onnx_conformance.csv).\n\n"
      "**{} tests; {} supported; {} of them pass in the model; {} fail.**\n\n"
      "| ops of the test | supported tests | pass |\n|---|---:|---:|\n",
      fs::absolute(o.archPath).lexically_relative(STEPGEN_ROOT).string(), rows.size(), supported, passed, supported - passed);
  for (const auto& [op, c] : byOp) md += fmt::format("| {} | {} | {} |\n", op, c.first, c.second);
  md += "\nSupported tests that fail:\n\n";
  for (const Outcome& r : rows)
    if (r.supported && !r.modelOk) md += fmt::format("- {} ({}): {}, max rel err {:.2e} vs tolerance {:.2e}\n", r.test, r.ops,
                                                     r.reason, r.maxRel, r.tol);
  std::cout << md;
  if (!o.csvPath.empty()) writeFile(o.csvPath, csv);
  if (!o.mdPath.empty()) writeFile(o.mdPath, md);
  return supported == passed ? 0 : 2;
}

}  // namespace stepgen
