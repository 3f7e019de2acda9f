// sg_ag (rtl_templates/sg_ag.sv) verilated with W=32 (P=2 pieces of 64 bytes per beat),
// AB=32, OUTSTANDING=4, driven with an in-order DRAM responder: load walk addresses and
// stops (a 2-level walk with a stride-0 level, written out by hand; a rank-2 walk against
// stepgen::stopsOfShape), the outstanding limit and latencies, random back-pressure, an
// empty walk, store (write requests, STOP consumed, DONE ends the context), contexts.
// Random mode (RandomOffChipLoad / Store, incl. per_group weight addresses): expected beats
// and writes from plain reference loops (refRandom, refStore), timing per the sg_ag.sv header.
#include <catch2/catch.hpp>

#include <deque>
#include <random>

#include "Vsg_ag.h"
#include "ir/stops.hpp"
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
  // Builders: levels k < 4 (count n, stride s), the tile shape.
  Walk& storing() { store = true; return *this; }
  Walk& ranked(int r) { rank = r; return *this; }
  Walk& from(uint32_t b) { base = b; return *this; }
  Walk& level(int k, int cnt, uint32_t stride) { n[k] = cnt; s[k] = stride; return *this; }
  Walk& tile(int r, int p, uint32_t stride) { rows = r; ppr = p; rowStride = stride; return *this; }
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
  StreamSim<Vsg_ag, 2> s{W};  // in1: addresses of a random store
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
  Walk w = Walk().ranked(1).from(0x10000).level(0, 3, 0x1000).level(1, 2, 0).tile(2, 2, 0x400);
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
  Walk w = Walk()
               .ranked(2).from(0x200000).level(0, 2, 0x100).level(1, 2, 0).level(2, 2, 0x8000)
               .level(3, 0, 0x12345).tile(4, 1, 0x40);
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
  Walk w = Walk().ranked(0).level(0, 8, 0x80).tile(1, 2, 0);
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
  Walk w = Walk()
               .ranked(3).from(0x1000).level(0, 2, 0x400).level(1, 3, 0x1000).level(2, 1, 0x7777)
               .level(3, 2, 0x20000).tile(2, 3, 0x800);
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
  Walk w = Walk().ranked(1).level(0, 4, 0).level(1, 0, 0).tile(1, 2, 0);
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
  Walk w = Walk().storing().ranked(1).from(0x40000).level(0, 2, 0x2000).tile(1, 4, 0);
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
    Walk st = Walk().storing().ranked(0).from(0x100).level(0, 1, 0).tile(1, 2, 0);
    Walk ld = Walk().ranked(0).from(0x900).level(0, 2, 0).tile(1, 2, 0);
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

