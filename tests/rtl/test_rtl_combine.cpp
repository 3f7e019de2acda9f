// sg_combine (rtl_templates/sg_combine.sv), the back of an MoE layer: Partition(expert
// outputs, selector) -> FlatMap(rows, dropping padding) -> Flatten -> Reassemble(by token).
// Verilated as Vsg_combine_a (W=4, MAXT=64, MAXK=2, ROWW=16, MAXENT=512), Vsg_combine_b
// (W=16, MAXT=64, MAXK=8, ROWW=64, MAXENT=2048) and Vsg_combine_c (W=6, MAXT=5, MAXK=3,
// ROWW=12, MAXENT=37: no size a power of two) (tests/rtl_combine.cmake).
//
// Expected beats come from refCombine() (tests/rtl/combine_ref.hpp), a plain loop over the
// written slots written from the specification (not from RTL output); the small cases are
// also checked against hand-written slot orders and stops. The entries on in1 are sg_route's
// meta output for a routing (refRoute, meta mode) or hand-written slot lists. In every run
// the readies are checked cycle by cycle against the header's rule (in1 free; in0 only once
// its row's entry has been accepted in an earlier cycle, or after in1's DONE), and unstalled
// runs against the timing formulas of the header: with d = the cycle the later DONE is
// accepted, d = S + 3 + n_e*row_beats without input gaps, first output beat at d + 3, then
// one beat per cycle, N = n_w*row_beats + 1 beats ending at d + 2 + N, done high after it.
#include <catch2/catch.hpp>

#include <random>

#include "Vsg_combine_a.h"
#include "Vsg_combine_b.h"
#include "Vsg_combine_c.h"
#include "combine_ref.hpp"
#include "rtl_unit_util.hpp"

using namespace rtlu;

