// sg_route (rtl_templates/sg_route.sv), the front of an MoE layer: Partition(x, selector, E,
// 0) -> per expert Reshape(tb, pad) or Promote (dynamic tiling) -> retile -> EagerMerge in
// ascending expert order. Verilated as Vsg_route_a (W=4, MAXE=8, MAXK=2, ROWW=16),
// Vsg_route_b (W=8, MAXE=16, MAXK=4, ROWW=32) and Vsg_route_c (W=16, MAXE=128, MAXK=8,
// ROWW=64), MAXT=64 each (tests/rtl_route.cmake).
//
// Expected beats come from refRoute(), a plain loop over experts and tokens written from the
// specification (not from RTL output); the small case is also checked against a hand-written
// token sequence. Timing is checked against the formula of the module header: with d = the
// cycle the last needed DONE is accepted, the first output beat is at d + 3, then one beat per
// cycle, N beats (DONE included) ending at d + 2 + N, done high after d + 2 + N.
#include <catch2/catch.hpp>

#include <random>
#include <utility>

#include "Vsg_route_a.h"
#include "Vsg_route_b.h"
#include "Vsg_route_c.h"
#include "route_ref.hpp"
#include "rtl_unit_util.hpp"

using namespace rtlu;

namespace {

using Case = RouteCase;

/// Routing rows on in1: word j = id of slot j (j < k), word W/2 + j = weight. Slots k..W/2-1
/// carry a valid-looking id (1) and words above W/2 + k junk: the unit must ignore them.
std::vector<Beat> routingBeats(const Case& c, int W) {
  std::vector<Beat> r;
  for (int t = 0; t < c.B(); ++t) {
    std::vector<uint32_t> d(size_t(W), 0xDEAD0000u + uint32_t(t));
    for (int j = 0; j < W / 2; ++j) d[size_t(j)] = j < c.k ? c.ids[size_t(t)][size_t(j)] : 1u;
    for (int j = 0; j < c.k; ++j) d[size_t(W / 2 + j)] = weightOf(t, j);
    r.push_back(dataBeat(d, true, 0));
  }
  r.push_back(doneBeat(W));
  return r;
}

struct Result {
  std::vector<Beat> out;
  std::vector<uint64_t> outCyc;
  uint64_t d = 0;         ///< cycle of the last needed DONE
  uint64_t doneCyc = 0;   ///< sim.cyc after the step in which done rose
  uint64_t firstValid = 0;
  uint32_t peak = 0;
  size_t in0Taken = 0;
  bool in0ReadySeen = false;
};

/// Runs one case. gaps: inputs valid 2 cycles in 3 (random); bp: out_ready 1 cycle in 2.
template <class V>
Result runRoute(const Case& c, int W, bool gaps, bool bp, uint32_t seed = 1) {
  StreamSim<V, 2> sim(W);
  sim.top->n_exp = uint32_t(c.E);
  sim.top->k = uint32_t(c.k);
  sim.top->tile_rows = uint32_t(c.tb);
  sim.top->row_beats = uint32_t(c.rb);
  sim.top->out_meta = c.meta ? 1 : 0;
  for (const Beat& b : routingBeats(c, W)) sim.in[1].push_back(b);
  // In meta mode x rows are offered too: the unit must leave them alone (in0_ready = 0).
  for (const Beat& b : xBeats(c, W)) sim.in[0].push_back(b);
  std::mt19937 rng(seed);
  if (gaps) sim.inGate = [&rng](int, uint64_t) { return rng() % 3 != 0; };
  if (bp) sim.outGate = [&rng](uint64_t) { return rng() % 2 == 0; };
  Result r;
  sim.sample = [&] {
    if (sim.top->in0_ready) r.in0ReadySeen = true;
  };
  sim.start();
  REQUIRE(sim.runUntilDone(200000));
  r.out = sim.out;
  r.outCyc = sim.outCyc;
  r.in0Taken = sim.inCyc[0].size();
  r.d = sim.inCyc[1].back();
  if (!c.meta) r.d = std::max(r.d, sim.inCyc[0].back());
  r.doneCyc = sim.cyc;
  r.firstValid = sim.firstOutValid;
  r.peak = sim.top->peak_words;
  // The result stays put after done: no further beat, done stays high.
  for (int i = 0; i < 5; ++i) sim.step();
  CHECK(sim.out.size() == r.out.size());
  CHECK(sim.top->done);
  return r;
}

/// Beats, peak_words, in0 use, and (unstalled runs) the timing formula of the header.
template <class V>
Result checkCase(const Case& c, int W, bool gaps = false, bool bp = false, uint32_t seed = 1) {
  INFO("E=" << c.E << " k=" << c.k << " B=" << c.B() << " tb=" << c.tb << " rb=" << c.rb
            << " meta=" << c.meta << " gaps=" << gaps << " bp=" << bp);
  const std::vector<Beat> want = refRoute(c, W);
  Result r = runRoute<V>(c, W, gaps, bp, seed);
  requireBeats(r.out, want);
  const uint32_t B = uint32_t(c.B());
  CHECK(r.peak == (c.meta ? B * 2u * uint32_t(c.k) : B * uint32_t(c.rb * W) + B * 2u * uint32_t(c.k)));
  if (c.meta) {
    CHECK(r.in0Taken == 0);
    CHECK_FALSE(r.in0ReadySeen);
  } else {
    CHECK(r.in0Taken == size_t(c.B() * c.rb + 1));
  }
  if (!gaps && !bp) {
    const uint64_t N = want.size();
    // Collection from cycle 2 (start in cycle 0), one beat per cycle on each input.
    const uint64_t inBeats = c.meta ? B : std::max<uint64_t>(B, uint64_t(B) * uint64_t(c.rb));
    CHECK(r.d == 2 + inBeats);
    CHECK(r.firstValid == r.d + 3);
    CHECK(r.outCyc.front() == r.d + 3);
    CHECK(r.outCyc.back() == r.d + 2 + N);
    CHECK(r.doneCyc == r.d + 3 + N);
    CHECK(r.doneCyc == 5 + inBeats + N);
  }
  return r;
}

/// A case: E experts, top-k, tb (0 = dynamic tiling), rb beats per x row, meta mode, ids.
Case makeCase(int E, int k, int tb, int rb, bool meta, std::vector<std::vector<uint32_t>> ids) {
  Case c;
  c.E = E;
  c.k = k;
  c.tb = tb;
  c.rb = rb;
  c.meta = meta;
  c.ids = std::move(ids);
  return c;
}

}  // namespace

