#pragma once
// `stepgen import onnx`: an ONNX model to a folder with graph.yaml and its input tensors.
#include <map>
#include <string>

#include "onnx/onnx_lower.hpp"

namespace stepgen {

/// The values of one run of a model: graph inputs by ONNX name, expected outputs by the
/// imported graph's output tensor.
struct OnnxDataSet {
  std::map<std::string, OnnxTensor> given, expected;
};

/// Reads `dir`: an ONNX test_data_set (input_<k>.pb, output_<k>.pb in graph order) or
/// <value name>.npy files (reshaped to the model's shape; same element count). Values the
/// folder lacks are left out. Throws DiagError R-401 when `dir` is not a folder, R-402 for an
/// .npy of another element count, O-101 / O-103 for a bad .pb.
OnnxDataSet readOnnxDataSet(const std::string& dir, const OnnxGraph& g, const OnnxImport& imp);

/// Reads `modelPath`, lowers it (onnx_lower.hpp) and writes `outDir`/graph.yaml,
/// `outDir`/schedule.yaml (the tiling it was lowered with, readOnnxSchedule's format),
/// `outDir`/inputs/<tensor>.npy (the constants; the graph inputs too when `dataDir` gives
/// them: an ONNX test_data_set's input_<k>.pb, or <input name>.npy of the same element count)
/// and, when `dataDir` has the outputs (output_<k>.pb or <output name>.npy),
/// `outDir`/expected/<tensor>.npy with expected/tolerance.txt: the relative error bound of
/// the imported graph's arithmetic per number format (OnnxImport::relErrorBound + 2^-23). The folder is written beside and renamed into place, so a
/// failure leaves no `outDir` behind. Returns a one-line summary. Throws DiagError (O-1xx,
/// O-2xx from the importer; for files).
/// With `routingTrace`, every Mixture-of-Experts block replays that routing CSV (lowerOnnx),
/// copied to `outDir`/routing.csv. Tiling (docs/onnx.md#tiling): read from `schedulePath`
/// (readOnnxSchedule, O-104), else chosen for the compute unit of `archPath`
/// (chooseOnnxSchedule; the arch loader's errors), else one tile per value.
std::string importOnnx(const std::string& modelPath, const std::string& outDir, const std::string& dataDir,
                       const std::string& routingTrace = "", const std::string& archPath = "",
                       const std::string& schedulePath = "");

}  // namespace stepgen
