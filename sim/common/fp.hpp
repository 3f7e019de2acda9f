#pragma once
// Bit-exact fp32 arithmetic of the hardware (docs/hardware.md section 3), shared by the
// C++ model and the RTL (rtl_templates/sg_fp_pkg.sv, the emitted sg_sigmoid_lut.sv).
//
// Numbers are passed as IEEE-754 binary32 bit patterns (uint32_t). Rules: round to nearest
// even; subnormal inputs read as zero of the same sign (DAZ); results whose magnitude,
// rounded to 24 bits with an unbounded exponent, is below 2^-126 become a zero with the
// sign of the exact result (FTZ, tininess after rounding, as on x86 SSE); overflow gives
// infinity; every NaN result is the canonical quiet NaN kFp32QNaN (0x7FC00000).
//
// fp32Add/fp32Mul/bf16Mul/silu use the host's SSE arithmetic and are only exact after
// enableFtzDaz() has been called on the calling thread (MXCSR is per thread).
#include <cstdint>
#include <vector>

namespace stepgen {

/// Canonical quiet NaN returned by every operation whose result is NaN.
constexpr uint32_t kFp32QNaN = 0x7FC00000u;

// Sigmoid table (one place for its shape; sg_fp_pkg.sv mirrors these, checked by a test).
// index = sign << 10 | row << 6 | top 6 mantissa bits, where
//   row = unbiased exponent - kSigmoidELo   for 2^kSigmoidELo <= |x| < 2^(kSigmoidEHi+1),
//   row = kSigmoidRowSmall (mantissa field 0) for |x| < 2^kSigmoidELo, zeros, subnormals,
//   row = kSigmoidRowSat   (mantissa field 0) for |x| >= 2^(kSigmoidEHi+1), inf, NaN.
/// Smallest unbiased exponent with its own table rows (|x| >= 2^-10).
constexpr int kSigmoidELo = -10;
/// Largest unbiased exponent with its own table rows (|x| < 2^4 = 16).
constexpr int kSigmoidEHi = 3;
/// Mantissa bits (from the top) in the table key.
constexpr int kSigmoidMantBits = 6;
/// Width of the table index in bits (sign + 4 row bits + mantissa bits).
constexpr int kSigmoidIndexBits = 11;
/// Number of table entries (2^kSigmoidIndexBits).
constexpr int kSigmoidTableSize = 1 << kSigmoidIndexBits;
/// Row for |x| < 2^kSigmoidELo: value 0.5.
constexpr int kSigmoidRowSmall = 14;
/// Row for |x| >= 2^(kSigmoidEHi+1), inf and NaN: value 1.0 (x > 0) or 0.0 (x < 0).
constexpr int kSigmoidRowSat = 15;
static_assert(kSigmoidEHi - kSigmoidELo + 1 <= kSigmoidRowSmall, "exponent rows overlap the special rows");

// exp table: kExpTableSize mantissas of 2^((i + 0.5) / kExpTableSize), i = 0 .. size-1 (the
// value is in [1, 2), so its biased exponent is 127 and only the 23 mantissa bits are kept).
/// Bits of the fraction of x*log2(e) that select the exp table row.
constexpr int kExpIndexBits = 10;
/// Number of exp table entries (2^kExpIndexBits).
constexpr int kExpTableSize = 1 << kExpIndexBits;
/// log2(e) rounded to binary32 (1.44269502...).
constexpr uint32_t kFp32Log2E = 0x3FB8AA3Bu;
// recip seed table: kRecipTableSize mantissas of float(1 / (1 + (i + 0.5) / kRecipTableSize)),
// a value in (0.5, 1), so its biased exponent is 126; row i = the top kRecipIndexBits
// mantissa bits of the divisor.
/// Mantissa bits of the divisor that select the seed.
constexpr int kRecipIndexBits = 8;
/// Number of recip seed entries (2^kRecipIndexBits).
constexpr int kRecipTableSize = 1 << kRecipIndexBits;
// rsqrt seed tables: row i = odd << 7 | the top 7 mantissa bits of x, where odd = 1 when x's
// unbiased exponent is odd. The significand is scaled to z in [1, 4) (z = y or 2y, y in
// [1, 2)) and row i covers a 1/128-wide bucket of y; its seed r0 = float(1/sqrt(z_mid)) at
// the bucket's midpoint, a value in (0.5, 1) (biased exponent 126), and its half square
// h = float(r0 * r0) / 2 (a full binary32 pattern).
/// Bits of the rsqrt seed index (the exponent's parity and 7 mantissa bits).
constexpr int kRsqrtIndexBits = 8;
/// Number of rsqrt seed entries (2^kRsqrtIndexBits).
constexpr int kRsqrtTableSize = 1 << kRsqrtIndexBits;

/// Reinterprets a binary32 bit pattern as float (no conversion).
float bitsToFloat(uint32_t bits);
/// Reinterprets a float as its binary32 bit pattern (no conversion).
uint32_t floatToBits(float f);

/// Sets MXCSR.FTZ and MXCSR.DAZ on the calling thread (x86 SSE; _mm_setcsr). Required
/// before fp32Add/fp32Mul/bf16Mul/silu on every thread that calls them. Idempotent.
void enableFtzDaz();
/// True when MXCSR.FTZ and MXCSR.DAZ are both set on the calling thread.
bool ftzDazEnabled();

/// a + b on binary32 bit patterns with the hardware's rules (RNE, DAZ/FTZ, canonical NaN).
/// Needs enableFtzDaz() on this thread. Same function as sg_fp_pkg::fp32_add.
uint32_t fp32Add(uint32_t a, uint32_t b);
/// a * b on binary32 bit patterns with the hardware's rules (RNE, DAZ/FTZ, canonical NaN).
/// Needs enableFtzDaz() on this thread. Same function as sg_fp_pkg::fp32_mul.
uint32_t fp32Mul(uint32_t a, uint32_t b);
/// bfloat16 product: fp32Mul(a & 0xFFFF0000, b & 0xFFFF0000) (operands truncated to bf16,
/// result in fp32). Needs enableFtzDaz(). Same function as sg_fp_pkg::bf16_mul.
uint32_t bf16Mul(uint32_t a, uint32_t b);

/// Table index of x (0 .. kSigmoidTableSize-1, layout above). Same as sg_fp_pkg::sigmoid_index.
int sigmoidIndex(uint32_t x);
/// The sigmoid table, kSigmoidTableSize binary32 patterns: float(1/(1+exp(-v))) computed in
/// double at the bucket midpoint v; row kSigmoidRowSmall = 0.5; row kSigmoidRowSat = 1.0
/// (sign 0) or 0.0 (sign 1); unused rows hold 0.5. The emitter writes it as sg_sigmoid_lut.sv.
std::vector<uint32_t> sigmoidTable();
/// Approximate logistic sigmoid of x by table lookup: sigmoidTable()[sigmoidIndex(x)].
/// Absolute error below 2e-3 (bucket width; tested in tests/unit/test_fp.cpp).
uint32_t sigmoidLookup(uint32_t x);
/// silu(x) = fp32Mul(x, sigmoidLookup(x)), as the hardware computes it (so silu(-inf) is
/// NaN and silu(NaN) is NaN). Needs enableFtzDaz().
uint32_t silu(uint32_t x);

/// a - b = fp32Add(a, b with its sign flipped): exact IEEE subtraction under the same rules.
/// Needs enableFtzDaz(). Same function as the compute unit's `sub`.
uint32_t fp32Sub(uint32_t a, uint32_t b);
/// max(a, b) on binary32 bit patterns: kFp32QNaN if either is NaN; otherwise the operand
/// larger by value, with -0 < +0 and subnormals compared by value (no DAZ: nothing is
/// computed). Same function as sg_fp_pkg::fp32_max.
uint32_t fp32Max(uint32_t a, uint32_t b);
/// Row reduction as the compute unit's rowsum (sum = true, fp32Add) and rowmax (fp32Max)
/// compute it (docs/hardware.md section 3): the n words are cut into groups of `group`
/// consecutive words (one link beat each; the last may be shorter), each group is reduced by
/// a pairwise tree (level by level: words 0+1, 2+3, ...; an odd last one passes up), and the
/// groups' values are folded in order (((g0 op g1) op g2) ...). n >= 1. Needs
/// enableFtzDaz() for sums.
uint32_t rowReduce(const uint32_t* x, int64_t n, int64_t group, bool sum);
/// The exp table (layout above): kExpTableSize 23-bit mantissas, each of
/// float(2^((i + 0.5) / kExpTableSize)) computed in double. The emitter writes it as sg_attn_lut.sv.
std::vector<uint32_t> expTable();
/// exp(x) as the hardware computes it (docs/hardware.md section 3): t = fp32Mul(x, log2 e);
/// NaN -> kFp32QNaN; |t| >= 128 -> +inf (t > 0) or +0 (t < 0); otherwise tf = floor(t * 2^16)
/// (from t's bits, exact), n = tf >> 16 (floor of t), row = the next kExpIndexBits bits of the
/// fraction, and the result is 2^n * (1 + expTable()[row] / 2^23), +inf above the binary32 range
/// and +0 below 2^-126 (FTZ). Relative error at most 2^(1/2048) - 1 = 3.4e-4 from the table plus
/// the rounding of t (tested in tests/unit/test_fp.cpp). Needs enableFtzDaz() (for fp32Mul).
uint32_t fp32Exp(uint32_t x);
/// The recip seed table (layout above): kRecipTableSize 23-bit mantissas, written with the
/// exp table into sg_attn_lut.sv.
std::vector<uint32_t> recipTable();
/// 1/x as the hardware computes it (docs/hardware.md section 3): NaN -> kFp32QNaN; a zero or
/// subnormal x (DAZ) -> inf with x's sign; inf -> zero with x's sign; otherwise, with y = the
/// significand of x scaled to [1, 2) and r0 = the seed for y's top 8 mantissa bits, one
/// Newton step r1 = fp32Mul(r0, fp32Sub(2, fp32Mul(y, r0))), and the result is r1 scaled by
/// 2^(127 - biased exponent of x): zero below 2^-126 (FTZ), inf above the range. Relative
/// error below 5e-6 (tested in tests/unit/test_fp.cpp). Needs enableFtzDaz().
uint32_t fp32Recip(uint32_t x);
/// The rsqrt seed table (layout above): kRsqrtTableSize 23-bit mantissas of r0 (biased
/// exponent 126), written into sg_attn_lut.sv.
std::vector<uint32_t> rsqrtTable();
/// The rsqrt half-square table (layout above): kRsqrtTableSize binary32 patterns of
/// float(r0 * r0) / 2 (exact in double, rounded once), written into sg_attn_lut.sv.
std::vector<uint32_t> rsqrtHalfSqTable();
/// 1/sqrt(x) as the hardware computes it (docs/hardware.md section 3): NaN, a negative x
/// (not a zero) and -inf -> kFp32QNaN; a zero or subnormal x (DAZ) -> inf with x's sign;
/// +inf -> +0; otherwise, with z = x's significand scaled to [1, 4) by the parity of its
/// exponent, r0 and h the seed and half square of its row, one Newton step
/// r1 = fp32Mul(r0, fp32Sub(1.5, fp32Mul(z, h))) (= r0 (3 - z r0^2) / 2), and the result is
/// r1 scaled by 2^-(E - odd)/2 for x's unbiased exponent E (always a normal number).
/// Relative error below 7e-6 of the exact value (tested in tests/unit/test_fp.cpp).
/// Needs enableFtzDaz().
uint32_t fp32Rsqrt(uint32_t x);

}  // namespace stepgen