// ================================================================ random load
// RandomOffChipLoad (random = 1): in0 is an address stream, every element (per_group = 0)
// or group (per_group = 1) runs the walk at base + index*idx_stride; index 0xFFFFFFFF is a
// padding element (zero beats, no requests). The expected beats and requests come from the
// plain loops below (refRandom), independent of the RTL's walk engine.
namespace {

constexpr uint32_t PAD = 0xFFFFFFFFu;

struct Rnd {
  bool perGroup = false;
  int idxWord = 0;
  uint32_t idxStride = 0;
  int countWord = -1;  ///< a run load: level 0's count from this word of each element (-1: off)
};

CfgVec rndCfg(int ctx, const Walk& w, const Rnd& r, CfgVec c = CfgVec(layout(), stepgen::UnitKind::AddressGen)) {
  c = agCfg(ctx, w, c);
  c.set(ctx, "random", 1);
  c.set(ctx, "per_group", r.perGroup ? 1 : 0);
  c.set(ctx, "idx_word", uint64_t(r.idxWord));
  c.set(ctx, "idx_stride", r.idxStride);
  c.set(ctx, "count", r.countWord >= 0 ? 1 : 0);
  c.set(ctx, "cnt_word", uint64_t(std::max(r.countWord, 0)));
  c.identityMap(ctx, 1);  // a random store reads its addresses on in1
  return c;
}

/// An address beat: the index in word `word`, other words junk.
Beat addrBeat(uint32_t idx, int word, bool last = true, int stop = 0) {
  std::vector<uint32_t> d(W);
  for (int k = 0; k < W; ++k) d[size_t(k)] = 0xDEAD0000u + uint32_t(k);
  d[size_t(word)] = idx;
  return dataBeat(d, last, last ? stop : 0);
}

struct Expect {
  std::vector<Beat> out;
  std::vector<std::vector<uint32_t>> reqs;  ///< P piece addresses per request
};

/// One walk at base + idx*stride: tiles in loop-nest order, walk stops of the tiles (levels
/// among 0..rank-1 that end, counted from level 0), the last beat of the last tile with
/// stop rank + add.
void refWalk(Expect& e, const Walk& w, const Rnd& r, uint32_t idx, int add, int n0 = -1) {
  const bool pad = idx == PAD;
  const uint32_t base = w.base + idx * r.idxStride;
  int n[4];
  for (int k = 0; k < 4; ++k) n[k] = k <= w.rank ? w.n[k] : 1;
  if (n0 >= 0) n[0] = n0;
  std::vector<std::pair<uint32_t, int>> tiles;
  for (int i3 = 0; i3 < n[3]; ++i3)
    for (int i2 = 0; i2 < n[2]; ++i2)
      for (int i1 = 0; i1 < n[1]; ++i1)
        for (int i0 = 0; i0 < n[0]; ++i0) {
          const int ii[4] = {i0, i1, i2, i3};
          int stop = 0;
          for (int k = 0; k < w.rank && ii[k] == n[k] - 1; ++k) ++stop;
          tiles.push_back({base + uint32_t(i3) * w.s[3] + uint32_t(i2) * w.s[2] + uint32_t(i1) * w.s[1] +
                               uint32_t(i0) * w.s[0],
                           stop});
        }
  for (size_t t = 0; t < tiles.size(); ++t) {
    std::vector<uint32_t> pieces;
    for (int row = 0; row < w.rows; ++row)
      for (int q = 0; q < w.ppr; ++q) pieces.push_back(tiles[t].first + uint32_t(row) * w.rowStride + uint32_t(q) * 64u);
    const size_t nb = pieces.size() / P;
    for (size_t j = 0; j < nb; ++j) {
      std::vector<uint32_t> addr(pieces.begin() + long(j * P), pieces.begin() + long(j * P + P));
      std::vector<uint32_t> d;
      for (uint32_t a : addr)
        for (int k = 0; k < 16; ++k) d.push_back(pad ? 0u : pieceWord(a, k));
      if (!pad) e.reqs.push_back(addr);
      const bool last = j + 1 == nb;
      int stop = 0;
      if (last) stop = t + 1 == tiles.size() ? std::min(7, w.rank + add) : tiles[t].second;
      e.out.push_back(dataBeat(d, last, stop));
    }
  }
}

Expect refRandom(const Walk& w, const Rnd& r, const std::vector<Beat>& in) {
  Expect e;
  bool open = false;
  uint32_t gidx = 0;
  for (const Beat& b : in) {
    if (b.kind == DONE) break;
    if (!r.perGroup) {
      if (b.kind == DATA && b.last)
        refWalk(e, w, r, b.data[size_t(r.idxWord)], b.stop, r.countWord >= 0 ? int(b.data[size_t(r.countWord)] & 0xFFFF) : -1);
      if (b.kind == STOP) e.out.push_back(stopBeat(std::min(7, w.rank + b.stop), W));
      continue;
    }
    if (b.kind == DATA && !open) {
      open = true;
      gidx = b.data[size_t(r.idxWord)];
    }
    const int s = b.kind == STOP || b.last ? b.stop : 0;
    if (s >= 1) {
      if (open) refWalk(e, w, r, gidx, s - 1);
      else if (s >= 2) e.out.push_back(stopBeat(std::min(7, w.rank + s - 1), W));
      open = false;
    }
  }
  e.out.push_back(doneBeat(W));
  return e;
}

void checkRandom(AgSim& a, const Expect& e) {
  CHECK(a.s.in[0].empty());
  REQUIRE(a.reqs.size() == e.reqs.size());
  for (size_t j = 0; j < e.reqs.size(); ++j) {
    INFO("request " << j);
    CHECK_FALSE(a.reqs[j].write);
    CHECK(a.reqs[j].addr == e.reqs[j]);
  }
  REQUIRE(a.s.out.size() == e.out.size());
  for (size_t j = 0; j < e.out.size(); ++j) {
    INFO("beat " << j << ": got " << show(a.s.out[j]) << " want " << show(e.out[j]));
    CHECK(a.s.out[j] == e.out[j]);
  }
}

/// Gather: rows of 4 pieces (2 beats), row k at base + k*0x100, index in word 3.
Walk gatherWalk() {
  Walk w = Walk().ranked(0).from(0x80000).level(0, 1, 0).tile(1, 4, 0);
  return w;
}

/// Expert weights: 3 tiles (i0 < 3, s0 = 0x1000) of 2 rows x 2 pieces (rows 0x200 apart),
/// expert e at base + e*0x10000.
Walk expertWalk() {
  Walk w = Walk().ranked(1).from(0x1000000).level(0, 3, 0x1000).tile(2, 2, 0x200);
  return w;
}

}  // namespace

