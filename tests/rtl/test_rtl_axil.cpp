// sg_axi_lite (rtl_templates/sg_axi_lite.sv), the AXI wrapper's control slave, driven as a
// host would: configuration words through CFG_ADDR / CFG_DATA (address auto-increment), the
// register map read back, SLVERR for unknown offsets and partial writes (which change
// nothing), and CTRL start -> STATUS running -> done with CYCLES counted from the start pulse.
#include <catch2/catch.hpp>

#include <memory>
#include <vector>

#include "Vsg_axi_lite.h"
#include "verilated.h"

namespace {

struct Lite {
  VerilatedContext vctx;
  std::unique_ptr<Vsg_axi_lite> t;
  uint64_t cycle = 0;
  struct CfgWrite {
    uint32_t addr, data;
  };
  std::vector<CfgWrite> cfg;        // cfg_we pulses seen
  std::vector<uint64_t> starts;     // cycles with start high

  Lite() : t(std::make_unique<Vsg_axi_lite>(&vctx)) {
    t->rst_n = 0;
    for (int i = 0; i < 3; ++i) edge();
    t->rst_n = 1;
  }
  ~Lite() { t->final(); }
  void edge() {
    t->clk = 0;
    t->eval();
    if (t->rst_n && t->cfg_we) cfg.push_back({t->cfg_addr, t->cfg_wdata});
    if (t->rst_n && t->start) starts.push_back(cycle);
    t->clk = 1;
    t->eval();
    ++cycle;
  }
  // One write: AW and W together until accepted, then B. Returns bresp.
  int write(uint8_t addr, uint32_t data, uint8_t strb = 0xF) {
    t->s_axil_awaddr = addr, t->s_axil_wdata = data, t->s_axil_wstrb = strb;
    t->s_axil_awvalid = 1, t->s_axil_wvalid = 1, t->s_axil_bready = 0;
    for (int n = 0; n < 10; ++n) {
      t->clk = 0;
      t->eval();
      const bool hs = t->s_axil_awready && t->s_axil_wready;
      edge();
      if (hs) break;
    }
    t->s_axil_awvalid = 0, t->s_axil_wvalid = 0, t->s_axil_bready = 1;
    int resp = -1;
    for (int n = 0; n < 10 && resp < 0; ++n) {
      t->clk = 0;
      t->eval();
      if (t->s_axil_bvalid) resp = t->s_axil_bresp;
      edge();
    }
    t->s_axil_bready = 0;
    return resp;
  }
  // One read; returns {rresp, rdata}.
  std::pair<int, uint32_t> read(uint8_t addr) {
    t->s_axil_araddr = addr, t->s_axil_arvalid = 1, t->s_axil_rready = 0;
    for (int n = 0; n < 10; ++n) {
      t->clk = 0;
      t->eval();
      const bool hs = t->s_axil_arready;
      edge();
      if (hs) break;
    }
    t->s_axil_arvalid = 0, t->s_axil_rready = 1;
    std::pair<int, uint32_t> r{-1, 0};
    for (int n = 0; n < 10 && r.first < 0; ++n) {
      t->clk = 0;
      t->eval();
      if (t->s_axil_rvalid) r = {t->s_axil_rresp, t->s_axil_rdata};
      edge();
    }
    t->s_axil_rready = 0;
    return r;
  }
};

}  // namespace

TEST_CASE("axi lite: configuration words, register map, SLVERR", "[axi]") {
  Lite h;
  CHECK(h.read(0x18) == std::pair<int, uint32_t>{0, 0x53544550u});  // ID "STEP"
  CHECK(h.write(0x10, 7) == 0);                                      // CFG_ADDR = 7
  for (uint32_t w : {0xA0u, 0xA1u, 0xA2u}) CHECK(h.write(0x14, w) == 0);
  CHECK(h.read(0x10) == std::pair<int, uint32_t>{0, 10u});          // advanced once per word
  REQUIRE(h.cfg.size() == 3);
  for (uint32_t i = 0; i < 3; ++i) {
    CHECK(h.cfg[i].addr == 7 + i);
    CHECK(h.cfg[i].data == 0xA0 + i);
  }
  CHECK(h.write(0x14, 0xBB, 0x3) == 2);  // partial write: SLVERR, nothing written
  CHECK(h.cfg.size() == 3);
  CHECK(h.read(0x10).second == 10u);
  CHECK(h.write(0x20, 1) == 2);          // unknown offsets
  CHECK(h.read(0x24).first == 2);
  h.t->section = 5;
  CHECK(h.read(0x0C) == std::pair<int, uint32_t>{0, 5u});
  CHECK(h.read(0x04) == std::pair<int, uint32_t>{0, 0u});  // idle: not running, not done
}

TEST_CASE("axi lite: start, running, done and the cycle counter", "[axi]") {
  Lite h;
  h.t->done = 0, h.t->wr_idle = 1, h.t->err = 0;
  CHECK(h.write(0x00, 1) == 0);
  REQUIRE(h.starts.size() == 1);
  const uint64_t s = h.starts[0];                           // fabric cycle 0
  CHECK((h.read(0x04).second & 3u) == 2u);                   // running
  while (h.cycle < s + 40) h.edge();
  h.t->done = 1, h.t->wr_idle = 0;                           // done, a write still open
  while (h.cycle < s + 45) h.edge();
  h.t->wr_idle = 1;                                          // answered: first sampled in cycle s + 45
  h.edge();                                                  // (a read in that cycle sees the state before it)
  const auto st = h.read(0x04);
  CHECK(st.second == 1u);                                    // done, not running
  CHECK(h.read(0x08).second == 45u);                         // the cycle that saw done and wr_idle
  h.t->err = 1;
  CHECK(h.read(0x04).second == 5u);
}
