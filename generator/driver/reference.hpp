#pragma once
// `verify --reference DIR`: the model's outputs (bit-exact with the RTL's when verify
// passes) against outputs another framework computed (PyTorch, ONNX's reference), within the
// tolerance the importer derived (docs/onnx.md).
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/tokens.hpp"

namespace stepgen {

/// Elements of outputs compared with a reference (checkElements), over every output checked.
struct ElementCheck {
  /// The largest |got - want| / max(|want|, 1e-3 x the output's largest |want|); NaN in one
  /// of them only counts as infinite.
  double maxRelErr = 0;
  double maxAbsErr = 0;   ///< the largest |got - want| that is a number
  int64_t outside = 0;    ///< outside both the tolerance and the running error bound
  int64_t byRunning = 0;  ///< outside the tolerance, within the running error bound (cancellation)
  double runningShare = 0;  ///< the largest |got - want| / running bound among those
};

/// Running error bounds by output tensor (onnx_error_bound.hpp referenceErrorBounds);
/// std::nullopt: none for this graph.
using Bounds = std::optional<std::map<std::string, std::vector<double>>>;
/// Bounds asked for only when an element is outside the tolerance (onFirstCall).
using RunningBounds = std::function<const Bounds&()>;

/// A RunningBounds that runs `compute` on its first call only: the bounds evaluate the whole
/// graph, and most comparisons never need them.
RunningBounds onFirstCall(std::function<Bounds()> compute);

/// Checks output `tensor` element by element: within `tolerance` x max(|want|, 1e-3 x the
/// largest |want|), or else within the running error bound, which sees cancellation the
/// relative tolerance cannot (docs/onnx.md#conformance). NaN in both counts as equal, equal
/// infinities too; NaN in one only is outside.
void checkElements(const Matrix& got, const Matrix& want, double tolerance, const std::string& tensor,
                   const RunningBounds& running, ElementCheck& c);

/// Result of compareWithReference.
struct ReferenceCheck {
  double tolerance = 0;  ///< from DIR/tolerance.txt for the arch's number format
  int outputs = 0;       ///< outputs compared
  ElementCheck elements; ///< over every output the folder has
  bool ok() const { return outputs > 0 && elements.outside == 0; }
};

/// Compares each `outputs` tensor that `dir` has as <tensor>.npy (checkElements with
/// `running`); the tolerance is the line `<format> <value>` of `dir`/tolerance.txt for
/// `format` ("fp32" or "bf16_fp32"). Throws DiagError R-401 when the folder, its tolerance
/// line or every output file is missing, R-402 when an output's element count differs.
ReferenceCheck compareWithReference(const std::map<std::string, Matrix>& outputs, const std::filesystem::path& dir,
                                    const std::string& format, const RunningBounds& running);

}  // namespace stepgen
