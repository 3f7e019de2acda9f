// Bit-exact fp32 arithmetic of the hardware; see fp.hpp and docs/hardware.md section 3.
#include "common/fp.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <xmmintrin.h>

namespace stepgen {

namespace {

constexpr unsigned kMxcsrFtz = 0x8000u;  // flush-to-zero (bit 15)
constexpr unsigned kMxcsrDaz = 0x0040u;  // denormals-are-zero (bit 6)

inline uint32_t canonNaN(uint32_t r) { return (r & 0x7FFFFFFFu) > 0x7F800000u ? kFp32QNaN : r; }

uint32_t sigmoidEntry(int idx) {
  const bool neg = (idx >> (kSigmoidIndexBits - 1)) & 1;
  const int row = (idx >> kSigmoidMantBits) & ((1 << (kSigmoidIndexBits - 1 - kSigmoidMantBits)) - 1);
  const int mant = idx & ((1 << kSigmoidMantBits) - 1);
  if (row == kSigmoidRowSat) return neg ? 0x00000000u : 0x3F800000u;  // 0.0 / 1.0
  if (row > kSigmoidEHi - kSigmoidELo) return 0x3F000000u;            // small |x| and unused: 0.5
  const double mid = std::ldexp(1.0 + (mant + 0.5) / double(1 << kSigmoidMantBits), kSigmoidELo + row);
  const double v = neg ? -mid : mid;
  return floatToBits(static_cast<float>(1.0 / (1.0 + std::exp(-v))));
}

// Entries f(0) .. f(n-1) of a table the hardware holds as a ROM.
template <class F>
std::vector<uint32_t> tabulate(int n, F f) {
  std::vector<uint32_t> t(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) t[size_t(i)] = f(i);
  return t;
}

// The mantissa of a value in [1, 2) or [0.5, 1): the ROMs keep only these 23 bits.
uint32_t mantissa(double v) { return floatToBits(static_cast<float>(v)) & 0x7FFFFFu; }

const std::vector<uint32_t>& sigmoidArray() {
  static const std::vector<uint32_t> t = tabulate(kSigmoidTableSize, sigmoidEntry);
  return t;
}

const std::vector<uint32_t>& expArray() {
  static const std::vector<uint32_t> t =
      tabulate(kExpTableSize, [](int i) { return mantissa(std::exp2((i + 0.5) / kExpTableSize)); });
  return t;
}

const std::vector<uint32_t>& recipArray() {
  static const std::vector<uint32_t> t =
      tabulate(kRecipTableSize, [](int i) { return mantissa(1.0 / (1.0 + (i + 0.5) / kRecipTableSize)); });
  return t;
}

// z_mid of rsqrt row i (layout in fp.hpp): odd rows scale the significand's bucket by 2.
double rsqrtMid(int i) { return ((i >> 7) ? 2.0 : 1.0) * (1.0 + ((i & 127) + 0.5) / 128.0); }

const std::vector<uint32_t>& rsqrtArray() {
  static const std::vector<uint32_t> t =
      tabulate(kRsqrtTableSize, [](int i) { return mantissa(1.0 / std::sqrt(rsqrtMid(i))); });
  return t;
}

const std::vector<uint32_t>& rsqrtHalfSqArray() {
  static const std::vector<uint32_t> t = tabulate(kRsqrtTableSize, [](int i) {
    const double r0 = double(bitsToFloat(0x3F000000u | rsqrtArray()[size_t(i)]));
    return floatToBits(float(r0 * r0 * 0.5));  // r0 * r0 is exact in double: one rounding
  });
  return t;
}

}  // namespace

float bitsToFloat(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

uint32_t floatToBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

void enableFtzDaz() { _mm_setcsr(_mm_getcsr() | kMxcsrFtz | kMxcsrDaz); }

bool ftzDazEnabled() { return (_mm_getcsr() & (kMxcsrFtz | kMxcsrDaz)) == (kMxcsrFtz | kMxcsrDaz); }

// SSE with FTZ|DAZ is the hardware function except for NaN payloads and signs (x86 returns
// the first NaN operand quieted, or 0xFFC00000 for inf-inf / 0*inf), hence canonNaN.
uint32_t fp32Add(uint32_t a, uint32_t b) { return canonNaN(floatToBits(bitsToFloat(a) + bitsToFloat(b))); }

uint32_t fp32Mul(uint32_t a, uint32_t b) { return canonNaN(floatToBits(bitsToFloat(a) * bitsToFloat(b))); }

uint32_t bf16Mul(uint32_t a, uint32_t b) { return fp32Mul(a & 0xFFFF0000u, b & 0xFFFF0000u); }

int sigmoidIndex(uint32_t x) {
  const int sign = static_cast<int>(x >> 31);
  const int bexp = static_cast<int>((x >> 23) & 0xFFu);
  int row, mant;
  if (bexp >= 127 + kSigmoidEHi + 1) {
    row = kSigmoidRowSat;
    mant = 0;
  } else if (bexp < 127 + kSigmoidELo) {
    row = kSigmoidRowSmall;
    mant = 0;
  } else {
    row = bexp - (127 + kSigmoidELo);
    mant = static_cast<int>((x >> (23 - kSigmoidMantBits)) & ((1u << kSigmoidMantBits) - 1));
  }
  return (sign << (kSigmoidIndexBits - 1)) | (row << kSigmoidMantBits) | mant;
}

std::vector<uint32_t> sigmoidTable() { return sigmoidArray(); }

uint32_t sigmoidLookup(uint32_t x) { return sigmoidArray()[sigmoidIndex(x)]; }

uint32_t silu(uint32_t x) { return fp32Mul(x, sigmoidLookup(x)); }

uint32_t fp32Sub(uint32_t a, uint32_t b) { return fp32Add(a, b ^ 0x80000000u); }

uint32_t fp32Max(uint32_t a, uint32_t b) {
  auto nan = [](uint32_t x) { return (x & 0x7F800000u) == 0x7F800000u && (x & 0x007FFFFFu); };
  if (nan(a) || nan(b)) return kFp32QNaN;
  // Order-preserving key: negative numbers reversed below the positive ones (-0 < +0).
  auto key = [](uint32_t x) { return (x & 0x80000000u) ? ~x : (x | 0x80000000u); };
  return key(a) >= key(b) ? a : b;
}

uint32_t rowReduce(const uint32_t* x, int64_t n, int64_t group, bool sum) {
  auto op = [&](uint32_t a, uint32_t b) { return sum ? fp32Add(a, b) : fp32Max(a, b); };
  uint32_t acc = 0;
  for (int64_t g0 = 0; g0 < n; g0 += group) {
    std::vector<uint32_t> v(x + g0, x + std::min(n, g0 + group));
    while (v.size() > 1) {
      std::vector<uint32_t> up;
      for (size_t i = 0; i + 1 < v.size(); i += 2) up.push_back(op(v[i], v[i + 1]));
      if (v.size() % 2) up.push_back(v.back());
      v.swap(up);
    }
    acc = g0 == 0 ? v[0] : op(acc, v[0]);
  }
  return acc;
}

std::vector<uint32_t> expTable() { return expArray(); }

// Integer steps only after the one fp32Mul, so that sg_fp_pkg::fp32_exp can follow them bit
// for bit (docs/hardware.md section 3).
uint32_t fp32Exp(uint32_t x) {
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) return kFp32QNaN;
  const uint32_t t = fp32Mul(x, kFp32Log2E);
  const bool neg = t >> 31;
  const int e = int((t >> 23) & 0xFFu);
  if (e >= 134) return neg ? 0u : 0x7F800000u;  // |t| >= 128 (and +-inf)
  // |t| * 2^16 = M * 2^(e - 134) with M the 24-bit significand (t is normal or zero: FTZ).
  const uint32_t m = e == 0 ? 0u : ((t & 0x7FFFFFu) | 0x800000u);
  const int sh = 134 - e;  // 1 .. 134
  const uint32_t mag = sh >= 32 ? 0u : (m >> sh);
  const bool lost = sh >= 32 ? m != 0 : (m & ((1u << sh) - 1u)) != 0;
  const int32_t tf = neg ? -int32_t(mag + (lost ? 1u : 0u)) : int32_t(mag);  // floor(t * 2^16)
  const int32_t n = tf >> 16;                                                  // arithmetic: floor(t)
  const uint32_t row = (uint32_t(tf) >> (16 - kExpIndexBits)) & (kExpTableSize - 1u);
  const int32_t be = 127 + n;
  if (be >= 255) return 0x7F800000u;
  if (be <= 0) return 0u;
  return uint32_t(be) << 23 | expArray()[row];
}

std::vector<uint32_t> recipTable() { return recipArray(); }

// sg_cu.sv follows these steps bit for bit (docs/hardware.md section 3).
uint32_t fp32Recip(uint32_t x) {
  const uint32_t sign = x & 0x80000000u, e = (x >> 23) & 0xFFu, mant = x & 0x7FFFFFu;
  if (e == 0xFFu) return mant ? kFp32QNaN : sign;  // NaN; 1/inf = 0
  if (e == 0) return sign | 0x7F800000u;           // 1/0 (subnormals read as 0) = inf
  const uint32_t y = 0x3F800000u | mant;           // the significand, in [1, 2)
  const uint32_t r0 = 0x3F000000u | recipArray()[mant >> (23 - kRecipIndexBits)];
  const uint32_t r1 = fp32Mul(r0, fp32Sub(0x40000000u, fp32Mul(y, r0)));  // one Newton step
  const int be = int((r1 >> 23) & 0xFFu) + 127 - int(e);
  if (be >= 255) return sign | 0x7F800000u;
  if (be <= 0) return sign;
  return sign | uint32_t(be) << 23 | (r1 & 0x7FFFFFu);
}

std::vector<uint32_t> rsqrtTable() { return rsqrtArray(); }
std::vector<uint32_t> rsqrtHalfSqTable() { return rsqrtHalfSqArray(); }

// sg_cu.sv follows these steps bit for bit (docs/hardware.md section 3).
uint32_t fp32Rsqrt(uint32_t x) {
  const uint32_t sign = x & 0x80000000u, e = (x >> 23) & 0xFFu, mant = x & 0x7FFFFFu;
  if (e == 0xFFu) return (mant || sign) ? kFp32QNaN : 0u;  // NaN, -inf; 1/sqrt(+inf) = +0
  if (e == 0) return sign | 0x7F800000u;                   // zeros and subnormals (DAZ): inf
  if (sign) return kFp32QNaN;
  const uint32_t odd = (e & 1u) ^ 1u;  // the unbiased exponent e - 127 is odd
  const uint32_t z = (127u + odd) << 23 | mant;
  const size_t row = size_t(odd << 7 | mant >> 16);
  const uint32_t r0 = 0x3F000000u | rsqrtArray()[row];
  const uint32_t r1 = fp32Mul(r0, fp32Sub(0x3FC00000u, fp32Mul(z, rsqrtHalfSqArray()[row])));  // one Newton step
  const int half = (int(e) - 127 - int(odd)) / 2;  // exact: the numerator is even
  return uint32_t(int((r1 >> 23) & 0xFFu) - half) << 23 | (r1 & 0x7FFFFFu);
}

}  // namespace stepgen
