#pragma once
// A data-dependent error bound of an imported graph's outputs (docs/onnx.md#conformance). The
// static bound (OnnxImport::relErrorBound) is relative and cannot see cancellation: in
// exp(x) - t*x the difference can be far smaller than its terms, and the terms' errors then
// dominate it. This is running error analysis instead: the lowered graph is evaluated on the
// actual inputs in double, and each element carries a bound on |computed - exact| from the
// error of each function that produced it.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.hpp"
#include "ir/tokens.hpp"

namespace stepgen {

/// Largest error of each function, relative to its exact result (docs/hardware.md section 3
/// for the fabric; 2^-24 everywhere for an fp32 reference such as ONNX's own outputs).
struct FunctionErrors {
  double round = 0x1p-24;  ///< an fp32 add, sub, mul, and each term of a sum (gamma_K = K x this)
  double exp = 3.5e-4, recip = 5e-6, rsqrt = 7e-6;
  double sigmoid = 2e-3;   ///< absolute: the fabric's sigmoid table (sim/common/fp.hpp), in silu
  double operand = 0;      ///< a matmul operand's rounding (bf16: 2^-8); 0 for fp32 operands

  /// The fabric's functions; bf16Operands for number_format bf16_fp32.
  static FunctionErrors fabric(bool bf16Operands);
  /// An fp32 implementation correct to one rounding per function (the reference's).
  static FunctionErrors fp32Reference();
};

/// For each output tensor of `g`, a bound on |computed - exact| per element, row-major, given
/// the input tensors `inputs` (fp32 bit patterns by tensor name) and the functions' errors.
/// `g` holds what lowerOnnx writes, its stages' layers included: LinearOffChipLoad / Store,
/// Zip, Broadcast, Accum(add) and Map of matmul, matmul_t, add, sub, mul, exp, recip, rsqrt,
/// rowsum, rowmax, silu, evaluated tile by tile in stream order (a load of a tensor that
/// stores write runs after them). The exact value is taken as the double evaluation (its own
/// error is ~2^-53 relative). A bound is +inf where none holds (a division by a value its
/// error can reach zero, a non-finite value other than an exact -inf mask and what exp makes
/// of it). std::nullopt when the graph has an operator or function outside that set (a MoE
/// block's routing) or an input is missing.
std::optional<std::map<std::string, std::vector<double>>> runningErrorBounds(const StepGraph& g,
                                                                            const std::map<std::string, Matrix>& inputs,
                                                                            const FunctionErrors& fe);

/// What a comparison with a reference may differ by, per output element: the fabric's
/// running bound (FunctionErrors::fabric) plus an fp32 reference's (fp32Reference), since
/// both are measured from the exact value. std::nullopt as runningErrorBounds.
std::optional<std::map<std::string, std::vector<double>>> referenceErrorBounds(const StepGraph& g,
                                                                              const std::map<std::string, Matrix>& inputs,
                                                                              bool bf16Operands);

}  // namespace stepgen