TEST_CASE("sg_route small E=4 k=2 B=6, hand-written token order", "[rtl][route]") {
  Case c = smallRoute();
  c.meta = true;
  // static tb=2: e0 (0 1)(3 pad), e1 (0 2)(4 5), e3 (1 2)(3 4)(5 pad); e2 gives nothing.
  c.tb = 2;
  {
    Result r = checkCase<Vsg_route_a>(c, 4);
    const std::vector<uint32_t> t = {0, 1, 3, PAD, 0, 2, 4, 5, 1, 2, 3, 4, 5, PAD};
    const std::vector<uint32_t> e = {0, 0, 0, 0, 1, 1, 1, 1, 3, 3, 3, 3, 3, 3};
    const std::vector<uint32_t> slot = {0, 1, 0, PAD, 1, 0, 1, 0, 0, 1, 1, 0, 1, PAD};
    REQUIRE(r.out.size() == t.size() + 1);
    for (size_t i = 0; i < t.size(); ++i) {
      INFO("entry " << i);
      CHECK(r.out[i].data[0] == t[i]);
      CHECK(r.out[i].data[3] == e[i]);
      CHECK(r.out[i].data[1] == (t[i] == PAD ? PAD : t[i] * 2 + slot[i]));
      CHECK(r.out[i].stop == int(i % 2));
    }
    CHECK(r.out.back().kind == DONE);
  }
  // dynamic: e0 (0 1 3), e1 (0 2 4 5), e3 (1 2 3 4 5): stop 1 on entries 2, 6, 11.
  c.tb = 0;
  {
    Result r = checkCase<Vsg_route_a>(c, 4);
    REQUIRE(r.out.size() == 13);
    for (size_t i = 0; i < 12; ++i) CHECK(r.out[i].stop == ((i == 2 || i == 6 || i == 11) ? 1 : 0));
  }
}

