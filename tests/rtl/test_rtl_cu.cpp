// sg_cu (rtl_templates/sg_cu.sv) verilated with W=4, LANES=8, BUF_WORDS=256, in the fp32
// (Vsg_cu_fp32) and bf16_fp32 (Vsg_cu_bf16) multiply formats with DYN=1, and fp32 with
// DYN=0 (Vsg_cu_static), driven beat by beat:
//   * matmul bit-exact against a plain C++ loop with sim/common/fp.hpp in the same order,
//     with STOP / DONE tokens, stop maps and random back-pressure;
//   * matmul timing: first output beat and steady-state cycles per tile, compute-, load-
//     and drain-bound, against max(a_beats, b_beats, passes*K, o_beats);
//   * silu / exp / recip / mul / add / sub; accum (docs/step_semantics.md#accum: stop rules, empty groups); retile; contexts.
//   * dynamic tiles: dyn_m matmul (M from the a tile, outputs ending in partial beats), bt
//     matmul (b transposed, N = 1, 3, 5, 6, 12), dyn_m accum, rowscale, partial final beats
//     through silu / mul / add; bit-exact against plain loops, with STOP tokens,
//     back-pressure and the documented timing (incl. the bt divider setup).
//   * Scan(add), Expand, Parallelize (funcs 8..10), Partition (incl. a longer, fed-back
//     selector), EagerMerge and Map(select) (funcs 20..22): golden streams from the
//     functional model (generator/model/routing_ops.cpp: scanAdd, expand, parallelize,
//     partition, selectSignals) with empty groups, several stop levels, random back-pressure
//     and the documented timing.
//   * DYN = 0 (Vsg_cu_static): funcs 7..10 and 20..22 are unknown; the static functions are bit- and
//     cycle-identical to the DYN = 1 unit.
//   * SILU = 0 (Vsg_cu_bankbf): silu is an unknown function.
//   * The banked local memory (Vsg_cu_bank / Vsg_cu_bankbf: LANES = W = 4, sg_cu_mem
//     BANKED = 1): matmul with N below, equal to and above LANES, bt with rows wrapping
//     past N inside a pass (both b copies), dyn_m, accum, scan and expand, against the same
//     references and the same timing formulas as the flat memory.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>

#include "Vsg_cu_bank.h"
#include "Vsg_cu_bankbf.h"
#include "Vsg_cu_banks.h"
#include "Vsg_cu_bf16.h"
#include "Vsg_cu_fp32.h"
#include "Vsg_cu_static.h"
#include "common/fp.hpp"
#include "ir/stops.hpp"
#include "model/routing_ops.hpp"
#include "rtl_unit_util.hpp"

using namespace rtlu;
using stepgen::bf16Mul;
using stepgen::fp32Add;
using stepgen::fp32Mul;

namespace {

constexpr int W = 4;
constexpr int LANES = 8;

const stepgen::ConfigLayout& layout() {
  static const stepgen::ConfigLayout l = stepgen::buildConfigLayout(testArch());
  return l;
}

CfgVec newCfg() { return CfgVec(layout(), stepgen::UnitKind::Compute); }

int ilog2(int n) {
  int l = 0;
  while ((1 << l) < n) ++l;
  return l;
}

struct MmShape {
  int M, K, N;
  int lanes = LANES;  ///< the model's LANES (Vsg_cu_bank*: 4)
  int aBeats() const { return M * K / W; }
  int bBeats() const { return K * N / W; }
  int oBeats() const { return M * N / W; }
  int passes() const { return (M * N + lanes - 1) / lanes; }
};

struct Bases {
  int a0 = 0, a1 = 32, b0 = 64, b1 = 96, o0 = 128, o1 = 160;
};

/// Banks packed one after the other: a0 a1 b0 b1 o0 o1 (must fit the 256-word buffer).
Bases packed(const MmShape& s) {
  const int A = s.M * s.K, B = s.K * s.N, O = s.M * s.N;
  REQUIRE(2 * (A + B + O) <= 256);
  Bases b;
  b.a0 = 0;
  b.a1 = A;
  b.b0 = 2 * A;
  b.b1 = 2 * A + B;
  b.o0 = 2 * A + 2 * B;
  b.o1 = 2 * A + 2 * B + O;
  return b;
}

void setMatmul(CfgVec& c, int ctx, const MmShape& s, const Bases& b = Bases()) {
  c.set(ctx, "enable", 1);
  c.set(ctx, "func", 1);
  c.set(ctx, "mn", uint64_t(s.M * s.N));
  c.set(ctx, "k", uint64_t(s.K));
  c.set(ctx, "log2n", uint64_t(ilog2(s.N)));
  c.set(ctx, "passes", uint64_t(s.passes()));
  c.set(ctx, "a_beats", uint64_t(s.aBeats()));
  c.set(ctx, "b_beats", uint64_t(s.bBeats()));
  c.set(ctx, "o_beats", uint64_t(s.oBeats()));
  c.set(ctx, "a_base0", uint64_t(b.a0));
  c.set(ctx, "a_base1", uint64_t(b.a1));
  c.set(ctx, "b_base0", uint64_t(b.b0));
  c.set(ctx, "b_base1", uint64_t(b.b1));
  c.set(ctx, "o_base0", uint64_t(b.o0));
  c.set(ctx, "o_base1", uint64_t(b.o1));
  c.identityMap(ctx, 0);
  c.identityMap(ctx, 1);
}

void setSimple(CfgVec& c, int ctx, int func, int accumB = 0, int oBeats = 0, int o0 = 0, int o1 = 0) {
  c.set(ctx, "enable", 1);
  c.set(ctx, "func", uint64_t(func));
  c.set(ctx, "accum_b", uint64_t(accumB));
  c.set(ctx, "o_beats", uint64_t(oBeats));
  c.set(ctx, "o_base0", uint64_t(o0));
  c.set(ctx, "o_base1", uint64_t(o1));
  c.identityMap(ctx, 0);
  c.identityMap(ctx, 1);
}

/// A finite fp32 with a random sign, exponent in [elo, ehi] and random mantissa.
uint32_t randFloat(std::mt19937& g, int elo, int ehi) {
  std::uniform_int_distribution<int> e(elo, ehi);
  return (uint32_t(g() & 1u) << 31) | (uint32_t(e(g) + 127) << 23) | (g() & 0x7FFFFFu);
}

std::vector<uint32_t> randWords(std::mt19937& g, size_t n, int elo = -4, int ehi = 4) {
  std::vector<uint32_t> v(n);
  for (auto& x : v) x = randFloat(g, elo, ehi);
  return v;
}

/// The reference: out[i*N+j] = sum over k, sequentially from +0, of mul(a[i*K+k], b[k*N+j]).
std::vector<uint32_t> refMatmul(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b,
                                const MmShape& s, bool bf16) {
  std::vector<uint32_t> o(size_t(s.M * s.N));
  for (int i = 0; i < s.M; ++i)
    for (int j = 0; j < s.N; ++j) {
      uint32_t acc = 0;
      for (int k = 0; k < s.K; ++k) {
        const uint32_t x = a[size_t(i * s.K + k)], y = b[size_t(k * s.N + j)];
        acc = fp32Add(acc, bf16 ? bf16Mul(x, y) : fp32Mul(x, y));
      }
      o[size_t(i * s.N + j)] = acc;
    }
  return o;
}

void append(std::deque<Beat>& q, const std::vector<Beat>& v) { q.insert(q.end(), v.begin(), v.end()); }
void appendBeats(std::vector<Beat>& q, const std::vector<Beat>& v) { q.insert(q.end(), v.begin(), v.end()); }

/// Output beats grouped: each DATA tile (up to its `last` beat) as one entry, each STOP /
/// DONE beat as one entry.
struct Item {
  int kind;
  int stop;
  std::vector<uint32_t> words;
};
std::vector<Item> group(const std::vector<Beat>& beats) {
  std::vector<Item> r;
  std::vector<uint32_t> cur;
  for (const Beat& b : beats) {
    if (b.kind != DATA) {
      REQUIRE(cur.empty());
      r.push_back({b.kind, b.stop, {}});
      continue;
    }
    cur.insert(cur.end(), b.data.begin(), b.data.end());
    if (b.last) {
      r.push_back({DATA, b.stop, cur});
      cur.clear();
    }
  }
  REQUIRE(cur.empty());
  return r;
}

std::string hex(uint32_t x) {
  char b[16];
  std::snprintf(b, sizeof b, "%08x", x);
  return b;
}

void requireWords(const std::vector<uint32_t>& got, const std::vector<uint32_t>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("word " << i << " got " << hex(got[i]) << " want " << hex(want[i]));
    REQUIRE(got[i] == want[i]);
  }
}

void requireItems(const std::vector<Item>& got, const std::vector<Item>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("item " << i);
    CHECK(got[i].kind == want[i].kind);
    CHECK(got[i].stop == want[i].stop);
    requireWords(got[i].words, want[i].words);
  }
}

// ------------------------------------------------------------------ matmul, exactness
template <class V>
void matmulExact(bool bf16, const MmShape& s, bool backpressure, bool promoteMap) {
  stepgen::enableFtzDaz();
  std::mt19937 g(77u + unsigned(s.M * 100 + s.K * 10 + s.N) + (backpressure ? 5u : 0u));
  CfgVec c = newCfg();
  setMatmul(c, 0, s, packed(s));
  // Promote at rank 0 on in0: s -> s + 1 (in1's map is not used: Zip takes in0's stops).
  uint64_t promote = 0;
  for (int k = 0; k < 8; ++k) promote |= uint64_t(std::min(k + 1, 7)) << (3 * k);
  if (promoteMap) c.set(0, "in0_stopmap", promote);
  auto mapped = [&](int st) { return promoteMap ? std::min(st + 1, 7) : st; };

  StreamSim<V, 2> sim(W);
  sim.config(c);
  // Stream: tiles with stops 0, 1, STOP(1) (an empty group), 0, 2, a tile of special
  // values with stop 1, DONE.
  struct In {
    bool tok;
    int kind, stop;
  };
  const std::vector<In> seq = {{false, DATA, 0}, {false, DATA, 1}, {true, STOP, 1}, {false, DATA, 0},
                               {false, DATA, 2}, {false, DATA, 1}, {true, DONE, 0}};
  std::vector<Item> want;
  for (size_t t = 0; t < seq.size(); ++t) {
    if (seq[t].tok) {
      Beat b = seq[t].kind == STOP ? stopBeat(seq[t].stop, W) : doneBeat(W);
      sim.in[0].push_back(b);
      sim.in[1].push_back(b);
      want.push_back({seq[t].kind, seq[t].kind == STOP ? mapped(seq[t].stop) : 0, {}});
      continue;
    }
    std::vector<uint32_t> a = randWords(g, size_t(s.M * s.K)), b = randWords(g, size_t(s.K * s.N));
    if (t == 5) {  // specials: zeros of both signs, subnormals, huge values (overflow), inf, NaN
      const uint32_t sp[] = {0x00000000, 0x80000000, 0x00000001, 0x807FFFFF, 0x7F7FFFFF,
                             0xFF7FFFFF, 0x7F800000, 0xFF800000, 0x7FC00001, 0x3F800000};
      for (size_t i = 0; i < a.size(); ++i) a[i] = sp[(i * 7) % 10];
      for (size_t i = 0; i < b.size(); ++i) b[i] = (i % 3) ? sp[(i * 3) % 10] : b[i];
    }
    append(sim.in[0], tileBeats(a, W, seq[t].stop));
    append(sim.in[1], tileBeats(b, W, seq[t].stop));
    want.push_back({DATA, mapped(seq[t].stop), refMatmul(a, b, s, bf16)});
  }
  if (backpressure) {
    std::mt19937 r(99);
    sim.inGate = [&r](int, uint64_t) { return (r() % 3) != 0; };
    sim.outGate = [&r](uint64_t) { return (r() % 2) != 0; };
  }
  sim.start();
  REQUIRE(sim.runUntilDone(20000));
  requireItems(group(sim.out), want);
  CHECK(sim.in[0].empty());
  CHECK(sim.in[1].empty());
}

// ------------------------------------------------------------------ matmul, timing
struct Timing {
  uint64_t first;               ///< first output beat, cycles after the first input beat
  std::vector<uint64_t> period; ///< differences between consecutive tiles' first beats
};

template <class V>
Timing matmulTiming(const MmShape& s, const Bases& b, int tiles) {
  stepgen::enableFtzDaz();
  std::mt19937 g(5);
  CfgVec c = newCfg();
  setMatmul(c, 0, s, b);
  StreamSim<V, 2> sim(W);
  sim.config(c);
  for (int t = 0; t < tiles; ++t) {
    append(sim.in[0], tileBeats(randWords(g, size_t(s.M * s.K)), W, 0));
    append(sim.in[1], tileBeats(randWords(g, size_t(s.K * s.N)), W, 0));
  }
  sim.in[0].push_back(doneBeat(W));
  sim.in[1].push_back(doneBeat(W));
  sim.start();
  REQUIRE(sim.runUntilDone(20000));
  // Every output beat is accepted the cycle it first becomes valid (out_ready = 1), so
  // outCyc are the cycles the beats appear.
  const uint64_t t0 = sim.inCyc[0].at(0);
  REQUIRE(sim.inCyc[1].at(0) == t0);
  std::vector<uint64_t> firsts;
  bool startOfTile = true;
  for (size_t i = 0; i < sim.out.size(); ++i) {
    if (sim.out[i].kind != DATA) break;
    if (startOfTile) firsts.push_back(sim.outCyc[i] - t0);
    startOfTile = sim.out[i].last;
  }
  REQUIRE(int(firsts.size()) == tiles);
  Timing r{firsts[0], {}};
  for (size_t i = 1; i < firsts.size(); ++i) r.period.push_back(firsts[i] - firsts[i - 1]);
  // Within a tile the beats come one per cycle.
  return r;
}

template <class V>
void matmulTimingCases() {
  // Cycle 0 = the cycle the first a / b beats are accepted; inputs always valid, output
  // always ready. La = max(a_beats, b_beats), C = passes*K, D = o_beats.
  // Tile 0: beats in cycles 0..La-1; bank full at the edge ending cycle La-1; MAC cycles
  // La..La+C-1 (stage 1), the last add in La+C (stage 2); drain reads beat 0 in cycle
  // La+C+1; it is valid in cycle La+C+2.
  SECTION("compute bound") {
    // M=4 K=8 N=4: a_beats = 32/4 = 8, b_beats = 32/4 = 8, mn = 16, passes = 16/8 = 2,
    // C = 2*8 = 16, D = 16/4 = 4. First beat at 8+16+2 = 26; period max(8,8,16,4) = 16.
    Timing t = matmulTiming<V>({4, 8, 4}, Bases(), 6);
    CHECK(t.first == 26);
    for (uint64_t p : t.period) CHECK(p == 16);
  }
  SECTION("load bound") {
    // M=8 K=4 N=1: a_beats = 32/4 = 8, b_beats = 4/4 = 1, mn = 8, passes = 1, C = 4,
    // D = 8/4 = 2. First beat at 8+4+2 = 14; period max(8,1,4,2) = 8.
    Timing t = matmulTiming<V>({8, 4, 1}, Bases(), 6);
    CHECK(t.first == 14);
    for (uint64_t p : t.period) CHECK(p == 8);
  }
  SECTION("drain bound") {
    // M=8 K=1 N=8: a_beats = 8/4 = 2, b_beats = 8/4 = 2, mn = 64, passes = 64/8 = 8,
    // C = 8*1 = 8, D = 64/4 = 16 (output banks of 64 words: o_base0 = 32, o_base1 = 96).
    // First beat at 2+8+2 = 12; period max(2,2,8,16) = 16.
    Bases b;
    b.a0 = 0;
    b.a1 = 8;
    b.b0 = 16;
    b.b1 = 24;
    b.o0 = 32;
    b.o1 = 96;
    Timing t = matmulTiming<V>({8, 1, 8}, b, 6);
    CHECK(t.first == 12);
    for (uint64_t p : t.period) CHECK(p == 16);
  }
  SECTION("balanced, inactive lanes") {
    // M=3 K=4 N=4: a_beats = 12/4 = 3, b_beats = 16/4 = 4, mn = 12, passes = 2 (lanes 4..7
    // idle in pass 1), C = 2*4 = 8, D = 12/4 = 3. First beat at 4+8+2 = 14; period
    // max(3,4,8,3) = 8.
    Timing t = matmulTiming<V>({3, 4, 4}, Bases(), 5);
    CHECK(t.first == 14);
    for (uint64_t p : t.period) CHECK(p == 8);
  }
}

