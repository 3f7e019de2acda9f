// sg_mu (rtl_templates/sg_mu.sv) verilated with W=4, WORDS=256 and CPB = 1 (Vsg_mu_c1) or
// 3 (Vsg_mu_c3): Bufferize(b) + Streamify(repeat) stop vectors written by hand from
// docs/hardware.md section 2 / docs/step_semantics.md#repeatstatic, RepeatStatic (b = 0) against stepgen::repeatLastStop,
// empty buffers, stops below b kept, stop maps, the CPB timing, contexts, and a random
// back-pressure run against a reference.
//
// The same buffer-mode tests also run on Vsg_mu_r1 / Vsg_mu_r3 (ROUTE=1: sg_route inside,
// contexts with route = 0 must behave bit- and cycle-identically). The route mode itself
// (route = 1, through the configuration vector) is checked against refRoute(), a plain loop
// over experts and tokens written from the sg_route header (as tests/rtl/test_rtl_route.cpp
// does), with sg_route's timing formulas taken relative to the cycle sg_mu starts the
// context; and mixed with buffer-mode contexts in both orders. The combine mode (combine = 1,
// sg_combine inside) likewise against refCombine() (tests/rtl/combine_ref.hpp, written from
// the sg_combine header), its timing formulas relative to the context's start cycle, after
// and before a buffer-mode context and after a route context.
#include <catch2/catch.hpp>

#include <random>

#include "Vsg_mu_c1.h"
#include "Vsg_mu_c3.h"
#include "Vsg_mu_r1.h"
#include "Vsg_mu_r3.h"
#include "combine_ref.hpp"
#include "ir/stops.hpp"
#include "route_ref.hpp"
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

