// Drives the verilated sg_fp_check (sg_fp_pkg + sg_sigmoid_lut) with special values, random
// vectors and every sigmoid key, and requires bit equality with sim/common/fp.cpp.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "Vsg_fp_check.h"
#include "common/fp.hpp"
#include "verilated.h"

using namespace stepgen;

namespace {

constexpr int kLanes = 2;  // sg_fp_check's default LANES; ports are 64-bit (QData)
constexpr int kIdxBits = kSigmoidIndexBits;

struct Vec {
  uint32_t a, b;
};

uint32_t fields(uint32_t sign, int biasedExp, uint32_t frac) {
  return (sign << 31) | (static_cast<uint32_t>(biasedExp & 0xFF) << 23) | (frac & 0x7FFFFFu);
}

std::vector<uint32_t> specials() {
  return {0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x007FFFFF, 0x807FFFFF, 0x00400000,
          0x00800000, 0x80800000, 0x00800001, 0x80800001, 0x00FFFFFF, 0x01000000, 0x00C00000,
          0x7F7FFFFF, 0xFF7FFFFF, 0x7F7FFFFE, 0x7F000000, 0x7EFFFFFF, 0xFEFFFFFF,
          0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001, 0xFFBFFFFF, 0x7FFFFFFF,
          0x3F800000, 0xBF800000, 0x3F800001, 0x3F7FFFFF, 0x40000000, 0x3F000000, 0x3FFFFFFF,
          0x33800000, 0x33000000, 0x32FFFFFF, 0x34000000, 0xB3800000,
          0x72FFFFFF, 0x73000000, 0x73000001, 0xF3000000, 0x7F7FFFFF ^ 0x00000001,
          0x1F800000, 0x1F7FFFFF, 0x20000000, 0x5F800000, 0x5F800001, 0x60000000, 0x3F3FFFFF,
          0x4B800000, 0xCB7FFFFF, 0x41800000, 0xC1800000, 0x417FFFFF, 0x3A800000, 0x3A7FFFFF};
}

class Harness {
 public:
  Harness() : top_(std::make_unique<Vsg_fp_check>(&ctx_)) {
    top_->clk = 0;
    top_->eval();
  }
  ~Harness() { top_->final(); }

  // Evaluates all vectors (kLanes per clock) and compares each output with the C++ model.
  void run(const std::vector<Vec>& v) {
    for (size_t i = 0; i < v.size(); i += kLanes) {
      uint64_t a = 0, b = 0;
      for (int l = 0; l < kLanes; ++l) {
        const Vec& x = v[std::min(i + l, v.size() - 1)];
        a |= static_cast<uint64_t>(x.a) << (32 * l);
        b |= static_cast<uint64_t>(x.b) << (32 * l);
      }
      top_->a = a;
      top_->b = b;
      top_->clk = 1;
      top_->eval();
      top_->clk = 0;
      top_->eval();
      for (int l = 0; l < kLanes && i + l < v.size(); ++l) {
        const uint32_t xa = v[i + l].a, xb = v[i + l].b;
        compare("fp32_add", xa, xb, lane32(top_->add_o, l), fp32Add(xa, xb));
        compare("fp32_add_sp", xa, xb, lane32(top_->addsp_o, l), fp32Add(xa, xb));
        compare("fp32_add_sim", xa, xb, lane32(top_->addsim_o, l), fp32Add(xa, xb));
        compare("fp32_mul", xa, xb, lane32(top_->mul_o, l), fp32Mul(xa, xb));
        compare("fp32_mul_sim", xa, xb, lane32(top_->mulsim_o, l), fp32Mul(xa, xb));
        compare("bf16_mul", xa, xb, lane32(top_->bf16_o, l), bf16Mul(xa, xb));
        compare("bf16_mul_sim", xa, xb, lane32(top_->bf16sim_o, l), bf16Mul(xa, xb));
        compare("silu", xa, 0, lane32(top_->silu_o, l), silu(xa));
        const uint32_t idx = static_cast<uint32_t>(top_->sidx_o >> (kIdxBits * l)) & ((1u << kIdxBits) - 1);
        compare("sigmoid_index", xa, 0, idx, static_cast<uint32_t>(sigmoidIndex(xa)));
        compare("sigmoid_lut (flat form)", xa, 0, lane32(top_->sig_o, l), sigmoidLookup(xa));
        compare("sigmoid_lut_case", xa, 0, lane32(top_->sigc_o, l), sigmoidLookup(xa));
        compare("recip", xa, 0, lane32(top_->rcp_o, l), fp32Recip(xa));
        compare("exp", xa, 0, lane32(top_->exp_o, l), fp32Exp(xa));
        compare("rsqrt", xa, 0, lane32(top_->rsq_o, l), fp32Rsqrt(xa));
      }
      ++checked_;
    }
  }
  long mismatches() const { return mismatches_; }
  long cycles() const { return checked_; }