// ------------------------------------------------------------------ elementwise
/// fp.cpp's result of W-word function `func` (sg_cu.sv numbering) on the words x (in0), y (in1).
uint32_t ewRef(int func, uint32_t x, uint32_t y) {
  return func == 2    ? stepgen::silu(x)
       : func == 12 ? stepgen::fp32Exp(x)
       : func == 13 ? stepgen::fp32Recip(x)
       : func == 23 ? stepgen::fp32Rsqrt(x)
       : func == 3  ? fp32Mul(x, y)
       : func == 11 ? stepgen::fp32Sub(x, y)
                    : fp32Add(x, y);
}

template <class V>
void elementwise(int func) {
  stepgen::enableFtzDaz();
  std::mt19937 g(11u + unsigned(func));
  CfgVec c = newCfg();
  setSimple(c, 0, func);
  StreamSim<V, 2> sim(W);
  sim.config(c);
  std::vector<Beat> want;
  const int n = 200;
  for (int i = 0; i < n; ++i) {
    std::vector<uint32_t> x = randWords(g, W, -13, 6), y = randWords(g, W, -13, 6);
    if (i == 3) x = {0x00000000, 0x80000000, 0x00000001, 0x7F800000};
    if (i == 4) x = {0xFF800000, 0x7FC00000, 0x41800000, 0xC1800000};
    if (i == 5) x = {0x3A800000, 0xBA7FFFFF, 0x7F7FFFFF, 0x33800000};
    std::vector<uint32_t> r(W);
    for (int k = 0; k < W; ++k) r[size_t(k)] = ewRef(func, x[size_t(k)], y[size_t(k)]);
    const bool last = (i % 3) == 2;
    const int st = last ? (i % 5) : 0;
    sim.in[0].push_back(dataBeat(x, last, st));
    sim.in[1].push_back(dataBeat(y, last, st));
    want.push_back(dataBeat(r, last, st));
    if (i == 50) {  // an empty group travels as a STOP beat
      sim.in[0].push_back(stopBeat(2, W));
      sim.in[1].push_back(stopBeat(2, W));
      want.push_back(stopBeat(2, W));
    }
  }
  sim.in[0].push_back(doneBeat(W));
  sim.in[1].push_back(doneBeat(W));
  want.push_back(doneBeat(W));
  if (func == 2 || func == 12 || func == 13 || func == 23) sim.in[1].clear();  // silu, exp, recip, rsqrt read in0 only
  sim.start();
  REQUIRE(sim.runUntilDone(2000));
  REQUIRE(sim.out.size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    INFO("beat " << i << " got " << show(sim.out[i]) << " want " << show(want[i]));
    REQUIRE(sim.out[i] == want[i]);
  }
  // Timing: one register stage (out valid the cycle after the input beat is accepted) and
  // one beat per cycle: n + 2 input beats in n + 2 consecutive cycles.
  for (size_t i = 0; i < want.size(); ++i) CHECK(sim.outCyc[i] == sim.inCyc[0][i] + 1);
  CHECK(sim.inCyc[0].back() - sim.inCyc[0].front() == want.size() - 1);
}

// ------------------------------------------------------------------ accum
/// The reference Accum(add, b) on items (tiles of tw words or STOP beats) using
/// stepgen::accumStop (docs/step_semantics.md#accum: s < b absorbed, s = b no stop, s > b stop s - b); an empty
/// group (STOP s >= b with nothing accumulated) gives a zero tile.
struct AccIn {
  bool stopBeat;
  int stop;
  std::vector<uint32_t> words;
};
std::vector<Item> refAccum(const std::vector<AccIn>& in, int b, size_t tw) {
  std::vector<Item> r;
  std::vector<uint32_t> acc(tw, 0);
  bool has = false;
  for (const AccIn& x : in) {
    if (!x.stopBeat) {
      for (size_t i = 0; i < tw; ++i) acc[i] = fp32Add(has ? acc[i] : 0u, x.words[i]);
      has = true;
    }
    const stepgen::StopSplit sp = stepgen::accumStop(x.stop, b);
    if (sp.emit) {
      r.push_back({DATA, sp.outStop, has ? acc : std::vector<uint32_t>(tw, 0)});
      has = false;
    }
  }
  return r;
}

template <class V>
void accumCase(int b, const std::vector<AccIn>& in, int ctxUsed) {
  stepgen::enableFtzDaz();
  const int ob = 2;  // tile = 2 beats = 8 words
  CfgVec c = newCfg();
  setSimple(c, ctxUsed, 5, b, ob, 200, 208);
  StreamSim<V, 2> sim(W);
  sim.config(c);
  for (const AccIn& x : in) {
    if (x.stopBeat) sim.in[0].push_back(stopBeat(x.stop, W));
    else append(sim.in[0], tileBeats(x.words, W, x.stop));
  }
  sim.in[0].push_back(doneBeat(W));
  std::vector<Item> want = refAccum(in, b, size_t(ob * W));
  want.push_back({DONE, 0, {}});
  sim.start();
  REQUIRE(sim.runUntilDone(2000));
  requireItems(group(sim.out), want);
}

}  // namespace

TEST_CASE("sg_cu matmul fp32 bit-exact, tokens, stop map", "[rtl][cu]") {
  matmulExact<Vsg_cu_fp32>(false, {4, 8, 4}, false, false);
  matmulExact<Vsg_cu_fp32>(false, {3, 4, 4}, false, true);  // 12 outputs: lanes idle in pass 1
  matmulExact<Vsg_cu_fp32>(false, {2, 8, 8}, false, false);  // b: 64 words, K = 8
  matmulExact<Vsg_cu_fp32>(false, {8, 1, 8}, false, true);   // 64 outputs, 8 passes of K = 1
}

TEST_CASE("sg_cu matmul bf16 bit-exact, tokens, stop map", "[rtl][cu]") {
  matmulExact<Vsg_cu_bf16>(true, {4, 8, 4}, false, true);
  matmulExact<Vsg_cu_bf16>(true, {8, 1, 8}, false, false);
}

TEST_CASE("sg_cu matmul under random back-pressure", "[rtl][cu]") {
  matmulExact<Vsg_cu_fp32>(false, {4, 8, 4}, true, false);
  matmulExact<Vsg_cu_bf16>(true, {3, 4, 4}, true, true);
}

TEST_CASE("sg_cu matmul timing fp32", "[rtl][cu][timing]") { matmulTimingCases<Vsg_cu_fp32>(); }
TEST_CASE("sg_cu matmul timing bf16", "[rtl][cu][timing]") { matmulTimingCases<Vsg_cu_bf16>(); }

TEST_CASE("sg_cu silu", "[rtl][cu]") { elementwise<Vsg_cu_fp32>(2); }
TEST_CASE("sg_cu mul", "[rtl][cu]") { elementwise<Vsg_cu_fp32>(3); }
TEST_CASE("sg_cu add", "[rtl][cu]") { elementwise<Vsg_cu_bf16>(4); }
TEST_CASE("sg_cu sub", "[rtl][cu]") { elementwise<Vsg_cu_static>(11); }
TEST_CASE("sg_cu exp (ATTN = 1)", "[rtl][cu]") { elementwise<Vsg_cu_fp32>(12); }
TEST_CASE("sg_cu recip (ATTN = 1)", "[rtl][cu]") { elementwise<Vsg_cu_fp32>(13); }
TEST_CASE("sg_cu rsqrt (ATTN = 1)", "[rtl][cu]") { elementwise<Vsg_cu_fp32>(23); }

// silu's table read and exp's, recip's and rsqrt's first multiply work on in0_next, the beat at in0's
// head next cycle. Gaps in the input (a beat pushed into an empty FIFO shows on in0_next
// first), a blocked output (the head stays) and a context switch between two of these
// functions (the INIT cycle must already pick the new function's operands) must not change a
// word. Each context reads its own stream of in0; the reference is fp.cpp's, word by word.
TEST_CASE("sg_cu look-ahead functions: gaps, back-pressure, a context switch", "[rtl][cu]") {
  stepgen::enableFtzDaz();
  for (const auto& [f0, f1] : {std::pair{13, 12}, std::pair{12, 13}, std::pair{2, 12}, std::pair{13, 2},
                                  std::pair{23, 13}, std::pair{12, 23}}) {
    INFO("context 0 func " << f0 << ", context 1 func " << f1);
    std::mt19937 g(unsigned(100 * f0 + f1));
    CfgVec c = newCfg();
    setSimple(c, 0, f0);
    setSimple(c, 1, f1);
    StreamSim<Vsg_cu_fp32, 2> sim(W);
    sim.config(c);
    std::mt19937 r(unsigned(f0 + f1));
    sim.inGate = [&r](int, uint64_t) { return (r() % 3) != 0; };
    sim.outGate = [&r](uint64_t) { return (r() % 2) != 0; };
    std::vector<Beat> want;
    for (int func : {f0, f1}) {
      for (int i = 0; i < 60; ++i) {
        std::vector<uint32_t> x = randWords(g, W, -13, 6), y(x.size());
        if (i == 1) x = {0x00000000, 0x80000000, 0x7F800000, 0x7FC00000};
        for (int k = 0; k < W; ++k) y[size_t(k)] = ewRef(func, x[size_t(k)], 0);
        sim.in[0].push_back(dataBeat(x, i % 4 == 3, i % 4 == 3 ? 1 : 0));
        want.push_back(dataBeat(y, i % 4 == 3, i % 4 == 3 ? 1 : 0));
      }
      sim.in[0].push_back(doneBeat(W));
      want.push_back(doneBeat(W));
    }
    sim.start();
    REQUIRE(sim.runUntilDone(5000));
    requireBeats(sim.out, want);
  }
}

TEST_CASE("sg_cu accum stop rules and empty groups", "[rtl][cu]") {
  std::mt19937 g(3);
  auto t = [&](int stop) { return AccIn{false, stop, randWords(g, 8)}; };
  auto s = [](int stop) { return AccIn{true, stop, {}}; };
  SECTION("b = 1") {
    // 3 tiles (stops 0 0 1) -> one sum, no stop; a tile with S2 -> stop 1; STOP(1) with
    // nothing accumulated -> zero tile, no stop; STOP(2) -> zero tile, stop 1; a tile then
    // STOP(1) closing it; a lone tile with S1.
    accumCase<Vsg_cu_fp32>(1, {t(0), t(0), t(1), t(2), s(1), s(2), t(0), s(1), t(1)}, 0);
  }
  SECTION("b = 2, context 1") {
    // S1 absorbed then S2 closes (no stop); STOP(1) absorbed; S3 -> stop 1;
    // STOP(1) absorbed, STOP(2) on an empty group -> zero tile; STOP(3) -> zero tile stop 1.
    accumCase<Vsg_cu_bf16>(2, {t(1), t(2), s(1), t(3), s(1), s(2), s(3), t(0), t(1), t(0), t(4)}, 1);
  }
  SECTION("b = 0: every tile its own group") {
    accumCase<Vsg_cu_fp32>(0, {t(0), t(1), t(0), t(2)}, 0);
  }
}

TEST_CASE("sg_cu accum timing", "[rtl][cu][timing]") {
  // b = 0, tiles of 2 beats: the group closes with each tile's 2nd beat (accepted in cycle
  // c); its first output beat is valid in c+2 (drain reads in c+1). One input beat per
  // cycle throughout (the other bank accumulates while one drains).
  stepgen::enableFtzDaz();
  std::mt19937 g(8);
  CfgVec c = newCfg();
  setSimple(c, 0, 5, 0, 2, 0, 8);
  StreamSim<Vsg_cu_fp32, 2> sim(W);
  sim.config(c);
  const int tiles = 6;
  for (int i = 0; i < tiles; ++i) append(sim.in[0], tileBeats(randWords(g, 8), W, 0));
  sim.in[0].push_back(doneBeat(W));
  sim.start();
  REQUIRE(sim.runUntilDone(500));
  REQUIRE(sim.out.size() == size_t(2 * tiles + 1));
  for (int i = 0; i < tiles; ++i) CHECK(sim.outCyc[size_t(2 * i)] == sim.inCyc[0][size_t(2 * i + 1)] + 2);
  CHECK(sim.inCyc[0][size_t(2 * tiles - 1)] - sim.inCyc[0][0] == uint64_t(2 * tiles - 1));
}

TEST_CASE("sg_cu retile", "[rtl][cu]") {
  // b = 1, tiles of 2 beats with stops 0 0 1 2, STOP(1) (absorbed: an empty group cannot be
  // a tile), STOP(2) -> STOP(1), a tile with S3 -> last, stop 2.
  std::mt19937 g(4);
  CfgVec c = newCfg();
  setSimple(c, 0, 6, 1);
  StreamSim<Vsg_cu_fp32, 2> sim(W);
  sim.config(c);
  std::vector<Beat> want;
  for (int st : {0, 0, 1, 2, -1, -2, 3}) {
    if (st < 0) {
      sim.in[0].push_back(stopBeat(-st, W));
      if (-st > 1) want.push_back(stopBeat(-st - 1, W));
      continue;
    }
    std::vector<Beat> tb = tileBeats(randWords(g, 8), W, st);
    append(sim.in[0], tb);
    tb[0].last = false;
    const stepgen::StopSplit sp = stepgen::accumStop(st, 1);
    tb[1].last = sp.emit;
    tb[1].stop = sp.emit ? sp.outStop : 0;
    want.insert(want.end(), tb.begin(), tb.end());
  }
  sim.in[0].push_back(doneBeat(W));
  want.push_back(doneBeat(W));
  sim.start();
  REQUIRE(sim.runUntilDone(500));
  REQUIRE(sim.out.size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    INFO("beat " << i << " got " << show(sim.out[i]) << " want " << show(want[i]));
    CHECK(sim.out[i] == want[i]);
  }
}

TEST_CASE("sg_cu contexts: order, skipping, ctx port, done", "[rtl][cu]") {
  stepgen::enableFtzDaz();
  SECTION("no enabled context: done the cycle after start") {
    CfgVec c = newCfg();
    StreamSim<Vsg_cu_fp32, 2> sim(W);
    sim.config(c);
    sim.step();
    CHECK(sim.top->done == 0);
    sim.start();
    CHECK(sim.top->done == 1);
  }
  SECTION("context 0 disabled, context 1 runs") {
    CfgVec c = newCfg();
    setSimple(c, 1, 4);  // add
    StreamSim<Vsg_cu_fp32, 2> sim(W);
    sim.config(c);
    sim.in[0].push_back(dataBeat({0x3F800000, 0, 0, 0}, true, 1));
    sim.in[1].push_back(dataBeat({0x3F800000, 0, 0, 0}, true, 1));
    sim.in[0].push_back(doneBeat(W));
    sim.in[1].push_back(doneBeat(W));
    sim.start();
    CHECK(int(sim.top->ctx) == 1);
    REQUIRE(sim.runUntilDone(100));
    REQUIRE(sim.out.size() == 2);
    CHECK(sim.out[0].data[0] == 0x40000000u);
  }
  SECTION("two contexts in order: mul then silu") {
    CfgVec c = newCfg();
    setSimple(c, 0, 3);
    setSimple(c, 1, 2);
    StreamSim<Vsg_cu_fp32, 2> sim(W);
    sim.config(c);
    sim.in[0] = {dataBeat({0x40000000, 0, 0, 0}, true, 0), doneBeat(W),
                 dataBeat({0x41800000, 0, 0, 0}, true, 0), doneBeat(W)};
    sim.in[1] = {dataBeat({0x40400000, 0, 0, 0}, true, 0), doneBeat(W)};
    std::vector<int> ctxSeen;
    sim.start();
    for (int i = 0; i < 100 && !sim.top->done; ++i) {
      ctxSeen.push_back(int(sim.top->ctx));
      sim.step();
    }
    REQUIRE(sim.top->done == 1);
    REQUIRE(sim.out.size() == 4);
    CHECK(sim.out[0].data[0] == 0x40C00000u);  // 2 * 3
    CHECK(sim.out[1].kind == DONE);
    CHECK(sim.out[2].data[0] == stepgen::silu(0x41800000u));
    CHECK(sim.out[3].kind == DONE);
    CHECK(ctxSeen.front() == 0);
    CHECK(ctxSeen.back() == 1);
    // The DONE of context 0 is accepted in cycle t; context 1 takes beats from t+2 (INIT
    // in t+1).
    CHECK(sim.inCyc[0][2] == sim.outCyc[1] + 2);
  }
}

