#pragma once
// `stepgen study onnx-conformance`: ONNX's own backend node tests (libonnx-testdata) through
// the importer and the model, compared with the tests' expected outputs
// (docs/results/onnx_conformance.md; docs/onnx.md#conformance).
#include <string>
#include <vector>

#include "onnx/onnx_lower.hpp"

namespace stepgen {

struct OnnxConformanceOptions {
  /// Folders of test folders (Debian's libonnx-testdata): ONNX's node tests and the models
  /// converted from PyTorch's tests; a test outside node/ is named <folder>/<test>.
  std::vector<std::string> dataDirs = {"/usr/share/libonnx-testdata/data/node",
                                       "/usr/share/libonnx-testdata/data/pytorch-converted",
                                       "/usr/share/libonnx-testdata/data/pytorch-operator"};
  std::string archPath;     ///< fabric the model runs on (default arch/onnx.yaml: fp32 arithmetic)
  std::string rtlArchPath;  ///< a bounded fabric: the tests that map onto it also run in Verilator ("" = none)
  std::string buildCache;   ///< folder for the verilated fabric
  std::string only;         ///< a substring: run only the tests whose name contains it
  std::string workDir = "out/onnx_conformance";
  std::string csvPath, mdPath;
};

/// Runs every test folder under dataDirs (sorted by name): import (unsupported tests keep the
/// importer's reason), `stepgen model` on each test_data_set, comparison with output_*.pb;
/// then, when the graph maps onto rtlArchPath, verify (model and Verilator, bit-exact).
/// An element passes when |out - expected| <= tolerance x max(|expected|, 1e-3 x the
/// output's largest |expected|), or within the running error bound (onnx_error_bound.hpp:
/// the fabric's plus the reference's, on the test's inputs) where the graph has one. Writes the CSV (test, op, supported, model_ok, rtl_ok,
/// max_abs_err, max_rel_err, tolerance, reason) and a markdown summary. Returns 0 when every
/// supported test passes and every RTL run is bit-exact, 2 otherwise. Throws DiagError R-401
/// when a data folder is missing or none has tests.
int runOnnxConformance(const OnnxConformanceOptions& o);

}  // namespace stepgen
