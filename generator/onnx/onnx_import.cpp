// importOnnx: read, lower, write the folder in one rename.
#include "onnx/onnx_import.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>

#include "arch/arch_model.hpp"
#include "common/fp.hpp"
#include "driver/inputs.hpp"
#include "onnx/onnx_lower.hpp"
#include "support/diag.hpp"
#include "support/files.hpp"

namespace stepgen {

namespace fs = std::filesystem;

namespace {

/// A .npy file (1-D or 2-D float32) as an ONNX value of `shape`: same element count. An
/// `integer` value (an INT64 / INT32 input: a Gather's indices) is written as float32 whole
/// numbers, exact up to 2^24; R-402 for a value that is not one.
OnnxTensor tensorFromNpy(const fs::path& p, const std::vector<int64_t>& shape, bool integer) {
  const Matrix m = fromNpy(p);
  OnnxTensor t;
  t.shape = shape;
  t.isFloat = !integer;
  t.file = p.string();
  if (int64_t(m.data.size()) != t.count())
    throw DiagError("R-402", SourceLoc{p.string()},
                    fmt::format("{} values, the model's value has {} (shape [{}])", m.data.size(), t.count(),
                                fmt::join(shape, ", ")));
  for (uint32_t b : m.data) {
    const float x = bitsToFloat(b);
    if (!integer) {
      t.f.push_back(x);
    } else if (std::trunc(x) == x && std::fabs(x) <= float(1 << 24)) {
      t.i.push_back(int64_t(x));
    } else {
      throw DiagError("R-402", SourceLoc{p.string()}, fmt::format("{} is not a whole number of at most 2^24: the model's "
                                                                 "value is an integer tensor", x));
    }
  }
  return t;
}

}  // namespace

OnnxDataSet readOnnxDataSet(const std::string& dir, const OnnxGraph& g, const OnnxImport& imp) {
  if (!fs::is_directory(dir)) throw DiagError("R-401", SourceLoc{dir}, "not a folder of ONNX inputs and outputs");
  OnnxDataSet d;
  // input_<k>.pb / output_<k>.pb (ONNX's test data sets), else <value name>.npy.
  auto read = [&](const std::string& stem, size_t k, const std::string& name, std::map<std::string, OnnxTensor>& into,
                  const std::string& key) {
    const fs::path pb = fs::path(dir) / fmt::format("{}_{}.pb", stem, k);
    const fs::path npy = fs::path(dir) / (name + ".npy");
    if (fs::exists(pb)) {
      into[key] = readTensorFile(pb.string());
    } else if (fs::exists(npy)) {
      into[key] = tensorFromNpy(npy, g.shapes.count(name) ? g.shapes.at(name) : std::vector<int64_t>{}, g.isInteger(name));
    }
  };
  for (size_t k = 0; k < g.inputs.size(); ++k) read("input", k, g.inputs[k], d.given, g.inputs[k]);
  for (size_t k = 0; k < imp.outputs.size(); ++k) read("output", k, imp.outputs[k].name, d.expected, imp.outputs[k].tensor);
  return d;
}

std::string importOnnx(const std::string& modelPath, const std::string& outDir, const std::string& dataDir,
                       const std::string& routingTrace, const std::string& archPath, const std::string& schedulePath) {
  const OnnxGraph g = readOnnx(modelPath);
  const OnnxSchedule schedule = !schedulePath.empty() ? readOnnxSchedule(schedulePath)
                              : !archPath.empty()   ? chooseOnnxSchedule(g, loadArch(archPath), routingTrace)
                                                    : OnnxSchedule{};
  const OnnxImport imp = lowerOnnx(g, routingTrace, schedule);
  const OnnxDataSet data = dataDir.empty() ? OnnxDataSet{} : readOnnxDataSet(dataDir, g, imp);
  const std::map<std::string, OnnxTensor>&given = data.given, &expected = data.expected;
  const std::map<std::string, Matrix> inputs = onnxInputMatrices(imp, g, given, false);

  const fs::path out(outDir);
  const fs::path tmp = out.string() + fmt::format(".tmp{}", getpid());
  fs::remove_all(tmp);
  try {
    fs::create_directories(tmp / "inputs");
    writeFile(tmp / "graph.yaml", imp.yaml);
    // The schedule the graph was lowered with, to read back with --schedule (or edit).
    std::string sched = fmt::format("# stepgen import onnx schedule (docs/onnx.md#tiling){}\ntile_rows: {}\nswiglu_stages: {}\n"
                                    "silu_function: {}\nattention_stages: {}\nlinear_stage_words: {}\n",
                                    !schedulePath.empty() ? ", from " + schedulePath
                                    : !archPath.empty()   ? ", chosen for " + archPath
                                                          : "",
                                    schedule.tileRows, schedule.swigluStages, schedule.siluFunction,
                                    schedule.attentionStages, schedule.linearStageWords);
    if (!schedule.nodeTileRows.empty()) sched += "nodes:\n";
    for (const auto& [name, t] : schedule.nodeTileRows) sched += fmt::format("  \"{}\": {{tile_rows: {}}}\n", name, t.tileRows);
    writeFile(tmp / "schedule.yaml", sched);
    if (!routingTrace.empty()) fs::copy_file(routingTrace, tmp / "routing.csv");
    for (const auto& [name, m] : inputs) toNpy(tmp / "inputs" / (name + ".npy"), m);
    if (!expected.empty())  // the bound the outputs are held to (verify --reference)
      writeFile(tmp / "expected" / "tolerance.txt",
                fmt::format("fp32 {:.6e}\nbf16_fp32 {:.6e}\n", onnxTolerance(imp, false), onnxTolerance(imp, true)));
    for (const auto& [name, t] : expected) {
      fs::create_directories(tmp / "expected");
      Matrix m{1, t.count(), {}};
      for (float x : t.f) m.data.push_back(floatToBits(x));
      toNpy(tmp / "expected" / (name + ".npy"), m);
    }
    fs::remove_all(out);
    fs::rename(tmp, out);
  } catch (...) {
    std::error_code ec;
    fs::remove_all(tmp, ec);
    throw;
  }
  std::string missing;  // the first few by name, then how many more (a model without weights has thousands)
  size_t absent = 0;
  for (const auto& in : g.inputs)
    if (!given.count(in) && ++absent <= 8) missing += (missing.empty() ? "" : ", ") + in;
  if (absent > 8) missing += fmt::format(" and {} more", absent - 8);
  return fmt::format("wrote {0}/graph.yaml ({1} ONNX nodes, {2} tensors, {6}), {0}/inputs/ ({3} files){4}{5}", outDir,
                     imp.ops.size(), imp.leaves.size() + imp.outputs.size(), inputs.size(),
                     expected.empty() ? "" : fmt::format(", {}/expected/", outDir),
                     missing.empty() ? "" : fmt::format("; graph inputs not written (give --data): {}", missing),
                     fmt::format("{}{}{}{}{}", schedule.tileRows > 0 ? fmt::format("rows in tiles of {}", schedule.tileRows) : "one tile per value",
                                 schedule.swigluStages ? ", SwiGLU MLPs as stages" : "", schedule.siluFunction ? ", SiLU as Map silu" : "",
                                 schedule.attentionStages ? ", attention as stages" : "",
                                 schedule.linearStageWords > 0
                                     ? fmt::format(", products by weights over {} words as linear stages", schedule.linearStageWords)
                                     : ""));
}

}  // namespace stepgen
