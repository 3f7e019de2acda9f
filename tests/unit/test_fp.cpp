// Tests for sim/common/fp.hpp: fp32Add/fp32Mul/bf16Mul against an independent reference
// (exact x87 long double arithmetic, rounded to binary32 in software with explicit DAZ/FTZ),
// the sigmoid table and silu against double math, and the golden sg_sigmoid_lut.sv.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <cstdlib>
#include <fstream>
#include <random>
#include <regex>
#include <sstream>
#include <xmmintrin.h>

#include "common/fp.hpp"
#include "emit/attn_lut.hpp"
#include "emit/sigmoid_lut.hpp"

using namespace stepgen;

namespace {

// Sets FTZ|DAZ for one test case and restores the caller's MXCSR afterwards, so that other
// tests in this executable keep the default floating-point environment.
struct FtzDazScope {
  unsigned saved = _mm_getcsr();
  FtzDazScope() { enableFtzDaz(); }
  ~FtzDazScope() { _mm_setcsr(saved); }
};

// Value of a binary32 pattern as long double, built from its fields (x87 arithmetic does not
// depend on MXCSR, so this is independent of the SSE code under test). DAZ: exponent field 0
// reads as a zero of the same sign.
long double refValue(uint32_t x) {
  const bool neg = x >> 31;
  const int be = (x >> 23) & 0xFF;
  const uint32_t frac = x & 0x7FFFFF;
  long double v;
  if (be == 0xFF) v = frac ? std::numeric_limits<long double>::quiet_NaN() : HUGE_VALL;
  else if (be == 0) v = 0.0L;
  else v = std::ldexp(static_cast<long double>(0x800000u | frac), be - 127 - 23);
  return neg ? -v : v;
}

// Rounds r to binary32: nearest even at 24 bits with an unbounded exponent, then overflow to
// infinity and FTZ (biased exponent <= 0 after rounding -> signed zero). NaN -> 0x7FC00000.
uint32_t refRound(long double r) {
  if (std::isnan(r)) return kFp32QNaN;
  const uint32_t sign = std::signbit(r) ? 0x80000000u : 0u;
  if (std::isinf(r)) return sign | 0x7F800000u;
  if (r == 0.0L) return sign;
  int ex;
  const long double m = std::frexp(std::fabs(r), &ex);  // |r| = m * 2^ex, m in [0.5, 1)
  long double mr = std::nearbyint(std::ldexp(m, 24));    // 24-bit significand, RNE
  if (mr == 16777216.0L) {
    mr = 8388608.0L;
    ++ex;
  }
  const int be = ex - 1 + 127;
  if (be >= 255) return sign | 0x7F800000u;
  if (be <= 0) return sign;
  return sign | (static_cast<uint32_t>(be) << 23) | (static_cast<uint32_t>(mr) - 0x800000u);
}

// Exact for products (48-bit significands); for sums the long double rounding (64 bits)
// followed by the 24-bit rounding is innocuous double rounding (64 >= 2*24 + 2).
uint32_t refAdd(uint32_t a, uint32_t b) { return refRound(refValue(a) + refValue(b)); }
uint32_t refMul(uint32_t a, uint32_t b) { return refRound(refValue(a) * refValue(b)); }

std::vector<uint32_t> specialValues() {
  std::vector<uint32_t> v = {
      0x00000000, 0x80000000,  // zeros
      0x00000001, 0x80000001, 0x007FFFFF, 0x807FFFFF, 0x00400000,  // subnormals
      0x00800000, 0x80800000, 0x00800001, 0x00FFFFFF, 0x01000000,  // near min normal
      0x7F7FFFFF, 0xFF7FFFFF, 0x7F7FFFFE, 0x7F000000, 0x7EFFFFFF,  // near max normal
      0x7F800000, 0xFF800000,                                      // infinities
      0x7FC00000, 0xFFC00000, 0x7F800001, 0xFFBFFFFF, 0x7FFFFFFF,  // NaNs (quiet, signalling)
      0x3F800000, 0xBF800000, 0x3F800001, 0x3F7FFFFF, 0x40000000, 0x3F000000,
      0x33800000, 0x33000000, 0x32FFFFFF, 0x34000000,  // 2^-24, 2^-25: rounding against 1
      0x72FFFFFF, 0x73000000, 0x73000001, 0xF3000000,  // half an ulp of max normal
      0x1F800000, 0x1F7FFFFF, 0x20000000, 0x5F800000, 0x5F800001, 0x60000000,  // 2^-64, 2^64
      0x3FC00000, 0x3FFFFFFF, 0x4B800000, 0xCB7FFFFF, 0x00C00000, 0x80C00000,
  };
  return v;
}

// Significands ma, mb in [2^23, 2^24) whose product is in [2^47 - 2^22, 2^47): the product
// rounds up to 2.0 at 24 bits, so 2^-127 * (that product) rounds to 2^-126 (tininess after
// rounding keeps it normal).
std::pair<uint32_t, uint32_t> roundsUpPair() {
  const uint64_t lo = (1ull << 47) - (1ull << 22);
  for (uint64_t ma = (1ull << 24) - 1; ma > (1ull << 23); --ma) {
    const uint64_t mb = (lo + ma - 1) / ma;
    if (mb < (1ull << 24) && ma * mb < (1ull << 47))
      return {static_cast<uint32_t>(ma), static_cast<uint32_t>(mb)};
  }
  return {0, 0};
}

uint32_t fieldsToBits(uint32_t sign, int biasedExp, uint32_t sig24) {
  return (sign << 31) | (static_cast<uint32_t>(biasedExp) << 23) | (sig24 & 0x7FFFFFu);
}

std::string hex(uint32_t x) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%08X", x);
  return b;
}