TEST_CASE("sg_ag random load: gather rows by index, padding, groups, empty group", "[rtl][ag][random]") {
  // Groups of indices closed by S1 (the last by S2), padding entries, a DATA beat with
  // last = 0 (ignored), an empty group (STOP 1 -> STOP rank+1) and a rank-1 walk variant
  // (2 tiles per element: the element stop lands on top of the walk's rank).
  const Rnd r{false, 3, 0x100};
  for (int variant = 0; variant < 2; ++variant) {
    Walk w = gatherWalk();
    if (variant == 1) {
      w.rank = 1;
      w.n[0] = 2;
      w.s[0] = 0x40000;
    }
    std::vector<Beat> in = {addrBeat(5, 3),         addrBeat(2, 3),        addrBeat(PAD, 3, true, 1),
                            addrBeat(7, 3, false),  addrBeat(0x1234, 3),   addrBeat(PAD, 3),
                            addrBeat(1, 3, true, 1), stopBeat(1, W),        addrBeat(PAD, 3, true, 1),
                            addrBeat(9, 3, true, 2), doneBeat(W)};
    AgSim a;
    a.latency = [] { return uint64_t(7); };
    a.s.config(rndCfg(0, w, r));
    a.s.in[0] = {in.begin(), in.end()};
    a.s.start();
    REQUIRE(a.s.runUntilDone(2000));
    const Expect e = refRandom(w, r, in);
    // hand check of the reference for variant 0: 8 elements of 2 beats + 1 STOP + DONE,
    // 5 real elements = 10 requests; element 5 reads row 5, the first padding is zeros.
    if (variant == 0) {
      REQUIRE(e.out.size() == 8 * 2 + 2);
      CHECK(e.reqs.size() == 10);
      CHECK(e.reqs[0] == std::vector<uint32_t>{0x80500, 0x80540});
      CHECK(e.out[5] == dataBeat(std::vector<uint32_t>(W, 0u), true, 1));
      CHECK(e.out[12] == stopBeat(1, W));
      CHECK(e.out[17].kind == DONE);
    }
    checkRandom(a, e);
  }
}

TEST_CASE("sg_ag run load: each element's count of tiles from its index (count = 1)", "[rtl][ag][random]") {
  // Meta rows: first tile in word 0, run length in word 5 (the configured n0 = 9 is not
  // used). Runs of 3, 1 and 2 tiles of one row of 4 pieces (2 beats), tile k at base +
  // k*0x100 (idx_stride) and a run's tiles 0x100 apart (s0); the last element closes the
  // stream (stop 1 -> its run's last beat stop 2), then an empty group (STOP 1 -> STOP 2).
  const Rnd r{false, 0, 0x100, 5};
  Walk w = Walk().ranked(1).from(0x40000).level(0, 9, 0x100).tile(1, 4, 0);
  auto meta = [](uint32_t first, uint32_t n, int stop) {
    std::vector<uint32_t> d(W, 0xDEAD0000u);
    d[0] = first, d[5] = n;
    return dataBeat(d, true, stop);
  };
  const std::vector<Beat> in = {meta(4, 3, 0), meta(0, 1, 0), meta(10, 2, 1), stopBeat(1, W), doneBeat(W)};
  AgSim a;
  a.latency = [] { return uint64_t(5); };
  a.s.config(rndCfg(0, w, r));
  a.s.in[0] = {in.begin(), in.end()};
  a.s.start();
  REQUIRE(a.s.runUntilDone(2000));
  const Expect e = refRandom(w, r, in);
  // hand check of the reference: 6 tiles of 2 beats + STOP + DONE; tile 0 of the first run
  // at 0x40400, its third at 0x40600 (stop 1 on its last beat), the last run ends with stop 2.
  REQUIRE(e.out.size() == 6 * 2 + 2);
  CHECK(e.reqs.size() == 12);
  CHECK(e.reqs[0] == std::vector<uint32_t>{0x40400, 0x40440});
  CHECK(e.reqs[4] == std::vector<uint32_t>{0x40600, 0x40640});
  CHECK(e.out[5].stop == 1);
  CHECK(e.reqs[6] == std::vector<uint32_t>{0x40000, 0x40040});
  CHECK(e.out[11].stop == 2);
  CHECK(e.out[12] == stopBeat(2, W));
  checkRandom(a, e);
}

