// sg_axi_master (rtl_templates/sg_axi_master.sv) verilated with P=2 pieces per beat, AB=32,
// MAX_RD=2, against a scripted AXI slave written here: bursts formed from the piece
// addresses (contiguous pieces merge, a 4 KiB boundary or a gap splits), WLAST, read data
// gathered in order into one response, the read-burst limit, wr_idle until B, err on
// SLVERR, AXI valid/payload stability under random back-pressure, and a random soak
// against a reference list of bursts worked out from the rule in the module header.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <deque>
#include <memory>
#include <random>
#include <vector>

#include "Vsg_axi_master.h"
#include "verilated.h"

namespace {

constexpr int P = 2;

struct Burst {
  uint32_t addr;
  unsigned len;  // AXI len: beats - 1
  bool write;
  bool operator==(const Burst& o) const { return addr == o.addr && len == o.len && write == o.write; }
};

struct Req {
  bool write;
  uint32_t addr[P];
  uint32_t tag;  // write data word w of piece k = tag * 256 + k * 16 + w
};

// The burst rule of sg_axi_master.sv: piece i + 1 joins piece i's burst iff it follows it
// (+64) and does not start a 4 KiB page.
std::vector<Burst> bursts(const Req& r) {
  std::vector<Burst> v;
  for (int i = 0; i < P; ++i) {
    const bool joins = i > 0 && r.addr[i] == r.addr[i - 1] + 64 && r.addr[i] % 4096 != 0;
    if (joins) v.back().len++;
    else v.push_back({r.addr[i], 0, r.write});
  }
  return v;
}

// The slave's read data: word w of the 64-byte piece at byte address a.
uint32_t readWord(uint32_t a, int w) { return a * 7u + uint32_t(w) + 1u; }

struct Sim {
  VerilatedContext vctx;
  std::unique_ptr<Vsg_axi_master> t;
  std::mt19937 rng{7};
  int readyPct = 100;        // chance that arready / awready / wready is high in a cycle
  unsigned readLatency = 3;  // cycles from AR to the first R beat
  bool slverr = false;
  bool answerReads = true;
  // What the slave saw, and what it still owes.
  std::vector<Burst> seen;
  std::vector<uint32_t> wbeats;               // first word of every W beat, in order
  std::vector<bool> wlasts;                   // its WLAST
  std::vector<uint64_t> wcycles;              // the cycle it was taken
  unsigned nAw = 0, nWBursts = 0, nB = 0;     // AWs taken, W bursts complete, B responses owed so far
  struct Pending { uint64_t due; uint32_t addr; unsigned beat, beats; };
  std::deque<Pending> reads;
  std::deque<uint64_t> bDue;
  std::vector<std::vector<uint32_t>> responses;  // first word of every piece of each response
  uint64_t cycle = 0;
  // stability: what was offered unanswered last cycle
  bool arPend = false, awPend = false, wPend = false;
  uint32_t arA = 0, awA = 0;
  unsigned arL = 0, awL = 0;

  Sim() : t(std::make_unique<Vsg_axi_master>(&vctx)) {
    t->rst_n = 0;
    for (int i = 0; i < 3; ++i) edge();
    t->rst_n = 1;
  }
  ~Sim() { t->final(); }
  void edge() {
    t->clk = 0;
    t->eval();
    t->clk = 1;
    t->eval();
  }
  bool coin() { return int(rng() % 100) < readyPct; }