template <class V>
void stopsBelowB() {
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
  StreamSim<V, 1> sim(W);
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

template <class V>
void contextsAndDone() {
  SECTION("nothing enabled") {
    StreamSim<V, 1> sim(W);
    sim.config(CfgVec(layout(), stepgen::UnitKind::Memory));
    sim.start();
    CHECK(sim.top->done == 1);
  }
  SECTION("only context 1") {
    StreamSim<V, 1> sim(W);
    sim.config(muCfg(1, 0, 2));
    for (const Beat& b : tile(0, 1, 0)) sim.in[0].push_back(b);
    sim.in[0].push_back(doneBeat(W));
    sim.start();
    CHECK(int(sim.top->ctx) == 1);
    REQUIRE(sim.runUntilDone(100));
    check(sim.out, {{DATA, 0, 0, true, 0}, {DATA, 0, 0, true, 1}, {DONE, 0, 0, false, 0}});
  }
}

template <class V>
void randomBackPressure() {
  for (int b : {0, 1, 2}) {
    for (int rep : {1, 3}) {
      std::mt19937 g(unsigned(b * 10 + rep));
      StreamSim<V, 1> sim(W);
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

// Keep (context 0) and replay (context 1): the carry of a stream across a section switch
// (sg_mu header, "Keep and replay"). Replay emits exactly the beats keep stored (after keep's
// stop map), then DONE; keep emits nothing and ends when it takes its DONE.
template <class V>
void keepReplay(int cpb) {
  CfgVec c(layout(), stepgen::UnitKind::Memory);
  c = muCfg(0, 1, 1, c);
  c.set(0, "keep", 1);
  uint64_t promote = 0;  // s -> s + 1 on STOP beats and last beats: the stored stops
  for (int k = 0; k < 8; ++k) promote |= uint64_t(std::min(k + 1, 7)) << (3 * k);
  c.set(0, "in0_stopmap", promote);
  c = muCfg(1, 1, 1, c);
  c.set(1, "replay", 1);
  StreamSim<V, 1> sim(W);
  sim.config(c);
  auto add = [&](int id, int beats, int stop) {
    for (const Beat& b : tile(id, beats, stop)) sim.in[0].push_back(b);
  };
  add(0, 2, 0);
  add(1, 2, 1);
  sim.in[0].push_back(stopBeat(1, W));
  add(2, 3, 2);
  sim.in[0].push_back(doneBeat(W));
  const size_t nIn = sim.in[0].size();
  // Extra beats after keep's DONE: the replay context never takes them.
  add(9, 1, 0);
  // Stops raised by the promote map on last beats and STOP beats (stored as mapped).
  std::vector<Exp> want = {{DATA, 0, 0, false, 0}, {DATA, 0, 1, true, 1}, {DATA, 1, 0, false, 0},
                           {DATA, 1, 1, true, 2},  {STOP, 0, 0, false, 2}, {DATA, 2, 0, false, 0},
                           {DATA, 2, 1, false, 0}, {DATA, 2, 2, true, 3},  {DONE, 0, 0, false, 0}};
  sim.start();
  REQUIRE(sim.runUntilDone(500));
  check(sim.out, want);
  REQUIRE(sim.inCyc[0].size() == nIn);
  CHECK(int(sim.top->ctx) == 1);
  // Keep takes a beat every CPB cycles; its DONE (cycle F) ends context 0, context 1 runs
  // from F+2 and its first beat is valid in F+3, then one every CPB cycles.
  for (size_t i = 1; i < nIn; ++i) CHECK(sim.inCyc[0][i] - sim.inCyc[0][i - 1] == uint64_t(cpb));
  const uint64_t F = sim.inCyc[0][nIn - 1];
  CHECK(sim.outCyc.at(0) == F + 3);
  for (size_t i = 1; i < sim.out.size(); ++i) CHECK(sim.outCyc[i] - sim.outCyc[i - 1] == uint64_t(cpb));
  // The kept words count as held until the replay has emitted its last beat.
  CHECK(sim.top->held_words == 0);
}

template <class V>
void keepReplayBackPressure() {
  std::mt19937 g(11);
  CfgVec c = muCfg(0, 0, 1);
  c.set(0, "keep", 1);
  c = muCfg(1, 0, 1, c);
  c.set(1, "replay", 1);
  StreamSim<V, 1> sim(W);
  sim.config(c);
  std::vector<Beat> in;
  for (int id = 0; id < 20; ++id)  // 20 tiles of 1..3 beats: at most 60 of the 64 beats the buffer holds
    for (const Beat& x : tile(id, 1 + int(g() % 3), int(g() % 3))) in.push_back(x);
  for (const Beat& x : in) sim.in[0].push_back(x);
  sim.in[0].push_back(doneBeat(W));
  std::mt19937 r(7);
  sim.inGate = [&r](int, uint64_t) { return (r() % 3) != 0; };
  sim.outGate = [&r](uint64_t) { return (r() % 2) != 0; };
  sim.start();
  REQUIRE(sim.runUntilDone(20000));
  REQUIRE(sim.out.size() == in.size() + 1);
  for (size_t i = 0; i < in.size(); ++i) {
    INFO("beat " << i << " got " << show(sim.out[i]) << " want " << show(in[i]));
    REQUIRE(sim.out[i] == in[i]);
  }
  CHECK(sim.out.back().kind == DONE);
}

TEST_CASE("sg_mu stops below b kept, stop map, repeat 1", "[rtl][mu]") { stopsBelowB<Vsg_mu_c1>(); }
TEST_CASE("sg_mu contexts and done", "[rtl][mu]") { contextsAndDone<Vsg_mu_c1>(); }
TEST_CASE("sg_mu random back-pressure against the reference", "[rtl][mu]") { randomBackPressure<Vsg_mu_c3>(); }
TEST_CASE("sg_mu keep in context 0, replay in context 1, CPB 1 and 3", "[rtl][mu][timing]") {
  keepReplay<Vsg_mu_c1>(1);
  keepReplay<Vsg_mu_c3>(3);
  keepReplay<Vsg_mu_r1>(1);
}
TEST_CASE("sg_mu keep and replay under back-pressure", "[rtl][mu]") {
  keepReplayBackPressure<Vsg_mu_c3>();
  keepReplayBackPressure<Vsg_mu_r1>();
}

// ---------------------------------------------------------------- ROUTE=1 variant, route = 0
TEST_CASE("sg_mu ROUTE=1, route 0: RepeatStatic(3), CPB 1 and 3", "[rtl][mu][timing]") {
  repeatStatic<Vsg_mu_r1>(1, 1);
  repeatStatic<Vsg_mu_r1>(1, 2);
  repeatStatic<Vsg_mu_r3>(3, 1);
  repeatStatic<Vsg_mu_r3>(3, 3);
}
TEST_CASE("sg_mu ROUTE=1, route 0: Bufferize(1) + Streamify(2), CPB 1 and 3", "[rtl][mu][timing]") {
  bufferize<Vsg_mu_r1>(1);
  bufferize<Vsg_mu_r3>(3);
}
TEST_CASE("sg_mu ROUTE=1, route 0: stops below b kept, stop map, repeat 1", "[rtl][mu]") { stopsBelowB<Vsg_mu_r1>(); }
TEST_CASE("sg_mu ROUTE=1, route 0: contexts and done", "[rtl][mu]") { contextsAndDone<Vsg_mu_r1>(); }
TEST_CASE("sg_mu ROUTE=1, route 0: random back-pressure against the reference", "[rtl][mu]") {
  randomBackPressure<Vsg_mu_r3>();
}

TEST_CASE("sg_mu ROUTE=1, route 0: cycle-identical to ROUTE=0, in1 never ready", "[rtl][mu][timing]") {
  // The random run of randomBackPressure on both variants, comparing every accepted beat's
  // cycle; in1 is offered beats throughout and must never be ready.
  std::mt19937 g(11);
  std::vector<Beat> in;
  int id = 0;
  for (int i = 0; i < 30; ++i) {
    if (g() % 6 == 0) {
      in.push_back(stopBeat(1 + int(g() % 3), W));
      continue;
    }
    for (const Beat& x : tile(id++, 1 + int(g() % 3), int(g() % 4))) in.push_back(x);
  }
  in.push_back(stopBeat(2, W));
  in.push_back(doneBeat(W));
  auto run = [&](auto& sim) {
    sim.config(muCfg(1, 1, 2, muCfg(0, 1, 2)));
    for (int c = 0; c < 2; ++c)
      for (const Beat& x : in) sim.in[0].push_back(x);
    for (int i = 0; i < 4; ++i) sim.in[1].push_back(tile(99, 1, 0)[0]);
    std::mt19937 r(5);
    sim.inGate = [r](int, uint64_t) mutable { return (r() % 3) != 0; };
    std::mt19937 r2(6);
    sim.outGate = [r2](uint64_t) mutable { return (r2() % 2) != 0; };
    sim.start();
    REQUIRE(sim.runUntilDone(20000));
    CHECK(sim.inCyc[1].empty());
  };
  StreamSim<Vsg_mu_c3, 2> a(W);
  StreamSim<Vsg_mu_r3, 2> b(W);
  run(a);
  run(b);
  CHECK(a.cyc == b.cyc);
  CHECK(a.inCyc[0] == b.inCyc[0]);
  CHECK(a.outCyc == b.outCyc);
  REQUIRE(a.out.size() == b.out.size());
  for (size_t i = 0; i < a.out.size(); ++i) REQUIRE(a.out[i] == b.out[i]);
}

// ---------------------------------------------------------------- route mode (route = 1)
namespace {

/// Routing rows (in1): word j = expert of slot j, word W/2 + j = its weight; stops on the
/// rows and a STOP beat in between (both to be ignored).
std::vector<Beat> routingBeats(const RouteCase& c) {
  std::vector<Beat> r;
  for (int t = 0; t < c.B(); ++t) {
    std::vector<uint32_t> d(size_t(W), 0u);
    for (int j = 0; j < c.k; ++j) {
      d[size_t(j)] = c.ids[size_t(t)][size_t(j)];
      d[size_t(W / 2 + j)] = weightOf(t, j);
    }
    r.push_back(dataBeat(d, true, t % 2));
    if (t == 2) r.push_back(stopBeat(1, W));
  }
  r.push_back(doneBeat(W));
  return r;
}

std::vector<Beat> refRoute(const RouteCase& c) { return rtlu::refRoute(c, W); }

/// Context ctx in route mode through the configuration vector. promoteMaps: both input stop
/// maps s -> s+1 instead of the identity (route ignores stops: the result is the same).
CfgVec routeCfg(int ctx, const RouteCase& c, bool promoteMaps = false,
                CfgVec v = CfgVec(layout(), stepgen::UnitKind::Memory)) {
  v.set(ctx, "enable", 1);
  v.set(ctx, "route", 1);
  v.set(ctx, "n_exp", uint64_t(c.E));
  v.set(ctx, "k", uint64_t(c.k));
  v.set(ctx, "tile_rows", uint64_t(c.tb));
  v.set(ctx, "row_beats", uint64_t(c.rb));
  v.set(ctx, "out_meta", c.meta ? 1u : 0u);
  uint64_t promote = 0;
  for (int s = 0; s < 8; ++s) promote |= uint64_t(std::min(s + 1, 7)) << (3 * s);
  for (int p = 0; p < 2; ++p)
    v.set(ctx, "in" + std::to_string(p) + "_stopmap", promoteMaps ? promote : CfgVec::identityStopMap());
  return v;
}

void checkBeats(const std::vector<Beat>& got, size_t from, const std::vector<Beat>& want) {
  REQUIRE(got.size() >= from + want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    INFO("beat " << from + i << " got " << show(got[from + i]) << " want " << show(want[i]));
    REQUIRE(got[from + i] == want[i]);
  }
}

/// sg_route's timing (its header) with S = the cycle sg_mu starts the context: inputs from
/// S+2, d = cycle of the last needed DONE, first output beat at d+3, then one per cycle,
/// N beats ending at d+2+N; with no input gaps d = S + 2 + B (meta) or S + 2 + max(B*rb, B).
/// `first`: index of the context's first output beat; in0From / in1From: index of its first
/// beat in inCyc[0] / inCyc[1].
template <class Sim>
void checkRouteTiming(const Sim& sim, const RouteCase& c, uint64_t S, size_t first, size_t in0From, size_t in1From) {
  const uint64_t N = refRoute(c).size();
  const uint64_t B = uint64_t(c.B());
  const uint64_t d1 = sim.inCyc[1].at(in1From + size_t(B) + 1 + (c.B() > 2 ? 1 : 0) - 1);
  uint64_t d = d1;
  CHECK(sim.inCyc[1].at(in1From) == S + 2);
  if (!c.meta) {
    CHECK(sim.inCyc[0].at(in0From) == S + 2);
    d = std::max(d, sim.inCyc[0].at(in0From + size_t(B * uint64_t(c.rb))));
  }
  const uint64_t inBeats = c.meta ? B + (c.B() > 2 ? 1 : 0)
                                  : std::max<uint64_t>(B + (c.B() > 2 ? 1 : 0), B * uint64_t(c.rb));
  CHECK(d == S + 1 + inBeats + 1);
  CHECK(sim.outCyc.at(first) == d + 3);
  CHECK(sim.outCyc.at(first + N - 1) == d + 2 + N);
}

}  // namespace

TEST_CASE("sg_mu route mode: E=4 k=2 B=6, static and dynamic, data and meta", "[rtl][mu][route][timing]") {
  for (int meta = 0; meta < 2; ++meta)
    for (int tb : {2, 0})
      for (int maps = 0; maps < 2; ++maps) {
        RouteCase c = smallRoute();
        c.meta = meta != 0;
        c.tb = tb;
        INFO("meta " << meta << " tb " << tb << " promote maps " << maps);
        StreamSim<Vsg_mu_r1, 2> sim(W);
        sim.config(routeCfg(0, c, maps != 0));
        for (const Beat& b : xBeats(c, W)) sim.in[0].push_back(b);
        for (const Beat& b : routingBeats(c)) sim.in[1].push_back(b);
        bool in0Ready = false;
        sim.sample = [&] { in0Ready = in0Ready || sim.top->in0_ready; };
        sim.start();
        REQUIRE(sim.runUntilDone(2000));
        const std::vector<Beat> want = refRoute(c);
        REQUIRE(sim.out.size() == want.size());
        checkBeats(sim.out, 0, want);
        // Expert 2 gets no token: no beat names it (meta word 3).
        if (c.meta)
          for (const Beat& b : sim.out) CHECK((b.kind != DATA || b.data[3] != 2u));
        if (c.meta) {
          CHECK(sim.inCyc[0].empty());  // meta mode leaves in0 alone
          CHECK_FALSE(in0Ready);
        } else {
          CHECK(sim.inCyc[0].size() == size_t(c.B() * c.rb + 1));
        }
        checkRouteTiming(sim, c, 0, 0, 0, 0);
        // done the cycle after the DONE beat is accepted: sg_route's `done` timing.
        CHECK(sim.cyc == sim.outCyc.back() + 1);
        CHECK(int(sim.top->ctx) == 0);
        // Nothing moves afterwards.
        for (int i = 0; i < 5; ++i) sim.step();
        CHECK(sim.out.size() == want.size());
        CHECK(sim.top->done);
      }
}

TEST_CASE("sg_mu route mode under back-pressure and input gaps", "[rtl][mu][route]") {
  for (int meta = 0; meta < 2; ++meta)
    for (int tb : {2, 0}) {
      RouteCase c = smallRoute();
      c.meta = meta != 0;
      c.tb = tb;
      StreamSim<Vsg_mu_r3, 2> sim(W);
      sim.config(routeCfg(0, c));
      for (const Beat& b : xBeats(c, W)) sim.in[0].push_back(b);
      for (const Beat& b : routingBeats(c)) sim.in[1].push_back(b);
      std::mt19937 r(unsigned(3 + meta * 2 + tb));
      sim.inGate = [&r](int, uint64_t) { return r() % 3 != 0; };
      sim.outGate = [&r](uint64_t) { return r() % 2 == 0; };
      sim.start();
      REQUIRE(sim.runUntilDone(5000));
      const std::vector<Beat> want = refRoute(c);
      REQUIRE(sim.out.size() == want.size());
      checkBeats(sim.out, 0, want);
    }
}

TEST_CASE("sg_mu route in context 0, buffer mode in context 1", "[rtl][mu][route][timing]") {
  for (int meta = 0; meta < 2; ++meta) {
    RouteCase c = smallRoute();
    c.meta = meta != 0;
    c.tb = 2;
    INFO("meta " << meta);
    // Context 1: Bufferize(1) + Streamify(2) of tiles T0(S0) T1(S1), 2 beats each.
    StreamSim<Vsg_mu_r1, 2> sim(W);
    sim.config(muCfg(1, 1, 2, routeCfg(0, c)));
    if (!c.meta)
      for (const Beat& b : xBeats(c, W)) sim.in[0].push_back(b);
    const size_t in0Ctx1 = c.meta ? 0 : size_t(c.B() * c.rb + 1);
    for (const Beat& b : tile(0, 2, 0)) sim.in[0].push_back(b);
    for (const Beat& b : tile(1, 2, 1)) sim.in[0].push_back(b);
    sim.in[0].push_back(doneBeat(W));
    for (const Beat& b : routingBeats(c)) sim.in[1].push_back(b);
    const size_t in1Route = sim.in[1].size();
    // Extra in1 beats: context 1 (buffer mode) must not take them.
    for (int i = 0; i < 3; ++i) sim.in[1].push_back(tile(7, 1, 0)[0]);
    sim.start();
    REQUIRE(sim.runUntilDone(3000));
    const std::vector<Beat> want = refRoute(c);
    checkBeats(sim.out, 0, want);
    CHECK(sim.inCyc[1].size() == in1Route);
    // In meta mode context 0 leaves in0 alone, so context 1's tiles wait for it.
    checkRouteTiming(sim, c, 0, 0, 0, 0);
    const uint64_t F = sim.outCyc.at(want.size() - 1);  // route DONE accepted: context ends
    // Context 1 runs from F+2 (one INIT cycle); its 4 beats arrive one per cycle.
    CHECK(sim.inCyc[0].at(in0Ctx1) == F + 2);
    auto T = [](int id, int stop) {
      return std::vector<Exp>{{DATA, id, 0, false, 0}, {DATA, id, 1, true, stop}};
    };
    std::vector<Exp> want1;
    for (const auto& v : {T(0, 0), T(1, 1), T(0, 0), T(1, 2)}) want1.insert(want1.end(), v.begin(), v.end());
    want1.push_back({DONE, 0, 0, false, 0});
    check(std::vector<Beat>(sim.out.begin() + long(want.size()), sim.out.end()), want1);
    // Buffer closes with its 4th beat (F+5): first output 2 cycles later.
    CHECK(sim.outCyc.at(want.size()) == F + 2 + 3 + 2);
    CHECK(int(sim.top->ctx) == 1);
  }
}

TEST_CASE("sg_mu buffer mode in context 0, route in context 1", "[rtl][mu][route][timing]") {
  for (int meta = 0; meta < 2; ++meta) {
    RouteCase c = smallRoute();
    c.meta = meta != 0;
    c.tb = 0;
    INFO("meta " << meta);
    StreamSim<Vsg_mu_r1, 2> sim(W);
    sim.config(routeCfg(1, c, false, muCfg(0, 0, 2)));
    // Context 0: RepeatStatic(2) of one 1-beat tile; in1 is offered from cycle 0 but only the
    // route context takes it.
    for (const Beat& b : tile(5, 1, 0)) sim.in[0].push_back(b);
    sim.in[0].push_back(doneBeat(W));
    if (!c.meta)
      for (const Beat& b : xBeats(c, W)) sim.in[0].push_back(b);
    for (const Beat& b : routingBeats(c)) sim.in[1].push_back(b);
    sim.start();
    REQUIRE(sim.runUntilDone(3000));
    check(std::vector<Beat>(sim.out.begin(), sim.out.begin() + 3),
          {{DATA, 5, 0, true, 0}, {DATA, 5, 0, true, 1}, {DONE, 0, 0, false, 0}});
    const std::vector<Beat> want = refRoute(c);
    REQUIRE(sim.out.size() == 3 + want.size());
    checkBeats(sim.out, 3, want);
    const uint64_t F = sim.outCyc.at(2);  // context 0's DONE accepted: sg_route starts here
    checkRouteTiming(sim, c, F, 3, 2, 0);
    CHECK(sim.cyc == sim.outCyc.back() + 1);
    CHECK(int(sim.top->ctx) == 1);
  }
}

// ---------------------------------------------------------------- combine mode (combine = 1)
namespace {

/// Context ctx in combine mode through the configuration vector (k, row_beats shared with the
/// route mode). promoteMaps: both stop maps s -> s+1 (combine reads no stop: same result).
CfgVec combineCfg(int ctx, const CombineCase& c, bool promoteMaps = false,
                  CfgVec v = CfgVec(layout(), stepgen::UnitKind::Memory)) {
  v.set(ctx, "enable", 1);
  v.set(ctx, "combine", 1);
  v.set(ctx, "k", uint64_t(c.k));
  v.set(ctx, "row_beats", uint64_t(c.rb));
  uint64_t promote = 0;
  for (int s = 0; s < 8; ++s) promote |= uint64_t(std::min(s + 1, 7)) << (3 * s);
  for (int p = 0; p < 2; ++p)
    v.set(ctx, "in" + std::to_string(p) + "_stopmap", promoteMaps ? promote : CfgVec::identityStopMap());
  return v;
}

/// The combine case of sg_route's small routing (smallRoute: 14 entries, 12 written slots).
CombineCase smallCombine(int rb, std::vector<Beat>* meta) {
  RouteCase r = smallRoute();
  r.tb = 2;
  return combineFromRoute(r, W, rb, meta);
}

/// sg_combine's timing (its header) with S = the cycle sg_mu starts the context and both
/// inputs offered without gaps from S+2: entry n in S+2+n, in1's DONE in S+2+n_e, in0 beat i
/// in S+3+i, d = S + 3 + n_e*rb, first output beat at d+3, N beats ending at d+2+N.
/// `first`: index of the context's first output beat; in0From / in1From: index of its first
/// beat in inCyc[0] / inCyc[1].
template <class Sim>
void checkCombineTiming(const Sim& sim, const CombineCase& c, uint64_t S, size_t first, size_t in0From,
                        size_t in1From) {
  const uint64_t N = refCombine(c, W).size();
  const uint64_t ne = uint64_t(c.n()), rb = uint64_t(c.rb);
  for (uint64_t n = 0; n <= ne; ++n) CHECK(sim.inCyc[1].at(in1From + n) == S + 2 + n);
  for (uint64_t i = 0; i <= ne * rb; ++i) CHECK(sim.inCyc[0].at(in0From + i) == S + 3 + i);
  const uint64_t d = S + 3 + ne * rb;
  for (uint64_t i = 0; i < N; ++i) CHECK(sim.outCyc.at(first + i) == d + 3 + i);
}

}  // namespace

TEST_CASE("sg_mu buffer mode in context 0, combine in context 1", "[rtl][mu][combine][timing]") {
  for (int rb : {1, 3}) {
    INFO("row beats " << rb);
    std::vector<Beat> meta;
    const CombineCase c = smallCombine(rb, &meta);
    StreamSim<Vsg_mu_r1, 2> sim(W);
    sim.config(combineCfg(1, c, false, muCfg(0, 0, 2)));
    // Context 0: RepeatStatic(2) of one 1-beat tile; the entries are offered on in1 from
    // cycle 0 but only the combine context takes them.
    for (const Beat& b : tile(5, 1, 0)) sim.in[0].push_back(b);
    sim.in[0].push_back(doneBeat(W));
    for (const Beat& b : rowBeats(c, W)) sim.in[0].push_back(b);
    for (const Beat& b : meta) sim.in[1].push_back(b);
    sim.start();
    REQUIRE(sim.runUntilDone(3000));
    check(std::vector<Beat>(sim.out.begin(), sim.out.begin() + 3),
          {{DATA, 5, 0, true, 0}, {DATA, 5, 0, true, 1}, {DONE, 0, 0, false, 0}});
    const std::vector<Beat> want = refCombine(c, W);
    REQUIRE(sim.out.size() == 3 + want.size());
    checkBeats(sim.out, 3, want);
    const uint64_t F = sim.outCyc.at(2);  // context 0's DONE accepted: sg_combine starts here
    checkCombineTiming(sim, c, F, 3, 2, 0);
    // done the cycle after the DONE beat is accepted, as in the other modes
    CHECK(sim.cyc == sim.outCyc.back() + 1);
    CHECK(int(sim.top->ctx) == 1);
    for (int i = 0; i < 5; ++i) sim.step();
    CHECK(sim.out.size() == 3 + want.size());
    CHECK(sim.top->done);
  }
}

TEST_CASE("sg_mu combine in context 0, buffer mode in context 1", "[rtl][mu][combine][timing]") {
  for (int maps = 0; maps < 2; ++maps) {
    INFO("promote maps " << maps);
    std::vector<Beat> meta;
    const CombineCase c = smallCombine(2, &meta);
    StreamSim<Vsg_mu_r1, 2> sim(W);
    // Context 1: Bufferize(1) + Streamify(2) of tiles T0(S0) T1(S1), 2 beats each.
    sim.config(muCfg(1, 1, 2, combineCfg(0, c, maps != 0)));
    for (const Beat& b : rowBeats(c, W)) sim.in[0].push_back(b);
    const size_t in0Ctx1 = sim.in[0].size();
    for (const Beat& b : tile(0, 2, 0)) sim.in[0].push_back(b);
    for (const Beat& b : tile(1, 2, 1)) sim.in[0].push_back(b);
    sim.in[0].push_back(doneBeat(W));
    for (const Beat& b : meta) sim.in[1].push_back(b);
    const size_t in1Combine = sim.in[1].size();
    // Extra in1 beats: context 1 (buffer mode) must not take them.
    for (int i = 0; i < 3; ++i) sim.in[1].push_back(tile(7, 1, 0)[0]);
    sim.start();
    REQUIRE(sim.runUntilDone(3000));
    const std::vector<Beat> want = refCombine(c, W);
    checkBeats(sim.out, 0, want);
    CHECK(sim.inCyc[1].size() == in1Combine);
    checkCombineTiming(sim, c, 0, 0, 0, 0);
    const uint64_t F = sim.outCyc.at(want.size() - 1);  // combine DONE accepted: context ends
    CHECK(sim.inCyc[0].at(in0Ctx1) == F + 2);
    auto T = [](int id, int stop) {
      return std::vector<Exp>{{DATA, id, 0, false, 0}, {DATA, id, 1, true, stop}};
    };
    std::vector<Exp> want1;
    for (const auto& v : {T(0, 0), T(1, 1), T(0, 0), T(1, 2)}) want1.insert(want1.end(), v.begin(), v.end());
    want1.push_back({DONE, 0, 0, false, 0});
    check(std::vector<Beat>(sim.out.begin() + long(want.size()), sim.out.end()), want1);
    CHECK(int(sim.top->ctx) == 1);
  }
}

TEST_CASE("sg_mu route (meta) in context 0, combine in context 1", "[rtl][mu][route][combine][timing]") {
  // The two halves of an MoE layer time-multiplexed on one unit: context 0 emits the entries,
  // context 1 takes the same entries (as the fabric would broadcast them) and the expert
  // output rows.
  RouteCase r = smallRoute();
  r.meta = true;
  r.tb = 2;
  std::vector<Beat> meta;
  const CombineCase c = combineFromRoute(r, W, 2, &meta);
  StreamSim<Vsg_mu_r1, 2> sim(W);
  sim.config(combineCfg(1, c, false, routeCfg(0, r)));
  for (const Beat& b : routingBeats(r)) sim.in[1].push_back(b);
  const size_t in1Ctx1 = sim.in[1].size();
  for (const Beat& b : meta) sim.in[1].push_back(b);
  for (const Beat& b : rowBeats(c, W)) sim.in[0].push_back(b);
  sim.start();
  REQUIRE(sim.runUntilDone(3000));
  const std::vector<Beat> wantRoute = refRoute(r);
  checkBeats(sim.out, 0, wantRoute);
  REQUIRE(meta == wantRoute);  // context 0 emitted exactly the entries context 1 takes
  const std::vector<Beat> want = refCombine(c, W);
  REQUIRE(sim.out.size() == wantRoute.size() + want.size());
  checkBeats(sim.out, wantRoute.size(), want);
  const uint64_t F = sim.outCyc.at(wantRoute.size() - 1);
  checkCombineTiming(sim, c, F, wantRoute.size(), 0, in1Ctx1);
  CHECK(sim.cyc == sim.outCyc.back() + 1);
}

TEST_CASE("sg_mu combine mode under back-pressure and input gaps", "[rtl][mu][combine]") {
  for (int rb : {1, 4}) {
    std::vector<Beat> meta;
    const CombineCase c = smallCombine(rb, &meta);
    StreamSim<Vsg_mu_r3, 2> sim(W);
    sim.config(combineCfg(0, c, true));
    for (const Beat& b : rowBeats(c, W)) sim.in[0].push_back(b);
    for (const Beat& b : meta) sim.in[1].push_back(b);
    std::mt19937 g(unsigned(17 + rb));
    sim.inGate = [&g](int, uint64_t) { return g() % 3 != 0; };
    sim.outGate = [&g](uint64_t) { return g() % 2 == 0; };
    sim.start();
    REQUIRE(sim.runUntilDone(5000));
    const std::vector<Beat> want = refCombine(c, W);
    REQUIRE(sim.out.size() == want.size());
    checkBeats(sim.out, 0, want);
  }
}
