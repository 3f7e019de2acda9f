// sg_mu (rtl_templates/sg_mu.sv) verilated with W=4, WORDS=256 and CPB = 1 (Vsg_mu_c1) or
// 3 (Vsg_mu_c3): Bufferize(b) + Streamify(repeat) stop vectors written by hand from
// docs/hardware.md section 2 / step.md, RepeatStatic (b = 0) against stepgen::repeatLastStop,
// empty buffers, stops below b kept, stop maps, the CPB timing, contexts, and a random
// back-pressure run against a reference.
#include <catch2/catch.hpp>

#include <random>

#include "Vsg_mu_c1.h"
#include "Vsg_mu_c3.h"
#include "common/stops.hpp"
#include "rtl_unit_util.hpp"

using namespace rtlu;

namespace {

constexpr int W = 4;

const stepgen::ConfigLayout& layout() {
  static const stepgen::ConfigLayout l = stepgen::buildConfigLayout(testArch());
  return l;
}

CfgVec muCfg(int ctx, int b, int repeat, CfgVec c = CfgVec(layout(), stepgen::UnitKind::Memory)) {
  c.set(ctx, "enable", 1);
  c.set(ctx, "b", uint64_t(b));
  c.set(ctx, "repeat", uint64_t(repeat));
  c.set(ctx, "half_words", 128);  // halves at words 0 and 128 of 256
  c.identityMap(ctx, 0);
  return c;
}

uint32_t tagOf(int tile, int beat) { return uint32_t(tile * 16 + beat); }

/// A tile of `beats` beats whose words identify it (tile, beat, word).
std::vector<Beat> tile(int id, int beats, int stop) {
  std::vector<uint32_t> w;
  for (int b = 0; b < beats; ++b)
    for (int k = 0; k < W; ++k) w.push_back(tagOf(id, b) * 8 + uint32_t(k));
  return tileBeats(w, W, stop);
}

struct Exp {
  int kind;      ///< DATA / STOP / DONE
  int tileId;    ///< DATA: which tile
  int beat;      ///< DATA: which beat of it
  bool last;
  int stop;
};

void check(const std::vector<Beat>& got, const std::vector<Exp>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    INFO("beat " << i << " got " << show(got[i]));
    CHECK(got[i].kind == want[i].kind);
    CHECK(got[i].stop == want[i].stop);
    CHECK(got[i].last == want[i].last);
    if (want[i].kind == DATA) CHECK(got[i].data[0] == tagOf(want[i].tileId, want[i].beat) * 8);
  }
}

/// Reference Bufferize(b) + Streamify(repeat) on beats (after the stop map), as specified in
/// docs/hardware.md section 2 (used for the randomised run only; the fixed cases below are
/// written by hand).
std::vector<Beat> refMu(const std::vector<Beat>& in, int b, int repeat) {
  std::vector<Beat> out, buf;
  auto emit = [&](int sref) {
    if (buf.empty() || repeat == 0) {
      out.push_back(stopBeat(b + 1 + sref, W));
    } else {
      for (int r = 0; r < repeat; ++r)
        for (size_t i = 0; i < buf.size(); ++i) {
          Beat e = buf[i];
          if (i + 1 == buf.size()) {
            e.stop = (r + 1 == repeat) ? b + 1 + sref : b;
            if (e.kind == DATA) e.last = true;
          }
          out.push_back(e);
        }
    }
    buf.clear();
  };
  for (const Beat& x : in) {
    if (x.kind == DONE) {
      out.push_back(x);
      break;
    }
    if (x.kind == DATA) {
      buf.push_back(x);
      if (x.last && x.stop >= b) emit(x.stop - b);
    } else if (x.stop < b) {
      buf.push_back(x);
    } else {
      emit(x.stop - b);
    }
  }
  return out;
}