TEST_CASE("sg_ag random load per group: expert weight tiles, stop levels, empty groups", "[rtl][ag][random]") {
  // Index = expert id (word 0). Groups: {3 3 3.S1}, {0.S0 9 .S2}(index 0, walk stop +1),
  // STOP1 (empty group, nothing), STOP2 (empty: STOP rank+1), {5.S0 STOP3} (+2),
  // {PAD.S1} (padding walk), {2.S0 4.S0 STOP1}, DONE.
  const Rnd r{true, 0, 0x10000};
  const Walk w = expertWalk();
  std::vector<Beat> in = {addrBeat(3, 0, false), addrBeat(3, 0, false), addrBeat(3, 0, true, 1),
                          addrBeat(0, 0, true, 0), addrBeat(9, 0, false), addrBeat(9, 0, true, 2),
                          stopBeat(1, W),          stopBeat(2, W),         addrBeat(5, 0, true, 0),
                          stopBeat(3, W),          addrBeat(PAD, 0, true, 1), addrBeat(2, 0, true, 0),
                          addrBeat(4, 0, true, 0), stopBeat(1, W),         doneBeat(W)};
  const Expect e = refRandom(w, r, in);
  // 5 walks of 3 tiles x 2 beats, one STOP, DONE; 4 real walks = 24 requests.
  REQUIRE(e.out.size() == 5 * 6 + 2);
  CHECK(e.reqs.size() == 24);
  CHECK(e.reqs[0] == std::vector<uint32_t>{0x1030000, 0x1030040});
  CHECK(e.reqs[6] == std::vector<uint32_t>{0x1000000, 0x1000040});
  // stops: walk 1 tiles 0 0 1 (rank 1 + 0), walk 2 ends with 2, STOP 2, walk 3 ends with 3.
  CHECK(e.out[1].stop == 0);
  CHECK(e.out[5].stop == 1);
  CHECK(e.out[11].stop == 2);
  CHECK(e.out[12] == stopBeat(2, W));
  CHECK(e.out[18].stop == 3);
  for (bool stall : {false, true}) {
    AgSim a;
    std::mt19937 g(5);
    if (stall) {
      a.latency = [&g] { return uint64_t(1 + g() % 15); };
      a.reqReady = [&g](uint64_t) { return (g() % 4) != 0; };
      a.s.outGate = [&g](uint64_t) { return (g() % 3) != 0; };
      a.s.inGate = [&g](int, uint64_t) { return (g() % 3) == 0; };
    }
    a.s.config(rndCfg(0, w, r));
    a.s.in[0] = {in.begin(), in.end()};
    a.s.start();
    REQUIRE(a.s.runUntilDone(3000));
    checkRandom(a, e);
  }
}

TEST_CASE("sg_ag random load: output back-pressure, address beats with gaps, random latencies",
          "[rtl][ag][random]") {
  std::mt19937 g(77);
  for (int trial = 0; trial < 12; ++trial) {
    const bool pg = trial % 2 == 1;
    const Rnd r{pg, int(g() % W), pg ? 0x10000u : 0x100u};
    Walk w = pg ? expertWalk() : gatherWalk();
    if (trial % 4 == 2) {  // a rank-2 walk per element
      w.rank = 2;
      w.n[0] = 2;
      w.n[1] = 2;
      w.s[0] = 0x800;
      w.s[1] = 0x4000;
    }
    std::vector<Beat> in;
    const int n = 10 + int(g() % 20);
    for (int i = 0; i < n; ++i) {
      const int kind = int(g() % 8);
      const uint32_t idx = (g() % 5) == 0 ? PAD : uint32_t(g() % 64);
      if (kind == 0) in.push_back(stopBeat(1 + int(g() % 3), W));
      else if (kind == 1) in.push_back(addrBeat(idx, r.idxWord, false));
      else in.push_back(addrBeat(idx, r.idxWord, true, (g() % 3) == 0 ? int(1 + g() % 2) : 0));
    }
    in.push_back(stopBeat(1, W));
    in.push_back(doneBeat(W));
    const Expect e = refRandom(w, r, in);
    AgSim a;
    a.latency = [&g] { return uint64_t(1 + g() % 20); };
    a.reqReady = [&g](uint64_t) { return (g() % 3) != 0; };
    a.s.outGate = [&g](uint64_t) { return (g() % 2) != 0; };
    uint64_t gap = 0;
    a.s.inGate = [&g, &gap](int, uint64_t c) {  // bursts of address beats with long gaps
      if (c < gap) return false;
      if ((g() % 6) == 0) gap = c + 1 + g() % 25;
      return true;
    };
    a.s.config(rndCfg(0, w, r));
    a.s.in[0] = {in.begin(), in.end()};
    a.s.start();
    uint64_t maxInFlight = 0;
    for (int i = 0; i < 20000 && !a.s.top->done; ++i) {
      a.s.step();
      maxInFlight = std::max<uint64_t>(maxInFlight, a.reqs.size() - std::min(a.reqs.size(), a.s.out.size()));
    }
    INFO("trial " << trial);
    REQUIRE(a.s.top->done == 1);
    CHECK(maxInFlight <= uint64_t(OUTSTANDING + 1));
    checkRandom(a, e);
  }
}

