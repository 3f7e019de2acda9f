// runOnnxConformance: each test of libonnx-testdata imported and run in the model, and in
// Verilator where it maps onto the RTL fabric.
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
#include "driver/reference.hpp"
#include "driver/report.hpp"
#include "onnx/onnx_error_bound.hpp"
#include "onnx/onnx_import.hpp"
#include "support/diag.hpp"
#include "support/files.hpp"

namespace stepgen {

namespace fs = std::filesystem;

namespace {

struct Outcome {
  std::string test, ops, reason, rtl;  ///< rtl: "yes" / "no" / "" (not run)
  bool supported = false, modelOk = false;
  double tol = 0;
  ElementCheck elements;  ///< over every data set and output
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
  const fs::path work = fs::path(o.workDir) / r.test;
  fs::remove_all(work);
  fs::create_directories(work / "inputs");
  writeFile(work / "graph.yaml", imp.yaml);
  r.modelOk = true;
  for (const fs::path& set : sortedDirs(testDir, "test_data_set_")) {
    const OnnxDataSet data = readOnnxDataSet(set.string(), g, imp);
    const auto inputs = onnxInputMatrices(imp, g, data.given);
    for (const auto& [name, m] : inputs) toNpy(work / "inputs" / (name + ".npy"), m);
    const ModelResult res = runModelOnly(o.archPath, (work / "graph.yaml").string(), (work / "inputs").string(), 1);
    const RunningBounds running =
        onFirstCall([&] { return referenceErrorBounds(loadGraph((work / "graph.yaml").string()), inputs, bf16); });
    for (size_t k = 0; k < imp.outputs.size(); ++k) {
      const Matrix& got = res.outputs.at(imp.outputs[k].tensor);
      const OnnxTensor& want = data.expected.at(imp.outputs[k].tensor);
      if (int64_t(got.data.size()) != want.count()) {
        r.modelOk = false;
        r.reason = fmt::format("output {} has {} values, expected {}", imp.outputs[k].name, got.data.size(), want.count());
        return;
      }
      Matrix w{1, want.count(), {}};
      for (float e : want.f) w.data.push_back(floatToBits(e));
      checkElements(got, w, r.tol, imp.outputs[k].tensor, running, r.elements);
    }
  }
  if (r.elements.outside > 0) {
    r.modelOk = false;
    r.reason = fmt::format("{} elements outside the tolerance and the running error bound", r.elements.outside);
    return;
  }
  if (r.elements.byRunning > 0)
    r.reason = fmt::format("{} elements outside the tolerance (cancellation), within the running error bound (at most {:.2f} of it)",
                           r.elements.byRunning, r.elements.runningShare);
  if (o.rtlArchPath.empty()) return;
  // In RTL where the graph maps onto the fabric (many node tests do not: rows of their
  // tensors narrower than a 64-byte DRAM piece, M-305), on the last data set's inputs.
  VerifyOptions vo;
  vo.archPath = o.rtlArchPath;
  vo.graphPath = (work / "graph.yaml").string();
  vo.inputsDir = (work / "inputs").string();
  vo.outDir = (work / "rtl").string();
  vo.buildCache = o.buildCache;
  try {
    const VerifyReport vr = verify(vo);
    r.rtl = passed(vr) ? "yes" : "no";
    if (!passed(vr)) r.reason += (r.reason.empty() ? "" : "; ") + fmt::format("RTL {}: {}", vr.rtl.status, vr.firstMismatch);
  } catch (const DiagError& e) {
    r.reason += (r.reason.empty() ? "" : "; ") + ("not in RTL: " + reasonOf(e));
  }
}

}  // namespace

int runOnnxConformance(const OnnxConformanceOptions& o) {
  const ArchModel arch = loadArch(o.archPath);
  const bool bf16 = arch.cu.format == NumberFormat::Bf16Fp32;
  std::vector<Outcome> rows;
  std::vector<std::pair<std::string, fs::path>> tests;  // name, folder
  for (const std::string& d : o.dataDirs) {
    if (!fs::is_directory(d)) throw DiagError("R-401", SourceLoc{d}, "no ONNX tests here (install libonnx-testdata)");
    const std::string prefix = fs::path(d).filename() == "node" ? "" : fs::path(d).filename().string() + "/";
    for (const fs::path& t : sortedDirs(d, "test_")) tests.emplace_back(prefix + t.filename().string(), t);
  }
  if (tests.empty()) throw DiagError("R-401", SourceLoc{}, "no test_* folders in the data folders");
  for (const auto& [name, t] : tests) {
    if (!o.only.empty() && name.find(o.only) == std::string::npos) continue;
    Outcome r;
    r.test = name;
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
  int supported = 0, passed = 0, inRtl = 0, rtlOk = 0;
  std::map<std::string, std::pair<int, int>> byOp;  // op: supported, passed
  std::string csv = "test,op,supported,model_ok,rtl_ok,max_abs_err,max_rel_err,tolerance,reason\n";
  for (const Outcome& r : rows) {
    supported += r.supported;
    passed += r.supported && r.modelOk;
    inRtl += !r.rtl.empty();
    rtlOk += r.rtl == "yes";
    if (r.supported) {
      auto& c = byOp[r.ops];
      c.first++;
      c.second += r.modelOk;
    }
    csv += fmt::format("{},{},{},{},{},{},{},{},{}\n", r.test, csvSafe(r.ops), r.supported ? "yes" : "no",
                       r.supported ? (r.modelOk ? "yes" : "no") : "", r.rtl, r.supported ? fmt::format("{:.3e}", r.elements.maxAbsErr) : "",
                       r.supported ? fmt::format("{:.3e}", r.elements.maxRelErr) : "", r.supported ? fmt::format("{:.3e}", r.tol) : "",
                       csvSafe(r.reason));
  }
  std::string md = fmt::format(
      "# ONNX conformance: the backend node tests of ONNX 1.12 (libonnx-testdata)\n\n"
      "Each test: `stepgen import onnx` then `stepgen model` on `{}` for every test_data_set, compared with its "
      "output_*.pb. An element passes when |out - expected| <= tolerance x max(|expected|, 1e-3 x the output's largest "
      "|expected|); the tolerance is the error bound of the fabric's arithmetic propagated through the imported graph. "
      "An element outside it still passes within the running error bound: the graph evaluated on the test's inputs "
      "with a bound on each value's error, the fabric's plus the fp32 reference's, which sees cancellation "
      "(docs/onnx.md#conformance). "
      "Tests the importer refuses keep its reason (onnx_conformance.csv).\n\n"
      "**{} tests; {} supported; {} of them pass in the model; {} fail. In RTL on `{}`: {} map onto it, {} bit-exact "
      "with the model.**\n\n"
      "| ops of the test | supported tests | pass |\n|---|---:|---:|\n",
      fs::absolute(o.archPath).lexically_relative(STEPGEN_ROOT).string(), rows.size(), supported, passed, supported - passed,
      o.rtlArchPath.empty() ? "-" : fs::absolute(o.rtlArchPath).lexically_relative(STEPGEN_ROOT).string(), inRtl, rtlOk);
  for (const auto& [op, c] : byOp) md += fmt::format("| {} | {} | {} |\n", op, c.first, c.second);
  md += "\nSupported tests that fail:\n\n";
  for (const Outcome& r : rows)
    if (r.supported && !r.modelOk) md += fmt::format("- {} ({}): {}, max rel err {:.2e} vs tolerance {:.2e}\n", r.test, r.ops,
                                                     r.reason, r.elements.maxRelErr, r.tol);
  std::cout << md;
  if (!o.csvPath.empty()) writeFile(o.csvPath, csv);
  if (!o.mdPath.empty()) writeFile(o.mdPath, md);
  return supported == passed && inRtl == rtlOk ? 0 : 2;
}

}  // namespace stepgen