template <class V>
void repeatStatic(int cpb, int beatsPerTile) {
  // RepeatStatic(3) = b 0, repeat 3 on one 2x3 matrix of tiles (shape [1, 2, 3], stops
  // 0 0 1 0 0 2, stepgen::stopsOfShape): each element 3 times; copies 1 and 2 carry no stop
  // (b = 0), copy 3 carries s + 1 (stepgen::repeatLastStop). Hand-written expectation:
  // element stops 0 0 1 0 0 2 -> copies (0 0 1) (0 0 1) (0 0 2) (0 0 1) (0 0 1) (0 0 3).
  const std::vector<int> inStops = stepgen::stopsOfShape({1, 2, 3});
  REQUIRE(inStops == std::vector<int>{0, 0, 1, 0, 0, 2});
  const std::vector<int> lastCopyStops = {1, 1, 2, 1, 1, 3};
  StreamSim<V, 1> sim(W);
  sim.config(muCfg(0, 0, 3));
  std::vector<Exp> want;
  for (int e = 0; e < 6; ++e) {
    for (const Beat& b : tile(e, beatsPerTile, inStops[size_t(e)])) sim.in[0].push_back(b);
    CHECK(stepgen::repeatLastStop(inStops[size_t(e)]) == lastCopyStops[size_t(e)]);
    for (int r = 0; r < 3; ++r)
      for (int k = 0; k < beatsPerTile; ++k) {
        const bool lastBeat = k + 1 == beatsPerTile;
        want.push_back({DATA, e, k, lastBeat, lastBeat && r == 2 ? lastCopyStops[size_t(e)] : 0});
      }
  }
  sim.in[0].push_back(doneBeat(W));
  want.push_back({DONE, 0, 0, false, 0});
  sim.start();
  REQUIRE(sim.runUntilDone(3000));
  check(sim.out, want);
  // Timing: the write side takes one beat every CPB cycles while it has a free half; the
  // first buffer (one tile of n = beatsPerTile beats) closes with the beat accepted in
  // cycle (n-1)*CPB; its first output beat is valid 2 cycles later; read-out beats come
  // every CPB cycles (output always ready).
  const uint64_t t0 = sim.inCyc[0][0];
  for (int k = 1; k < beatsPerTile; ++k) CHECK(sim.inCyc[0][size_t(k)] - sim.inCyc[0][size_t(k - 1)] == uint64_t(cpb));
  CHECK(sim.outCyc[0] - t0 == uint64_t((beatsPerTile - 1) * cpb + 2));
  for (size_t i = 1; i < sim.out.size(); ++i) CHECK(sim.outCyc[i] - sim.outCyc[i - 1] == uint64_t(cpb));
}

template <class V>
void bufferize(int cpb) {
  // Bufferize(1) + Streamify(2), tiles of 2 beats:
  //   buffer A = T0(S0) T1(S1)        s_ref 0: T0 T1(S1) | T0 T1(S2)      (b, then b+1+0)
  //   buffer B = T2 T3 T4(S2)         s_ref 1: T2 T3 T4(S1) | T2 T3 T4(S3)
  //   STOP(1): empty buffer           -> STOP(1+1+0) = STOP(2)
  //   STOP(2): empty buffer           -> STOP(3)
  //   buffer C = T5(S1)               -> T5(S1) | T5(S2)
  //   DONE
  StreamSim<V, 1> sim(W);
  sim.config(muCfg(0, 1, 2));
  auto add = [&](int id, int stop) {
    for (const Beat& b : tile(id, 2, stop)) sim.in[0].push_back(b);
  };
  add(0, 0);
  add(1, 1);
  add(2, 0);
  add(3, 0);
  add(4, 2);
  sim.in[0].push_back(stopBeat(1, W));
  sim.in[0].push_back(stopBeat(2, W));
  add(5, 1);
  sim.in[0].push_back(doneBeat(W));
  auto T = [](int id, int stop) {
    return std::vector<Exp>{{DATA, id, 0, false, 0}, {DATA, id, 1, true, stop}};
  };
  std::vector<Exp> want;
  for (const auto& v : {T(0, 0), T(1, 1), T(0, 0), T(1, 2), T(2, 0), T(3, 0), T(4, 1), T(2, 0),
                        T(3, 0), T(4, 3)})
    want.insert(want.end(), v.begin(), v.end());
  want.push_back({STOP, 0, 0, false, 2});
  want.push_back({STOP, 0, 0, false, 3});
  for (const auto& v : {T(5, 1), T(5, 2)}) want.insert(want.end(), v.begin(), v.end());
  want.push_back({DONE, 0, 0, false, 0});
  sim.start();
  REQUIRE(sim.runUntilDone(3000));
  check(sim.out, want);
  // Buffer A closes with its 4th beat, accepted in cycle 3*CPB: first output at 3*CPB+2.
  CHECK(sim.outCyc[0] - sim.inCyc[0][0] == uint64_t(3 * cpb + 2));
}

}  // namespace

TEST_CASE("sg_mu RepeatStatic(3), CPB 1", "[rtl][mu]") {
  repeatStatic<Vsg_mu_c1>(1, 1);
  repeatStatic<Vsg_mu_c1>(1, 2);
}
TEST_CASE("sg_mu RepeatStatic(3), CPB 3", "[rtl][mu][timing]") {
  repeatStatic<Vsg_mu_c3>(3, 1);
  repeatStatic<Vsg_mu_c3>(3, 3);
}
TEST_CASE("sg_mu Bufferize(1) + Streamify(2), CPB 1", "[rtl][mu]") { bufferize<Vsg_mu_c1>(1); }
TEST_CASE("sg_mu Bufferize(1) + Streamify(2), CPB 3", "[rtl][mu][timing]") { bufferize<Vsg_mu_c3>(3); }