  // One cycle: drive the slave side, optionally a request, check and record handshakes.
  // Returns true if the request (when given) was accepted.
  bool step(const Req* r) {
    t->clk = 0;
    t->req_valid = r != nullptr;
    if (r) {
      t->req_write = r->write;
      t->req_addr = uint64_t(r->addr[0]) | uint64_t(r->addr[1]) << 32;
      for (int k = 0; k < P; ++k)
        for (int w = 0; w < 16; ++w) t->req_wdata[k * 16 + w] = r->tag * 256 + uint32_t(k) * 16 + uint32_t(w);
    }
    t->m_axi_arready = coin();
    t->m_axi_awready = coin();
    t->m_axi_wready = coin();
    const bool rv = answerReads && !reads.empty() && reads.front().due <= cycle;
    t->m_axi_rvalid = rv;
    if (rv) {
      const Pending& p = reads.front();
      for (int w = 0; w < 16; ++w) t->m_axi_rdata[w] = readWord(p.addr + 64 * p.beat, w);
      t->m_axi_rlast = p.beat + 1 == p.beats;
    }
    t->m_axi_rresp = slverr ? 2 : 0;
    const bool bv = !bDue.empty() && bDue.front() <= cycle;
    t->m_axi_bvalid = bv;
    t->m_axi_bresp = slverr ? 2 : 0;
    t->eval();

    // AXI4 A3.2.1: once valid, valid and payload hold until the handshake.
    if (arPend) {
      CHECK(t->m_axi_arvalid);
      CHECK(t->m_axi_araddr == arA);
      CHECK(t->m_axi_arlen == arL);
    }
    if (awPend) {
      CHECK(t->m_axi_awvalid);
      CHECK(t->m_axi_awaddr == awA);
      CHECK(t->m_axi_awlen == awL);
    }
    if (wPend) CHECK(t->m_axi_wvalid);
    CHECK(t->m_axi_rready);
    CHECK(t->m_axi_bready);
    if (t->m_axi_arvalid) CHECK(t->m_axi_arsize == 6);
    if (t->m_axi_arvalid) CHECK(t->m_axi_arburst == 1);

    const bool accepted = r && t->req_ready;
    if (t->m_axi_arvalid && t->m_axi_arready) {
      seen.push_back({t->m_axi_araddr, t->m_axi_arlen, false});
      reads.push_back({cycle + readLatency, t->m_axi_araddr, 0, unsigned(t->m_axi_arlen) + 1});
    }
    if (t->m_axi_awvalid && t->m_axi_awready) {
      seen.push_back({t->m_axi_awaddr, t->m_axi_awlen, true});
      ++nAw;
    }
    if (t->m_axi_wvalid && t->m_axi_wready) {  // W may lead its AW (AXI allows it)
      wbeats.push_back(t->m_axi_wdata[0]);
      wlasts.push_back(t->m_axi_wlast);
      wcycles.push_back(cycle);
      nWBursts += t->m_axi_wlast;
    }
    for (; nB < std::min(nAw, nWBursts); ++nB) bDue.push_back(cycle + 2);  // B after both AW and last W
    if (rv) {
      Pending& p = reads.front();
      if (p.beat == 0 && (responses.empty() || responses.back().size() == P)) responses.emplace_back();
      responses.back().push_back(readWord(p.addr + 64 * p.beat, 0));
      if (++p.beat == p.beats) reads.pop_front();
    }
    if (bv) bDue.pop_front();
    arPend = t->m_axi_arvalid && !t->m_axi_arready;
    awPend = t->m_axi_awvalid && !t->m_axi_awready;
    wPend = t->m_axi_wvalid && !t->m_axi_wready;
    arA = t->m_axi_araddr, arL = t->m_axi_arlen, awA = t->m_axi_awaddr, awL = t->m_axi_awlen;
    gotResp.push_back(t->resp_valid);
    if (t->resp_valid) {
      std::vector<uint32_t> v;
      for (int k = 0; k < P; ++k) v.push_back(t->resp_data[k * 16]);
      respData.push_back(v);
    }
    t->clk = 1;
    t->eval();
    ++cycle;
    return accepted;
  }
  std::vector<bool> gotResp;
  std::vector<std::vector<uint32_t>> respData;

  void issue(const Req& r) {
    for (int n = 0; n < 1000; ++n)
      if (step(&r)) return;
    FAIL("request not accepted in 1000 cycles");
  }
  void idle(int n) {
    for (int i = 0; i < n; ++i) step(nullptr);
  }
};

}  // namespace

TEST_CASE("axi master: pieces become bursts (merge, 4 KiB split, gap split)", "[axi]") {
  Sim s;
  s.issue({false, {0x1000, 0x1040}, 0});   // contiguous: one 2-beat burst
  s.issue({false, {0x0FC0, 0x1000}, 0});   // +64 but a new 4 KiB page: two bursts
  s.issue({false, {0x2000, 0x3000}, 0});   // gap
  s.issue({true, {0x0100, 0x0140}, 5});    // contiguous write
  s.issue({true, {0x0140, 0x0100}, 6});    // descending write: two bursts
  s.idle(20);
  const std::vector<Burst> want = {{0x1000, 1, false}, {0x0FC0, 0, false}, {0x1000, 0, false}, {0x2000, 0, false},
                                   {0x3000, 0, false}, {0x0100, 1, true},  {0x0140, 0, true},  {0x0100, 0, true}};
  CHECK(s.seen == want);
  // W data: piece k of a request carries words tag*256 + k*16 + w; WLAST ends each burst.
  CHECK(s.wbeats == std::vector<uint32_t>{5 * 256, 5 * 256 + 16, 6 * 256, 6 * 256 + 16});
  CHECK(s.wlasts == std::vector<bool>{false, true, true, true});
  // Three read responses, in request order, each the request's pieces in order.
  const std::vector<std::vector<uint32_t>> resp = {{readWord(0x1000, 0), readWord(0x1040, 0)},
                                                   {readWord(0x0FC0, 0), readWord(0x1000, 0)},
                                                   {readWord(0x2000, 0), readWord(0x3000, 0)}};
  CHECK(s.respData == resp);
}

