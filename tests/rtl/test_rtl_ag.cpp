// sg_ag (rtl_templates/sg_ag.sv) verilated with W=32 (P=2 pieces of 64 bytes per beat),
// AB=32, OUTSTANDING=4, driven with an in-order DRAM responder: load walk addresses and
// stops (a 2-level walk with a stride-0 level, written out by hand; a rank-2 walk against
// stepgen::stopsOfShape), the outstanding limit and latencies, random back-pressure, an
// empty walk, store (write requests, STOP consumed, DONE ends the context), contexts.
#include <catch2/catch.hpp>

#include <deque>
#include <random>

#include "Vsg_ag.h"
#include "common/stops.hpp"
#include "rtl_unit_util.hpp"

using namespace rtlu;

namespace {

constexpr int W = 32;
constexpr int P = 2;
constexpr int AB = 32;
constexpr int OUTSTANDING = 4;

const stepgen::ConfigLayout& layout() {
  static const stepgen::ConfigLayout l = stepgen::buildConfigLayout(testArch());
  return l;
}

struct Walk {
  bool store = false;
  int rank = 1;
  uint32_t base = 0;
  int n[4] = {1, 1, 1, 1};
  uint32_t s[4] = {0, 0, 0, 0};
  int rows = 1, ppr = 1;
  uint32_t rowStride = 0;
};

CfgVec agCfg(int ctx, const Walk& w, CfgVec c = CfgVec(layout(), stepgen::UnitKind::AddressGen)) {
  c.set(ctx, "enable", 1);
  c.set(ctx, "store", w.store ? 1 : 0);
  c.set(ctx, "rank", uint64_t(w.rank));
  c.set(ctx, "base", w.base);
  for (int k = 0; k < 4; ++k) {
    c.set(ctx, "n" + std::to_string(k), uint64_t(w.n[k]));
    c.set(ctx, "s" + std::to_string(k), w.s[k]);
  }
  c.set(ctx, "rows", uint64_t(w.rows));
  c.set(ctx, "ppr", uint64_t(w.ppr));
  c.set(ctx, "row_stride", w.rowStride);
  c.identityMap(ctx, 0);
  return c;
}

/// Piece addresses of the walk (reference loop nest; levels above the rank count as 1).
std::vector<uint32_t> refPieces(const Walk& w) {
  std::vector<uint32_t> r;
  int n[4];
  for (int k = 0; k < 4; ++k) n[k] = k <= w.rank ? w.n[k] : 1;
  for (int i3 = 0; i3 < n[3]; ++i3)
    for (int i2 = 0; i2 < n[2]; ++i2)
      for (int i1 = 0; i1 < n[1]; ++i1)
        for (int i0 = 0; i0 < n[0]; ++i0) {
          const uint32_t t = w.base + uint32_t(i3) * w.s[3] + uint32_t(i2) * w.s[2] + uint32_t(i1) * w.s[1] +
                             uint32_t(i0) * w.s[0];
          for (int row = 0; row < w.rows; ++row)
            for (int q = 0; q < w.ppr; ++q) r.push_back(t + uint32_t(row) * w.rowStride + uint32_t(q) * 64u);
        }
  return r;
}

/// Words of piece address a as the responder returns them: word k = a/4 + k (16 words).
uint32_t pieceWord(uint32_t a, int k) { return a / 4 + uint32_t(k); }

struct Req {
  uint64_t cyc;
  bool write;
  std::vector<uint32_t> addr;  ///< P piece addresses
  std::vector<uint32_t> wdata; ///< W words (writes)
};

/// The verilated AG plus an in-order DRAM responder with a per-request latency.
struct AgSim {
  StreamSim<Vsg_ag, 1> s{W};
  std::vector<Req> reqs;
  struct Pending {
    uint64_t readyAt;
    std::vector<uint32_t> data;
  };
  std::deque<Pending> pending;
  std::function<uint64_t()> latency = [] { return uint64_t(10); };
  std::function<bool(uint64_t)> reqReady = [](uint64_t) { return true; };
  bool respNow = false;
  std::vector<uint64_t> respCyc;