TEST_CASE("sg_ag random load timing (sg_ag.sv header)", "[rtl][ag][random][timing]") {
  SECTION("element -> first request a+2, walks back to back, padding and STOP jobs") {
    // Walk: 2 tiles of 1 beat (rank 0). DRAM latency 2 (so OUTSTANDING = 4 never limits),
    // output always ready. in0: A(1) B(PAD) STOP1 C(3, S1) DONE, all present from the start.
    Walk w = Walk().ranked(0).from(0x4000).level(0, 2, 0x80).tile(1, 2, 0);
    const Rnd r{false, 0, 0x1000};
    std::vector<Beat> in = {addrBeat(1, 0), addrBeat(PAD, 0), stopBeat(1, W), addrBeat(3, 0, true, 1),
                            doneBeat(W)};
    AgSim a;
    a.latency = [] { return uint64_t(2); };
    a.s.config(rndCfg(0, w, r));
    a.s.in[0] = {in.begin(), in.end()};
    const uint64_t S = a.s.cyc;
    a.s.start();
    REQUIRE(a.s.runUntilDone(200));
    checkRandom(a, refRandom(w, r, in));
    // Input from S+2, one beat per cycle: A in S+2 (taken in S+3), B in S+3, STOP in S+4;
    // in S+5 the queue holds B and STOP, so C waits: B is taken in S+5 (A's last request),
    // C accepted in S+6, DONE in S+7.
    REQUIRE(a.s.inCyc[0].size() == 5);
    CHECK(a.s.inCyc[0] == std::vector<uint64_t>{S + 2, S + 3, S + 4, S + 6, S + 7});
    const uint64_t acc = a.s.inCyc[0][0];
    REQUIRE(a.reqs.size() == 4);
    // A: taken in acc+1, requests in acc+2, acc+3.
    CHECK(a.reqs[0].cyc == acc + 2);
    CHECK(a.reqs[1].cyc == acc + 3);
    const uint64_t cA = a.reqs[1].cyc;  // A's last issue; B taken in the same cycle
    // B (padding) issues in cA+1, cA+2; the STOP job is taken in cA+3 (engine idle), C in
    // cA+4, C's requests in cA+5, cA+6.
    CHECK(a.reqs[2].cyc == cA + 5);
    CHECK(a.reqs[3].cyc == cA + 6);
    // Outputs: A's beats the cycle after their responses (request + 2 + 1); B's zero beats
    // issued in cA+1, cA+2 would be valid in cA+3, cA+4 but follow A's second beat (cA+3):
    // cA+4, cA+5; the STOP issued in cA+3 -> cA+5 -> after B: cA+6; C's beats at request + 3.
    REQUIRE(a.s.outCyc.size() == 8);
    CHECK(a.s.outCyc[0] == a.reqs[0].cyc + 3);
    CHECK(a.s.outCyc[1] == a.reqs[1].cyc + 3);
    CHECK(a.s.outCyc[2] == cA + 4);
    CHECK(a.s.outCyc[3] == cA + 5);
    CHECK(a.s.outCyc[4] == cA + 6);
    CHECK(a.s.out[4] == stopBeat(1, W));
    CHECK(a.s.outCyc[5] == a.reqs[2].cyc + 3);
    CHECK(a.s.outCyc[6] == a.reqs[3].cyc + 3);
    // DONE the cycle after the last data beat.
    CHECK(a.s.outCyc[7] == a.s.outCyc[6] + 1);
    CHECK(a.s.out[7].kind == DONE);
  }
  SECTION("padding walks: one zero beat per cycle, valid 2 cycles after issue") {
    Walk w = Walk().ranked(1).level(0, 3, 0).tile(1, 2, 0);
    const Rnd r{false, 0, 0x1000};
    std::vector<Beat> in = {addrBeat(PAD, 0), addrBeat(PAD, 0, true, 1), doneBeat(W)};
    AgSim a;
    a.s.config(rndCfg(0, w, r));
    a.s.in[0] = {in.begin(), in.end()};
    a.s.start();
    REQUIRE(a.s.runUntilDone(200));
    checkRandom(a, refRandom(w, r, in));
    CHECK(a.reqs.empty());
    // First element accepted in a; taken a+1; issues a+2 .. a+7 (two walks back to back);
    // outputs a+4 .. a+9, DONE a+10.
    const uint64_t acc = a.s.inCyc[0][0];
    REQUIRE(a.s.outCyc.size() == 7);
    for (size_t i = 0; i < 7; ++i) CHECK(a.s.outCyc[i] == acc + 4 + i);
    CHECK(a.s.out[2].stop == 1);  // rank 1 + 0
    CHECK(a.s.out[5].stop == 2);  // rank 1 + 1
  }
  SECTION("per group: lookahead accepts the next groups while a walk issues") {
    // Walk = 3 tiles x 2 beats = 6 requests. Three groups of 3 beats each: all 9 address
    // beats are accepted on consecutive cycles (two closed groups wait in the queue while
    // the first walk issues), and the three walks' 18 requests issue on consecutive cycles.
    const Walk w = expertWalk();
    const Rnd r{true, 0, 0x10000};
    std::vector<Beat> in;
    for (uint32_t ex : {3u, 5u, 7u}) {
      in.push_back(addrBeat(ex, 0, true, 0));
      in.push_back(addrBeat(ex, 0, true, 0));
      in.push_back(addrBeat(ex, 0, true, 1));
    }
    in.push_back(doneBeat(W));
    AgSim a;
    a.latency = [] { return uint64_t(2); };
    a.s.config(rndCfg(0, w, r));
    a.s.in[0] = {in.begin(), in.end()};
    const uint64_t S = a.s.cyc;
    a.s.start();
    REQUIRE(a.s.runUntilDone(300));
    checkRandom(a, refRandom(w, r, in));
    REQUIRE(a.s.inCyc[0].size() == 10);
    for (size_t i = 0; i < 10; ++i) CHECK(a.s.inCyc[0][i] == S + 2 + i);
    REQUIRE(a.reqs.size() == 18);
    // the first group closes with the beat accepted in S+4 -> first request S+6
    CHECK(a.reqs[0].cyc == a.s.inCyc[0][2] + 2);
    for (size_t i = 0; i < 18; ++i) CHECK(a.reqs[i].cyc == a.reqs[0].cyc + i);
  }
  SECTION("queue full: the closing beat of a third pending group waits") {
    const Walk w = expertWalk();
    const Rnd r{true, 0, 0x10000};
    std::vector<Beat> in;
    for (uint32_t ex : {1u, 2u, 3u, 4u}) in.push_back(addrBeat(ex, 0, true, 1));
    in.push_back(doneBeat(W));
    AgSim a;
    a.latency = [] { return uint64_t(2); };
    a.s.config(rndCfg(0, w, r));
    a.s.in[0] = {in.begin(), in.end()};
    a.s.start();
    REQUIRE(a.s.runUntilDone(300));
    checkRandom(a, refRandom(w, r, in));
    // Group 1 accepted in a, taken a+1; groups 2, 3 accepted a+1, a+2 and wait; group 4
    // waits until walk 1's last issue (a+7) takes group 2: accepted in a+8.
    const uint64_t acc = a.s.inCyc[0][0];
    CHECK(a.s.inCyc[0][1] == acc + 1);
    CHECK(a.s.inCyc[0][2] == acc + 2);
    CHECK(a.reqs[5].cyc == acc + 7);
    CHECK(a.s.inCyc[0][3] == acc + 8);
    for (size_t i = 0; i < 24; ++i) CHECK(a.reqs[i].cyc == acc + 2 + i);
  }
}

