// sg_cu (rtl_templates/sg_cu.sv) verilated with W=4, LANES=8, BUF_WORDS=256, in the fp32
// (Vsg_cu_fp32) and bf16_fp32 (Vsg_cu_bf16) multiply formats, driven beat by beat:
//   * matmul bit-exact against a plain C++ loop with sim/common/fp.hpp in the same order,
//     with STOP / DONE tokens, stop maps and random back-pressure;
//   * matmul timing: first output beat and steady-state cycles per tile, compute-, load-
//     and drain-bound, against max(a_beats, b_beats, passes*K, o_beats);
//   * silu / mul / add; accum (step.md stop rules, empty groups); retile; contexts.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>

#include "Vsg_cu_bf16.h"
#include "Vsg_cu_fp32.h"
#include "common/fp.hpp"
#include "common/stops.hpp"
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
  int aBeats() const { return M * K / W; }
  int bBeats() const { return K * N / W; }
  int oBeats() const { return M * N / W; }
  int passes() const { return (M * N + LANES - 1) / LANES; }
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
  const std::vector<Item> got = group(sim.out);
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("item " << i);
    CHECK(got[i].kind == want[i].kind);
    CHECK(got[i].stop == want[i].stop);
    requireWords(got[i].words, want[i].words);
  }
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
  // La..La+C-1; drain reads beat 0 in cycle La+C; it is valid in cycle La+C+1.
  SECTION("compute bound") {
    // M=4 K=8 N=4: a_beats = 32/4 = 8, b_beats = 32/4 = 8, mn = 16, passes = 16/8 = 2,
    // C = 2*8 = 16, D = 16/4 = 4. First beat at 8+16+1 = 25; period max(8,8,16,4) = 16.
    Timing t = matmulTiming<V>({4, 8, 4}, Bases(), 6);
    CHECK(t.first == 25);
    for (uint64_t p : t.period) CHECK(p == 16);
  }
  SECTION("load bound") {
    // M=8 K=4 N=1: a_beats = 32/4 = 8, b_beats = 4/4 = 1, mn = 8, passes = 1, C = 4,
    // D = 8/4 = 2. First beat at 8+4+1 = 13; period max(8,1,4,2) = 8.
    Timing t = matmulTiming<V>({8, 4, 1}, Bases(), 6);
    CHECK(t.first == 13);
    for (uint64_t p : t.period) CHECK(p == 8);
  }
  SECTION("drain bound") {
    // M=8 K=1 N=8: a_beats = 8/4 = 2, b_beats = 8/4 = 2, mn = 64, passes = 64/8 = 8,
    // C = 8*1 = 8, D = 64/4 = 16 (output banks of 64 words: o_base0 = 32, o_base1 = 96).
    // First beat at 2+8+1 = 11; period max(2,2,8,16) = 16.
    Bases b;
    b.a0 = 0;
    b.a1 = 8;
    b.b0 = 16;
    b.b1 = 24;
    b.o0 = 32;
    b.o1 = 96;
    Timing t = matmulTiming<V>({8, 1, 8}, b, 6);
    CHECK(t.first == 11);
    for (uint64_t p : t.period) CHECK(p == 16);
  }
  SECTION("balanced, inactive lanes") {
    // M=3 K=4 N=4: a_beats = 12/4 = 3, b_beats = 16/4 = 4, mn = 12, passes = 2 (lanes 4..7
    // idle in pass 1), C = 2*4 = 8, D = 12/4 = 3. First beat at 4+8+1 = 13; period
    // max(3,4,8,3) = 8.
    Timing t = matmulTiming<V>({3, 4, 4}, Bases(), 5);
    CHECK(t.first == 13);
    for (uint64_t p : t.period) CHECK(p == 8);
  }
}

// ------------------------------------------------------------------ elementwise
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
    for (int k = 0; k < W; ++k)
      r[size_t(k)] = func == 2 ? stepgen::silu(x[size_t(k)])
                   : func == 3 ? fp32Mul(x[size_t(k)], y[size_t(k)])
                               : fp32Add(x[size_t(k)], y[size_t(k)]);
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
  if (func == 2) sim.in[1].clear();  // silu reads in0 only
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
/// stepgen::accumStop (step.md: s < b absorbed, s = b no stop, s > b stop s - b); an empty
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
  const std::vector<Item> got = group(sim.out);
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("item " << i);
    CHECK(got[i].kind == want[i].kind);
    CHECK(got[i].stop == want[i].stop);
    requireWords(got[i].words, want[i].words);
  }
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