  AgSim() {
    s.drive = [this] {
      auto& t = *s.top;
      t.req_ready = reqReady(s.cyc);
      respNow = !pending.empty() && pending.front().readyAt <= s.cyc;
      t.resp_valid = respNow;
      if (respNow) setWords(t.resp_data, pending.front().data, 32 * W);
    };
    s.sample = [this] {
      auto& t = *s.top;
      if (respNow) {
        respCyc.push_back(s.cyc);
        pending.pop_front();
      }
      if (t.req_valid && t.req_ready) {
        Req r;
        r.cyc = s.cyc;
        r.write = t.req_write;
        for (int k = 0; k < P; ++k) r.addr.push_back(uint32_t(getBits(t.req_addr, unsigned(k * AB), AB)));
        if (r.write)
          for (int k = 0; k < W; ++k) r.wdata.push_back(uint32_t(getBits(t.req_wdata, unsigned(32 * k), 32)));
        if (!r.write) {
          std::vector<uint32_t> d;
          for (uint32_t a : r.addr)
            for (int k = 0; k < 16; ++k) d.push_back(pieceWord(a, k));
          const uint64_t lat = latency();
          uint64_t at = s.cyc + lat;
          if (!pending.empty()) at = std::max(at, pending.back().readyAt);  // in order
          pending.push_back({at, d});
        }
        reqs.push_back(r);
      }
    };
  }
};

/// Checks a load's requests and output beats against the reference walk and tile stops.
void checkLoad(AgSim& a, const Walk& w, const std::vector<int>& tileStops) {
  const std::vector<uint32_t> pieces = refPieces(w);
  const size_t perTile = size_t(w.rows * w.ppr);
  REQUIRE(perTile % P == 0);
  const size_t beats = pieces.size() / P;
  REQUIRE(a.reqs.size() == beats);
  for (size_t j = 0; j < beats; ++j) {
    INFO("request " << j);
    CHECK_FALSE(a.reqs[j].write);
    for (int k = 0; k < P; ++k) CHECK(a.reqs[j].addr[size_t(k)] == pieces[j * P + size_t(k)]);
  }
  REQUIRE(a.s.out.size() == beats + 1);
  const size_t beatsPerTile = perTile / P;
  REQUIRE(tileStops.size() * beatsPerTile == beats);
  for (size_t j = 0; j < beats; ++j) {
    INFO("beat " << j);
    const Beat& b = a.s.out[j];
    CHECK(b.kind == DATA);
    const bool last = (j + 1) % beatsPerTile == 0;
    CHECK(b.last == last);
    CHECK(b.stop == (last ? tileStops[j / beatsPerTile] : 0));
    for (int k = 0; k < P; ++k)
      for (int x = 0; x < 16; ++x) REQUIRE(b.data[size_t(16 * k + x)] == pieceWord(pieces[j * P + size_t(k)], x));
  }
  CHECK(a.s.out.back().kind == DONE);
}

}  // namespace

TEST_CASE("sg_ag load: 2-level walk with a stride-0 level", "[rtl][ag]") {
  // rank 1: i1 < 2 (s1 = 0: the three tiles are read twice), i0 < 3 (s0 = 0x1000);
  // tile = 2 rows x 2 pieces, rows 0x400 apart = 2 beats of P = 2 pieces.
  Walk w;
  w.rank = 1;
  w.base = 0x10000;
  w.n[0] = 3;
  w.n[1] = 2;
  w.s[0] = 0x1000;
  w.s[1] = 0;
  w.rows = 2;
  w.ppr = 2;
  w.rowStride = 0x400;
  AgSim a;
  a.s.config(agCfg(0, w));
  a.s.start();
  REQUIRE(a.s.runUntilDone(1000));
  // Hand-written: the first tile's beats, the second tile's base, the re-read.
  REQUIRE(a.reqs.size() == 12);
  CHECK(a.reqs[0].addr == std::vector<uint32_t>{0x10000, 0x10040});
  CHECK(a.reqs[1].addr == std::vector<uint32_t>{0x10400, 0x10440});
  CHECK(a.reqs[2].addr == std::vector<uint32_t>{0x11000, 0x11040});
  CHECK(a.reqs[5].addr == std::vector<uint32_t>{0x12400, 0x12440});
  CHECK(a.reqs[6].addr == std::vector<uint32_t>{0x10000, 0x10040});  // i1 = 1, stride 0
  // Stops: rank 1 -> S1 when level 0 ends (i0 = 2): 0 0 1 0 0 1 (= stopsOfShape({2, 3})).
  const std::vector<int> stops = {0, 0, 1, 0, 0, 1};
  CHECK(stepgen::stopsOfShape({2, 3}) == stops);
  checkLoad(a, w, stops);
}