double sigmoidRef(double x) { return 1.0 / (1.0 + std::exp(-x)); }

std::string readFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// A committed copy of emitted text (path relative to the repository) must equal `want`;
// STEPGEN_REGEN_GOLDEN=1 rewrites it first.
void checkGoldenFile(const std::string& rel, const std::string& want) {
  const std::string path = std::string(STEPGEN_ROOT) + "/" + rel;
  const char* regen = std::getenv("STEPGEN_REGEN_GOLDEN");
  if (regen && std::string(regen) == "1") {
    std::ofstream(path, std::ios::binary) << want;
    WARN("rewrote " << path);
  }
  INFO(path << " is stale; rerun with STEPGEN_REGEN_GOLDEN=1");
  REQUIRE(readFile(path) == want);
}

}  // namespace

TEST_CASE("fp32 bit helpers and FTZ/DAZ switch", "[fp]") {
  FtzDazScope scope;
  CHECK(ftzDazEnabled());
  CHECK(floatToBits(1.0f) == 0x3F800000u);
  CHECK(bitsToFloat(0xC0000000u) == -2.0f);
  CHECK(floatToBits(bitsToFloat(0x7FC00001u)) == 0x7FC00001u);
}

TEST_CASE("fp32Add/fp32Mul special values against reference", "[fp]") {
  FtzDazScope scope;
  const auto v = specialValues();
  for (uint32_t a : v)
    for (uint32_t b : v) {
      INFO("a=" << hex(a) << " b=" << hex(b));
      REQUIRE(hex(fp32Add(a, b)) == hex(refAdd(a, b)));
      REQUIRE(hex(fp32Mul(a, b)) == hex(refMul(a, b)));
      REQUIRE(hex(bf16Mul(a, b)) == hex(refMul(a & 0xFFFF0000u, b & 0xFFFF0000u)));
    }
}