namespace {

struct Opts {
  bool gaps = false;         ///< inputs valid 2 cycles in 3 (random)
  bool bp = false;           ///< out_ready 1 cycle in 2 (random)
  uint64_t in1From = 0;      ///< in1 offered only from this cycle (in0 arrives first)
  uint64_t in0From = 0;      ///< in0 offered only from this cycle
  bool stops = false;        ///< STOP beats inserted on both inputs (to be dropped)
  uint32_t seed = 1;
};

struct Result {
  std::vector<Beat> out;
  std::vector<uint64_t> outCyc;
  std::vector<uint64_t> in0Cyc, in1Cyc;
  uint64_t d = 0;          ///< cycle of the later DONE
  uint64_t doneCyc = 0;    ///< sim.cyc after the step in which done rose
  uint64_t firstValid = 0;
  uint32_t peak = 0;
  std::vector<Beat> in0, in1;  ///< the beats offered (STOP beats included)
};

std::vector<Beat> withStops(std::vector<Beat> v, size_t at, int w) {
  if (v.size() > at) v.insert(v.begin() + long(at), stopBeat(1, w));
  return v;
}

/// Runs one case on an existing simulator (so a second start can be tested): in1 = entry
/// beats, in0 = row beats. Checks the readies every cycle against the header's rule.
template <class V>
Result runOn(StreamSim<V, 2>& sim, const CombineCase& c, int W, std::vector<Beat> in1,
             std::vector<Beat> in0, const Opts& o) {
  sim.top->k = uint32_t(c.k);
  sim.top->row_beats = uint32_t(c.rb);
  if (o.stops) {
    in1 = withStops(in1, 2, W);
    in0 = withStops(in0, size_t(c.rb), W);
  }
  for (const Beat& b : in1) sim.in[1].push_back(b);
  for (const Beat& b : in0) sim.in[0].push_back(b);
  std::mt19937 rng(o.seed);
  const uint64_t c0 = sim.cyc;  // the start cycle S
  sim.inGate = [&](int p, uint64_t cy) {
    if (p == 1 && cy < c0 + o.in1From) return false;
    if (p == 0 && cy < c0 + o.in0From) return false;
    return !o.gaps || rng() % 3 != 0;
  };
  if (o.bp) sim.outGate = [&rng](uint64_t) { return rng() % 2 == 0; };
  else sim.outGate = nullptr;
  const size_t base0 = sim.inCyc[0].size(), base1 = sim.inCyc[1].size();
  const size_t outBase = sim.out.size();
  // The readies from the header: in1_ready = !d1; in0_ready = !d0 && (d1 || entries > row),
  // counted over beats accepted in earlier cycles.
  sim.sample = [&] {
    if (sim.cyc < c0 + 2) {
      CHECK_FALSE(sim.top->in0_ready);
      CHECK_FALSE(sim.top->in1_ready);
      return;
    }
    int ent = 0, dataBeats = 0;
    bool d0 = false, d1 = false;
    for (size_t i = 0; i < sim.inCyc[1].size() - base1; ++i) {
      ent += in1[i].kind == DATA;
      d1 = d1 || in1[i].kind == DONE;
    }
    for (size_t i = 0; i < sim.inCyc[0].size() - base0; ++i) {
      dataBeats += in0[i].kind == DATA;
      d0 = d0 || in0[i].kind == DONE;
    }
    if (d0 && d1) return;  // read-out
    INFO("cycle " << sim.cyc - c0 << " entries " << ent << " in0 data beats " << dataBeats);
    CHECK(bool(sim.top->in1_ready) == !d1);
    CHECK(bool(sim.top->in0_ready) == (!d0 && (d1 || ent > dataBeats / c.rb)));
  };
  sim.start();
  REQUIRE(sim.runUntilDone(200000));
  sim.sample = nullptr;
  Result r;
  r.out.assign(sim.out.begin() + long(outBase), sim.out.end());
  r.outCyc.assign(sim.outCyc.begin() + long(outBase), sim.outCyc.end());
  for (auto& x : r.outCyc) x -= c0;
  for (size_t i = base0; i < sim.inCyc[0].size(); ++i) r.in0Cyc.push_back(sim.inCyc[0][i] - c0);
  for (size_t i = base1; i < sim.inCyc[1].size(); ++i) r.in1Cyc.push_back(sim.inCyc[1][i] - c0);
  REQUIRE(r.in0Cyc.size() == in0.size());
  REQUIRE(r.in1Cyc.size() == in1.size());
  r.d = std::max(r.in0Cyc.back(), r.in1Cyc.back());
  r.doneCyc = sim.cyc - c0;
  r.firstValid = sim.firstOutValid - c0;
  r.peak = sim.top->peak_words;
  r.in0 = in0;
  r.in1 = in1;
  // The result stays put after done: no further beat, done stays high.
  const size_t n = sim.out.size();
  for (int i = 0; i < 5; ++i) sim.step();
  CHECK(sim.out.size() == n);
  CHECK(sim.top->done);
  sim.inGate = nullptr;
  sim.outGate = nullptr;
  return r;
}

/// Beats against the reference, peak_words, and (unstalled runs) the timing formulas.
template <class V>
Result checkOn(StreamSim<V, 2>& sim, const CombineCase& c, int W, const std::vector<Beat>& in1,
               const Opts& o = Opts()) {
  INFO("k=" << c.k << " rb=" << c.rb << " entries=" << c.n() << " gaps=" << o.gaps << " bp=" << o.bp
            << " in1From=" << o.in1From << " in0From=" << o.in0From << " stops=" << o.stops);
  const std::vector<Beat> want = refCombine(c, W);
  sim.firstOutValid = ~uint64_t(0);
  Result r = runOn(sim, c, W, in1, rowBeats(c, W), o);
  requireBeats(r.out, want);
  uint32_t stored = 0;
  for (uint32_t s : c.slots) stored += s != PAD ? uint32_t(c.rb * W) : 0u;
  CHECK(r.peak == stored + uint32_t(c.n()));
  // Every row's first beat is taken after its entry (in an earlier cycle).
  std::vector<uint64_t> entCyc, rowCyc;
  for (size_t i = 0; i < r.in1.size(); ++i)
    if (r.in1[i].kind == DATA) entCyc.push_back(r.in1Cyc[i]);
  int dataBeats = 0;
  for (size_t i = 0; i < r.in0.size(); ++i)
    if (r.in0[i].kind == DATA && dataBeats++ % c.rb == 0) rowCyc.push_back(r.in0Cyc[i]);
  REQUIRE(int(entCyc.size()) == c.n());
  REQUIRE(int(rowCyc.size()) == c.n());
  for (size_t n = 0; n < entCyc.size(); ++n) CHECK(rowCyc[n] > entCyc[n]);
  const uint64_t N = want.size();
  const uint64_t nw = uint64_t(writtenSlots(c));
  CHECK(N == nw * uint64_t(c.rb) + 1);
  if (!o.bp) {
    // Output: first beat 3 cycles after the later DONE, then one per cycle.
    CHECK(r.firstValid == r.d + 3);
    CHECK(r.outCyc.front() == r.d + 3);
    CHECK(r.outCyc.back() == r.d + 2 + N);
    for (size_t i = 1; i < r.outCyc.size(); ++i) CHECK(r.outCyc[i] == r.outCyc[i - 1] + 1);
    CHECK(r.doneCyc == r.d + 3 + N);
    if (!o.gaps && !o.stops && o.in0From == 0 && o.in1From == 0) {
      // Inputs from S+2: entry n in S+2+n, in0 beat i in S+3+i.
      const uint64_t ne = uint64_t(c.n()), rb = uint64_t(c.rb);
      for (uint64_t n = 0; n < ne; ++n) CHECK(r.in1Cyc[n] == 2 + n);
      CHECK(r.in1Cyc.back() == 2 + ne);
      for (size_t i = 0; i < r.in0Cyc.size(); ++i) CHECK(r.in0Cyc[i] == 3 + i);
      CHECK(r.d == 3 + ne * rb);
      CHECK(r.doneCyc == 7 + (ne + nw) * rb);
    }
  } else {
    CHECK(r.outCyc.front() >= r.d + 3);
  }
  return r;
}

template <class V>
Result check(const CombineCase& c, int W, const std::vector<Beat>& in1, const Opts& o = Opts()) {
  StreamSim<V, 2> sim(W);
  return checkOn(sim, c, W, in1, o);
}
template <class V>
Result check(const CombineCase& c, int W, const Opts& o = Opts()) {
  return check<V>(c, W, entryBeats(c, W), o);
}

/// A routing: B tokens, k distinct experts each out of [0, Eids); experts >= E are routed
/// nowhere by sg_route (their slots are never written).
RouteCase randomRoute(std::mt19937& rng, int B, int k, int Eids, int E, int tb) {
  RouteCase r;
  r.E = E;
  r.k = k;
  r.tb = tb;
  for (int t = 0; t < B; ++t) {
    std::vector<uint32_t> ids;
    while (int(ids.size()) < k) {
      const uint32_t e = uint32_t(rng() % uint32_t(Eids));
      if (std::find(ids.begin(), ids.end(), e) == ids.end()) ids.push_back(e);
    }
    r.ids.push_back(ids);
  }
  return r;
}

}  // namespace