// ==================================================================== dynamic tiles
// dyn_m (dynamic row count M), bt (b transposed, N any value), rowscale, partial final
// beats (tile packing rule: ceil(R*C/W) beats, unused words of the final beat zero).
namespace {

constexpr int SU = 4;  // bt divider setup cycles: $clog2(LANES + 1) for LANES = 8

int ceilDiv(int a, int b) { return (a + b - 1) / b; }

/// Words padded with zeros to whole beats.
std::vector<uint32_t> padBeats(std::vector<uint32_t> v) {
  v.resize(size_t(ceilDiv(int(v.size()), W) * W), 0u);
  return v;
}

/// A tile as beats by the packing rule (final beat zero-padded), last + stop on the final.
std::vector<Beat> packTile(const std::vector<uint32_t>& words, int stop) {
  return tileBeats(padBeats(words), W, stop);
}

/// Reference, written independently of the RTL's order of lanes and passes:
/// out[i*N+j] = sum over k = 0..K-1, sequentially from +0, of mul(a[i*K+k], B(k, j)) with
/// B(k, j) = b[j*K+k] when bt, else b[k*N+j].
std::vector<uint32_t> refMm(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b, int M, int K,
                            int N, bool bt, bool bf16) {
  std::vector<uint32_t> o(size_t(M * N));
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      uint32_t acc = 0;
      for (int k = 0; k < K; ++k) {
        const uint32_t x = a[size_t(i * K + k)];
        const uint32_t y = bt ? b[size_t(j * K + k)] : b[size_t(k * N + j)];
        acc = fp32Add(acc, bf16 ? bf16Mul(x, y) : fp32Mul(x, y));
      }
      o[size_t(i * N + j)] = acc;
    }
  return o;
}

struct MmItem {
  int kind;  ///< DATA, STOP or DONE
  int stop;
  int M;     ///< rows of a (DATA)
};

struct MmCfg {
  int K, N;
  bool dyn, bt;
  int lanes = LANES;  ///< the model's LANES (Vsg_cu_bank*: 4)
};

/// bt divider setup cycles: $clog2(lanes + 1) (SU for the LANES = 8 models).
int setupCycles(int lanes) {
  int b = 0;
  while ((1 << b) < lanes + 1) ++b;
  return b;
}

/// Configures a matmul context. dyn: a_beats, mn, passes, o_beats are left 0 (not read);
/// static: from Mstatic. Banks: a A words, b B, out O (each rounded up to whole beats);
/// two banks each, or one shared bank pair (a0 = a1 ...) when `share` (only valid with one
/// data tile in the stream).
void setMmDyn(CfgVec& c, int ctx, const MmCfg& m, int Mmax, int Mstatic, bool share) {
  const int A = ceilDiv(Mmax * m.K, W) * W, B = ceilDiv(m.K * m.N, W) * W, O = ceilDiv(Mmax * m.N, W) * W;
  const int banks = share ? 1 : 2;
  REQUIRE(banks * (A + B + O) <= 256);
  c.set(ctx, "enable", 1);
  c.set(ctx, "func", 1);
  c.set(ctx, "k", uint64_t(m.K));
  c.set(ctx, "b_beats", uint64_t(ceilDiv(m.K * m.N, W)));
  c.set(ctx, "dyn_m", m.dyn ? 1u : 0u);
  c.set(ctx, "bt", m.bt ? 1u : 0u);
  if (m.bt) c.set(ctx, "n", uint64_t(m.N));
  else c.set(ctx, "log2n", uint64_t(ilog2(m.N)));
  if (!m.dyn) {
    const int mn = Mstatic * m.N;
    c.set(ctx, "mn", uint64_t(mn));
    c.set(ctx, "passes", uint64_t(ceilDiv(mn, m.lanes)));
    c.set(ctx, "a_beats", uint64_t(ceilDiv(Mstatic * m.K, W)));
    c.set(ctx, "o_beats", uint64_t(ceilDiv(mn, W)));
  }
  const int a1 = share ? 0 : A;
  const int b0 = banks * A, b1 = b0 + (share ? 0 : B);
  const int o0 = banks * (A + B), o1 = o0 + (share ? 0 : O);
  c.set(ctx, "a_base0", 0);
  c.set(ctx, "a_base1", uint64_t(a1));
  c.set(ctx, "b_base0", uint64_t(b0));
  c.set(ctx, "b_base1", uint64_t(b1));
  c.set(ctx, "o_base0", uint64_t(o0));
  c.set(ctx, "o_base1", uint64_t(o1));
  c.identityMap(ctx, 0);
  c.identityMap(ctx, 1);
}

/// Runs a stream of matmul tiles / tokens through one context; checks every output word
/// (M*N results, then zeros to the end of the final beat) against refMm.
template <class V>
void mmDynExact(bool bf16, const MmCfg& m, const std::vector<MmItem>& seq, bool backpressure, unsigned seed) {
  stepgen::enableFtzDaz();
  std::mt19937 g(seed);
  int Mmax = 0, Mstatic = 0, tiles = 0;
  for (const MmItem& x : seq)
    if (x.kind == DATA) {
      Mmax = std::max(Mmax, x.M);
      if (!m.dyn) {
        if (tiles) REQUIRE(x.M == Mstatic);
        Mstatic = x.M;
      }
      ++tiles;
    }
  const int A = ceilDiv(Mmax * m.K, W) * W, B = ceilDiv(m.K * m.N, W) * W, O = ceilDiv(Mmax * m.N, W) * W;
  const bool share = 2 * (A + B + O) > 256;
  if (share) REQUIRE(tiles == 1);
  CfgVec c = newCfg();
  setMmDyn(c, 0, m, Mmax, Mstatic, share);
  StreamSim<V, 2> sim(W);
  sim.config(c);
  std::vector<Item> want;
  for (const MmItem& x : seq) {
    if (x.kind != DATA) {
      Beat b = x.kind == STOP ? stopBeat(x.stop, W) : doneBeat(W);
      sim.in[0].push_back(b);
      sim.in[1].push_back(b);
      want.push_back({x.kind, x.kind == STOP ? x.stop : 0, {}});
      continue;
    }
    std::vector<uint32_t> a = randWords(g, size_t(x.M * m.K)), b = randWords(g, size_t(m.K * m.N));
    if (x.M == 3) {  // specials in one tile: signed zeros, subnormals, overflow, inf, NaN
      const uint32_t sp[] = {0x00000000, 0x80000000, 0x00000001, 0x807FFFFF, 0x7F7FFFFF,
                             0xFF7FFFFF, 0x7F800000, 0xFF800000, 0x7FC00001, 0x3F800000};
      for (size_t i = 0; i < a.size(); i += 3) a[i] = sp[(i * 7) % 10];
    }
    append(sim.in[0], packTile(a, x.stop));
    append(sim.in[1], packTile(b, x.stop));
    want.push_back({DATA, x.stop, padBeats(refMm(a, b, x.M, m.K, m.N, m.bt, bf16))});
  }
  if (backpressure) {
    std::mt19937 r(seed + 1);
    sim.inGate = [&r](int, uint64_t) { return (r() % 3) != 0; };
    sim.outGate = [&r](uint64_t) { return (r() % 2) != 0; };
  }
  sim.start();
  REQUIRE(sim.runUntilDone(40000));
  requireItems(group(sim.out), want);
  CHECK(sim.in[0].empty());
  CHECK(sim.in[1].empty());
}

/// `tiles` equal data tiles (M rows) then DONE, inputs always valid, output always ready.
/// Returns the first output beat of every tile relative to the first accepted input beat,
/// and checks that each tile's beats come one per cycle.
template <class V>
std::vector<uint64_t> mmDynFirsts(const MmCfg& m, int M, int tiles) {
  stepgen::enableFtzDaz();
  std::mt19937 g(21);
  CfgVec c = newCfg();
  setMmDyn(c, 0, m, M, M, false);
  StreamSim<V, 2> sim(W);
  sim.config(c);
  for (int t = 0; t < tiles; ++t) {
    append(sim.in[0], packTile(randWords(g, size_t(M * m.K)), 0));
    append(sim.in[1], packTile(randWords(g, size_t(m.K * m.N)), 0));
  }
  sim.in[0].push_back(doneBeat(W));
  sim.in[1].push_back(doneBeat(W));
  sim.start();
  REQUIRE(sim.runUntilDone(20000));
  const uint64_t t0 = sim.inCyc[0].at(0);
  REQUIRE(sim.inCyc[1].at(0) == t0);
  REQUIRE(t0 == 2);  // start in cycle 0, INIT in 1, the first RUN cycle R = 2
  std::vector<uint64_t> firsts;
  bool startOfTile = true;
  int beats = 0;
  for (size_t i = 0; i < sim.out.size(); ++i) {
    if (sim.out[i].kind != DATA) break;
    if (startOfTile) firsts.push_back(sim.outCyc[i] - t0);
    else CHECK(sim.outCyc[i] == sim.outCyc[i - 1] + 1);
    ++beats;
    startOfTile = sim.out[i].last;
  }
  REQUIRE(int(firsts.size()) == tiles);
  CHECK(beats == tiles * ceilDiv(M * m.N, W));  // o_beats = ceil(M*N / W) per tile
  return firsts;
}

/// Checks the documented timing: first beat at max(La, setup) + C + 2, then one tile every
/// max(a_beats, b_beats, C, o_beats) cycles; setup = SU with bt, else 0.
template <class V>
void mmDynTimingCase(const MmCfg& m, int M) {
  const int aB = ceilDiv(M * m.K, W), bB = ceilDiv(m.K * m.N, W);
  const int mn = M * m.N, C = ceilDiv(mn, m.lanes) * m.K, oB = ceilDiv(mn, W);
  const int La = std::max(aB, bB);
  const uint64_t first = uint64_t(std::max(La, m.bt ? setupCycles(m.lanes) : 0) + C + 2);
  const uint64_t period = uint64_t(std::max({aB, bB, C, oB}));
  INFO("M=" << M << " K=" << m.K << " N=" << m.N << " dyn=" << m.dyn << " bt=" << m.bt << " La=" << La
            << " C=" << C << " o_beats=" << oB);
  const std::vector<uint64_t> f = mmDynFirsts<V>(m, M, 5);
  CHECK(f[0] == first);
  for (size_t i = 1; i < f.size(); ++i) CHECK(f[i] - f[i - 1] == period);
}

}  // namespace

TEST_CASE("sg_cu dyn_m matmul: M from the a tile, partial output beats", "[rtl][cu][dyn]") {
  // N = 2 (log2n path): M*N = 2, 6, 10 end in partial beats on W = 4; M = 16: 32 words.
  // Output banks alternate (tokens too): 5 -> o0, 1 -> o1, STOP, 3 -> o1, 3 -> o0 (stale
  // words of the 5-row tile behind it must drain as 0), 1 -> o1, 5 -> o0.
  const std::vector<MmItem> mixed = {{DATA, 0, 5}, {DATA, 1, 1}, {STOP, 1, 0}, {DATA, 0, 3},
                                     {DATA, 2, 3}, {DATA, 1, 1}, {DATA, 0, 5}, {DONE, 0, 0}};
  const std::vector<MmItem> big = {{STOP, 2, 0}, {DATA, 1, 16}, {DONE, 0, 0}};
  for (int K : {8, 12}) {
    INFO("K = " << K);
    mmDynExact<Vsg_cu_fp32>(false, {K, 2, true, false}, mixed, false, 100u + unsigned(K));
    mmDynExact<Vsg_cu_bf16>(true, {K, 2, true, false}, mixed, false, 200u + unsigned(K));
    mmDynExact<Vsg_cu_fp32>(false, {K, 2, true, false}, big, false, 300u + unsigned(K));
    mmDynExact<Vsg_cu_bf16>(true, {K, 2, true, false}, big, false, 400u + unsigned(K));
  }
  // N = 4, K = 6 (a tile's final beat is itself partial: M*6 words).
  mmDynExact<Vsg_cu_fp32>(false, {6, 4, true, false}, mixed, false, 500u);
}

TEST_CASE("sg_cu bt matmul: b transposed, N not a power of two", "[rtl][cu][bt]") {
  // Static bt (mn, passes, o_beats from the configuration; o_beats = ceil(mn / W)).
  auto stat = [](int M) {
    return std::vector<MmItem>{{DATA, 0, M}, {DATA, 1, M}, {STOP, 1, 0}, {DATA, 2, M}, {DONE, 0, 0}};
  };
  mmDynExact<Vsg_cu_fp32>(false, {8, 3, false, true}, stat(3), false, 600u);   // mn 9: 3 beats
  mmDynExact<Vsg_cu_bf16>(true, {8, 3, false, true}, stat(3), false, 601u);
  mmDynExact<Vsg_cu_fp32>(false, {12, 6, false, true}, stat(2), false, 602u);  // mn 12, K = 12
  mmDynExact<Vsg_cu_bf16>(true, {8, 6, false, true}, stat(3), false, 603u);    // mn 18: 5 beats
  mmDynExact<Vsg_cu_fp32>(false, {4, 12, false, true}, stat(2), false, 604u);  // N > LANES
  mmDynExact<Vsg_cu_fp32>(false, {4, 1, false, true}, stat(5), false, 605u);   // N = 1
  // bt with dyn_m: M from the a tile, N = 3 and 6.
  const std::vector<MmItem> mixed = {{DATA, 0, 5}, {DATA, 1, 1}, {STOP, 1, 0}, {DATA, 0, 3},
                                     {DATA, 2, 3}, {DATA, 1, 1}, {DONE, 0, 0}};
  // (Banks: with N = 6, K = 12 two 5-row a banks, b and out banks exceed 256 words.)
  for (int K : {8, 12}) {
    INFO("K = " << K);
    mmDynExact<Vsg_cu_fp32>(false, {K, 3, true, true}, mixed, false, 700u + unsigned(K));
    mmDynExact<Vsg_cu_bf16>(true, {K, 3, true, true}, mixed, false, 750u + unsigned(K));
  }
  mmDynExact<Vsg_cu_fp32>(false, {8, 6, true, true}, mixed, false, 800u);
  mmDynExact<Vsg_cu_bf16>(true, {8, 6, true, true}, mixed, false, 801u);
  mmDynExact<Vsg_cu_fp32>(false, {8, 3, true, true}, {{STOP, 1, 0}, {DATA, 1, 16}, {DONE, 0, 0}}, false, 900u);
  mmDynExact<Vsg_cu_bf16>(true, {4, 5, true, true}, {{DATA, 1, 16}, {DONE, 0, 0}}, false, 901u);  // K = W
}

TEST_CASE("sg_cu dyn_m / bt matmul under random back-pressure", "[rtl][cu][dyn][bt]") {
  const std::vector<MmItem> mixed = {{DATA, 0, 5}, {DATA, 1, 1}, {STOP, 1, 0}, {DATA, 0, 3},
                                     {DATA, 2, 3}, {DATA, 1, 1}, {DONE, 0, 0}};
  mmDynExact<Vsg_cu_fp32>(false, {8, 2, true, false}, mixed, true, 1000u);
  mmDynExact<Vsg_cu_bf16>(true, {12, 3, true, true}, mixed, true, 1001u);
  mmDynExact<Vsg_cu_fp32>(false, {8, 6, false, true},
                          {{DATA, 0, 3}, {STOP, 1, 0}, {DATA, 1, 3}, {DATA, 0, 3}, {DONE, 0, 0}}, true, 1002u);
}