TEST_CASE("fp32 rules spelled out", "[fp]") {
  FtzDazScope scope;
  // Signed zeros.
  CHECK(fp32Add(0x00000000, 0x80000000) == 0x00000000u);
  CHECK(fp32Add(0x80000000, 0x80000000) == 0x80000000u);
  CHECK(fp32Add(0x3FC00000, 0xBFC00000) == 0x00000000u);  // x + (-x) = +0
  CHECK(fp32Add(0xBFC00000, 0x3FC00000) == 0x00000000u);
  CHECK(fp32Mul(0x80000000, 0x3F800000) == 0x80000000u);
  // DAZ: subnormal inputs are signed zeros.
  CHECK(fp32Add(0x00000001, 0x00000000) == 0x00000000u);
  CHECK(fp32Add(0x80000001, 0x80000000) == 0x80000000u);
  CHECK(fp32Add(0x80000001, 0x00000000) == 0x00000000u);
  CHECK(fp32Add(0x007FFFFF, 0x3F800000) == 0x3F800000u);
  CHECK(fp32Mul(0x807FFFFF, 0x3F800000) == 0x80000000u);
  CHECK(fp32Mul(0x00000001, 0x7F800000) == kFp32QNaN);  // 0 * inf
  // FTZ: subnormal results are signed zeros.
  CHECK(fp32Add(0x00800001, 0x80800000) == 0x00000000u);
  CHECK(fp32Add(0x80800001, 0x00800000) == 0x80000000u);
  CHECK(fp32Mul(0x00800000, 0x3F000000) == 0x00000000u);  // 2^-126 * 0.5
  CHECK(fp32Mul(0x80800000, 0x3F000000) == 0x80000000u);
  // Tininess after rounding: 2^-127 * (2 - tiny) rounds to 2^-126, which is kept.
  const auto [ma, mb] = roundsUpPair();
  REQUIRE(ma != 0);
  CHECK(hex(fp32Mul(fieldsToBits(0, 127 - 60, ma), fieldsToBits(1, 127 - 67, mb))) == hex(0x80800000u));
  CHECK(hex(fp32Mul(fieldsToBits(0, 127 - 60, ma), fieldsToBits(0, 127 - 68, mb))) == hex(0x00000000u));
  // Overflow.
  CHECK(fp32Add(0x7F7FFFFF, 0x73000000) == 0x7F800000u);  // tie at max normal -> even -> inf
  CHECK(fp32Add(0x7F7FFFFF, 0x72FFFFFF) == 0x7F7FFFFFu);
  CHECK(fp32Mul(0x7F7FFFFF, 0x3F800001) == 0x7F800000u);
  CHECK(fp32Mul(0xFF7FFFFF, 0x40000000) == 0xFF800000u);
  CHECK(fp32Mul(0x5F800000, 0x60000000) == 0x7F800000u);  // 2^64 * 2^65
  // NaN handling.
  CHECK(fp32Add(0x7F800000, 0xFF800000) == kFp32QNaN);
  CHECK(fp32Add(0x7F800000, 0x7F800000) == 0x7F800000u);
  CHECK(fp32Add(0xFFC12345, 0x3F800000) == kFp32QNaN);
  CHECK(fp32Add(0x3F800000, 0x7F800001) == kFp32QNaN);
  CHECK(fp32Mul(0x00000000, 0xFF800000) == kFp32QNaN);
  CHECK(fp32Mul(0xFFFFFFFF, 0x00000000) == kFp32QNaN);
  CHECK(fp32Mul(0xFF800000, 0xFF800000) == 0x7F800000u);
  // Ties to even.
  CHECK(fp32Add(0x3F800000, 0x33800000) == 0x3F800000u);  // 1 + 2^-24: tie -> 1
  CHECK(fp32Add(0x3F800001, 0x33800000) == 0x3F800002u);  // tie -> even upward
  // bf16 truncation.
  CHECK(bf16Mul(0x3F81FFFF, 0x4000FFFF) == 0x40010000u);  // (1 + 2^-7) * 2
}

