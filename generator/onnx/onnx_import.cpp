// importOnnx: read, lower, write the folder in one rename.
#include "onnx/onnx_import.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>

#include "common/fp.hpp"
#include "driver/inputs.hpp"
#include "onnx/onnx_lower.hpp"
#include "support/diag.hpp"
#include "support/files.hpp"

namespace stepgen {

namespace fs = std::filesystem;

std::string importOnnx(const std::string& modelPath, const std::string& outDir, const std::string& dataDir) {
  const OnnxGraph g = readOnnx(modelPath);
  const OnnxImport imp = lowerOnnx(g);
  std::map<std::string, OnnxTensor> given, expected;
  if (!dataDir.empty()) {
    if (!fs::is_directory(dataDir)) throw DiagError("R-401", SourceLoc{dataDir}, "--data: not a folder");
    for (size_t k = 0; k < g.inputs.size(); ++k) {
      const fs::path p = fs::path(dataDir) / fmt::format("input_{}.pb", k);
      if (fs::exists(p)) given[g.inputs[k]] = readTensorFile(p.string());
    }
    for (size_t k = 0; k < imp.outputs.size(); ++k) {
      const fs::path p = fs::path(dataDir) / fmt::format("output_{}.pb", k);
      if (fs::exists(p)) expected[imp.outputs[k].tensor] = readTensorFile(p.string());
    }
  }
  // Only the leaves whose source is known now: constants always, graph inputs when given.
  OnnxImport known = imp;
  known.leaves.clear();
  for (const auto& l : imp.leaves)
    if (l.fill || imp.constants.count(l.source) || given.count(l.source)) known.leaves.push_back(l);
  const std::map<std::string, Matrix> inputs = onnxInputMatrices(known, g, given);

  const fs::path out(outDir);
  const fs::path tmp = out.string() + fmt::format(".tmp{}", getpid());
  fs::remove_all(tmp);
  try {
    fs::create_directories(tmp / "inputs");
    writeFile(tmp / "graph.yaml", imp.yaml);
    for (const auto& [name, m] : inputs) toNpy(tmp / "inputs" / (name + ".npy"), m);
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
  std::string missing;
  for (const auto& in : g.inputs)
    if (!given.count(in)) missing += (missing.empty() ? "" : ", ") + in;
  return fmt::format("wrote {0}/graph.yaml ({1} ONNX nodes, {2} tensors), {0}/inputs/ ({3} files){4}{5}", outDir,
                     imp.ops.size(), imp.leaves.size() + imp.outputs.size(), inputs.size(),
                     expected.empty() ? "" : fmt::format(", {}/expected/", outDir),
                     missing.empty() ? "" : fmt::format("; graph inputs not written (give --data): {}", missing));
}

}  // namespace stepgen