TEST_CASE("sg_cu dyn_m / bt matmul timing", "[rtl][cu][dyn][bt][timing]") {
  // dyn_m, N = 2: M=3 K=8: a 6 beats, b 4, mn 6, C = 1*8, o 2 -> first 6+8+2 = 16, period 8.
  mmDynTimingCase<Vsg_cu_fp32>({8, 2, true, false}, 3);
  // M=5 K=12: a 15, b 6, mn 10, C = 2*12 = 24, o 3 -> first 15+24+2 = 41, period 24 (compute bound).
  mmDynTimingCase<Vsg_cu_fp32>({12, 2, true, false}, 5);
  // M=5 K=8 N=1: a 10, b 2, mn 5, C = 8, o 2 -> first 10+8+2 = 20, period 10 (load bound).
  mmDynTimingCase<Vsg_cu_bf16>({8, 1, true, false}, 5);
  // M=1 K=8 N=8: a 2, b 16, mn 8, C = 8, o 2 -> first 16+8+2 = 26, period 16 (b bound).
  mmDynTimingCase<Vsg_cu_fp32>({8, 8, true, false}, 1);
  // bt, static: M=4 K=4 N=3: a 4, b 3, La = 4 = SU, mn 12, C = 2*4 = 8, o 3 -> first 4+8+2 = 14.
  mmDynTimingCase<Vsg_cu_fp32>({4, 3, false, true}, 4);
  // bt: M=1 K=4 N=3: a 1, b 3, La = 3 < SU = 4: the MAC waits for the dividers:
  // first = 4 + 4 + 2 = 10 (9 without the setup); period max(1, 3, 4, 1) = 4.
  mmDynTimingCase<Vsg_cu_fp32>({4, 3, false, true}, 1);
  // bt + dyn_m: M=3 K=8 N=6: a 6, b 12, mn 18, C = 3*8 = 24, o 5 -> first 12+24+2 = 38, period 24.
  mmDynTimingCase<Vsg_cu_bf16>({8, 6, true, true}, 3);
}

TEST_CASE("sg_cu bt matmul in context 1: divider setup from the context's first RUN cycle", "[rtl][cu][bt][timing]") {
  // Context 0: add (one beat, DONE); context 1: bt matmul M=1 K=4 N=3 (La = 3 < SU = 4).
  // Context 1's first RUN cycle R is the cycle after INIT; its first a/b beats are accepted
  // in R, the MAC starts in R + SU, the first output beat is valid in R + SU + C + 2.
  stepgen::enableFtzDaz();
  std::mt19937 g(31);
  const MmCfg m{4, 3, false, true};
  CfgVec c = newCfg();
  setSimple(c, 0, 4);
  setMmDyn(c, 1, m, 1, 1, false);
  StreamSim<Vsg_cu_fp32, 2> sim(W);
  sim.config(c);
  sim.in[0].push_back(dataBeat({0x3F800000, 0, 0, 0}, true, 0));
  sim.in[1].push_back(dataBeat({0x3F800000, 0, 0, 0}, true, 0));
  sim.in[0].push_back(doneBeat(W));
  sim.in[1].push_back(doneBeat(W));
  const std::vector<uint32_t> a = randWords(g, 4), b = randWords(g, 12);
  append(sim.in[0], packTile(a, 1));
  append(sim.in[1], packTile(b, 1));
  sim.in[0].push_back(doneBeat(W));
  sim.in[1].push_back(doneBeat(W));
  sim.start();
  REQUIRE(sim.runUntilDone(500));
  REQUIRE(sim.out.size() == 4);
  const uint64_t R = sim.outCyc[1] + 2;  // DONE of context 0 accepted, INIT, then RUN
  CHECK(sim.inCyc[0][2] == R);
  CHECK(sim.outCyc[2] == R + uint64_t(SU) + 4 + 2);
  CHECK(sim.out[2].last);
  CHECK(sim.out[2].stop == 1);
  requireWords(sim.out[2].data, padBeats(refMm(a, b, 1, 4, 3, true, false)));
}

namespace {

// ------------------------------------------------------------------ accum, dyn_m
struct DynAccIn {
  bool stopBeat;
  int stop;
  std::vector<uint32_t> words;  ///< the tile's words (R x C), not padded
};

/// Reference Accum(add, b) over zero-padded tiles whose length comes from the tile; an
/// empty group gives oBeats*W zero words.
std::vector<Item> refAccumDyn(const std::vector<DynAccIn>& in, int b, int oBeats) {
  std::vector<Item> r;
  std::vector<uint32_t> acc;
  bool has = false;
  for (const DynAccIn& x : in) {
    if (!x.stopBeat) {
      const std::vector<uint32_t> p = padBeats(x.words);
      if (has) REQUIRE(acc.size() == p.size());
      acc.resize(p.size());
      for (size_t i = 0; i < p.size(); ++i) acc[i] = fp32Add(has ? acc[i] : 0u, p[i]);
      has = true;
    }
    const stepgen::StopSplit sp = stepgen::accumStop(x.stop, b);
    if (sp.emit) {
      r.push_back({DATA, sp.outStop, has ? acc : std::vector<uint32_t>(size_t(std::max(oBeats, 1) * W), 0u)});
      has = false;
    }
  }
  return r;
}

template <class V>
void accumDynCase(int b, int oBeats, const std::vector<DynAccIn>& in, bool backpressure) {
  stepgen::enableFtzDaz();
  CfgVec c = newCfg();
  setSimple(c, 0, 5, b, oBeats, 100, 140);
  c.set(0, "dyn_m", 1);
  StreamSim<V, 2> sim(W);
  sim.config(c);
  for (const DynAccIn& x : in) {
    if (x.stopBeat) sim.in[0].push_back(stopBeat(x.stop, W));
    else append(sim.in[0], packTile(x.words, x.stop));
  }
  sim.in[0].push_back(doneBeat(W));
  std::vector<Item> want = refAccumDyn(in, b, oBeats);
  want.push_back({DONE, 0, {}});
  if (backpressure) {
    std::mt19937 r(12);
    sim.inGate = [&r](int, uint64_t) { return (r() % 3) != 0; };
    sim.outGate = [&r](uint64_t) { return (r() % 2) != 0; };
  }
  sim.start();
  REQUIRE(sim.runUntilDone(4000));
  requireItems(group(sim.out), want);
}

}  // namespace

TEST_CASE("sg_cu accum dyn_m: tile length from last, partial beats, empty groups", "[rtl][cu][dyn]") {
  std::mt19937 g(41);
  // Tiles of M = 3 rows x 2 words (6 words: 2 beats, the 2nd half zero), of 5 x 2 (10
  // words: 3 beats) and of 3 x 4 (12 words: 3 whole beats); one length per group.
  auto t = [&](int rows, int cols, int stop) { return DynAccIn{false, stop, randWords(g, size_t(rows * cols))}; };
  auto s = [](int stop) { return DynAccIn{true, stop, {}}; };
  const std::vector<DynAccIn> seq = {t(3, 2, 0), t(3, 2, 0), t(3, 2, 1),  // group of 3 tiles
                                     s(1),                                // empty: zero tile
                                     t(5, 2, 0), t(5, 2, 2),              // stop 1 out
                                     t(3, 4, 0), s(1),                    // closed by STOP
                                     s(2),                                // empty, stop 1
                                     t(3, 2, 1)};
  SECTION("fp32, o_beats 2 for empty groups") { accumDynCase<Vsg_cu_fp32>(1, 2, seq, false); }
  SECTION("bf16, o_beats 0 (empty group: one zero beat)") { accumDynCase<Vsg_cu_bf16>(1, 0, seq, false); }
  SECTION("back-pressure") { accumDynCase<Vsg_cu_fp32>(1, 3, seq, true); }
  SECTION("b = 0: every tile its own group") {
    accumDynCase<Vsg_cu_fp32>(0, 1, {t(3, 2, 0), t(5, 2, 1), t(1, 4, 0), t(3, 2, 2)}, false);
  }
}

TEST_CASE("sg_cu accum dyn_m timing", "[rtl][cu][dyn][timing]") {
  // b = 0, tiles of M = 3 rows x 2 words (2 beats): as static accum, the first output beat
  // is valid 2 cycles after the beat that closes the group; one input beat per cycle.
  stepgen::enableFtzDaz();
  std::mt19937 g(9);
  CfgVec c = newCfg();
  setSimple(c, 0, 5, 0, 0, 0, 8);
  c.set(0, "dyn_m", 1);
  StreamSim<Vsg_cu_fp32, 2> sim(W);
  sim.config(c);
  const int tiles = 6;
  for (int i = 0; i < tiles; ++i) append(sim.in[0], packTile(randWords(g, 6), 0));
  sim.in[0].push_back(doneBeat(W));
  sim.start();
  REQUIRE(sim.runUntilDone(500));
  REQUIRE(sim.out.size() == size_t(2 * tiles + 1));
  for (int i = 0; i < tiles; ++i) {
    CHECK(sim.outCyc[size_t(2 * i)] == sim.inCyc[0][size_t(2 * i + 1)] + 2);
    CHECK(sim.outCyc[size_t(2 * i + 1)] == sim.outCyc[size_t(2 * i)] + 1);
    CHECK(sim.out[size_t(2 * i + 1)].last);
  }
  CHECK(sim.inCyc[0][size_t(2 * tiles - 1)] - sim.inCyc[0][0] == uint64_t(2 * tiles - 1));
}

TEST_CASE("sg_cu silu / mul / add pass a partial final beat", "[rtl][cu][dyn]") {
  // A 3 x 2 tile (6 words) travels as 2 beats, the last two words of the 2nd zero: the
  // outputs are word by word, zeros stay +0.
  stepgen::enableFtzDaz();
  std::mt19937 g(51);
  for (int func : {2, 3, 4}) {
    INFO("func " << func);
    CfgVec c = newCfg();
    setSimple(c, 0, func);
    StreamSim<Vsg_cu_fp32, 2> sim(W);
    sim.config(c);
    std::vector<Beat> want;
    for (int t = 0; t < 3; ++t) {
      const std::vector<uint32_t> x = padBeats(randWords(g, 6)), y = padBeats(randWords(g, 6));
      std::vector<uint32_t> r(x.size());
      for (size_t i = 0; i < x.size(); ++i)
        r[i] = func == 2 ? stepgen::silu(x[i]) : func == 3 ? fp32Mul(x[i], y[i]) : fp32Add(x[i], y[i]);
      CHECK(r[6] == 0u);
      CHECK(r[7] == 0u);
      append(sim.in[0], tileBeats(x, W, t));
      if (func != 2) append(sim.in[1], tileBeats(y, W, t));
      const std::vector<Beat> wb = tileBeats(r, W, t);
      want.insert(want.end(), wb.begin(), wb.end());
      if (t == 1) {
        sim.in[0].push_back(stopBeat(1, W));
        if (func != 2) sim.in[1].push_back(stopBeat(1, W));
        want.push_back(stopBeat(1, W));
      }
    }
    sim.in[0].push_back(doneBeat(W));
    if (func != 2) sim.in[1].push_back(doneBeat(W));
    want.push_back(doneBeat(W));
    sim.start();
    REQUIRE(sim.runUntilDone(500));
    REQUIRE(sim.out.size() == want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      INFO("beat " << i << " got " << show(sim.out[i]) << " want " << show(want[i]));
      CHECK(sim.out[i] == want[i]);
    }
  }
}

namespace {

// ------------------------------------------------------------------ rowscale
struct RsTile {
  bool stopBeat;  ///< an in0 STOP (empty group)
  int stop;
  int rows;
};

/// rowscale over tiles of rows x C words (C = k); in1 carries one beat per row with the
/// scalar in word idx (other words and in1's last / stop bits random: ignored), or with
/// n > 1 (field n) n beats per row, the scalar in the first and the others random (dropped).
/// With in1Stops, in1 also carries STOP beats (after each tile's rows, and one for every in0
/// STOP), which the unit drops.
template <class V>
void rowscaleCase(int C, int idx, const std::vector<RsTile>& seq, bool in1Stops, bool backpressure, bool checkTiming,
                  int n = 1) {
  stepgen::enableFtzDaz();
  std::mt19937 g(61u + unsigned(C * 10 + idx));
  CfgVec c = newCfg();
  setSimple(c, 0, 7);
  c.set(0, "k", uint64_t(C));
  c.set(0, "idx_word", uint64_t(idx));
  if (n > 1) c.set(0, "n", uint64_t(n));
  StreamSim<V, 2> sim(W);
  sim.config(c);
  std::vector<Beat> want;
  for (const RsTile& t : seq) {
    if (t.stopBeat) {
      sim.in[0].push_back(stopBeat(t.stop, W));
      if (in1Stops) sim.in[1].push_back(stopBeat(t.stop, W));
      want.push_back(stopBeat(t.stop, W));
      continue;
    }
    std::vector<uint32_t> x = randWords(g, size_t(t.rows * C), -20, 20);
    if (t.rows == 2) {  // specials: zeros, subnormal, overflow, inf, NaN
      const uint32_t sp[] = {0x00000000, 0x80000000, 0x00000001, 0x7F7FFFFF, 0x7F800000, 0x7FC00001};
      for (size_t i = 0; i < x.size(); i += 2) x[i] = sp[(i / 2) % 6];
    }
    std::vector<uint32_t> y(x.size());
    for (int r = 0; r < t.rows; ++r) {
      std::vector<uint32_t> sb = randWords(g, W, -20, 20);
      if (t.rows == 2 && r == 1) sb[size_t(idx)] = 0x7F800000;  // inf scalar
      const uint32_t sc = sb[size_t(idx)];
      for (int j = 0; j < C; ++j) y[size_t(r * C + j)] = fp32Mul(x[size_t(r * C + j)], sc);
      sim.in[1].push_back(dataBeat(sb, (g() & 1u) != 0, int(g() % 8)));
      for (int k = 1; k < n; ++k) sim.in[1].push_back(dataBeat(randWords(g, W, -20, 20), (g() & 1u) != 0, int(g() % 8)));
    }
    if (in1Stops) sim.in[1].push_back(stopBeat(1, W));
    append(sim.in[0], tileBeats(x, W, t.stop));
    const std::vector<Beat> wb = tileBeats(y, W, t.stop);
    want.insert(want.end(), wb.begin(), wb.end());
  }
  sim.in[0].push_back(doneBeat(W));
  sim.in[1].push_back(doneBeat(W));
  want.push_back(doneBeat(W));
  if (backpressure) {
    std::mt19937 r(71);
    sim.inGate = [&r](int, uint64_t) { return (r() % 3) != 0; };
    sim.outGate = [&r](uint64_t) { return (r() % 2) != 0; };
  }
  sim.start();
  REQUIRE(sim.runUntilDone(4000));
  REQUIRE(sim.out.size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    INFO("beat " << i << " got " << show(sim.out[i]) << " want " << show(want[i]));
    CHECK(sim.out[i] == want[i]);
  }
  CHECK(sim.in[0].empty());
  CHECK(sim.in[1].empty());
  if (checkTiming && n > 1) {
    // A row's last in0 beat takes the in1 row's first beat; the other n - 1 are dropped one
    // per cycle after it, so the next row's first in0 beat comes n cycles after (no STOPs here).
    size_t i0 = 0;
    for (const RsTile& t : seq)
      for (int r = 0; r < t.rows; ++r) {
        i0 += size_t(C / W);
        if (i0 < sim.inCyc[0].size() - 1) CHECK(sim.inCyc[0][i0] - sim.inCyc[0][i0 - 1] == uint64_t(n));
      }
  } else if (checkTiming) {
    // One register stage; with in1 ready with the row's scalar, one in0 beat per cycle.
    for (size_t i = 0; i < want.size(); ++i) CHECK(sim.outCyc[i] == sim.inCyc[0][i] + 1);
    if (!in1Stops) CHECK(sim.inCyc[0].back() - sim.inCyc[0].front() == want.size() - 1);
    // in1 beats are consumed with the last beat of their row (and DONE with DONE).
    size_t i0 = 0;
    std::vector<uint64_t> rowEnds;
    for (const RsTile& t : seq) {
      if (t.stopBeat) {
        ++i0;
        continue;
      }
      for (int r = 0; r < t.rows; ++r) {
        i0 += size_t(C / W);
        rowEnds.push_back(sim.inCyc[0][i0 - 1]);
      }
    }
    rowEnds.push_back(sim.inCyc[0].back());
    if (!in1Stops) CHECK(sim.inCyc[1] == rowEnds);
  }
}

}  // namespace