TEST_CASE("sg_ag random load in context 0, linear load in context 1", "[rtl][ag][random]") {
  // The random context ends when its DONE is accepted; the linear load of context 1 then
  // takes no input (the beat queued behind the first DONE stays in the queue).
  const Walk wr = gatherWalk();
  const Rnd r{false, 1, 0x100};
  Walk wl = Walk().ranked(0).from(0x900).level(0, 2, 0).tile(1, 2, 0);
  AgSim a;
  a.s.config(agCfg(1, wl, rndCfg(0, wr, r)));
  std::vector<Beat> in = {addrBeat(4, 1, true, 1), doneBeat(W)};
  a.s.in[0] = {in.begin(), in.end()};
  a.s.in[0].push_back(addrBeat(6, 1));
  a.s.start();
  REQUIRE(a.s.runUntilDone(500));
  CHECK(int(a.s.top->ctx) == 1);
  CHECK(a.s.in[0].size() == 1);
  const Expect e = refRandom(wr, r, in);
  REQUIRE(a.reqs.size() == e.reqs.size() + 2);
  for (size_t j = 0; j < e.reqs.size(); ++j) CHECK(a.reqs[j].addr == e.reqs[j]);
  CHECK(a.reqs[e.reqs.size()].addr == std::vector<uint32_t>{0x900, 0x940});
  REQUIRE(a.s.out.size() == e.out.size() + 3);
  for (size_t j = 0; j < e.out.size(); ++j) CHECK(a.s.out[j] == e.out[j]);
  CHECK(a.s.out.back().kind == DONE);
}