TEST_CASE("fp32Add/fp32Mul 1e6 random moderate-exponent inputs against reference", "[fp]") {
  FtzDazScope scope;
  std::mt19937_64 rng(0x5EEDF00Dull);
  const int n = 1000000;
  for (int i = 0; i < n; ++i) {
    const uint64_t r = rng();
    // Exponents 2^-40 .. 2^40 for the add, and exponents whose product straddles the
    // underflow and overflow thresholds for every 4th multiply.
    const int ea = 127 - 40 + static_cast<int>((r >> 0) % 81);
    int eb = 127 - 40 + static_cast<int>((r >> 8) % 81);
    // Make close exponents (cancellation) common for the adder.
    if ((r >> 16) % 4 == 0) eb = ea + static_cast<int>((r >> 18) % 5) - 2;
    const uint32_t a = fieldsToBits((r >> 24) & 1, ea, static_cast<uint32_t>(r >> 25));
    const uint32_t b = fieldsToBits((r >> 48) & 1, eb, static_cast<uint32_t>(rng()));
    INFO("a=" << hex(a) << " b=" << hex(b));
    REQUIRE(fp32Add(a, b) == refAdd(a, b));
    REQUIRE(fp32Mul(a, b) == refMul(a, b));
    if ((r >> 60) == 0) {  // 1/16: products near 2^-126 and 2^128
      const uint32_t lo = fieldsToBits((r >> 24) & 1, 60 + static_cast<int>((r >> 30) % 7), static_cast<uint32_t>(rng()));
      const uint32_t lo2 = fieldsToBits((r >> 49) & 1, 127 - 64 + static_cast<int>((r >> 40) % 3), static_cast<uint32_t>(rng()));
      const uint32_t hi = fieldsToBits((r >> 24) & 1, 254 - static_cast<int>((r >> 30) % 64), static_cast<uint32_t>(rng()));
      REQUIRE(fp32Mul(lo, lo2) == refMul(lo, lo2));
      REQUIRE(fp32Mul(hi, 0x40000000u ^ (static_cast<uint32_t>(r >> 44) & 0x7FFFFFu)) ==
              refMul(hi, 0x40000000u ^ (static_cast<uint32_t>(r >> 44) & 0x7FFFFFu)));
    }
  }
}

TEST_CASE("fp32Add/fp32Mul/bf16Mul random bit patterns against reference", "[fp]") {
  FtzDazScope scope;
  std::mt19937 rng(12345);
  for (int i = 0; i < 200000; ++i) {
    const uint32_t a = rng(), b = rng();
    INFO("a=" << hex(a) << " b=" << hex(b));
    REQUIRE(fp32Add(a, b) == refAdd(a, b));
    REQUIRE(fp32Mul(a, b) == refMul(a, b));
    REQUIRE(bf16Mul(a, b) == refMul(a & 0xFFFF0000u, b & 0xFFFF0000u));
  }
}

