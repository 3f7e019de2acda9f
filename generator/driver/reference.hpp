#pragma once
// `verify --reference DIR`: the model's outputs (bit-exact with the RTL's when verify
// passes) against outputs another framework computed (PyTorch, ONNX's reference), within the
// tolerance the importer derived (docs/onnx.md).
#include <filesystem>
#include <map>
#include <string>

#include "ir/tokens.hpp"

namespace stepgen {

/// The largest |got - want| / max(|want|, 1e-3 x the largest |want|) over the elements
/// (fp32 bit patterns, same count); NaN in both counts as equal, NaN in one as infinite.
double maxRelError(const Matrix& got, const Matrix& want);

/// Result of compareWithReference.
struct ReferenceCheck {
  double maxRelErr = 0;  ///< over every output the folder has
  double tolerance = 0;  ///< from DIR/tolerance.txt for the arch's number format
  int outputs = 0;       ///< outputs compared
  bool ok() const { return outputs > 0 && maxRelErr <= tolerance; }
};

/// Compares each `outputs` tensor that `dir` has as <tensor>.npy; the tolerance is the line
/// `<format> <value>` of `dir`/tolerance.txt for `format` ("fp32" or "bf16_fp32"). Throws
/// DiagError R-401 when the folder, its tolerance line or every output file is missing, R-402
/// when an output's element count differs.
ReferenceCheck compareWithReference(const std::map<std::string, Matrix>& outputs, const std::filesystem::path& dir,
                                    const std::string& format);

}  // namespace stepgen