 private:
  static uint32_t lane32(uint64_t w, int l) { return static_cast<uint32_t>(w >> (32 * l)); }
  void compare(const char* what, uint32_t a, uint32_t b, uint32_t rtl, uint32_t model) {
    if (rtl == model) return;
    if (++mismatches_ <= 20)
      std::fprintf(stderr, "MISMATCH %s(0x%08X, 0x%08X): rtl 0x%08X, C++ 0x%08X\n", what, a, b, rtl, model);
  }
  VerilatedContext ctx_;
  std::unique_ptr<Vsg_fp_check> top_;
  long mismatches_ = 0, checked_ = 0;
};

}  // namespace

TEST_CASE("sg_fp_pkg RTL equals the C++ model bit for bit", "[rtl][fp]") {
  enableFtzDaz();
  REQUIRE(ftzDazEnabled());
  Harness h;
  std::vector<Vec> v;

  // All pairs of special values.
  const auto sp = specials();
  for (uint32_t a : sp)
    for (uint32_t b : sp) v.push_back({a, b});

  std::mt19937_64 rng(0xF00DCAFEull);
  auto r32 = [&] { return static_cast<uint32_t>(rng()); };
  // Tininess after rounding: significand products just below 2.0 at the 2^-126 boundary.
  for (uint64_t ma = (1ull << 24) - 1; ma > (1ull << 24) - 4000; --ma) {
    const uint64_t mb = ((1ull << 47) - (1ull << 22) + ma - 1) / ma;
    if (mb >= (1ull << 24) || ma * mb >= (1ull << 47)) continue;
    for (int de = -1; de <= 1; ++de) {
      v.push_back({fields(0, 127 - 60, static_cast<uint32_t>(ma)), fields(1, 127 - 67 + de, static_cast<uint32_t>(mb))});
      v.push_back({fields(0, 127 + 60, static_cast<uint32_t>(ma)), fields(0, 127 + 67 + de, static_cast<uint32_t>(mb))});
    }
  }
  // Overflow boundary of the adder: max normal + values around half an ulp.
  for (int i = -300; i <= 300; ++i) {
    v.push_back({0x7F7FFFFF, static_cast<uint32_t>(0x73000000 + i)});
    v.push_back({0xFF7FFFFF, static_cast<uint32_t>(0xF3000000 + i)});
    v.push_back({static_cast<uint32_t>(0x7F7FFFFF - (i & 0xFF)), static_cast<uint32_t>(0x7F7FFFFF - ((i >> 3) & 0xFF))});
  }
  // Every sigmoid key (sign, exponent, top 6 mantissa bits) with random low bits.
  for (uint32_t key = 0; key < (1u << 15); ++key)
    v.push_back({(key << 17) | (r32() & 0x1FFFFu), r32()});

  // >= 200k random vectors in several classes.
  for (int i = 0; i < 240000; ++i) {
    const uint64_t r = rng();
    Vec x{};
    switch (i % 6) {
      case 0:  // any bit pattern (NaNs, infinities, subnormals included)
        x = {r32(), r32()};
        break;
      case 1:  // moderate exponents
        x = {fields(r & 1, 87 + static_cast<int>((r >> 1) % 81), r32()),
             fields((r >> 8) & 1, 87 + static_cast<int>((r >> 9) % 81), r32())};
        break;
      case 2: {  // close exponents: cancellation in the adder
        const int e = 1 + static_cast<int>((r >> 1) % 254);
        x = {fields(r & 1, e, r32()), fields((r >> 9) & 1, std::max(1, std::min(254, e + static_cast<int>((r >> 10) % 5) - 2)), r32())};
        break;
      }
      case 3: {  // near-equal magnitudes, opposite signs
        const uint32_t a = fields(r & 1, 1 + static_cast<int>((r >> 1) % 254), r32());
        x = {a, (a ^ 0x80000000u) + static_cast<uint32_t>((r >> 20) % 9) - 4u};
        break;
      }
      case 4: {  // products near the underflow threshold
        const int ea = 1 + static_cast<int>((r >> 1) % 126);
        x = {fields(r & 1, ea, r32()), fields((r >> 9) & 1, std::max(1, 126 - ea + static_cast<int>((r >> 10) % 5)), r32())};
        break;
      }
      default: {  // products and sums near the overflow threshold
        const int ea = 128 + static_cast<int>((r >> 1) % 127);
        x = {fields(r & 1, ea, r32()), fields((r >> 9) & 1, std::min(254, 254 + 127 - ea + static_cast<int>((r >> 10) % 5) - 2), r32())};
        break;
      }
    }
    v.push_back(x);
  }
  INFO(v.size() << " vectors");
  h.run(v);
  WARN("sg_fp_check: " << v.size() << " vectors in " << h.cycles() << " cycles, " << h.mismatches() << " mismatches");
  REQUIRE(h.mismatches() == 0);
}