TEST_CASE("sigmoid index layout and table", "[fp][sigmoid]") {
  const auto t = sigmoidTable();
  REQUIRE(t.size() == static_cast<size_t>(kSigmoidTableSize));
  const int rowShift = kSigmoidMantBits, signBit = 1 << (kSigmoidIndexBits - 1);
  CHECK(sigmoidIndex(0x00000000) == (kSigmoidRowSmall << rowShift));
  CHECK(sigmoidIndex(0x80000001) == (signBit | (kSigmoidRowSmall << rowShift)));
  CHECK(sigmoidIndex(0x7F800000) == (kSigmoidRowSat << rowShift));
  CHECK(sigmoidIndex(0x7FC00000) == (kSigmoidRowSat << rowShift));
  CHECK(sigmoidIndex(floatToBits(16.0f)) == (kSigmoidRowSat << rowShift));
  CHECK(sigmoidIndex(floatToBits(15.99f)) == ((3 - kSigmoidELo) << rowShift | 63));
  CHECK(sigmoidIndex(floatToBits(-1.5f)) == (signBit | (-kSigmoidELo << rowShift) | 32));
  CHECK(sigmoidIndex(floatToBits(std::ldexp(1.0f, kSigmoidELo))) == 0);
  CHECK(sigmoidIndex(floatToBits(std::ldexp(1.99f, kSigmoidELo - 1))) == (kSigmoidRowSmall << rowShift));
  CHECK(t[sigmoidIndex(0x7F800000)] == 0x3F800000u);
  CHECK(t[sigmoidIndex(0xFF800000)] == 0x00000000u);
  CHECK(t[sigmoidIndex(0x80000000)] == 0x3F000000u);
  CHECK(sigmoidLookup(floatToBits(100.0f)) == 0x3F800000u);
  CHECK(sigmoidLookup(floatToBits(-16.0f)) == 0x00000000u);
  CHECK(sigmoidLookup(floatToBits(1e-4f)) == 0x3F000000u);
  // Entries are float(sigmoid(midpoint)) and increase with |x| (x > 0) / decrease (x < 0).
  const int rows = kSigmoidEHi - kSigmoidELo + 1;
  for (int s = 0; s < 2; ++s)
    for (int i = 0; i < rows * 64; ++i) {
      const int idx = s * signBit + i;
      const double mid = std::ldexp(1.0 + (i % 64 + 0.5) / 64.0, kSigmoidELo + i / 64);
      CHECK(t[idx] == floatToBits(static_cast<float>(sigmoidRef(s ? -mid : mid))));
      if (i > 0) {
        if (s == 0) CHECK(bitsToFloat(t[idx]) >= bitsToFloat(t[idx - 1]));
        else CHECK(bitsToFloat(t[idx]) <= bitsToFloat(t[idx - 1]));
      }
    }
}

TEST_CASE("sigmoidLookup and silu accuracy", "[fp][sigmoid]") {
  FtzDazScope scope;
  // Stated tolerances: |sigmoidLookup(x) - sigmoid(x)| <= 2e-3 for all finite x (half a
  // bucket times the slope, largest for 1 <= |x| < 4); |silu(x) - x*sigmoid(x)| <=
  // 2e-3*|x| + 2^-23*|x*sigmoid(x)| (table error plus one rounding), and <= 5e-3 absolute (measured max about 3.3e-3,
  // near x = 2).
  double maxSig = 0, maxSilu = 0;
  auto check = [&](float xf) {
    const uint32_t x = floatToBits(xf);
    const double xd = xf;
    const double s = sigmoidRef(xd);
    const double gotS = bitsToFloat(sigmoidLookup(x));
    const double gotSilu = bitsToFloat(silu(x));
    const double ref = xd * s;
    INFO("x=" << xf << " (" << hex(x) << ") sigmoid " << gotS << " vs " << s << ", silu " << gotSilu << " vs " << ref);
    REQUIRE(std::fabs(gotS - s) <= 2e-3);
    REQUIRE(std::fabs(gotSilu - ref) <= 2e-3 * std::fabs(xd) + std::ldexp(std::fabs(ref), -23));
    REQUIRE(std::fabs(gotSilu - ref) <= 5e-3);
    maxSig = std::max(maxSig, std::fabs(gotS - s));
    maxSilu = std::max(maxSilu, std::fabs(gotSilu - ref));
  };
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> wide(-40.0f, 40.0f), narrow(-5.0f, 5.0f);
  for (int i = 0; i < 200000; ++i) {
    check(wide(rng));
    check(narrow(rng));
    check(std::ldexp(narrow(rng), -static_cast<int>(rng() % 30)));
  }
  for (float x : {0.0f, -0.0f, 1e-30f, -1e-30f, 16.0f, -16.0f, 15.999f, -15.999f, 1e30f, -1e30f})
    check(x);
  CHECK(silu(0x7F800000) == 0x7F800000u);  // +inf * 1.0
  CHECK(silu(0xFF800000) == kFp32QNaN);    // -inf * 0.0
  CHECK(silu(0x7FC00000) == kFp32QNaN);
  CHECK(silu(0x80000000) == 0x80000000u);
  WARN("max |sigmoid error| = " << maxSig << ", max |silu error| = " << maxSilu);
}