// smallRoute() (route_ref.hpp), tb = 2: entries e0 (t0 t1)(t3 pad), e1 (t0 t2)(t4 t5),
// e3 (t1 t2)(t3 t4)(t5 pad).
TEST_CASE("sg_combine small k=2, hand-written slot order", "[rtl][combine][timing]") {
  for (int rb : {1, 2, 4}) {
    std::vector<Beat> meta;
    const CombineCase c = combineFromRoute(smallRoute(), 4, rb, &meta);
    // Slot of each entry (t*2 + j), by hand from the routing: 14 entries, 2 padding.
    const std::vector<uint32_t> slots = {0, 3, 6, PAD, 1, 4, 9, 10, 2, 5, 7, 8, 11, PAD};
    REQUIRE(c.slots == slots);
    const Result r = check<Vsg_combine_a>(c, 4, meta);
    // Output: slots 0..11, each from the entry that names it; S1 after each token's two
    // slots, S2 at the end.
    const std::vector<int> src = {0, 4, 8, 1, 5, 9, 2, 10, 11, 6, 7, 12};
    REQUIRE(r.out.size() == src.size() * size_t(rb) + 1);
    for (size_t s = 0; s < src.size(); ++s)
      for (int b = 0; b < rb; ++b) {
        INFO("slot " << s << " beat " << b);
        const Beat& x = r.out[s * size_t(rb) + size_t(b)];
        CHECK(x.kind == DATA);
        CHECK(x.data[0] == rowWord(src[s], b * 4));
        CHECK(x.last == (b + 1 == rb));
        CHECK(x.stop == (b + 1 < rb ? 0 : s == 11 ? 2 : int(s % 2)));
      }
    CHECK(r.out.back().kind == DONE);
  }
}

