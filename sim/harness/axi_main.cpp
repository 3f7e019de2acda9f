// Verilator testbench for the AXI wrapper sg_axi_top of a generated fabric (docs/axi.md),
// verilated with `--prefix Vfabric` by flows/verilator_build.sh --axi. Takes the same
// run.json as the flat-port harness (harness_main.cpp) and writes the same result JSON.
//
// It acts as the host and the memory of an FPGA shell: after 4 reset cycles it writes
// CFG_ADDR = 0 and then every bitstream word to CFG_DATA over AXI4-Lite, writes CTRL = 1,
// polls STATUS until done and reads CYCLES, which is the run's cycle count (the wrapper
// counts it: start pulse = cycle 0, done with every write answered). Every AXI master is
// served by AxiMemory (common/axi_mem.hpp) over the DramModel of the flat harness, in cycles
// counted from the start pulse. The master ports are named per AG (m00_axi_* ...), so the
// build generates sg_axi_ports.h: SG_AXI_MASTERS(X) calls X(NN) for every master.
//
// Reloads (more sections than contexts, docs/hardware.md section 5): as the flat harness, the
// host writes section k's words once the fabric shows section k - contexts finished (SECTION
// past it, or at it with dbg_cfg_wait), here over AXI4-Lite: CFG_ADDR when the next word's
// address does not follow the last one, then CFG_DATA, two cycles per write, in place of
// STATUS polls. Watchdog as in the flat harness (no port fire, no AXI master handshake,
// nothing in the memory and no reload being written for watchdog_cycles cycles = deadlock).
#include "Vfabric.h"

#include <verilated.h>

#include "common/axi_mem.hpp"
#include "harness/harness_io.hpp"
#include "harness/vport.hpp"
#include "sg_axi_ports.h"

#include <chrono>
#include <cstdio>
#include <algorithm>
#include <type_traits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

using namespace stepgen;
using namespace stepgen::harness;

namespace {

// AXI-Lite register offsets (rtl_templates/sg_axi_lite.sv).
constexpr uint32_t kCtrl = 0x00, kStatus = 0x04, kCycles = 0x08, kCfgAddr = 0x10, kCfgData = 0x14, kId = 0x18;

/// One AXI master of the wrapper: pointers to its ports (named members of the model, the same
/// types for every master), so the per-cycle loop reaches them without a lookup.
// The Verilator types of the ports (the model's members are references to its signals).
template <class T>
using Port = std::remove_reference_t<T>;
using Bits = Port<decltype(Vfabric::m00_axi_arvalid)>;  // 1- and 2-bit ports
using Len = Port<decltype(Vfabric::m00_axi_arlen)>;
using Addr = Port<decltype(Vfabric::m00_axi_araddr)>;
using Data = Port<decltype(Vfabric::m00_axi_wdata)>;

struct Master {
  Bits *arvalid, *arready, *awvalid, *awready, *wvalid, *wready, *wlast, *rvalid, *rlast, *rready, *bvalid, *bready,
      *rresp, *bresp;
  Len *arlen, *awlen;
  Addr *araddr, *awaddr;
  Data *wdata, *rdata;