TEST_CASE("sg_fp_pkg sigmoid constants match C++", "[fp][golden]") {
  const std::string pkg = readFile(std::string(STEPGEN_ROOT) + "/rtl_templates/sg_fp_pkg.sv");
  REQUIRE(!pkg.empty());
  auto param = [&](const std::string& name) {
    std::smatch m;
    const std::regex re("localparam int " + name + " = (-?[0-9]+);");
    REQUIRE(std::regex_search(pkg, m, re));
    return std::stoi(m[1].str());
  };
  auto row = [&](const std::string& name) {
    std::smatch m;
    const std::regex re("localparam logic \\[3:0\\] " + name + " = 4'd([0-9]+);");
    REQUIRE(std::regex_search(pkg, m, re));
    return std::stoi(m[1].str());
  };
  CHECK(param("SIG_E_LO") == kSigmoidELo);
  CHECK(param("SIG_E_HI") == kSigmoidEHi);
  CHECK(param("SIG_MANT_BITS") == kSigmoidMantBits);
  CHECK(row("SIG_ROW_SMALL") == kSigmoidRowSmall);
  CHECK(row("SIG_ROW_SAT") == kSigmoidRowSat);
  CHECK(1 + 4 + kSigmoidMantBits == kSigmoidIndexBits);
}

TEST_CASE("sg_fp_pkg exp constants match C++", "[fp][golden]") {
  const std::string pkg = readFile(std::string(STEPGEN_ROOT) + "/rtl_templates/sg_fp_pkg.sv");
  std::smatch m;
  REQUIRE(std::regex_search(pkg, m, std::regex("localparam int EXP_ROW_W = ([0-9]+);")));
  CHECK(std::stoi(m[1].str()) == kExpIndexBits);
  REQUIRE(std::regex_search(pkg, m, std::regex("localparam logic \\[31:0\\] EXP_LOG2E = 32'h([0-9A-F]{4})_([0-9A-F]{4});")));
  CHECK(std::stoul(m[1].str() + m[2].str(), nullptr, 16) == kFp32Log2E);
}

// The emitter writes sg_sigmoid_lut.sv into every fabric; the RTL unit tests verilate (at
// configure time) this committed copy of it.
TEST_CASE("tests/rtl/sg_sigmoid_lut.sv equals sigmoidLutSv()", "[fp][golden]") {
  checkGoldenFile("tests/rtl/sg_sigmoid_lut.sv", sigmoidLutSv());
}

TEST_CASE("tests/rtl/sg_sigmoid_rom.sv equals sigmoidRomSv()", "[fp][golden]") {
  checkGoldenFile("tests/rtl/sg_sigmoid_rom.sv", sigmoidRomSv());
}

