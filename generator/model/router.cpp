// topkSelect / topkWeights: the router's choice and weights (model/router.hpp).
#include "model/router.hpp"

#include <algorithm>
#include <climits>
#include <numeric>
#include <stdexcept>

#include "common/fp.hpp"

namespace stepgen {

namespace {

// The rank of a logit as a signed magnitude: subnormals and -0 are 0 (the fabric's FTZ/DAZ
// arithmetic, docs/hardware.md section 3), NaN below everything. Comparing the bits, not
// floats, keeps the order independent of the FPU's denormal mode.
int64_t rankKey(uint32_t a) {
  const uint32_t mag = a & 0x7FFFFFFFu;
  if (mag > 0x7F800000u) return INT64_MIN;  // NaN
  if ((a & 0x7F800000u) == 0) return 0;     // zero or subnormal
  return (a >> 31) ? -int64_t(mag) : int64_t(mag);
}

// a ranks before b: the larger key; equal keys keep the caller's (index) order.
bool ranksBefore(uint32_t a, uint32_t b) { return rankKey(a) > rankKey(b); }

}  // namespace

std::vector<int> topkSelect(const uint32_t* row, int64_t e, int k) {
  if (k < 1 || k > e) throw std::invalid_argument("topkSelect: needs 1 <= k <= e");
  std::vector<int> idx(static_cast<size_t>(e), 0);
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(), [&](int a, int b) { return ranksBefore(row[a], row[b]); });
  idx.resize(size_t(k));
  std::sort(idx.begin(), idx.end());
  return idx;
}

std::vector<uint32_t> topkWeights(const uint32_t* row, const std::vector<int>& chosen) {
  if (chosen.empty()) return {};
  uint32_t m = row[chosen[0]];
  for (size_t j = 1; j < chosen.size(); ++j)
    if (ranksBefore(row[chosen[j]], m)) m = row[chosen[j]];
  std::vector<uint32_t> w;
  uint32_t s = 0;
  for (int i : chosen) {
    w.push_back(fp32Exp(fp32Sub(row[i], m)));
    s = fp32Add(s, w.back());
  }
  const uint32_t r = fp32Recip(s);
  for (uint32_t& x : w) x = fp32Mul(x, r);
  return w;
}

}  // namespace stepgen