// ================================================================ random store
namespace {

struct Wr {
  std::vector<uint32_t> addr;
  std::vector<uint32_t> data;
};

/// Writes of a random store: the elements / groups of the address stream (as refRandom,
/// STOP beats produce nothing), each consuming its walk's beats from the DATA beats of
/// the data stream; padding elements consume without writing.
std::vector<Wr> refStore(const Walk& w, const Rnd& r, const std::vector<Beat>& addrIn, const std::vector<Beat>& dataIn) {
  std::vector<std::vector<uint32_t>> data;
  for (const Beat& b : dataIn)
    if (b.kind == DATA) data.push_back(b.data);
  size_t next = 0;
  std::vector<Wr> out;
  auto walk = [&](uint32_t idx) {
    Expect e;
    refWalk(e, w, r, idx, 0);
    for (size_t j = 0; j < e.out.size(); ++j, ++next)
      if (idx != PAD) out.push_back({e.reqs[j], data.at(next)});
  };
  bool open = false;
  uint32_t gidx = 0;
  for (const Beat& b : addrIn) {
    if (b.kind == DONE) break;
    if (!r.perGroup) {
      if (b.kind == DATA && b.last) walk(b.data[size_t(r.idxWord)]);
      continue;
    }
    if (b.kind == DATA && !open) {
      open = true;
      gidx = b.data[size_t(r.idxWord)];
    }
    const int s = b.kind == STOP || b.last ? b.stop : 0;
    if (s >= 1) {
      if (open) walk(gidx);
      open = false;
    }
  }
  REQUIRE(next == data.size());
  return out;
}

std::vector<Beat> storeData(size_t n, int stopEvery) {
  std::vector<Beat> d;
  for (size_t i = 0; i < n; ++i) {
    std::vector<uint32_t> x(W);
    for (int k = 0; k < W; ++k) x[size_t(k)] = 0xC0000000u + uint32_t(i * 256) + uint32_t(k);
    d.push_back(dataBeat(x, i % 2 == 1, 0));
    if (stopEvery > 0 && i % size_t(stopEvery) == size_t(stopEvery - 1)) d.push_back(stopBeat(1, W));
  }
  d.push_back(doneBeat(W));
  return d;
}

void checkStore(AgSim& a, const std::vector<Wr>& want) {
  CHECK(a.s.in[0].empty());
  CHECK(a.s.in[1].empty());
  CHECK(a.s.out.empty());
  REQUIRE(a.reqs.size() == want.size());
  for (size_t j = 0; j < want.size(); ++j) {
    INFO("write " << j);
    CHECK(a.reqs[j].write);
    CHECK(a.reqs[j].addr == want[j].addr);
    CHECK(a.reqs[j].wdata == want[j].data);
  }
}

}  // namespace

TEST_CASE("sg_ag random store: scatter rows by index (in1), data on in0", "[rtl][ag][random]") {
  Walk w = gatherWalk();
  w.store = true;
  const Rnd r{false, 2, 0x100};
  // 6 elements x 2 beats; padding elements consume their data without writes; STOP beats
  // on in1 and in0 are consumed.
  std::vector<Beat> addr = {addrBeat(3, 2),       addrBeat(PAD, 2, true, 1), stopBeat(1, W), addrBeat(7, 2, false),
                            addrBeat(0x40, 2),    addrBeat(1, 2, true, 2),   addrBeat(PAD, 2), addrBeat(9, 2, true, 1),
                            doneBeat(W)};
  const std::vector<Beat> data = storeData(12, 3);
  const std::vector<Wr> want = refStore(w, r, addr, data);
  REQUIRE(want.size() == 8);
  CHECK(want[0].addr == std::vector<uint32_t>{0x80300, 0x80340});
  CHECK(want[2].addr == std::vector<uint32_t>{0x84000, 0x84040});
  for (bool stall : {false, true}) {
    AgSim a;
    std::mt19937 g(9);
    if (stall) {
      a.reqReady = [&g](uint64_t) { return (g() % 3) == 0; };
      a.s.inGate = [&g](int, uint64_t) { return (g() % 3) == 0; };
    }
    a.s.config(rndCfg(0, w, r));
    a.s.in[1] = {addr.begin(), addr.end()};
    a.s.in[0] = {data.begin(), data.end()};
    a.s.start();
    REQUIRE(a.s.runUntilDone(2000));
    checkStore(a, want);
    // the context ends the cycle after the in0 DONE, which follows the in1 DONE
    CHECK(a.s.cyc == a.s.inCyc[0].back() + 1);
    CHECK(a.s.inCyc[0].back() > a.s.inCyc[1].back());
  }
}