TEST_CASE("sg_cu rowscale: per-row fp32 scalar, STOP / DONE, in1 stops ignored", "[rtl][cu][rowscale]") {
  const std::vector<RsTile> seq = {{false, 0, 3}, {false, 1, 1}, {true, 1, 0}, {false, 2, 2},
                                   {false, 0, 4}, {true, 2, 0}, {false, 1, 3}};
  SECTION("C = 8 (2 beats per row), idx 2, fp32 unit, timing") { rowscaleCase<Vsg_cu_fp32>(8, 2, seq, false, false, true); }
  SECTION("C = 4 (1 beat per row), idx 0, bf16 unit (still an fp32 multiply), timing") {
    rowscaleCase<Vsg_cu_bf16>(4, 0, seq, false, false, true);
  }
  SECTION("C = 12, idx 3, STOP beats on in1 are dropped") { rowscaleCase<Vsg_cu_fp32>(12, 3, seq, true, false, true); }
  SECTION("back-pressure") { rowscaleCase<Vsg_cu_fp32>(8, 1, seq, true, true, false); }
  SECTION("back-pressure, bf16 unit") { rowscaleCase<Vsg_cu_bf16>(4, 3, seq, false, true, false); }
  // b's rows of several beats (field n), as the single-pass attention graph's recip(l) rows
  const std::vector<RsTile> tiles = {{false, 0, 3}, {false, 1, 2}, {false, 2, 1}};
  SECTION("in1 rows of 3 beats, timing") { rowscaleCase<Vsg_cu_fp32>(8, 0, tiles, false, false, true, 3); }
  SECTION("in1 rows of 2 beats, STOPs, back-pressure") { rowscaleCase<Vsg_cu_fp32>(4, 0, seq, true, true, false, 2); }
}