  static uint64_t addr(const Addr& a) {
    return vport::getBits(a, 0, std::min(64u, vport::capacityBits(a)));
  }
  /// Drives what the memory offers this cycle; AR, AW and W are always ready.
  void drive(const AxiOffer& o) const {
    static const uint8_t zeros[64] = {};
    *arready = 1, *awready = 1, *wready = 1;
    *rvalid = o.rvalid, *rlast = o.rlast, *rresp = 0;
    vport::writeBytes(*rdata, 0, 64, o.rvalid ? o.rdata : zeros);
    *bvalid = o.bvalid, *bresp = 0;
  }
  /// The handshakes of the edge that ends cycle `c`, in the order AxiMemory asks for;
  /// returns whether any happened.
  bool transfer(AxiMemory& mem, int p, const AxiOffer& o, uint64_t c) const {
    bool any = false;
    if (*arvalid) mem.ar(p, addr(*araddr), *arlen, c), any = true;
    if (*awvalid) mem.aw(p, addr(*awaddr), *awlen, c), any = true;
    if (*wvalid) mem.w(p, reinterpret_cast<const uint8_t*>(wdata->data()), *wlast, c), any = true;
    if (o.rvalid && *rready) mem.r(p, c), any = true;
    if (o.bvalid && *bready) mem.b(p, c), any = true;
    return any;
  }
};

std::vector<Master> masters(Vfabric* t) {
  std::vector<Master> m;
#define SG_MASTER(NN)                                                                                            \
  m.push_back(Master{&t->m##NN##_axi_arvalid, &t->m##NN##_axi_arready, &t->m##NN##_axi_awvalid,                 \
                     &t->m##NN##_axi_awready, &t->m##NN##_axi_wvalid, &t->m##NN##_axi_wready,                   \
                     &t->m##NN##_axi_wlast, &t->m##NN##_axi_rvalid, &t->m##NN##_axi_rlast,                      \
                     &t->m##NN##_axi_rready, &t->m##NN##_axi_bvalid, &t->m##NN##_axi_bready,                    \
                     &t->m##NN##_axi_rresp, &t->m##NN##_axi_bresp, &t->m##NN##_axi_arlen,                       \
                     &t->m##NN##_axi_awlen, &t->m##NN##_axi_araddr, &t->m##NN##_axi_awaddr,                     \
                     &t->m##NN##_axi_wdata, &t->m##NN##_axi_rdata});
  SG_AXI_MASTERS(SG_MASTER)
#undef SG_MASTER
  return m;
}

/// The host's side of the AXI4-Lite port: one write or read in flight, advanced once per
/// cycle (drive() with clk low before eval, sample() after it).
class LiteHost {
 public:
  explicit LiteHost(Vfabric* t) : t_(t) {}
  bool busy() const { return phase_ != Idle; }
  void write(uint32_t addr, uint32_t data) { addr_ = addr, data_ = data, phase_ = WAddr, read_ = false; }
  void read(uint32_t addr) { addr_ = addr, phase_ = RAddr, read_ = true; }
  /// The last transaction was a read (readData() is what it read).
  bool wasRead() const { return read_; }
  uint32_t readData() const { return data_; }
  uint32_t resp() const { return resp_; }
  void drive() {
    t_->s_axil_awvalid = phase_ == WAddr;
    t_->s_axil_wvalid = phase_ == WAddr;
    t_->s_axil_awaddr = addr_;
    t_->s_axil_wdata = data_;
    t_->s_axil_wstrb = 0xF;
    t_->s_axil_bready = phase_ == WResp;
    t_->s_axil_arvalid = phase_ == RAddr;
    t_->s_axil_araddr = addr_;
    t_->s_axil_rready = phase_ == RData;
  }
  /// Returns true when the transaction completed at this edge.
  bool sample() {
    switch (phase_) {
      case WAddr:
        if (t_->s_axil_awready && t_->s_axil_wready) phase_ = WResp;
        return false;
      case WResp:
        if (!t_->s_axil_bvalid) return false;
        resp_ = t_->s_axil_bresp, phase_ = Idle;
        return true;
      case RAddr:
        if (t_->s_axil_arready) phase_ = RData;
        return false;
      case RData:
        if (!t_->s_axil_rvalid) return false;
        data_ = t_->s_axil_rdata, resp_ = t_->s_axil_rresp, phase_ = Idle;
        return true;
      default:
        return false;
    }
  }

 private:
  enum Phase { Idle, WAddr, WResp, RAddr, RData };
  Vfabric* t_;
  Phase phase_ = Idle;
  uint32_t addr_ = 0, data_ = 0, resp_ = 0;
  bool read_ = false;
};

int run(const RunDesc& rd, VerilatedContext* ctx, RunResult& res) {
  if (!rd.trace.empty()) throw std::runtime_error("the AXI harness does not write waveforms: run without --trace");
  const std::vector<uint32_t> words = readBitstream(rd.bitstream);
  DramModel dram(rd.timing, rd.dramBytes, rd.nAg);
  for (const RunRegion& g : rd.inputs) loadInput(g, dram);
  AxiMemory mem(dram);

  auto top = std::make_unique<Vfabric>(ctx, "TOP");
  std::vector<Master> ms = masters(top.get());
  if (int(ms.size()) != rd.nAg)
    throw std::runtime_error("the compiled wrapper has " + std::to_string(ms.size()) + " AXI masters, the run description " +
                             std::to_string(rd.nAg) + " AGs");
  if (vport::capacityBits(top->m00_axi_rdata) != 512) throw std::runtime_error("m00_axi_rdata is not 512 bits wide");
  LiteHost host(top.get());
  std::vector<AxiOffer> offers(ms.size());
  const auto tick = [&] {
    top->clk = 0;
    top->eval();
    top->clk = 1;
    top->eval();
  };

  top->rst_n = 0;
  for (Master& m : ms) m.drive(AxiOffer{});
  host.drive();
  for (int i = 0; i < 4; ++i) tick();
  top->rst_n = 1;

  // Configuration over AXI4-Lite: CFG_ADDR = 0, then every word to CFG_DATA.
  uint64_t h = 0;  // harness cycles since reset release
  const auto lite = [&](bool write, uint32_t addr, uint32_t data) {
    write ? host.write(addr, data) : host.read(addr);
    for (int n = 0;; ++n) {
      host.drive();
      top->clk = 0;
      top->eval();
      const bool doneNow = host.sample();
      top->clk = 1;
      top->eval();
      ++h;
      if (doneNow) break;
      if (n > 1000) throw std::runtime_error("AXI4-Lite transaction at offset " + std::to_string(addr) + " not answered");
    }
    if (host.resp() != 0)
      throw std::runtime_error("AXI4-Lite " + std::string(write ? "write" : "read") + " at offset " + std::to_string(addr) +
                               " answered SLVERR");
    return host.readData();
  };
  if (lite(false, kId, 0) != 0x53544550u) throw std::runtime_error("ID register does not read 0x53544550 ('STEP')");
  lite(true, kCfgAddr, 0);
  for (uint32_t w : words) lite(true, kCfgData, w);
  if (lite(false, kCfgAddr, 0) != words.size())
    throw std::runtime_error("CFG_ADDR did not advance once per configuration word");

  // CTRL = 1: its AW/W handshake is at the end of harness cycle s, so `start` is high in
  // cycle s + 1, the cycle its B response is offered: fabric cycle 0, from which the DRAM
  // model counts. Nothing reaches the memory before it.
  host.write(kCtrl, 1);
  std::optional<uint64_t> startH;
  enum { Starting, Polling, ReadingCycles, Finished } step = Starting;
  std::string status;
  uint64_t idle = 0, cycles = 0, c = 0;
  FabricWatch watch;
  ReloadCursor reloads(rd.reloads);
  std::optional<std::pair<uint32_t, uint32_t>> pending;  // a reload word taken, not yet written
  uint32_t cfgPtr = uint32_t(words.size());               // CFG_ADDR as the wrapper holds it
  const unsigned nport = vport::capacityBits(top->dbg_port_fire);
  const auto t0 = std::chrono::steady_clock::now();
  for (;; ++h) {
    c = startH ? h - *startH : 0;
    if (c >= rd.maxCycles) {
      status = "timeout";
      break;
    }
    top->clk = 0;
    host.drive();
    for (size_t p = 0; p < ms.size(); ++p) ms[p].drive(offers[p] = mem.offer(int(p), c));
    top->eval();

    bool active = false;
    for (size_t p = 0; p < ms.size(); ++p) active = ms[p].transfer(mem, int(p), offers[p], c) || active;
    if (host.sample()) {
      if (host.resp() != 0) throw std::runtime_error("AXI4-Lite answered SLVERR during the run");
      if (step == Starting) {  // B of CTRL = 1: `start` is high in this very cycle
        step = Polling;
        startH = h;
        c = 0;
      } else if (step == Polling && host.wasRead() && (host.readData() & 1u)) {
        if (host.readData() & 4u) throw std::runtime_error("an AXI master saw an error response");
        step = ReadingCycles;
      } else if (step == ReadingCycles && host.wasRead()) {
        cycles = host.readData();
        step = Finished;
      }
    }
    if (startH) {
      const bool fire = watch.sample(*top, rd.nMu, c);
      reloads.update(size_t(top->dbg_section), top->dbg_cfg_wait);
      active = active || fire || !mem.idle() || reloads.writing() || pending;
    }
    if (step == Finished) {
      status = "ok";
      break;
    }
    if (!pending && reloads.writing() && step == Polling) pending = reloads.next();
    if (!host.busy() && pending) {
      const auto [addr, word] = *pending;
      if (cfgPtr != addr) {
        host.write(kCfgAddr, addr);
        cfgPtr = addr;
      } else {
        host.write(kCfgData, word);
        ++cfgPtr, pending.reset();
      }
    } else if (!host.busy()) {
      host.read(step == ReadingCycles ? kCycles : kStatus);
    }
    idle = active || !startH ? 0 : idle + 1;
    if (idle >= rd.watchdog) {
      status = "deadlock";
      break;
    }
    top->clk = 1;
    top->eval();
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (status != "ok") res.stuck = stuckPorts(*top, rd, nport);
  top->final();
  for (const RunRegion& g : rd.outputs) writeOutput(g, dram);

  res.status = status;
  res.cycles = status == "ok" ? cycles : c;
  if (status == "ok") res.doneCycle = cycles;
  fillCounters(res, dram, watch, reloads, h, wall);
  res.configWords = words.size();
  res.configCycles = startH ? *startH : h;
  if (status == "ok") {
    std::printf("ok: %llu cycles through AXI (configuration %llu cycles for %zu words)\n", (unsigned long long)cycles,
                (unsigned long long)res.configCycles, words.size());
    return kOk;
  }
  return reportUnfinished(res, status, rd, c);
}

}  // namespace

int main(int argc, char** argv) { return harness::harnessMain(argc, argv, run); }