TEST_CASE("sg_ag load: rank-2 walk, beats spanning rows, stride-0 middle level", "[rtl][ag]") {
  // ppr = 1, rows = 4: a beat (2 pieces) spans two rows. n3 is left 0 in the configuration:
  // levels above the rank count as 1.
  Walk w;
  w.rank = 2;
  w.base = 0x200000;
  w.n[0] = 2;
  w.n[1] = 2;
  w.n[2] = 2;
  w.n[3] = 0;
  w.s[0] = 0x100;
  w.s[1] = 0;
  w.s[2] = 0x8000;
  w.s[3] = 0x12345;
  w.rows = 4;
  w.ppr = 1;
  w.rowStride = 0x40;
  AgSim a;
  a.s.config(agCfg(0, w));
  a.s.start();
  REQUIRE(a.s.runUntilDone(1000));
  const std::vector<int> stops = stepgen::stopsOfShape({2, 2, 2});
  CHECK(stops == std::vector<int>{0, 1, 0, 2, 0, 1, 0, 2});
  w.n[3] = 1;
  checkLoad(a, w, stops);
}

TEST_CASE("sg_ag load timing and the outstanding limit", "[rtl][ag][timing]") {
  // Latency L = 20, output always ready. start in cycle S -> INIT in S+1 -> requests in
  // S+2 .. S+5 (4 = OUTSTANDING in flight), then none until the first response (cycle
  // S+2+L) has moved to the output register: request 5 in cycle S+2+L+1. Each response
  // is valid at the output the cycle after it is presented.
  Walk w;
  w.rank = 0;
  w.n[0] = 8;
  w.s[0] = 0x80;
  w.ppr = 2;
  AgSim a;
  a.latency = [] { return uint64_t(20); };
  a.s.config(agCfg(0, w));
  const uint64_t S = a.s.cyc;
  a.s.start();
  REQUIRE(a.s.runUntilDone(1000));
  REQUIRE(a.reqs.size() == 8);
  for (int i = 0; i < 4; ++i) CHECK(a.reqs[size_t(i)].cyc == S + 2 + uint64_t(i));
  CHECK(a.reqs[4].cyc == S + 2 + 20 + 1);
  REQUIRE(a.respCyc.size() == 8);
  for (size_t i = 0; i < 8; ++i) CHECK(a.s.outCyc[i] == a.respCyc[i] + 1);
  // DONE the cycle after the last data beat.
  CHECK(a.s.outCyc[8] == a.s.outCyc[7] + 1);
  // rank 0: no stops, every beat a whole tile.
  checkLoad(a, w, std::vector<int>(8, 0));
}

TEST_CASE("sg_ag load under random back-pressure and latencies", "[rtl][ag]") {
  Walk w;
  w.rank = 3;
  w.base = 0x1000;
  w.n[0] = 2;
  w.n[1] = 3;
  w.n[2] = 1;
  w.n[3] = 2;
  w.s[0] = 0x400;
  w.s[1] = 0x1000;
  w.s[2] = 0x7777;
  w.s[3] = 0x20000;
  w.rows = 2;
  w.ppr = 3;
  w.rowStride = 0x800;
  AgSim a;
  std::mt19937 g(21);
  a.latency = [&g] { return uint64_t(1 + g() % 12); };
  a.reqReady = [&g](uint64_t) { return (g() % 3) != 0; };
  a.s.outGate = [&g](uint64_t) { return (g() % 2) != 0; };
  a.s.config(agCfg(0, w));
  a.s.start();
  uint64_t maxInFlight = 0;
  for (int i = 0; i < 5000 && !a.s.top->done; ++i) {
    a.s.step();
    // issued but not yet out of the unit: in flight (<= 4) plus the output register
    maxInFlight = std::max<uint64_t>(maxInFlight, a.reqs.size() - std::min(a.reqs.size(), a.s.out.size()));
  }
  REQUIRE(a.s.top->done == 1);
  CHECK(maxInFlight <= uint64_t(OUTSTANDING + 1));
  checkLoad(a, w, stepgen::stopsOfShape({2, 1, 3, 2}));
}

TEST_CASE("sg_ag load: empty walk gives only DONE", "[rtl][ag]") {
  Walk w;
  w.rank = 1;
  w.n[0] = 4;
  w.n[1] = 0;
  w.ppr = 2;
  AgSim a;
  a.s.config(agCfg(0, w));
  a.s.start();
  REQUIRE(a.s.runUntilDone(100));
  CHECK(a.reqs.empty());
  REQUIRE(a.s.out.size() == 1);
  CHECK(a.s.out[0].kind == DONE);
}