TEST_CASE("sg_combine tokens without written slots, k=2 and k=8", "[rtl][combine][timing]") {
  // k=2: slots 1, 6, 7 (tokens 0 and 3; tokens 1 and 2 empty): stops 1, 0, 2.
  CombineCase c;
  c.k = 2;
  c.rb = 1;
  c.slots = {PAD, 7, 1, PAD, PAD, 6};
  Result r = check<Vsg_combine_a>(c, 4);
  REQUIRE(r.out.size() == 4);
  CHECK(r.out[0].data[0] == rowWord(2, 0));
  CHECK(r.out[1].data[0] == rowWord(5, 0));
  CHECK(r.out[2].data[0] == rowWord(1, 0));
  CHECK(r.out[0].stop == 1);
  CHECK(r.out[1].stop == 0);
  CHECK(r.out[2].stop == 2);
  // k=8 (W=16): token 0 slots 0 and 7, token 5 slot 41, token 63 (the last) slots 504, 511.
  c.k = 8;
  c.slots = {511, 41, PAD, 7, 504, 0, PAD};
  for (int rb : {1, 4}) {
    c.rb = rb;
    r = check<Vsg_combine_b>(c, 16);
    REQUIRE(r.out.size() == size_t(5 * rb + 1));
    const std::vector<int> src = {5, 3, 1, 4, 0};
    const std::vector<int> stop = {0, 1, 1, 0, 2};
    for (size_t i = 0; i < 5; ++i) {
      const Beat& x = r.out[(i + 1) * size_t(rb) - 1];
      CHECK(x.data[15] == rowWord(src[i], (rb - 1) * 16 + 15));
      CHECK(x.stop == stop[i]);
      CHECK(x.last);
    }
  }
  // k=1: every slot its own token.
  c.k = 1;
  c.rb = 2;
  c.slots = {3, PAD, 0, 1};
  check<Vsg_combine_a>(c, 4);
  // k=3 < MAXK on the odd-sized unit: slots up to MAXT*k - 1 = 14.
  c.k = 3;
  c.slots = {14, 2, PAD, 0, 9, 10, 11, PAD, 5};
  for (int rb : {1, 2}) {
    c.rb = rb;
    check<Vsg_combine_c>(c, 6);
  }
}

TEST_CASE("sg_combine nothing written: only DONE", "[rtl][combine][timing]") {
  CombineCase c;
  c.k = 2;
  for (int rb : {1, 3}) {
    c.rb = rb;
    c.slots.clear();  // no entries at all
    Result r = check<Vsg_combine_a>(c, 4);
    REQUIRE(r.out.size() == 1);
    CHECK(r.out[0].kind == DONE);
    CHECK(r.d == 3);  // in0's DONE waits for in1's DONE (accepted in S+2)
    c.slots = {PAD, PAD, PAD};  // padding only
    r = check<Vsg_combine_a>(c, 4);
    REQUIRE(r.out.size() == 1);
    CHECK(r.peak == 3);
  }
  // sg_route with every id >= E: no entry
  RouteCase rt = smallRoute();
  rt.E = 0;
  std::vector<Beat> meta;
  CombineCase e = combineFromRoute(rt, 16, 1, &meta);
  CHECK(e.n() == 0);
  check<Vsg_combine_b>(e, 16, meta);
}

TEST_CASE("sg_combine in0 before in1: in0 waits for its entries", "[rtl][combine][timing]") {
  std::vector<Beat> meta;
  for (int rb : {1, 4}) {
    const CombineCase c = combineFromRoute(smallRoute(), 4, rb, &meta);
    Opts o;
    o.in1From = 20;  // in0 offered from S, in1 only from S+20
    Result r = check<Vsg_combine_a>(c, 4, meta, o);
    CHECK(r.in1Cyc.front() == 20);
    CHECK(r.in0Cyc.front() == 21);  // the cycle after entry 0
    // random gaps on both inputs: each row still waits for its entry
    o.in1From = 0;
    o.gaps = true;
    o.seed = uint32_t(rb);
    check<Vsg_combine_a>(c, 4, meta, o);
    // in1 done long before in0: in1 is taken freely
    o.gaps = false;
    o.in0From = 40;
    r = check<Vsg_combine_a>(c, 4, meta, o);
    CHECK(r.in1Cyc.back() == 2 + uint64_t(c.n()));
    CHECK(r.in0Cyc.front() == 40);
    CHECK(r.d == 40 + uint64_t(c.n() * rb));
  }
}