// recip_finish is written for p = y * r0 in [0.5, 1.5) and r1 in [0.25, 1) (sg_fp_pkg.sv): the
// C++ model's own steps must stay there for every significand, and the RTL must equal
// fp32Recip for every significand and, with the significands that give either r1 exponent,
// every exponent and sign.
TEST_CASE("sg_fp_pkg recip_finish: every significand and exponent against fp32Recip", "[rtl][fp]") {
  enableFtzDaz();
  const std::vector<uint32_t> seeds = recipTable();
  std::vector<uint32_t> byR1Exp[2];  // significands whose r1 has exponent 125, 126
  long outside = 0;
  std::vector<Vec> v;
  for (uint32_t m = 0; m < (1u << 23); ++m) {
    const uint32_t r0 = 0x3F000000u | seeds[m >> (23 - kRecipIndexBits)];
    const uint32_t p = fp32Mul(0x3F800000u | m, r0);
    const uint32_t r1 = fp32Mul(r0, fp32Sub(0x40000000u, p));
    const uint32_t pe = p >> 23, re = r1 >> 23;  // sign bit 0: both positive
    if (pe < 126 || pe > 127 || (pe == 127 && (p & 0x7FFFFFu) >= 0x400000u) || re < 125 || re > 126) ++outside;
    else if (byR1Exp[re - 125].size() < 64) byR1Exp[re - 125].push_back(m);
    v.push_back({fields(0, 127, m), 0});
  }
  CHECK(outside == 0);
  for (const auto& ms : byR1Exp)
    for (uint32_t m : ms)
      for (int e = 0; e < 256; ++e)
        for (uint32_t s = 0; s < 2; ++s) v.push_back({fields(s, e, m), 0});
  // A few significands next to 2 give r1 below 0.5 (exponent 125): both of recip_finish's
  // exponent choices are then taken below.
  CHECK(!byR1Exp[0].empty());
  CHECK(!byR1Exp[1].empty());
  Harness h;
  h.run(v);
  REQUIRE(h.mismatches() == 0);
}