TEST_CASE("sg_mu stops below b kept, stop map, repeat 1", "[rtl][mu]") {
  // Context 0: b = 2, repeat 1, in0 map Promote(0) (s -> s+1 on STOP beats and last beats).
  //   inputs T0 S0, STOP(1), T1 S1, T2 S2 become T0 S1 (< b: stored as written),
  //   STOP(2) (>= b: closes {T0}, s_ref 0), T1 S2 (closes {T1}, s_ref 0), T2 S3 (closes {T2},
  //   s_ref 1); out: T0 (last, stop b+1+0 = 3), T1 (3), T2 (2+1+1 = 4), DONE.
  // Context 1: b = 2, identity map: T3 S1, STOP(1) (both < b: stored), T4 S2 (closes, s_ref 0)
  //   -> T3 S1, STOP(1), T4 (stop 3), DONE.
  CfgVec c = muCfg(0, 2, 1);
  uint64_t promote = 0;
  for (int k = 0; k < 8; ++k) promote |= uint64_t(std::min(k + 1, 7)) << (3 * k);
  c.set(0, "in0_stopmap", promote);
  c = muCfg(1, 2, 1, c);
  StreamSim<Vsg_mu_c1, 1> sim(W);
  sim.config(c);
  auto add = [&](int id, int stop) {
    for (const Beat& b : tile(id, 1, stop)) sim.in[0].push_back(b);
  };
  add(0, 0);
  sim.in[0].push_back(stopBeat(1, W));
  add(1, 1);
  add(2, 2);
  sim.in[0].push_back(doneBeat(W));
  add(3, 1);
  sim.in[0].push_back(stopBeat(1, W));
  add(4, 2);
  sim.in[0].push_back(doneBeat(W));
  std::vector<Exp> want = {{DATA, 0, 0, true, 3}, {DATA, 1, 0, true, 3}, {DATA, 2, 0, true, 4},
                           {DONE, 0, 0, false, 0}, {DATA, 3, 0, true, 1}, {STOP, 0, 0, false, 1},
                           {DATA, 4, 0, true, 3}, {DONE, 0, 0, false, 0}};
  sim.start();
  REQUIRE(sim.runUntilDone(500));
  check(sim.out, want);
}

TEST_CASE("sg_mu contexts and done", "[rtl][mu]") {
  SECTION("nothing enabled") {
    StreamSim<Vsg_mu_c1, 1> sim(W);
    sim.config(CfgVec(layout(), stepgen::UnitKind::Memory));
    sim.start();
    CHECK(sim.top->done == 1);
  }
  SECTION("only context 1") {
    StreamSim<Vsg_mu_c1, 1> sim(W);
    sim.config(muCfg(1, 0, 2));
    for (const Beat& b : tile(0, 1, 0)) sim.in[0].push_back(b);
    sim.in[0].push_back(doneBeat(W));
    sim.start();
    CHECK(int(sim.top->ctx) == 1);
    REQUIRE(sim.runUntilDone(100));
    check(sim.out, {{DATA, 0, 0, true, 0}, {DATA, 0, 0, true, 1}, {DONE, 0, 0, false, 0}});
  }
}

TEST_CASE("sg_mu random back-pressure against the reference", "[rtl][mu]") {
  for (int b : {0, 1, 2}) {
    for (int rep : {1, 3}) {
      std::mt19937 g(unsigned(b * 10 + rep));
      StreamSim<Vsg_mu_c3, 1> sim(W);
      sim.config(muCfg(0, b, rep));
      std::vector<Beat> in;
      int id = 0;
      for (int i = 0; i < 40; ++i) {
        if (g() % 6 == 0) {
          in.push_back(stopBeat(1 + int(g() % 3), W));
          continue;
        }
        for (const Beat& x : tile(id++, 1 + int(g() % 3), int(g() % 4))) in.push_back(x);
      }
      in.push_back(stopBeat(b + 1, W));
      in.push_back(doneBeat(W));
      for (const Beat& x : in) sim.in[0].push_back(x);
      std::mt19937 r(5);
      sim.inGate = [&r](int, uint64_t) { return (r() % 3) != 0; };
      sim.outGate = [&r](uint64_t) { return (r() % 2) != 0; };
      sim.start();
      REQUIRE(sim.runUntilDone(20000));
      const std::vector<Beat> want = refMu(in, b, rep);
      INFO("b " << b << " repeat " << rep);
      REQUIRE(sim.out.size() == want.size());
      for (size_t i = 0; i < want.size(); ++i) {
        INFO("beat " << i << " got " << show(sim.out[i]) << " want " << show(want[i]));
        REQUIRE(sim.out[i] == want[i]);
      }
    }
  }
}