TEST_CASE("axi master: W beats back to back, and wr_idle until B", "[axi]") {
  Sim s;
  // Six 2-piece writes offered back to back: the 2-entry FIFO never empties, so the W
  // channel (2 beats per request) is busy in 12 consecutive cycles, starting with the AW
  // of the first request one cycle after it was taken.
  const uint64_t c0 = s.cycle;
  for (int i = 0; i < 6; ++i) s.issue({true, {uint32_t(0x8000 + 128 * i), uint32_t(0x8040 + 128 * i)}, uint32_t(i)});
  s.idle(20);
  REQUIRE(s.wcycles.size() == 12);
  for (size_t i = 0; i < 12; ++i) CHECK(s.wcycles[i] == c0 + 1 + i);
  // One write: wr_idle low from the cycle after it is taken until the cycle after B.
  CHECK(s.t->wr_idle);
  s.issue({true, {0x100, 0x140}, 1});  // taken at edge E0
  CHECK_FALSE(s.t->wr_idle);
  s.idle(1);   // E1: AW + W beat 0
  s.idle(1);   // E2: W beat 1 (last); the slave offers B 2 cycles later
  CHECK_FALSE(s.t->wr_idle);
  s.idle(1);   // E3
  CHECK_FALSE(s.t->wr_idle);
  s.idle(1);   // E4: B taken
  CHECK(s.t->wr_idle);
  CHECK_FALSE(s.t->err);
}

TEST_CASE("axi master: at most MAX_RD read bursts in flight; err on SLVERR", "[axi]") {
  Sim s;
  s.answerReads = false;
  for (int i = 0; i < 2; ++i) s.issue({false, {uint32_t(0x100 * i), uint32_t(0x100 * i + 0x1000)}, 0});
  s.idle(10);
  CHECK(s.seen.size() == 2);  // MAX_RD = 2: the second request's bursts wait
  s.answerReads = true;
  s.slverr = true;
  s.idle(20);
  CHECK(s.seen.size() == 4);
  CHECK(s.respData.size() == 2);
  CHECK(s.t->err);
}

TEST_CASE("axi master: random requests under random back-pressure", "[axi]") {
  Sim s;
  s.readyPct = 40;
  s.readLatency = 5;
  std::mt19937 g(11);
  std::vector<Burst> want;
  std::vector<std::vector<uint32_t>> wantResp;
  std::vector<uint32_t> wantW;  // first word of every W beat, in order
  std::vector<bool> wantLast;
  for (int n = 0; n < 300; ++n) {
    Req r{g() % 3 == 0, {0, 0}, uint32_t(n)};
    r.addr[0] = (g() % 256) * 64;
    // next piece: contiguous (maybe across a page), or anywhere
    r.addr[1] = g() % 2 ? r.addr[0] + 64 : (g() % 256) * 64;
    for (const Burst& b : bursts(r)) want.push_back(b);
    if (r.write) {
      for (int k = 0; k < P; ++k) wantW.push_back(r.tag * 256 + uint32_t(k) * 16);
      for (const Burst& b : bursts(r))
        for (unsigned k = 0; k <= b.len; ++k) wantLast.push_back(k == b.len);
    } else {
      wantResp.push_back({readWord(r.addr[0], 0), readWord(r.addr[1], 0)});
    }
    s.issue(r);
    if (g() % 4 == 0) s.idle(int(g() % 3));
  }
  s.idle(200);
  CHECK(s.seen == want);
  CHECK(s.respData == wantResp);
  CHECK(s.wbeats == wantW);
  CHECK(s.wlasts == wantLast);
  CHECK(s.t->wr_idle);
  CHECK(s.reads.empty());
}
