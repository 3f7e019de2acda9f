#pragma once
// `stepgen import onnx`: an ONNX model to a folder with graph.yaml and its input tensors.
#include <string>

namespace stepgen {

/// Reads `modelPath`, lowers it (onnx_lower.hpp) and writes `outDir`/graph.yaml,
/// `outDir`/inputs/<tensor>.npy (the constants; the graph inputs too when `dataDir` gives
/// them: an ONNX test_data_set's input_<k>.pb, or <input name>.npy of the same element count)
/// and, when `dataDir` has the outputs (output_<k>.pb or <output name>.npy),
/// `outDir`/expected/<tensor>.npy with expected/tolerance.txt: the relative error bound of
/// the imported graph's arithmetic per number format (OnnxImport::relErrorBound + 2^-23). The folder is written beside and renamed into place, so a
/// failure leaves no `outDir` behind. Returns a one-line summary. Throws DiagError (O-1xx,
/// O-2xx from the importer; for files).
std::string importOnnx(const std::string& modelPath, const std::string& outDir, const std::string& dataDir);

}  // namespace stepgen