// ==================================================================== Scan, Expand, Parallelize
// Golden streams from the functional model (generator/model/routing_ops.cpp: scanAdd, expand,
// parallelize, the code `stepgen model` runs), turned into beats by the packing rule.
namespace {

using stepgen::Token;
using stepgen::TokenStream;

/// A stream from a compact spec: s >= 0 is a rows x cols tile of random words with stop s,
/// s < 0 is STOP(-s). No DONE (see done()).
TokenStream makeToks(std::mt19937& g, const std::vector<int>& spec, int rows, int cols) {
  TokenStream r;
  for (int s : spec) {
    if (s < 0) r.push_back(Token::stopOnly(-s));
    else r.push_back(Token::tile(rows, cols, randWords(g, size_t(rows * cols), -6, 6), s));
  }
  return r;
}
TokenStream done(TokenStream s) {
  s.push_back(Token::done());
  return s;
}
TokenStream cat(TokenStream a, const TokenStream& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

/// Beats of a token stream on a W-word link (docs/hardware.md section 1).
std::vector<Beat> beatsOf(const TokenStream& s) {
  std::vector<Beat> r;
  for (const Token& t : s) {
    if (t.kind == Token::Kind::Data) appendBeats(r, packTile(*t.data, t.stop));
    else if (t.kind == Token::Kind::Stop) r.push_back(stopBeat(t.stop, W));
    else r.push_back(doneBeat(W));
  }
  return r;
}

struct RunOut {
  std::vector<Beat> out;
  std::vector<uint64_t> outCyc, inCyc[2];
  bool rest0 = true, rest1 = true;  ///< every input beat was consumed
};

/// Runs one context over the given input beats. bpSeed != 0: random valid on both inputs
/// (2 of 3 cycles) and random ready on the output (1 of 2). outBlock: the output is not
/// ready before this cycle.
template <class V>
RunOut runCu(const CfgVec& c, const std::vector<Beat>& in0, const std::vector<Beat>& in1, unsigned bpSeed,
             uint64_t outBlock = 0) {
  StreamSim<V, 2> sim(W);
  sim.config(c);
  sim.in[0].assign(in0.begin(), in0.end());
  sim.in[1].assign(in1.begin(), in1.end());
  std::mt19937 r(bpSeed);
  if (bpSeed != 0) {
    sim.inGate = [&r](int, uint64_t) { return (r() % 3) != 0; };
    sim.outGate = [&r, outBlock](uint64_t cy) { return cy >= outBlock && (r() % 2) != 0; };
  } else if (outBlock != 0) {
    sim.outGate = [outBlock](uint64_t cy) { return cy >= outBlock; };
  }
  sim.start();
  REQUIRE(sim.runUntilDone(20000));
  RunOut o;
  o.out = sim.out;
  o.outCyc = sim.outCyc;
  o.inCyc[0] = sim.inCyc[0];
  o.inCyc[1] = sim.inCyc[1];
  o.rest0 = sim.in[0].empty();
  o.rest1 = sim.in[1].empty();
  return o;
}

/// Scan(add, b) context: func 8, b = accum_b, tiles of oBeats beats (dyn: up to `last`),
/// running tile in bank o_base0.
CfgVec scanCfg(int b, int oBeats, bool dyn) {
  CfgVec c = newCfg();
  setSimple(c, 0, int(stepgen::CuFunc::Scan), b, oBeats, 100, 0);
  c.set(0, "dyn_m", dyn ? 1u : 0u);
  return c;
}

template <class V>
void scanCase(const TokenStream& in, int b, int oBeats, bool dyn, unsigned bpSeed) {
  stepgen::enableFtzDaz();
  const std::vector<Beat> want = beatsOf(stepgen::scanAdd(in, b));
  const RunOut r = runCu<V>(scanCfg(b, oBeats, dyn), beatsOf(in), {}, bpSeed);
  requireBeats(r.out, want);
  CHECK(r.rest0);
}

}  // namespace

TEST_CASE("sg_cu scan(add): running sums, stop levels, empty groups, back-pressure", "[rtl][cu][scan]") {
  std::mt19937 g(91);
  // Tiles of 2x4 words (2 beats). Groups of every level, STOP-only groups at levels 1..3,
  // a STOP inside a group (level 1 < b = 2), and two consecutive tiles of special values
  // (signed zeros, subnormals, overflow to inf, inf + -inf, NaN).
  const std::vector<int> spec = {0, 0, 1, -1, 0, 2, -2, 0, 1, -1, 0, 0, 3, -3, -1, 0, 2, 1, 0, 3};
  TokenStream in = makeToks(g, spec, 2, 4);
  in[11] = Token::tile(2, 4, {0x00000000, 0x80000000, 0x00000001, 0x807FFFFF, 0x7F7FFFFF, 0x7F800000,
                              0xFF800000, 0x7FC00001}, in[11].stop);
  in[12] = Token::tile(2, 4, {0x80000000, 0x80000000, 0x00000001, 0x3F800000, 0x7F7FFFFF, 0xFF800000,
                              0xFF800000, 0x00000000}, in[12].stop);
  in = done(in);
  for (int b : {0, 1, 2, 3}) {
    DYNAMIC_SECTION("b = " << b) {
      scanCase<Vsg_cu_fp32>(in, b, 2, false, 0);
      scanCase<Vsg_cu_bf16>(in, b, 2, false, 0);
      scanCase<Vsg_cu_fp32>(in, b, 2, false, 17u + unsigned(b));
    }
  }
}

TEST_CASE("sg_cu scan(add) dyn_m: tile length from last, partial beats", "[rtl][cu][scan][dyn]") {
  std::mt19937 g(92);
  // b = 1; per group one tile shape: 3x2 (6 words: 2 beats, the second half zero), 1x4
  // (1 beat), 5x3 (15 words: 4 beats); an empty group between them.
  TokenStream in = cat(makeToks(g, {0, 0, 0, 1}, 3, 2), makeToks(g, {-1, 0, 2}, 1, 4));
  in = done(cat(in, makeToks(g, {0, 1, -2, 0, 0, 2}, 5, 3)));
  scanCase<Vsg_cu_fp32>(in, 1, 0, true, 0);
  scanCase<Vsg_cu_fp32>(in, 1, 0, true, 23);
  scanCase<Vsg_cu_bf16>(in, 1, 0, true, 24);
  // b = 2: the shape changes only between level-2 groups; STOP(1) inside a group is kept.
  const TokenStream in2 =
      done(cat(makeToks(g, {0, 1, 0, 2}, 3, 2), makeToks(g, {-1, -2, 0, 1, -1, 0, 2}, 5, 3)));
  scanCase<Vsg_cu_fp32>(in2, 2, 0, true, 0);
  scanCase<Vsg_cu_bf16>(in2, 2, 0, true, 25);
}

TEST_CASE("sg_cu scan(add) timing: a beat accepted in cycle c is valid in c+1", "[rtl][cu][scan][timing]") {
  stepgen::enableFtzDaz();
  std::mt19937 g(93);
  const TokenStream in = done(makeToks(g, {0, 1, -1, 0, 0, 2, 1}, 2, 4));
  const RunOut r = runCu<Vsg_cu_fp32>(scanCfg(1, 2, false), beatsOf(in), {}, 0);
  requireBeats(r.out, beatsOf(stepgen::scanAdd(in, 1)));
  REQUIRE(r.inCyc[0].size() == r.out.size());
  for (size_t i = 0; i < r.out.size(); ++i) CHECK(r.outCyc[i] == r.inCyc[0][i] + 1);
  CHECK(r.inCyc[0].back() - r.inCyc[0].front() == r.out.size() - 1);  // one beat per cycle
}

// ------------------------------------------------------------------ Expand
namespace {

/// The data stream Expand(b) needs for `ref` (docs/step_semantics.md#expand: data has ref's shape with the inner
/// b dims of size 1): b = 0, one token per ref token (a tile for a tile, the same STOP for a
/// STOP); b >= 1, one tile per inner-b group of ref with the group's closing stop, or, with
/// emptyAsStop, STOP(close) for a group without elements.
TokenStream expandData(std::mt19937& g, const TokenStream& ref, int b, int rows, int cols, bool emptyAsStop) {
  TokenStream d;
  bool any = false;
  for (const Token& t : ref) {
    if (t.kind == Token::Kind::Done) break;
    if (b == 0) {
      if (t.kind == Token::Kind::Stop) d.push_back(t);
      else d.push_back(Token::tile(rows, cols, randWords(g, size_t(rows * cols)), t.stop));
      continue;
    }
    any = any || t.kind == Token::Kind::Data;
    if (t.stop >= b) {
      if (!any && emptyAsStop) d.push_back(Token::stopOnly(t.stop));
      else d.push_back(Token::tile(rows, cols, randWords(g, size_t(rows * cols)), t.stop));
      any = false;
    }
  }
  return done(d);
}

struct ExpandSpec {
  std::vector<int> ref;  ///< makeToks spec of the reference
  int b;
  int rr, rc;            ///< ref tile shape
  int dr, dc;            ///< data tile shape
  bool emptyAsStop = false;
  int promoteRef = -1;   ///< >= 0: in1's stop map is Promote at this rank (the model sees it applied)
};

CfgVec expandCfg(int b, int promoteRef) {
  CfgVec c = newCfg();
  setSimple(c, 0, int(stepgen::CuFunc::Expand), b);
  c.set(0, "a_base0", 16);
  if (promoteRef >= 0) {
    uint64_t m = 0;
    for (int s = 0; s < 8; ++s) m |= uint64_t(std::min(stepgen::promoteStop(s, promoteRef), 7)) << (3 * s);
    c.set(0, "in1_stopmap", m);
  }
  return c;
}

template <class V>
void expandCase(const ExpandSpec& x, unsigned seed, unsigned bpSeed) {
  std::mt19937 g(seed);
  const TokenStream refIn = done(makeToks(g, x.ref, x.rr, x.rc));
  TokenStream ref = refIn;  // as the unit sees it after in1's stop map
  if (x.promoteRef >= 0)
    for (Token& t : ref)
      if (t.kind != Token::Kind::Done) t.stop = stepgen::promoteStop(t.stop, x.promoteRef);
  const TokenStream data = expandData(g, ref, x.b, x.dr, x.dc, x.emptyAsStop);
  const std::vector<Beat> want = beatsOf(stepgen::expand(data, ref, x.b));
  const RunOut r = runCu<V>(expandCfg(x.b, x.promoteRef), beatsOf(data), beatsOf(refIn), bpSeed);
  requireBeats(r.out, want);
  CHECK(r.rest0);
  CHECK(r.rest1);
}

}  // namespace

TEST_CASE("sg_cu expand: broadcast to the ref's inner b dims, empty groups, back-pressure",
          "[rtl][cu][expand]") {
  // Ref with groups at levels 1..3, empty groups (STOP-only) at levels 1..3, an empty inner
  // group inside a non-empty one (STOP(1) with b = 2).
  const std::vector<int> ref = {0, 0, 1, -1, 0, 2, -2, 0, 1, -1, 0, 0, 3, -3, -1, 0, 2, 0, 1, 0, 3};
  const std::vector<ExpandSpec> cases = {
      {ref, 1, 1, 4, 1, 4},              // one-beat ref and data tiles
      {ref, 2, 3, 4, 2, 4},              // ref 3 beats, data 2 beats
      {ref, 3, 1, 4, 3, 3},              // data 9 words: 3 beats, the last partial
      {ref, 0, 2, 4, 1, 2},              // b = 0: element by element, ref STOPs pair with data STOPs
      {ref, 1, 2, 2, 5, 4, true},        // empty groups of data given as STOP beats
      {ref, 2, 1, 4, 1, 4, true},
      {ref, 1, 1, 4, 1, 4, false, 0},    // in1 stop map Promote(0): every ref tile closes a group
      {ref, 2, 2, 4, 1, 4, false, 1},    // in1 stop map Promote(1)
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    DYNAMIC_SECTION("case " << i << " b = " << cases[i].b) {
      expandCase<Vsg_cu_fp32>(cases[i], 100u + unsigned(i), 0);
      expandCase<Vsg_cu_bf16>(cases[i], 200u + unsigned(i), 300u + unsigned(i));
      expandCase<Vsg_cu_fp32>(cases[i], 400u + unsigned(i), 500u + unsigned(i));
    }
  }
}

TEST_CASE("sg_cu expand timing", "[rtl][cu][expand][timing]") {
  std::mt19937 g(94);
  SECTION("one-beat tiles: a ref beat accepted in c is valid in c+1, one per cycle") {
    // b = 1: groups of 3, 1, 2 ref tiles. The next data tile loads in the cycle the group's
    // closing ref beat is accepted, so the ref stream never waits after the first tile.
    const TokenStream ref = done(makeToks(g, {0, 0, 1, 1, 0, 2}, 1, 4));
    const TokenStream data = expandData(g, ref, 1, 1, 4, false);
    const RunOut r = runCu<Vsg_cu_fp32>(expandCfg(1, -1), beatsOf(data), beatsOf(ref), 0);
    requireBeats(r.out, beatsOf(stepgen::expand(data, ref, 1)));
    REQUIRE(r.inCyc[1].size() == r.out.size());
    for (size_t i = 0; i < r.out.size(); ++i) CHECK(r.outCyc[i] == r.inCyc[1][i] + 1);
    CHECK(r.inCyc[1].front() == r.inCyc[0].front() + 1);  // the first tile is held from c+1
    CHECK(r.inCyc[1].back() - r.inCyc[1].front() == r.out.size() - 1);
    // data tile k+1 is accepted with the ref beat closing group k (ref beats 2, 3)
    CHECK(r.inCyc[0][1] == r.inCyc[1][2]);
    CHECK(r.inCyc[0][2] == r.inCyc[1][3]);
  }
  SECTION("ref tiles of R beats, data tiles of D beats: max(R, D) cycles per copy") {
    for (auto [R, D] : {std::pair{3, 2}, std::pair{1, 3}, std::pair{2, 2}}) {
      // One data tile (b = 1, one group of 4 ref tiles).
      const TokenStream ref = done(makeToks(g, {0, 0, 0, 1}, R, 4));
      const TokenStream data = expandData(g, ref, 1, D, 4, false);
      const RunOut r = runCu<Vsg_cu_fp32>(expandCfg(1, -1), beatsOf(data), beatsOf(ref), 0);
      requireBeats(r.out, beatsOf(stepgen::expand(data, ref, 1)));
      // The data tile's last beat is accepted in c = inCyc0[D-1]; copy beat 0 is sent in c+1
      // and valid in c+2. Copies 1..3 end max(R, D) cycles after each other (copy 0 may end
      // earlier: the ref beats before its last are dropped while the tile loads).
      INFO("R = " << R << ", D = " << D);
      const uint64_t c = r.inCyc[0][size_t(D - 1)];
      CHECK(r.outCyc[0] == c + 2);
      for (int k = 1; k < 4; ++k)
        CHECK(r.outCyc[size_t(k * D + D - 1)] - r.outCyc[size_t((k - 1) * D + D - 1)] ==
              uint64_t(std::max(R, D)));
      // D >= R: the beats of a copy leave in consecutive cycles (R > D: its final beat waits
      // for the ref tile's last beat)
      for (int k = 0; k < 4 && D >= R; ++k)
        for (int j = 1; j < D; ++j) CHECK(r.outCyc[size_t(k * D + j)] == r.outCyc[size_t(k * D + j - 1)] + 1);
    }
  }
}

// ------------------------------------------------------------------ Parallelize
namespace {

CfgVec parCfg(int n, int i, int level) {
  CfgVec c = newCfg();
  setSimple(c, 0, int(stepgen::CuFunc::Parallelize), level);
  c.set(0, "n", uint64_t(n));
  c.set(0, "idx_word", uint64_t(i));
  return c;
}

/// Every output i < n (and one i >= n, which gets only DONE) against the model.
template <class V>
void parCase(const TokenStream& in, int n, int level, unsigned bpSeed) {
  const std::vector<TokenStream> want = stepgen::parallelize(in, n);
  for (int i = 0; i <= n; ++i) {
    INFO("output " << i << " of " << n);
    const RunOut r = runCu<V>(parCfg(n, i, level), beatsOf(in), {}, bpSeed ? bpSeed + unsigned(i) : 0u);
    requireBeats(r.out, i < n ? beatsOf(want[size_t(i)]) : std::vector<Beat>{doneBeat(W)});
    CHECK(r.rest0);
  }
}

}  // namespace

TEST_CASE("sg_cu parallelize: round robin of the outermost dim", "[rtl][cu][parallelize]") {
  std::mt19937 g(95);
  SECTION("rank 2, empty elements and inner empty groups, 2-beat tiles") {
    // Outermost elements (closed by stop 2): {0 0 1 0 2}, {STOP2}, {STOP1 0 2}, {0 1 -1 2},
    // {STOP2}, {0 2}, {0 0 2}: 7 elements.
    const TokenStream in =
        done(makeToks(g, {0, 0, 1, 0, 2, -2, -1, 0, 2, 0, 1, -1, -2, -2, 0, 2, 0, 0, 2}, 2, 4));
    for (int n : {1, 2, 3, 4}) {
      DYNAMIC_SECTION("n = " << n) {
        parCase<Vsg_cu_fp32>(in, n, 2, 0);
        parCase<Vsg_cu_bf16>(in, n, 2, 40u + unsigned(n));
      }
    }
  }
  SECTION("rank 0: every tile an element (level 0), 5 tiles over n = 2 and 3") {
    const TokenStream in = done(makeToks(g, {0, 0, 0, 0, 0}, 1, 4));
    parCase<Vsg_cu_fp32>(in, 2, 0, 0);
    parCase<Vsg_cu_fp32>(in, 3, 0, 51);
  }
  SECTION("rank 1, 3-beat partial tiles") {
    const TokenStream in = done(makeToks(g, {0, 1, -1, 0, 0, 1, 1, -1, 0, 1}, 3, 3));
    parCase<Vsg_cu_fp32>(in, 2, 1, 0);
    parCase<Vsg_cu_fp32>(in, 3, 1, 61);
  }
}

TEST_CASE("sg_cu parallelize timing: c -> c+1, dropped beats never wait for the output",
          "[rtl][cu][parallelize][timing]") {
  std::mt19937 g(96);
  const TokenStream in = done(makeToks(g, {0, 1, -1, 0, 1, 0, 0, 1, 1}, 2, 4));
  const std::vector<TokenStream> want = stepgen::parallelize(in, 2);
  const std::vector<Beat> inb = beatsOf(in);
  SECTION("output always ready: one input beat per cycle, passed beats valid the next cycle") {
    const RunOut r = runCu<Vsg_cu_fp32>(parCfg(2, 1, 1), inb, {}, 0);
    requireBeats(r.out, beatsOf(want[1]));
    CHECK(r.inCyc[0].back() - r.inCyc[0].front() == inb.size() - 1);
    // Elements (level 1, 2-beat tiles): e0 = beats 0..3, e1 = {STOP1} beat 4, e2 = beats
    // 5..8, e3 = beats 9..14, e4 = beats 15, 16; DONE = beat 17. i = 1 passes e1, e3, DONE.
    const std::vector<size_t> passed = {4, 9, 10, 11, 12, 13, 14, 17};
    REQUIRE(inb.size() == 18);
    REQUIRE(r.out.size() == passed.size());
    for (size_t k = 0; k < passed.size(); ++k) CHECK(r.outCyc[k] == r.inCyc[0][passed[k]] + 1);
  }
  SECTION("output blocked: the dropped element 0 is consumed anyway") {
    // e0 (beats 0..3) is dropped, e1's STOP (beat 4) fills the output register, e2 (beats
    // 5..8) is dropped while the output is blocked; e3's first beat (9) waits for it.
    const RunOut r = runCu<Vsg_cu_fp32>(parCfg(2, 1, 1), inb, {}, 0, 40);
    requireBeats(r.out, beatsOf(want[1]));
    const uint64_t t0 = r.inCyc[0][0];
    for (size_t k = 1; k <= 8; ++k) CHECK(r.inCyc[0][k] == t0 + k);
    CHECK(r.inCyc[0][9] == 40);  // the output register empties at the edge ending cycle 40
  }
}

// ------------------------------------------------------------------ Partition
namespace {

// A function configured by its `n` and `idx_word` fields (partition: outputs and this
// unit's output; select: initial tokens and value).
CfgVec nIdxCfg(stepgen::CuFunc f, int n, int idx) {
  CfgVec c = newCfg();
  setSimple(c, 0, int(f), 0);
  c.set(0, "n", uint64_t(n));
  c.set(0, "idx_word", uint64_t(idx));
  return c;
}

CfgVec ptCfg(int n, int i) { return nIdxCfg(stepgen::CuFunc::Partition, n, i); }

/// The selector as the model sees it (one-hot selector tokens, the last at stop `lastStop`)
/// and as the fabric carries it (one routing-row beat per element, the output in word 0).
struct Sel {
  TokenStream toks;
  std::vector<Beat> beats;
};
Sel selectorOf(const std::vector<int>& pick, int lastStop) {
  Sel s;
  for (size_t j = 0; j < pick.size(); ++j) {
    const int stop = j + 1 == pick.size() ? lastStop : 0;
    s.toks.push_back(stepgen::selectorToken({pick[j]}, stop));
    s.beats.push_back(dataBeat({uint32_t(pick[j]), 0xAAu, 0xBBu, 0xCCu}, true, stop));
  }
  s.toks.push_back(Token::done());
  s.beats.push_back(doneBeat(W));
  return s;
}

}  // namespace

TEST_CASE("sg_cu partition: each data element to the output its selector names", "[rtl][cu][partition]") {
  std::mt19937 g(97);
  // 7 elements of 2-beat tiles (a rank-1 stream: the last at stop 1) and a STOP 2 of an outer
  // dim (dropped); selectors 1 0 2 1 1 0 2.
  const TokenStream data = done(makeToks(g, {0, 0, 0, 0, 0, 0, 1, -2}, 2, 4));
  const Sel sel = selectorOf({1, 0, 2, 1, 1, 0, 2}, 1);
  const std::vector<TokenStream> want = stepgen::partition(data, sel.toks, 3, 0);
  REQUIRE(want[1].size() == 4);  // by hand: elements 0, 3, 4 and DONE
  for (int i = 0; i < 3; ++i) {
    for (unsigned seed : {0u, 70u + unsigned(i)}) {
      INFO("output " << i << ", back-pressure seed " << seed);
      const RunOut r = runCu<Vsg_cu_fp32>(ptCfg(3, i), beatsOf(data), sel.beats, seed);
      requireBeats(r.out, beatsOf(want[size_t(i)]));
      CHECK(r.rest0);
      CHECK(r.rest1);
    }
  }
}

TEST_CASE("sg_cu partition timing: selector j after element j-1, its element the cycle after",
          "[rtl][cu][partition][timing]") {
  std::mt19937 g(98);
  const TokenStream data = done(makeToks(g, {0, 0, 0, 1}, 2, 4));  // 4 elements of 2 beats
  const Sel sel = selectorOf({0, 1, 1, 0}, 1);
  const RunOut r = runCu<Vsg_cu_fp32>(ptCfg(2, 1), beatsOf(data), sel.beats, 0);
  requireBeats(r.out, beatsOf(stepgen::partition(data, sel.toks, 2, 0)[1]));
  // Selector j is taken the cycle after element j-1's last beat (beat 2j-1); the element's
  // first beat the cycle after its selector, its second the next: 3 cycles per element.
  for (size_t j = 0; j < 4; ++j) {
    INFO("element " << j);
    if (j > 0) CHECK(r.inCyc[1][j] == r.inCyc[0][2 * j - 1] + 1);
    CHECK(r.inCyc[0][2 * j] == r.inCyc[1][j] + 1);
    CHECK(r.inCyc[0][2 * j + 1] == r.inCyc[0][2 * j] + 1);
  }
  // Output 1 passes elements 1 and 2: each beat valid the cycle after it was taken; the
  // DONEs are taken together, the output DONE valid the cycle after.
  REQUIRE(r.out.size() == 5);
  for (size_t k = 0; k < 4; ++k) CHECK(r.outCyc[k] == r.inCyc[0][2 + k] + 1);
  CHECK(r.inCyc[0].back() == r.inCyc[1].back());
  CHECK(r.outCyc[4] == r.inCyc[0].back() + 1);
}

// A fed-back selector (docs/graph_format.md#feedback-streams) is longer than the data: its
// spare elements are drained after the data DONE, and its DONE comes much later (after the
// regions the partition feeds finished), so the output DONE must not wait for it.
namespace {

/// A partition run (output 1 of 2) whose selector DONE is held back until `selDoneFrom` and
/// whose output is not ready in the cycles [outBlockFrom, outBlockTo); also the cycle after
/// which the unit reported done (its context ended in the cycle before).
struct PtDrainRun {
  RunOut r;
  uint64_t doneAfter = 0;
};
PtDrainRun runPtDrain(const std::vector<Beat>& data, const std::vector<Beat>& sel, uint64_t selDoneFrom,
                      uint64_t outBlockFrom, uint64_t outBlockTo) {
  StreamSim<Vsg_cu_fp32, 2> sim(W);
  sim.config(ptCfg(2, 1));
  sim.in[0].assign(data.begin(), data.end());
  sim.in[1].assign(sel.begin(), sel.end());
  sim.inGate = [&sim, selDoneFrom](int port, uint64_t cy) {
    return port != 1 || sim.in[1].front().kind != DONE || cy >= selDoneFrom;
  };
  sim.outGate = [outBlockFrom, outBlockTo](uint64_t cy) { return cy < outBlockFrom || cy >= outBlockTo; };
  sim.start();
  REQUIRE(sim.runUntilDone(2000));
  PtDrainRun o;
  o.r.out = sim.out, o.r.outCyc = sim.outCyc, o.r.inCyc[0] = sim.inCyc[0], o.r.inCyc[1] = sim.inCyc[1];
  o.r.rest0 = sim.in[0].empty(), o.r.rest1 = sim.in[1].empty();
  o.doneAfter = sim.cyc;
  return o;
}

}  // namespace

TEST_CASE("sg_cu partition: a longer selector is drained after the data DONE, which does not wait for it",
          "[rtl][cu][partition]") {
  std::mt19937 g(93);
  const TokenStream data = done(makeToks(g, {0, 0, 0, 1}, 2, 4));  // 4 elements of 2 beats
  // Selector: 0 1 1 0 for the elements, then the spares 1, STOP 1, 0 (as a feedback cycle's
  // initial tokens and region-free signals leave them), then DONE.
  Sel sel = selectorOf({0, 1, 1, 0, 1}, 0);
  sel.toks.insert(sel.toks.end() - 1, {Token::stopOnly(1), stepgen::selectorToken({0}, 0)});
  sel.beats.insert(sel.beats.end() - 1, {stopBeat(1, W), dataBeat({0u, 0xAAu, 0xBBu, 0xCCu}, true, 0)});
  size_t starved = 99;
  const std::vector<TokenStream> want = stepgen::partition(data, sel.toks, 2, 0, &starved);
  REQUIRE(starved == 0);
  SECTION("outputs equal the model's, under random back-pressure") {
    for (int i = 0; i < 2; ++i)
      for (unsigned seed : {0u, 80u + unsigned(i)}) {
        INFO("output " << i << ", back-pressure seed " << seed);
        const RunOut r = runCu<Vsg_cu_fp32>(ptCfg(2, i), beatsOf(data), sel.beats, seed);
        requireBeats(r.out, beatsOf(want[size_t(i)]));
        CHECK(r.rest0);
        CHECK(r.rest1);
      }
  }
  SECTION("timing: the output DONE follows the data DONE, the context ends with the selector DONE") {
    // By hand, RUN from cycle 2 (start 0, INIT 1), both inputs there from the start, the
    // selector DONE only from cycle 60. Per element: selector, then its 2 beats:
    //   S0 2, e0 3 4 | S1 5, e1 6 7 | S2 8, e2 9 10 | S3 11, e3 12 13.
    // Cycle 14: no element open, so the spare S4 is taken; the data DONE is at in0's head
    // with the output free: it is taken too (output DONE valid 15). The selector DONE is not
    // at the head, so the drain takes STOP 1 in 15, the spare 0 in 16, the DONE in 60.
    // Output 1 passes e1 and e2: valid 7 8 and 10 11.
    const std::vector<Beat> db = beatsOf(data);
    const PtDrainRun x = runPtDrain(db, sel.beats, 60, 0, 0);
    requireBeats(x.r.out, beatsOf(want[1]));
    CHECK(x.r.inCyc[0] == std::vector<uint64_t>{3, 4, 6, 7, 9, 10, 12, 13, 14});
    CHECK(x.r.inCyc[1] == std::vector<uint64_t>{2, 5, 8, 11, 14, 15, 16, 60});
    CHECK(x.r.outCyc == std::vector<uint64_t>{7, 8, 10, 11, 15});
    // The context ends in cycle 60 (done is seen after that edge), not at the output DONE.
    CHECK(x.doneAfter == 61);
  }
  SECTION("timing: the selector DONE before the output DONE is accepted: the context ends with the latter") {
    // As above, but the output is not ready in cycles 15..69: the output DONE (valid from
    // 15) is accepted in 70, the selector DONE taken in 60 meanwhile; the context ends in 70.
    const PtDrainRun x = runPtDrain(beatsOf(data), sel.beats, 60, 15, 70);
    requireBeats(x.r.out, beatsOf(want[1]));
    CHECK(x.r.inCyc[1].back() == 60);
    CHECK(x.r.outCyc.back() == 70);
    CHECK(x.doneAfter == 71);
  }
}

// ------------------------------------------------------------------ Map(select)
namespace {

CfgVec selCfg(int value, int initial) { return nIdxCfg(stepgen::CuFunc::Select, initial, value); }

/// The model's selectSignals as the unit writes it: each selector element {v} (a one-beat
/// tile holding the bit mask 1 << v) as a routing row with word 0 = v.
std::vector<Beat> selectBeats(const TokenStream& in, int value, int initial) {
  std::vector<Beat> r = beatsOf(stepgen::selectSignals(in, value, value + 1, initial));
  for (Beat& b : r)
    if (b.kind == DATA) {
      REQUIRE(b.data[0] == 1u << value);
      b.data[0] = uint32_t(value);
    }
  return r;
}

/// Tiles of 1, 3 and 2 beats (W = 4 words per beat) with STOPs between them, then DONE.
TokenStream selectInput(std::mt19937& g) {
  return done({Token::tile(1, 4, randWords(g, 4), 0), Token::stopOnly(1), Token::tile(3, 4, randWords(g, 12), 0),
               Token::stopOnly(1), Token::tile(2, 4, randWords(g, 8), 1)});
}

}  // namespace

TEST_CASE("sg_cu select: c initial region-free rows, then one per finished input tile", "[rtl][cu][select]") {
  std::mt19937 g(92);
  const TokenStream in = selectInput(g);
  for (int c : {0, 2, 5})
    for (unsigned seed : {0u, 90u + unsigned(c)}) {
      INFO("initial " << c << ", back-pressure seed " << seed);
      const RunOut r = runCu<Vsg_cu_fp32>(selCfg(3, c), beatsOf(in), {}, seed);
      requireBeats(r.out, selectBeats(in, 3, c));
      CHECK(r.rest0);
    }
  SECTION("an empty input gives the initial rows and DONE") {
    const RunOut r = runCu<Vsg_cu_bf16>(selCfg(0, 3), {doneBeat(W)}, {}, 0);
    requireBeats(r.out, selectBeats(done({}), 0, 3));
  }
}

TEST_CASE("sg_cu select timing: initial k valid in R+1+k, a tile's row the cycle after its last beat",
          "[rtl][cu][select][timing]") {
  std::mt19937 g(91);
  const TokenStream in = selectInput(g);
  // Input beats: 0 = the 1-beat tile, 1 = STOP, 2..4 = the 3-beat tile, 5 = STOP, 6..7 = the
  // 2-beat tile, 8 = DONE.
  SECTION("c = 2, never blocked") {
    // By hand: RUN from R = 2; initial rows valid in 3 and 4; in0 from R + c = 4, one beat
    // per cycle: beat b taken in 4 + b. Rows of the tiles ending at beats 0, 4, 7 valid in
    // 5, 9, 12; the DONE (taken 12) valid in 13.
    const RunOut r = runCu<Vsg_cu_fp32>(selCfg(3, 2), beatsOf(in), {}, 0);
    requireBeats(r.out, selectBeats(in, 3, 2));
    CHECK(r.inCyc[0] == std::vector<uint64_t>{4, 5, 6, 7, 8, 9, 10, 11, 12});
    CHECK(r.outCyc == std::vector<uint64_t>{3, 4, 5, 9, 12, 13});
  }
  SECTION("c = 0, output blocked before cycle 10: dropped beats are taken anyway") {
    // By hand: beat 0 (a whole tile) taken in 2, its row waits in the output register; the
    // STOP (3) and the 3-beat tile's first beats (4, 5) are dropped meanwhile; its last beat
    // waits for the register, which frees in 10: taken in 10, valid 11. Then 5..8 in 11..14.
    const RunOut r = runCu<Vsg_cu_fp32>(selCfg(3, 0), beatsOf(in), {}, 0, 10);
    requireBeats(r.out, selectBeats(in, 3, 0));
    CHECK(r.inCyc[0] == std::vector<uint64_t>{2, 3, 4, 5, 10, 11, 12, 13, 14});
    CHECK(r.outCyc == std::vector<uint64_t>{10, 11, 14, 15});
  }
}

// ------------------------------------------------------------------ EagerMerge
namespace {

CfgVec mergeCfg() {
  CfgVec c = newCfg();
  setSimple(c, 0, int(stepgen::CuFunc::Merge), 0);
  return c;
}

/// A merge run with in0 held back until cycle `in0From` (in1 from cycle 0).
RunOut runMerge(const std::vector<Beat>& in0, const std::vector<Beat>& in1, uint64_t in0From) {
  StreamSim<Vsg_cu_fp32, 2> sim(W);
  sim.config(mergeCfg());
  sim.in[0].assign(in0.begin(), in0.end());
  sim.in[1].assign(in1.begin(), in1.end());
  sim.inGate = [in0From](int port, uint64_t cy) { return port != 0 || cy >= in0From; };
  sim.start();
  REQUIRE(sim.runUntilDone(2000));
  RunOut o;
  o.out = sim.out, o.outCyc = sim.outCyc, o.inCyc[0] = sim.inCyc[0], o.inCyc[1] = sim.inCyc[1];
  o.rest0 = sim.in[0].empty(), o.rest1 = sim.in[1].empty();
  return o;
}

/// Beats of tiles taken whole in `order` (input of each tile), stops cleared, then DONE.
std::vector<Beat> merged(const std::vector<std::vector<Beat>>& tiles0, const std::vector<std::vector<Beat>>& tiles1,
                         const std::vector<int>& order) {
  std::vector<Beat> r;
  size_t next[2] = {0, 0};
  for (int p : order)
    for (Beat b : (p == 0 ? tiles0 : tiles1)[next[p]++]) {
      b.stop = 0;
      r.push_back(b);
    }
  r.push_back(doneBeat(W));
  return r;
}

}  // namespace

TEST_CASE("sg_cu merge: whole tiles in the order they arrive, in0 first on a tie", "[rtl][cu][merge]") {
  std::mt19937 g(99);
  auto tile = [&](int beats, int stop) {  // a tile of `beats` beats with random words
    std::vector<Beat> t;
    for (int k = 0; k < beats; ++k) t.push_back(dataBeat(randWords(g, W, -4, 4), k + 1 == beats, k + 1 == beats ? stop : 0));
    return t;
  };
  const std::vector<std::vector<Beat>> t0 = {tile(2, 0), tile(3, 1)}, t1 = {tile(2, 0), tile(1, 0), tile(2, 1)};
  std::vector<Beat> in0, in1;
  for (const auto& t : t0) in0.insert(in0.end(), t.begin(), t.end());
  in0.push_back(stopBeat(2, W));  // an outer stop: dropped
  for (const auto& t : t1) in1.insert(in1.end(), t.begin(), t.end());
  in0.push_back(doneBeat(W)), in1.push_back(doneBeat(W));
  SECTION("both there from the start: in0's tiles, then in1's") {
    const RunOut r = runMerge(in0, in1, 0);
    requireBeats(r.out, merged(t0, t1, {0, 0, 1, 1, 1}));
    // back to back: a tile's first beat the cycle after the previous tile's last, each beat
    // valid at the output the cycle after it was taken
    CHECK(r.inCyc[0][2] == r.inCyc[0][1] + 1);
    CHECK(r.inCyc[1][0] == r.inCyc[0][4] + 1);
    for (size_t k = 0; k < 5; ++k) CHECK(r.outCyc[k] == r.inCyc[0][k] + 1);
    CHECK(r.rest0);
    CHECK(r.rest1);
  }
  SECTION("in0 held back to cycle 5: in1's first tiles go first, in0 wins the tie at 5") {
    const RunOut r = runMerge(in0, in1, 5);
    // in1's tile 0 (2 beats) and tile 1 (1 beat) run from the first RUN cycle (2); in cycle 5
    // both heads are valid with no tile open: in0 goes, in1's last tile waits for it.
    REQUIRE(r.inCyc[1][0] == 2);
    REQUIRE(r.inCyc[1][2] == 4);
    requireBeats(r.out, merged(t0, t1, {1, 1, 0, 0, 1}));
    CHECK(r.inCyc[0][0] == 5);
    CHECK(r.inCyc[1][3] == r.inCyc[0][4] + 1);
  }
}

// ------------------------------------------------------------------ DYN = 0
TEST_CASE("sg_cu DYN = 0: scan, expand, parallelize, partition, merge, select and rowscale are unknown functions", "[rtl][cu][dyn]") {
  for (stepgen::CuFunc f : {stepgen::CuFunc::RowScale, stepgen::CuFunc::Scan, stepgen::CuFunc::Expand,
                            stepgen::CuFunc::Parallelize, stepgen::CuFunc::Partition, stepgen::CuFunc::Merge,
                            stepgen::CuFunc::Select}) {
    CfgVec c = newCfg();
    setSimple(c, 0, int(f), 1);
    StreamSim<Vsg_cu_static, 2> sim(W);
    sim.config(c);
    sim.in[0] = {dataBeat({1, 2, 3, 4}, true, 1), doneBeat(W)};
    sim.in[1] = {dataBeat({1, 2, 3, 4}, true, 1), doneBeat(W)};
    sim.start();
    // start in cycle 0, INIT in 1, RUN in 2 finishes the context: done after that edge
    REQUIRE(sim.runUntilDone(3));
    CHECK(sim.out.empty());
    CHECK(sim.in[0].size() == 2);
    CHECK(sim.in[1].size() == 2);
  }
}

TEST_CASE("sg_cu SILU = 0: silu is an unknown function, mul still works", "[rtl][cu]") {
  CfgVec c = newCfg();
  setSimple(c, 0, 2, 1);  // silu
  StreamSim<Vsg_cu_bankbf, 2> sim(W);
  sim.config(c);
  sim.in[0] = {dataBeat({1, 2, 3, 4}, true, 1), doneBeat(W)};
  sim.start();
  REQUIRE(sim.runUntilDone(3));
  CHECK(sim.out.empty());
  CHECK(sim.in[0].size() == 2);
  // The same unit multiplies (fp32, as with SILU = 1): 3.0 * 0.5 = 1.5 word by word.
  CfgVec m = newCfg();
  setSimple(m, 0, 3);
  StreamSim<Vsg_cu_bankbf, 2> sm(W);
  sm.config(m);
  sm.in[0] = {dataBeat({0x40400000u, 0x40400000u, 0x40400000u, 0x40400000u}, true, 1), doneBeat(W)};
  sm.in[1] = {dataBeat({0x3F000000u, 0x3F000000u, 0x3F000000u, 0x3F000000u}, true, 1), doneBeat(W)};
  sm.start();
  REQUIRE(sm.runUntilDone(20));
  REQUIRE(sm.out.size() == 2);
  for (int w = 0; w < W; ++w) CHECK(sm.out[0].data[size_t(w)] == 0x3FC00000u);
}

TEST_CASE("sg_cu DYN = 0 and DYN = 1 agree bit and cycle on the static functions", "[rtl][cu][dyn]") {
  stepgen::enableFtzDaz();
  std::mt19937 g(97);
  const MmShape s{4, 8, 4};
  std::vector<Beat> a, b;
  for (int t = 0; t < 4; ++t) {
    appendBeats(a, tileBeats(randWords(g, size_t(s.M * s.K)), W, t % 3));
    appendBeats(b, tileBeats(randWords(g, size_t(s.K * s.N)), W, t % 3));
    if (t == 1) {
      a.push_back(stopBeat(2, W));
      b.push_back(stopBeat(2, W));
    }
  }
  a.push_back(doneBeat(W));
  b.push_back(doneBeat(W));
  std::vector<std::pair<std::string, CfgVec>> cfgs;
  CfgVec mm = newCfg();
  setMatmul(mm, 0, s, packed(s));
  cfgs.push_back({"matmul", mm});
  for (int f : {2, 3, 4, 6}) {
    CfgVec c = newCfg();
    setSimple(c, 0, f, 1);
    cfgs.push_back({"func " + std::to_string(f), c});
  }
  CfgVec acc = newCfg();
  setSimple(acc, 0, 5, 1, 8, 128, 160);
  cfgs.push_back({"accum", acc});
  for (const auto& [name, c] : cfgs) {
    INFO(name);
    const RunOut r1 = runCu<Vsg_cu_fp32>(c, a, b, 7);
    const RunOut r0 = runCu<Vsg_cu_static>(c, a, b, 7);
    requireBeats(r0.out, r1.out);
    CHECK(r0.outCyc == r1.outCyc);
    CHECK(r0.inCyc[0] == r1.inCyc[0]);
    CHECK(r0.inCyc[1] == r1.inCyc[1]);
  }
}

// ==================================================================== banked memory
// LANES = W = 4: sg_cu_mem's banked layout (one bank per word of a beat, rows of a and of a
// transposed b rotated by their index). K is a multiple of W throughout (the mapper's M-305).
TEMPLATE_TEST_CASE("sg_cu banked memory: matmul bit-exact and on time", "[rtl][cu][banked]", Vsg_cu_bank, Vsg_cu_banks) {
  matmulExact<TestType>(false, {4, 8, 4, 4}, false, false);    // N = LANES: one row of a per pass
  matmulExact<TestType>(false, {4, 8, 2, 4}, false, true);     // N < LANES: two rows of a at one k
  matmulExact<TestType>(false, {8, 4, 1, 4}, true, false);     // N = 1: four rows of a at one k
  matmulExact<Vsg_cu_bankbf>(true, {2, 8, 8, 4}, true, true);     // N > LANES
  matmulExact<Vsg_cu_bankbf>(true, {3, 4, 4, 4}, false, false);   // 12 outputs, 3 passes
  // M=4 K=8 N=4 with 4 lanes: a 8 beats, b 8, mn 16, C = 4*8 = 32, o 4: first 8+32+2, period 32.
  const Timing t = matmulTiming<TestType>({4, 8, 4, 4}, Bases(), 4);
  CHECK(t.first == 42);
  for (uint64_t p : t.period) CHECK(p == 32);
}

TEMPLATE_TEST_CASE("sg_cu banked memory: bt and dyn_m matmul", "[rtl][cu][banked][bt][dyn]", Vsg_cu_bank, Vsg_cu_banks) {
  auto stat = [](int M) {
    return std::vector<MmItem>{{DATA, 0, M}, {DATA, 1, M}, {STOP, 1, 0}, {DATA, 2, M}, {DONE, 0, 0}};
  };
  const std::vector<MmItem> mixed = {{DATA, 0, 5}, {DATA, 1, 1}, {STOP, 1, 0}, {DATA, 0, 3},
                                     {DATA, 2, 3}, {DATA, 1, 1}, {DONE, 0, 0}};
  // N = 3, 5, 6: a pass's rows j wrap past N (j = 3, 0, 1, 2 ...), the second run reads b's copy 1.
  mmDynExact<TestType>(false, {8, 3, false, true, 4}, stat(3), false, 1100u);
  mmDynExact<Vsg_cu_bankbf>(true, {4, 5, false, true, 4}, stat(4), false, 1101u);
  mmDynExact<TestType>(false, {8, 6, true, true, 4}, mixed, false, 1102u);
  mmDynExact<Vsg_cu_bankbf>(true, {4, 6, true, true, 4}, mixed, true, 1103u);
  mmDynExact<TestType>(false, {4, 1, false, true, 4}, stat(5), false, 1104u);  // N = 1: four rows of a
  mmDynExact<TestType>(false, {8, 2, true, false, 4}, mixed, true, 1105u);    // dyn_m, N = 2
  mmDynTimingCase<TestType>({8, 6, true, true, 4}, 3);  // a 6, b 12, C = 5*8 = 40, setup 3: first 53
  mmDynTimingCase<TestType>({4, 3, false, true, 4}, 1);  // La = 3 = setup: first 3 + 4 + 1
}

// Vsg_cu_bank holds a twice (A_COPIES = 2, compute_unit.memory: banked_ragged): rows of K = 6 or
// 10 words, not whole 4-word beats, so a beat ends one row and starts the next; the rows read at
// one k start at offsets 0 and 2 of their beats, and the heads come from copy 1. The references
// are the plain loops of matmulExact / mmDynExact; the timing is the flat unit's formula.
TEMPLATE_TEST_CASE("sg_cu banked memory: matmul rows that are not whole beats", "[rtl][cu][banked][ragged]", Vsg_cu_bank, Vsg_cu_banks) {
  matmulExact<TestType>(false, {2, 6, 2, 4}, false, false);    // two rows of a at one k: 0 and 6
  matmulExact<TestType>(false, {4, 6, 2, 4}, true, false);     // two passes
  matmulExact<TestType>(false, {6, 6, 4, 4}, false, true);     // N = LANES: one row per pass
  matmulExact<TestType>(false, {4, 10, 2, 4}, false, false);   // K = 10
  const std::vector<MmItem> mixed = {{DATA, 0, 5}, {DATA, 1, 1}, {STOP, 1, 0}, {DATA, 0, 3},
                                     {DATA, 2, 3}, {DATA, 1, 1}, {DONE, 0, 0}};
  mmDynExact<TestType>(false, {6, 2, true, false, 4}, mixed, false, 1110u);  // dyn_m, partial last beats
  mmDynExact<TestType>(false, {10, 2, true, false, 4}, mixed, true, 1111u);
  // M=2 K=6 N=2, 4 lanes: a 3 beats, b 3, mn 4, one pass of C = 6, o 1: first 3 + 6 + 2, period 6.
  const Timing t = matmulTiming<TestType>({2, 6, 2, 4}, Bases(), 4);
  CHECK(t.first == 11);
  for (uint64_t p : t.period) CHECK(p == 6);
}

TEMPLATE_TEST_CASE("sg_cu banked memory: accum, scan and expand", "[rtl][cu][banked]", Vsg_cu_bank, Vsg_cu_banks) {
  std::mt19937 g(3);
  auto t = [&](int stop) { return AccIn{false, stop, randWords(g, 8)}; };
  auto s = [](int stop) { return AccIn{true, stop, {}}; };
  accumCase<TestType>(1, {t(0), t(0), t(1), t(2), s(1), s(2), t(0), s(1), t(1)}, 0);
  accumCase<Vsg_cu_bankbf>(0, {t(0), t(1), t(0), t(2)}, 1);
  std::mt19937 h(91);
  const std::vector<int> spec = {0, 0, 1, -1, 0, 2, -2, 0, 1, -1, 0, 0, 3, -3, -1, 0, 2, 1, 0, 3};
  const TokenStream in = done(makeToks(h, spec, 2, 4));
  scanCase<TestType>(in, 1, 2, false, 0);
  scanCase<TestType>(in, 2, 2, false, 19u);
  const std::vector<int> ref = {0, 0, 1, -1, 0, 2, -2, 0, 1, -1, 0, 0, 3, -3, -1, 0, 2, 0, 1, 0, 3};
  expandCase<TestType>({ref, 2, 3, 4, 2, 4}, 600u, 0);
  expandCase<Vsg_cu_bankbf>({ref, 3, 1, 4, 3, 3}, 601u, 602u);  // data 9 words: partial last beat
}

// ------------------------------------------------------------------ single-pass softmax
// Scan(max_exclusive) (func 19) and Accum(rescale_add) (func 18), against plain loops over the
// tokens (not the model's operators).
namespace {

// Per group (closed by a stop >= b): each tile becomes the running max of the tiles before it
// (words of -inf for the first); STOP and DONE tokens pass.
TokenStream refScanMaxExcl(const TokenStream& in, int b) {
  TokenStream r;
  std::vector<uint32_t> run;
  bool has = false;
  for (const Token& t : in) {
    if (t.kind != Token::Kind::Data) {
      r.push_back(t);
    } else {
      std::vector<uint32_t> o(t.data->size(), 0xFF800000u);
      if (has) o = run;
      if (!has) run = *t.data;
      else
        for (size_t i = 0; i < run.size(); ++i) run[i] = stepgen::fp32Max(run[i], (*t.data)[i]);
      has = true;
      r.push_back(Token::tile(t.rows, t.cols, o, t.stop));
    }
    if (t.kind != Token::Kind::Done && t.stop >= b) has = false;
  }
  return r;
}

// Accum(rescale_add, b) of x with scales a (same token structure): per group acc = +0, then
// acc = acc * a + x word by word (fp32 multiply, fp32 add); the group's result leaves with
// stop s - b (none if s = b); an empty group gives a zero tile. The tiles are rows x 4 words.
TokenStream refRescale(const TokenStream& x, const TokenStream& a, int b, int rows = 2) {
  TokenStream r;
  std::vector<uint32_t> acc(size_t(rows) * 4, 0u);
  bool has = false;
  for (size_t k = 0; k < x.size(); ++k) {
    const Token& t = x[k];
    if (t.kind == Token::Kind::Done) {
      r.push_back(t);
      break;
    }
    if (t.kind == Token::Kind::Data) {
      if (!has) acc.assign(acc.size(), 0u);
      for (size_t i = 0; i < acc.size(); ++i) acc[i] = fp32Add(fp32Mul(acc[i], (*a[k].data)[i]), (*t.data)[i]);
      has = true;
    }
    const stepgen::StopSplit sp = stepgen::accumStop(t.stop, b);
    if (sp.emit) {
      r.push_back(Token::tile(rows, 4, has ? acc : std::vector<uint32_t>(acc.size(), 0u), sp.outStop));
      has = false;
    }
  }
  return r;
}

/// s with every tile's words replaced by words(tile) (same shape and stop); STOP and DONE kept.
template <class F>
TokenStream mapTiles(const TokenStream& s, F words) {
  TokenStream r;
  for (const Token& t : s)
    r.push_back(t.kind == Token::Kind::Data ? Token::tile(t.rows, t.cols, words(*t.data), t.stop) : t);
  return r;
}

// Scales like the single-pass graph's (exp of a non-positive number: in [0, 1]), with +0 and
// 1.0 among them, in the same token structure as x.
TokenStream scalesLike(std::mt19937& g, const TokenStream& x) {
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  return mapTiles(x, [&](const std::vector<uint32_t>& d) {
    std::vector<uint32_t> w(d.size());
    for (size_t i = 0; i < w.size(); ++i) w[i] = i == 0 ? 0u : i == 1 ? 0x3F800000u : stepgen::floatToBits(u(g));
    return w;
  });
}

}  // namespace

TEST_CASE("sg_cu scan max exclusive: the running max before each tile, -inf first", "[rtl][cu][scan]") {
  stepgen::enableFtzDaz();
  std::mt19937 g(94);
  const TokenStream in = done(makeToks(g, {0, 0, 1, -1, 0, 2, -2, 0, 1, 0, 0, 3}, 2, 4));
  for (int b : {0, 1, 2}) {
    DYNAMIC_SECTION("b = " << b) {
      CfgVec c = newCfg();
      setSimple(c, 0, int(stepgen::CuFunc::ScanMaxExcl), b, 2, 100, 0);
      const std::vector<Beat> want = beatsOf(refScanMaxExcl(in, b));
      requireBeats(runCu<Vsg_cu_fp32>(c, beatsOf(in), {}, 0).out, want);
      const RunOut r = runCu<Vsg_cu_fp32>(c, beatsOf(in), {}, 31u + unsigned(b));
      requireBeats(r.out, want);
      CHECK(r.rest0);
    }
  }
  // Timing as scan: a beat accepted in cycle c is valid in c+1, one per cycle.
  CfgVec c = newCfg();
  setSimple(c, 0, int(stepgen::CuFunc::ScanMaxExcl), 1, 2, 100, 0);
  const RunOut r = runCu<Vsg_cu_fp32>(c, beatsOf(in), {}, 0);
  REQUIRE(r.inCyc[0].size() == r.out.size());
  for (size_t i = 0; i < r.out.size(); ++i) CHECK(r.outCyc[i] == r.inCyc[0][i] + 1);
}

TEST_CASE("sg_cu accum rescale: acc * a + x in lockstep, stop rules, empty groups, timing", "[rtl][cu]") {
  stepgen::enableFtzDaz();
  std::mt19937 g(95);
  // Tiles of 2 x 4 words (2 beats); groups closed at level 1 and 2, an absorbed STOP(1) at
  // b = 2, empty groups (STOP(1), STOP(2) with nothing accumulated).
  const TokenStream x = done(makeToks(g, {0, 0, 1, -1, 0, 2, -2, 0, 1, 0, 0, 3}, 2, 4));
  const TokenStream a = scalesLike(g, x);
  for (int b : {1, 2}) {
    DYNAMIC_SECTION("b = " << b) {
      CfgVec c = newCfg();
      setSimple(c, 0, int(stepgen::CuFunc::AccumRescale), b, 2, 200, 208);
      const std::vector<Beat> want = beatsOf(refRescale(x, a, b));
      const RunOut r = runCu<Vsg_cu_fp32>(c, beatsOf(x), beatsOf(a), 0);
      requireBeats(r.out, want);
      CHECK((r.rest0 && r.rest1));
      // Both inputs are taken in the same cycles; a group closed by the beat taken in cycle
      // t has its first output beat valid in t + 2 (as accum).
      REQUIRE(r.inCyc[0].size() == r.inCyc[1].size());
      for (size_t i = 0; i < r.inCyc[0].size(); ++i) CHECK(r.inCyc[0][i] == r.inCyc[1][i]);
      // the first group ends with beat 5 (tile 2's 2nd) at b = 1, beat 10 (the tile with stop 2) at b = 2
      CHECK(r.outCyc[0] == r.inCyc[0][b == 1 ? 5 : 10] + 2);
      const RunOut bp = runCu<Vsg_cu_fp32>(c, beatsOf(x), beatsOf(a), 41u + unsigned(b));
      requireBeats(bp.out, want);
    }
  }
  SECTION("one-beat tiles: a beat waits a cycle for the add of the one before it") {
    // Tiles of 1 x 4 words: every beat reads the word the beat before it wrote, which the
    // second stage writes a cycle after the beat is taken.
    const TokenStream x1 = done(makeToks(g, {0, 0, 0, 1, 0, 0, 1, 0, 2}, 1, 4));
    const TokenStream a1 = scalesLike(g, x1);
    CfgVec c = newCfg();
    setSimple(c, 0, int(stepgen::CuFunc::AccumRescale), 1, 1, 200, 208);
    const std::vector<Beat> want = beatsOf(refRescale(x1, a1, 1, 1));
    const RunOut r = runCu<Vsg_cu_fp32>(c, beatsOf(x1), beatsOf(a1), 0);
    requireBeats(r.out, want);
    CHECK((r.rest0 && r.rest1));
    // Beats 0..3 (one group) are taken 2 cycles apart; beat 4 opens the other bank and is
    // taken the cycle after beat 3. The group closed by beat 3 drains a cycle late: its
    // output is valid 3 cycles after that beat.
    REQUIRE(r.inCyc[0].size() == x1.size());
    for (size_t i = 1; i < 4; ++i) CHECK(r.inCyc[0][i] == r.inCyc[0][i - 1] + 2);
    CHECK(r.inCyc[0][4] == r.inCyc[0][3] + 1);
    CHECK(r.outCyc[0] == r.inCyc[0][3] + 3);
    const RunOut bp = runCu<Vsg_cu_fp32>(c, beatsOf(x1), beatsOf(a1), 47u);
    requireBeats(bp.out, want);
  }
}

// ------------------------------------------------------------------ rowmax / rowsum
namespace {

/// rowmax / rowsum of tiles whose rows are `rowWords` words (docs/step_semantics.md): every
/// word of a row becomes the row's value; a beat's 4 words reduce as (x0 op x1) op (x2 op x3),
/// the beats of a row fold in order. Written out here for W = 4, not through rowReduce.
TokenStream refRowReduce(const TokenStream& in, int rowWords, bool sum) {
  auto op = [sum](uint32_t a, uint32_t b) { return sum ? fp32Add(a, b) : stepgen::fp32Max(a, b); };
  return mapTiles(in, [&](std::vector<uint32_t> w) {
    for (size_t row = 0; row < w.size(); row += size_t(rowWords)) {
      uint32_t acc = 0;
      for (size_t b = 0; b < size_t(rowWords); b += 4) {
        const uint32_t* x = &w[row + b];
        const uint32_t v = op(op(x[0], x[1]), op(x[2], x[3]));
        acc = b == 0 ? v : op(acc, v);
      }
      std::fill(w.begin() + std::ptrdiff_t(row), w.begin() + std::ptrdiff_t(row) + rowWords, acc);
    }
    return w;
  });
}

}  // namespace

TEST_CASE("sg_cu rowmax / rowsum: pipelined tree, rows of two beats, STOP / DONE, timing", "[rtl][cu][timing]") {
  stepgen::enableFtzDaz();
  std::mt19937 g(96);
  // Tiles of 2 x 8 words: rows of n = 2 beats (k = 8); STOPs after tiles and after a STOP.
  const TokenStream in = done(makeToks(g, {0, 1, -1, -2, 0, 2, -3, 0}, 2, 8));
  constexpr int RP = 2;  // tree stages: log2(W) for W = 4
  for (const stepgen::CuFunc f : {stepgen::CuFunc::RowMax, stepgen::CuFunc::RowSum}) {
    DYNAMIC_SECTION("func " << int(f)) {
      CfgVec c = newCfg();
      setSimple(c, 0, int(f));
      c.set(0, "k", 8);
      c.set(0, "n", 2);
      const std::vector<Beat> want = beatsOf(refRowReduce(in, 8, f == stepgen::CuFunc::RowSum));
      const RunOut r = runCu<Vsg_cu_fp32>(c, beatsOf(in), {}, 0);
      requireBeats(r.out, want);
      CHECK(r.rest0);
      // A beat taken in cycle c reaches the fold in c + RP and leaves in c + 1 + RP: a row's
      // first beat with its last input beat, its second the cycle after. A STOP or DONE right
      // after a tile waits a cycle at the fold for the tile's last beat to leave; the stages
      // stop with it, so it and the beats taken in the RP - 1 cycles after it leave a cycle
      // later, and the input loses that cycle. Otherwise a beat per cycle in.
      REQUIRE(r.inCyc[0].size() == want.size());
      std::vector<uint64_t> waits;  // the cycles tokens that wait were taken in
      for (size_t i = 1; i < want.size(); ++i)
        if (want[i].kind != DATA && want[i - 1].kind == DATA) waits.push_back(r.inCyc[0][i]);
      auto late = [&](uint64_t c) {
        return uint64_t(std::count_if(waits.begin(), waits.end(), [&](uint64_t t) { return t <= c && c < t + RP; }));
      };
      size_t pos = 0;  // the beat's place in its run of DATA beats (rows start at even places)
      for (size_t i = 0; i < want.size(); ++i, ++pos) {
        if (want[i].kind != DATA) {
          CHECK(r.outCyc[i] == r.inCyc[0][i] + 1 + RP + late(r.inCyc[0][i]));
          pos = size_t(-1);
        } else if (pos % 2 == 0) {
          CHECK(r.outCyc[i] == r.inCyc[0][i + 1] + 1 + RP + late(r.inCyc[0][i + 1]));
        } else {
          CHECK(r.outCyc[i] == r.outCyc[i - 1] + 1);
        }
      }
      CHECK(waits.size() == 3);
      // The DONE's wait comes after the last input beat: two lost cycles.
      CHECK(r.inCyc[0].back() - r.inCyc[0].front() == want.size() - 1 + 2);
      // Under back-pressure the stages stop together: the same beats.
      requireBeats(runCu<Vsg_cu_fp32>(c, beatsOf(in), {}, 51u).out, want);
      requireBeats(runCu<Vsg_cu_fp32>(c, beatsOf(in), {}, 52u, 30).out, want);
    }
  }
}
