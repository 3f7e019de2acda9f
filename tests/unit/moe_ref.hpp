#pragma once
// A double-precision expert SwiGLU for the MoE tests (test_moe.cpp, test_moe_regions.cpp),
// computed here from the input tensors, independent of the model.
#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

#include "ir/tokens.hpp"

/// Adds w * ((silu(x_t Wg_e^T) * (x_t Wu_e^T)) Wd_e) to ref[0..D) and the sum of the
/// magnitudes of its terms to mag (for a relative error bound). x is [tokens, D]; wg, wu
/// hold expert e's rows e*F .. e*F+F-1 ([out, in]), wd its F x D block. `op` reads an
/// operand word as the multiplier does (bf16 truncation or fp32).
inline void addExpertRow(const stepgen::Matrix& x, int64_t t, const stepgen::Matrix& wg, const stepgen::Matrix& wu,
                         const stepgen::Matrix& wd, int64_t e, int64_t D, int64_t F, double w,
                         const std::function<double(uint32_t)>& op, std::vector<double>& ref, std::vector<double>& mag) {
  for (int64_t k = 0; k < F; ++k) {
    double g = 0, u = 0;
    for (int64_t d = 0; d < D; ++d) {
      g += op(x.data[size_t(t * D + d)]) * op(wg.data[size_t((e * F + k) * D + d)]);
      u += op(x.data[size_t(t * D + d)]) * op(wu.data[size_t((e * F + k) * D + d)]);
    }
    const double h = g / (1 + std::exp(-g)) * u;
    for (int64_t d = 0; d < D; ++d) {
      const double v = w * h * op(wd.data[size_t((e * F + k) * D + d)]);
      ref[size_t(d)] += v, mag[size_t(d)] += std::fabs(v);
    }
  }
}