// exp (docs/hardware.md section 3): against exp in long double over the range where the
// result is a normal binary32. Error budget: the table's half-bucket 2^(1/2048) - 1 = 3.39e-4,
// plus t = x * log2(e) rounded to binary32 (|t| < 128: at most 2^-17 absolute in t, so
// 2^(2^-17) - 1 = 5.3e-6 relative), plus log2(e) itself rounded (|x| < 89: 89 * 2^-25 in t,
// 1.8e-6 relative): 3.5e-4 in all.
TEST_CASE("fp32Exp: relative error within 3.5e-4 of exp, specials", "[fp]") {
  FtzDazScope ftz;
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-87.0f, 88.0f);
  double worst = 0;
  for (int i = 0; i < 200000; ++i) {
    const float x = i < 1000 ? (i - 500) / 64.0f : u(rng);
    const long double want = std::exp(static_cast<long double>(x));
    const long double got = refValue(fp32Exp(floatToBits(x)));
    worst = std::max(worst, double(std::fabs(got / want - 1.0L)));
  }
  CHECK(worst <= 3.5e-4);
  CHECK(worst > 1e-4);  // the table's resolution shows: the comparison is not vacuous
  CHECK(fp32Exp(0x00000000u) == 0x3F800000u + expTable()[0]);           // exp(0): row 0 of [1, 2), 2^(0.5/1024)
  CHECK(fp32Exp(0x80000000u) == fp32Exp(0x00000000u));                  // -0 as +0
  CHECK(fp32Exp(0x7F800000u) == 0x7F800000u);                            // exp(+inf) = +inf
  CHECK(fp32Exp(0xFF800000u) == 0x00000000u);                            // exp(-inf) = +0
  CHECK(fp32Exp(0x7F800001u) == kFp32QNaN);                              // NaN
  CHECK(fp32Exp(floatToBits(89.0f)) == 0x7F800000u);                     // overflow
  CHECK(fp32Exp(floatToBits(-88.0f)) == 0x00000000u);                    // below 2^-126: FTZ
  CHECK(refValue(fp32Exp(floatToBits(-87.0f))) > 0);                     // still normal
  // exp(-log(2) * k) is 2^-k up to the table: the exponent field steps by one per k.
  for (int k = 1; k < 10; ++k)
    CHECK(int((fp32Exp(floatToBits(-0.69314718f * float(k))) >> 23) & 0xFF) == 127 - k);
}

namespace {

// n random normal binary32 patterns with biased exponents in [exLo, exHi], every other one
// negative when `signs`.
std::vector<uint32_t> randomNormals(unsigned seed, int n, uint32_t exLo, uint32_t exHi, bool signs) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<uint32_t> mant(0, 0x7FFFFF);
  std::uniform_int_distribution<uint32_t> ex(exLo, exHi);
  std::vector<uint32_t> xs;
  for (int i = 0; i < n; ++i) xs.push_back((signs ? uint32_t(i & 1) << 31 : 0u) | ex(rng) << 23 | mant(rng));
  return xs;
}

// The largest |f(x) / ref(x) - 1| over xs, with ref in long double.
double worstRelError(uint32_t (*f)(uint32_t), long double (*ref)(long double), const std::vector<uint32_t>& xs) {
  double worst = 0;
  for (uint32_t x : xs) worst = std::max(worst, double(std::fabs(refValue(f(x)) / ref(refValue(x)) - 1.0L)));
  return worst;
}

}  // namespace

// recip: against 1/x in long double over the normal range. Error budget: the seed's
// relative error is below 2^-9 (half a bucket of 1/256 over [1, 2)), one Newton step squares
// it (2^-18 = 3.8e-6), and the three fp32 roundings add about 2e-7.
TEST_CASE("fp32Recip: relative error below 5e-6 of 1/x, specials", "[fp]") {
  FtzDazScope ftz;
  const double worst = worstRelError(fp32Recip, [](long double x) { return 1.0L / x; }, randomNormals(9, 200000, 2, 252, true));
  CHECK(worst < 5e-6);
  CHECK(worst > 1e-7);  // coarser than fp32 rounding: the comparison is not vacuous
  // A power of two is not exact: one Newton step from the bucket's seed leaves 1 - 3.8e-6.
  CHECK(std::fabs(bitsToFloat(fp32Recip(floatToBits(4.0f))) / 0.25f - 1.0f) < 5e-6f);
  CHECK(fp32Recip(0x00000000u) == 0x7F800000u);   // 1/+0 = +inf
  CHECK(fp32Recip(0x80000001u) == 0xFF800000u);   // a subnormal reads as -0: -inf
  CHECK(fp32Recip(0xFF800000u) == 0x80000000u);   // 1/-inf = -0
  CHECK(fp32Recip(0x7FC00001u) == kFp32QNaN);
  CHECK(fp32Recip(0x7F7FFFFFu) == 0x00000000u);   // 1/max is below 2^-126: FTZ
  CHECK(std::fabs(refValue(fp32Recip(0x00800000u)) / std::ldexp(1.0L, 126) - 1.0L) < 5e-6L);  // 1/2^-126
}