TEST_CASE("sg_combine random routings against the reference", "[rtl][combine][timing]") {
  std::mt19937 rng(11);
  for (int it = 0; it < 12; ++it) {
    const int B = 1 + int(rng() % 64);
    const int tb = std::vector<int>{0, 1, 3, 8, 16}[size_t(it % 5)];
    const int rb = 1 + int(rng() % 4);
    // a: k = 1 or 2 of 6 experts, only 4 routed (slots of experts 4, 5 stay unwritten)
    {
      const int k = 1 + it % 2;
      std::vector<Beat> meta;
      const CombineCase c = combineFromRoute(randomRoute(rng, B, k, 6, 4, tb), 4, rb, &meta);
      check<Vsg_combine_a>(c, 4, meta);
      Opts o;
      o.stops = true;
      check<Vsg_combine_a>(c, 4, meta, o);
    }
    // b: k = 8 of 32 experts, 24 routed, W = 16
    {
      std::vector<Beat> meta;
      const CombineCase c = combineFromRoute(randomRoute(rng, B, 8, 32, 24, tb), 16, rb, &meta);
      check<Vsg_combine_b>(c, 16, meta);
    }
    // c: k = 3 (MAXK), 5 tokens of 5 experts, 4 routed, rows of 1 or 2 beats
    {
      std::vector<Beat> meta;
      const CombineCase c = combineFromRoute(randomRoute(rng, 1 + it % 5, 3, 5, 4, tb % 4), 6, 1 + it % 2, &meta);
      if (c.n() <= 37) check<Vsg_combine_c>(c, 6, meta);
    }
  }
  // c: exactly MAXENT = 37 entries
  CombineCase c;
  c.k = 3;
  c.rb = 2;
  // 15 distinct slots (all of MAXT*k, permuted) and 22 padding entries
  uint32_t next = 0;
  for (int n = 0; n < 37; ++n)
    c.slots.push_back(n % 5 < 2 && next < 15 ? (next++ * 4) % 15 : PAD);
  REQUIRE(writtenSlots(c) == 15);
  check<Vsg_combine_c>(c, 6);
}

TEST_CASE("sg_combine Mixtral and Qwen3 traces, static and dynamic tiles", "[rtl][combine][timing]") {
  const auto mix = readRoutingCsv("routing_mixtral8x7b_b64.csv", 64);
  const auto qwen = readRoutingCsv("routing_qwen3_30b_a3b_b64.csv", 64);
  for (int tb : {0, 16}) {
    RouteCase r;
    r.E = 8;
    r.k = 2;
    r.tb = tb;
    r.ids = mix;
    for (int rb : {1, 4}) {
      std::vector<Beat> meta;
      const CombineCase c = combineFromRoute(r, 4, rb, &meta);
      const Result x = check<Vsg_combine_a>(c, 4, meta);
      // Every token has both slots: 64 tokens x 2 rows, S1 after each token.
      REQUIRE(x.out.size() == size_t(128 * rb + 1));
    }
    r.E = 128;
    r.k = 8;
    r.ids = qwen;
    for (int rb : {1, 4}) {
      std::vector<Beat> meta;
      const CombineCase c = combineFromRoute(r, 16, rb, &meta);
      check<Vsg_combine_b>(c, 16, meta);
    }
  }
}

TEST_CASE("sg_combine random stalls: output beats unchanged", "[rtl][combine]") {
  const auto mix = readRoutingCsv("routing_mixtral8x7b_b64.csv", 64);
  uint32_t seed = 3;
  for (int tb : {0, 8}) {
    RouteCase r;
    r.E = 6;  // experts 6 and 7 routed nowhere: some tokens keep one slot, some none
    r.k = 2;
    r.tb = tb;
    r.ids = mix;
    std::vector<Beat> meta;
    const CombineCase c = combineFromRoute(r, 4, 3, &meta);
    const Result ref = check<Vsg_combine_a>(c, 4, meta);
    for (int m = 1; m < 4; ++m) {
      Opts o;
      o.gaps = (m & 1) != 0;
      o.bp = (m & 2) != 0;
      o.seed = ++seed;
      const Result x = check<Vsg_combine_a>(c, 4, meta, o);
      requireBeats(x.out, ref.out);
      o.stops = true;
      o.seed = ++seed;
      requireBeats(check<Vsg_combine_a>(c, 4, meta, o).out, ref.out);
    }
  }
}

TEST_CASE("sg_combine second start clears the unit", "[rtl][combine][timing]") {
  StreamSim<Vsg_combine_a, 2> sim(4);
  std::vector<Beat> meta;
  const CombineCase a = combineFromRoute(smallRoute(), 4, 2, &meta);
  checkOn(sim, a, 4, meta);
  // Second run on the same unit: fewer slots, another k; nothing of the first run leaks.
  CombineCase b;
  b.k = 1;
  b.rb = 1;
  b.slots = {5, PAD, 2};
  const Result r = checkOn(sim, b, 4, entryBeats(b, 4));
  CHECK(r.out.size() == 3);
  CHECK(r.peak == 2u * 4u + 3u);
  // And a padding-only run after it.
  b.slots = {PAD};
  CHECK(checkOn(sim, b, 4, entryBeats(b, 4)).out.size() == 1);
}