TEST_CASE("sg_route small E=4 k=2 B=6, static and dynamic, both modes", "[rtl][route][timing]") {
  for (int meta = 0; meta < 2; ++meta)
    for (int tb : {2, 0, 1, 3, 7}) {
      Case c = smallRoute();
      c.meta = meta != 0;
      c.tb = tb;
      checkCase<Vsg_route_a>(c, 4);
      c.rb = 1;
      checkCase<Vsg_route_a>(c, 4);
    }
}

TEST_CASE("sg_route empty first and last experts, no tokens at all", "[rtl][route][timing]") {
  // E=8 (MAXE): only experts 2, 5 used; experts 0 and 7 (first and last) get nothing.
  for (int meta = 0; meta < 2; ++meta)
    for (int tb : {0, 2, 4}) {
      Case c = makeCase(8, 2, tb, 3, meta != 0, {{5, 2}, {2, 5}, {5, 2}});
      checkCase<Vsg_route_a>(c, 4);
      // B = 0: only DONE on the output, 3 cycles after the last DONE in.
      c.ids.clear();
      Result r = checkCase<Vsg_route_a>(c, 4);
      CHECK(r.out.size() == 1);
    }
  // one token, one expert, k = 1; ids >= E are routed nowhere
  Case c = makeCase(3, 2, 4, 2, false, {{1, 6}, {7, 7}, {2, 1}});
  checkCase<Vsg_route_a>(c, 4);
  c.meta = true;
  checkCase<Vsg_route_a>(c, 4);
}

TEST_CASE("sg_route Mixtral-8x7B b64 trace, E=8 k=2", "[rtl][route][timing]") {
  const auto ids = readRoutingCsv("routing_mixtral8x7b_b64.csv", 64);
  for (int meta = 0; meta < 2; ++meta)
    for (int tb : {8, 16, 64, 0}) {
      // a: E = MAXE, k = MAXK, D = 16 = ROWW
      Case c = makeCase(8, 2, tb, 4, meta != 0, ids);
      checkCase<Vsg_route_a>(c, 4);
      // b: E < MAXE, k < MAXK (slots k..3 carry expert 1 and must be ignored), D = 16
      c.rb = 2;
      checkCase<Vsg_route_b>(c, 8);
    }
}

TEST_CASE("sg_route Mixtral trace under back-pressure and input gaps", "[rtl][route]") {
  const auto ids = readRoutingCsv("routing_mixtral8x7b_b64.csv", 64);
  uint32_t seed = 7;
  for (int meta = 0; meta < 2; ++meta)
    for (int tb : {8, 16, 64, 0}) {
      Case c = makeCase(8, 2, tb, 4, meta != 0, ids);
      const Result ref = checkCase<Vsg_route_a>(c, 4);
      const Result bp = checkCase<Vsg_route_a>(c, 4, false, true, ++seed);
      const Result gp = checkCase<Vsg_route_a>(c, 4, true, false, ++seed);
      const Result both = checkCase<Vsg_route_a>(c, 4, true, true, ++seed);
      requireBeats(bp.out, ref.out);
      requireBeats(gp.out, ref.out);
      requireBeats(both.out, ref.out);
      // Output stalls only delay the read-out: first beat still 3 cycles after the last DONE.
      CHECK(bp.outCyc.front() >= bp.d + 3);
      CHECK(gp.firstValid == gp.d + 3);
    }
}

TEST_CASE("sg_route Qwen3-30B-A3B b64 trace, E=128 k=8 (default size)", "[rtl][route][timing]") {
  const auto ids = readRoutingCsv("routing_qwen3_30b_a3b_b64.csv", 64);
  for (int meta = 0; meta < 2; ++meta)
    for (int tb : {8, 64, 0}) {
      checkCase<Vsg_route_c>(makeCase(128, 8, tb, 4, meta != 0, ids), 16);  // D = 64 = ROWW
    }
  Case c = makeCase(128, 8, 16, 2, false, ids);
  const Result a = checkCase<Vsg_route_c>(c, 16);
  const Result b = checkCase<Vsg_route_c>(c, 16, true, true, 3);
  requireBeats(b.out, a.out);
}