// rsqrt: against 1/sqrt(x) in long double over the whole normal range. Error budget: the
// seed's relative error is below 2^-9 (half a 1/128 bucket of z, halved by the square root),
// one Newton step leaves 1.5 * (2^-9)^2 = 5.7e-6, and four fp32 roundings add about 2.4e-7
// (measured worst: 5.75e-6).
TEST_CASE("fp32Rsqrt: relative error below 7e-6 of 1/sqrt(x), specials", "[fp]") {
  FtzDazScope ftz;
  // Random normals, and every bucket's worst corner: both ends of each of the 256 rows.
  std::vector<uint32_t> xs = randomNormals(11, 200000, 1, 254, false);
  for (uint32_t row = 0; row < 256; ++row)
    for (uint32_t end : {0u, 0xFFFFu}) xs.push_back(((row >> 7) ? 128u : 127u) << 23 | (row & 127u) << 16 | end);
  const double worst = worstRelError(fp32Rsqrt, [](long double x) { return 1.0L / std::sqrt(x); }, xs);
  CHECK(worst < 7e-6);
  CHECK(worst > 1e-7);  // coarser than fp32 rounding: the comparison is not vacuous
  CHECK(std::fabs(bitsToFloat(fp32Rsqrt(floatToBits(4.0f))) / 0.5f - 1.0f) < 7e-6f);
  CHECK(std::fabs(bitsToFloat(fp32Rsqrt(floatToBits(2.0f))) * std::sqrt(2.0f) - 1.0f) < 7e-6f);
  CHECK(fp32Rsqrt(0x00000000u) == 0x7F800000u);   // 1/sqrt(+0) = +inf
  CHECK(fp32Rsqrt(0x80000000u) == 0xFF800000u);   // 1/sqrt(-0) = -inf (IEEE rSqrt)
  CHECK(fp32Rsqrt(0x00000001u) == 0x7F800000u);   // a subnormal reads as +0
  CHECK(fp32Rsqrt(0x7F800000u) == 0x00000000u);   // 1/sqrt(+inf) = +0
  CHECK(fp32Rsqrt(0xFF800000u) == kFp32QNaN);     // -inf
  CHECK(fp32Rsqrt(floatToBits(-4.0f)) == kFp32QNaN);
  CHECK(fp32Rsqrt(0x7FC00001u) == kFp32QNaN);
  // The extremes stay normal: 2^-126 -> 2^63, the largest float -> about 2^-64.
  CHECK(std::fabs(refValue(fp32Rsqrt(0x00800000u)) / std::ldexp(1.0L, 63) - 1.0L) < 7e-6L);
  CHECK(std::fabs(refValue(fp32Rsqrt(0x7F7FFFFFu)) * std::sqrt(refValue(0x7F7FFFFFu)) - 1.0L) < 7e-6L);
}

TEST_CASE("fp32Sub: a - b exactly as a + (-b)", "[fp]") {
  FtzDazScope ftz;
  CHECK(fp32Sub(floatToBits(3.0f), floatToBits(1.25f)) == floatToBits(1.75f));
  CHECK(fp32Sub(floatToBits(1.0f), floatToBits(1.0f)) == 0x00000000u);   // x - x = +0
  CHECK(fp32Sub(0x80000000u, 0x00000000u) == 0x80000000u);                // -0 - +0 = -0
  CHECK(fp32Sub(0x7F800000u, 0x7F800000u) == kFp32QNaN);                  // inf - inf
  CHECK(fp32Sub(floatToBits(1e-38f), floatToBits(-1e-38f)) == 0x00000000u);  // subnormal inputs read as 0
}

// The emitter writes sg_attn_lut.sv into every fabric; the RTL unit tests verilate this copy.
TEST_CASE("tests/rtl/sg_attn_lut.sv equals attnLutSv()", "[fp][golden]") {
  checkGoldenFile("tests/rtl/sg_attn_lut.sv", attnLutSv());
}