// rsqrt_q and rsqrt_pack are written for p = z * h in [0.25, 1) and r1 in [0.25, 1]
// (sg_fp_pkg.sv): the C++ model's own steps must stay there for every significand at both
// exponent parities (every `stride`-th one in the RTL), and the RTL must equal fp32Rsqrt for
// them and, with the significands that give each r1 exponent, every exponent and sign.
void rsqrtSweep(uint32_t stride) {
  enableFtzDaz();
  const std::vector<uint32_t> seeds = rsqrtTable(), halfSq = rsqrtHalfSqTable();
  std::vector<uint32_t> byR1Exp[3];  // significands (with the parity in bit 23) whose r1 has exponent 125, 126, 127
  long outside = 0;
  std::vector<Vec> v;
  for (uint32_t odd = 0; odd < 2; ++odd)
    for (uint32_t m = 0; m < (1u << 23); ++m) {
      const uint32_t row = odd << 7 | m >> 16;
      const uint32_t p = fp32Mul((127u + odd) << 23 | m, halfSq[row]);
      const uint32_t r1 = fp32Mul(0x3F000000u | seeds[row], fp32Sub(0x3FC00000u, p));
      const uint32_t pe = p >> 23, re = r1 >> 23;  // sign bit 0: both positive
      if (pe < 125 || pe > 126 || re < 125 || re > 127) ++outside;
      else if (byR1Exp[re - 125].size() < 64) byR1Exp[re - 125].push_back(odd << 23 | m);
      if (m % stride == 0 || m % stride == stride - 1) v.push_back({fields(0, odd ? 128 : 127, m), 0});
    }
  CHECK(outside == 0);
  for (const auto& ms : byR1Exp)
    for (uint32_t om : ms)
      for (int e = 0; e < 256; ++e)
        if (((e & 1) == 0) == bool(om >> 23))  // the same parity: the same row and r1
          for (uint32_t s = 0; s < 2; ++s) v.push_back({fields(s, e, om & 0x7FFFFFu), 0});
  CHECK(!byR1Exp[1].empty());
  Harness h;
  h.run(v);
  REQUIRE(h.mismatches() == 0);
}

// Two significands in 16 (both ends of each run of 16) in the default tier; all 2^24 in the
// heavy one (rtl_fp_full: 16.7 M vectors, about 12 s).
TEST_CASE("sg_fp_pkg rsqrt_q and rsqrt_pack: significands at both parities and every exponent against fp32Rsqrt",
          "[rtl][fp]") {
  rsqrtSweep(16);
}
TEST_CASE("sg_fp_pkg rsqrt_q and rsqrt_pack: every significand at both parities against fp32Rsqrt", "[rtl][fp_full]") {
  rsqrtSweep(1);
}

// exp is split in sg_cu around a register (sg_fp_pkg exp_shift, then exp_key, which takes
// floor(t * 2^16) of a negative t as ~((M - 1) >> sh) instead of negating): every sign and
// exponent of x, with the mantissas next to each power of two and 4,096 others each, and
// the 2^16 inputs around each x whose t is at a range end (|t| = 128, t = -127 where the
// result underflows, 127 and -126), against fp32Exp.
TEST_CASE("sg_fp_pkg exp_shift and exp_key: every exponent against fp32Exp", "[rtl][fp]") {
  enableFtzDaz();
  std::mt19937_64 rng(0xE4Bull);
  std::vector<Vec> v;
  for (uint32_t s = 0; s < 2; ++s)
    for (int e = 0; e < 256; ++e) {
      for (uint32_t m = 0; m < 64; ++m) {
        v.push_back({fields(s, e, m), 0});
        v.push_back({fields(s, e, 0x7FFFFFu - m), 0});
      }
      for (int i = 0; i < 4096; ++i) v.push_back({fields(s, e, static_cast<uint32_t>(rng())), 0});
    }
  // x = t / log2 e for those t: 2^16 neighbours of each.
  for (float t : {127.0f, 128.0f, -126.0f, -127.0f, -128.0f}) {
    float xf = t / 1.44269504f;
    uint32_t xb;
    std::memcpy(&xb, &xf, 4);
    for (uint32_t d = 0; d < (1u << 16); ++d) v.push_back({xb - (1u << 15) + d, 0});
  }
  Harness h;
  h.run(v);
  WARN("exp: " << v.size() << " inputs, " << h.mismatches() << " mismatches");
  REQUIRE(h.mismatches() == 0);
}