TEST_CASE("sg_ag random store per group, and its timing", "[rtl][ag][random][timing]") {
  SECTION("per group, stalls") {
    Walk w = expertWalk();
    w.store = true;
    const Rnd r{true, 0, 0x10000};
    std::vector<Beat> addr = {addrBeat(3, 0, false), addrBeat(4, 0, true, 1), stopBeat(2, W), addrBeat(PAD, 0, true, 1),
                              addrBeat(6, 0, true, 0), stopBeat(3, W), doneBeat(W)};
    const std::vector<Beat> data = storeData(18, 5);
    const std::vector<Wr> want = refStore(w, r, addr, data);
    REQUIRE(want.size() == 12);
    std::mt19937 g(13);
    AgSim a;
    a.reqReady = [&g](uint64_t) { return (g() % 2) == 0; };
    a.s.inGate = [&g](int p, uint64_t) { return (g() % (p == 0 ? 2 : 5)) == 0; };
    a.s.config(rndCfg(0, w, r));
    a.s.in[1] = {addr.begin(), addr.end()};
    a.s.in[0] = {data.begin(), data.end()};
    a.s.start();
    REQUIRE(a.s.runUntilDone(3000));
    checkStore(a, want);
  }
  SECTION("timing: first write a+2, padding one beat per cycle, DONE after the walks") {
    Walk w = gatherWalk();
    w.store = true;
    const Rnd r{false, 0, 0x100};
    std::vector<Beat> addr = {addrBeat(1, 0), addrBeat(PAD, 0), addrBeat(2, 0), doneBeat(W)};
    const std::vector<Beat> data = storeData(6, 0);
    AgSim a;
    a.s.config(rndCfg(0, w, r));
    a.s.in[1] = {addr.begin(), addr.end()};
    a.s.in[0] = {data.begin(), data.end()};
    const uint64_t S = a.s.cyc;
    a.s.start();
    REQUIRE(a.s.runUntilDone(200));
    checkStore(a, refStore(w, r, addr, data));
    // in1: A S+2 (taken S+3), B S+3, C S+4, DONE S+5. in0: A's beats S+4, S+5 (writes in
    // the same cycles; B taken in S+5), B's S+6, S+7 (no writes; C taken in S+7), C's S+8,
    // S+9; DONE S+10 (everything done), done high after it.
    CHECK(a.s.inCyc[1] == std::vector<uint64_t>{S + 2, S + 3, S + 4, S + 5});
    CHECK(a.s.inCyc[0] == std::vector<uint64_t>{S + 4, S + 5, S + 6, S + 7, S + 8, S + 9, S + 10});
    REQUIRE(a.reqs.size() == 4);
    CHECK(a.reqs[0].cyc == S + 4);
    CHECK(a.reqs[1].cyc == S + 5);
    CHECK(a.reqs[2].cyc == S + 8);
    CHECK(a.reqs[3].cyc == S + 9);
    CHECK(a.s.cyc == S + 11);
  }
}

TEST_CASE("sg_ag random load applies the in0 stop map to the address stream", "[rtl][ag][random]") {
  // Map s -> s + 1 (s >= 1), as a Promote would: groups closed by S1 become S2 groups; the
  // reference runs on the mapped stream. per_group = 1, so S1 -> S2 closes a group with
  // walk stop rank + 1; an empty S1 group becomes STOP(rank + 1).
  const Walk w = expertWalk();
  const Rnd r{true, 5, 0x10000};
  uint64_t map = 0;
  for (int s = 0; s < 8; ++s) map |= uint64_t(s == 0 ? 0 : std::min(7, s + 1)) << (3 * s);
  std::vector<Beat> in = {addrBeat(2, 5, true, 0), addrBeat(2, 5, true, 1), stopBeat(1, W),
                          addrBeat(PAD, 5, true, 2), addrBeat(8, 5, true, 1), doneBeat(W)};
  std::vector<Beat> mapped = in;
  for (Beat& b : mapped)
    if (b.kind == STOP || (b.kind == DATA && b.last)) b.stop = b.stop == 0 ? 0 : std::min(7, b.stop + 1);
  CfgVec c = rndCfg(0, w, r);
  c.set(0, "in0_stopmap", map);
  AgSim a;
  a.s.config(c);
  a.s.in[0] = {in.begin(), in.end()};
  a.s.start();
  REQUIRE(a.s.runUntilDone(1000));
  const Expect e = refRandom(w, r, mapped);
  CHECK(e.out[5].stop == 2);         // rank 1 + (2 - 1)
  CHECK(e.out[6] == stopBeat(2, W));  // empty group S1 -> S2 -> STOP(rank + 1)
  checkRandom(a, e);
}