TEST_CASE("sg_ag store", "[rtl][ag]") {
  // rank 1, i0 < 2 (s0 = 0x2000), tile = 1 row x 4 pieces = 2 beats. Inputs:
  // D D(last S0) STOP(2) D D(last S1) DONE -> 4 writes, STOP consumed, DONE ends.
  Walk w;
  w.store = true;
  w.rank = 1;
  w.base = 0x40000;
  w.n[0] = 2;
  w.s[0] = 0x2000;
  w.rows = 1;
  w.ppr = 4;
  for (bool stall : {false, true}) {
    AgSim a;
    std::mt19937 g(3);
    if (stall) {
      a.reqReady = [&g](uint64_t) { return (g() % 3) == 0; };
      a.s.inGate = [&g](int, uint64_t) { return (g() % 2) == 0; };
    }
    a.s.config(agCfg(0, w));
    std::vector<std::vector<uint32_t>> data;
    for (int i = 0; i < 4; ++i) {
      std::vector<uint32_t> d(W);
      for (int k = 0; k < W; ++k) d[size_t(k)] = uint32_t(0xA0000000u + uint32_t(i * 256 + k));
      data.push_back(d);
    }
    a.s.in[0] = {dataBeat(data[0]), dataBeat(data[1], true, 0), stopBeat(2, W), dataBeat(data[2]),
                 dataBeat(data[3], true, 1), doneBeat(W)};
    a.s.start();
    REQUIRE(a.s.runUntilDone(500));
    CHECK(a.s.in[0].empty());
    CHECK(a.s.out.empty());
    REQUIRE(a.reqs.size() == 4);
    const uint32_t want[4][2] = {{0x40000, 0x40040}, {0x40080, 0x400C0}, {0x42000, 0x42040}, {0x42080, 0x420C0}};
    for (size_t i = 0; i < 4; ++i) {
      INFO("write " << i);
      CHECK(a.reqs[i].write);
      CHECK(a.reqs[i].addr == std::vector<uint32_t>{want[i][0], want[i][1]});
      CHECK(a.reqs[i].wdata == data[i]);
    }
    // done rises the cycle after DONE is consumed.
    CHECK(a.s.cyc == a.s.inCyc[0].back() + 1);
    if (!stall) {
      // Unstalled: one beat per cycle, the write request in the cycle its beat is taken.
      for (size_t i = 0; i < 4; ++i) CHECK(a.reqs[i].cyc == a.s.inCyc[0][i < 2 ? i : i + 1]);
    }
  }
}

TEST_CASE("sg_ag contexts: none enabled; store in context 0 then load in context 1", "[rtl][ag]") {
  SECTION("nothing enabled") {
    AgSim a;
    a.s.config(CfgVec(layout(), stepgen::UnitKind::AddressGen));
    a.s.start();
    CHECK(a.s.top->done == 1);
  }
  SECTION("store in context 0, load in context 1") {
    Walk st;
    st.store = true;
    st.rank = 0;
    st.base = 0x100;
    st.n[0] = 1;
    st.ppr = 2;
    Walk ld;
    ld.rank = 0;
    ld.base = 0x900;
    ld.n[0] = 2;
    ld.ppr = 2;
    AgSim a;
    a.s.config(agCfg(1, ld, agCfg(0, st)));
    a.s.in[0] = {dataBeat(std::vector<uint32_t>(W, 7u), true, 0), doneBeat(W)};
    a.s.start();
    CHECK(int(a.s.top->ctx) == 0);
    REQUIRE(a.s.runUntilDone(500));
    CHECK(int(a.s.top->ctx) == 1);
    REQUIRE(a.reqs.size() == 3);
    CHECK(a.reqs[0].write);
    CHECK(a.reqs[0].addr == std::vector<uint32_t>{0x100, 0x140});
    CHECK_FALSE(a.reqs[1].write);
    CHECK(a.reqs[1].addr == std::vector<uint32_t>{0x900, 0x940});
    CHECK(a.reqs[2].addr == std::vector<uint32_t>{0x900, 0x940});
    REQUIRE(a.s.out.size() == 3);
    CHECK(a.s.out[2].kind == DONE);
  }
}
