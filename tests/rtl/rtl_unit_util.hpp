// Helpers shared by the unit-level RTL tests (tests/rtl/test_rtl_*.cpp, tests/rtl_units.cmake):
// the small architecture the committed test package tests/rtl/sg_cfg_pkg.sv comes from,
// beat packing (docs/hardware.md section 1), per-context configuration packing with
// ConfigLayout, and bit accessors for Verilator ports of any width.
#pragma once

#include <catch2/catch.hpp>
#include <verilated.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "arch/arch_model.hpp"
#include "arch/config_layout.hpp"

namespace rtlu {

/// The architecture of the committed test package tests/rtl/sg_cfg_pkg.sv (checked by the
/// test rtl_units_cfg_pkg): a 2x2 grid AG CU / MU CU, 2 contexts, reach 3 (3 candidates per
/// port -> SRC_BITS 2), 1 KiB CU buffer (256 words, BUF_ADDR_BITS 8), 2 KiB MU (512 words,
/// MU_ADDR_BITS 9), 32-bit off-chip addresses.
inline stepgen::ArchModel testArch() {
  using namespace stepgen;
  ArchModel a;
  a.name = "rtl_units_test";
  a.cols = 2;
  a.rows = 2;
  a.contexts = 2;
  a.cu.lanes = 8;
  a.cu.flopsPerCycle = 16;
  a.cu.functions = {"matmul", "silu", "mul", "add", "accum", "retile"};
  a.cu.format = NumberFormat::Fp32;
  a.cu.bufferBytes = 1024;
  a.mu.capacityBytes = 2048;
  a.mu.bytesPerCycle = 8;
  a.offchip.addressBits = 32;
  a.link.reach = 3;
  a.link.widthBits = 512;
  const UnitKind kinds[4] = {UnitKind::AddressGen, UnitKind::Compute, UnitKind::Memory,
                             UnitKind::Compute};
  for (int i = 0; i < 4; ++i) {
    UnitSite s;
    s.kind = kinds[i];
    s.x = i % 2;
    s.y = i / 2;
    a.units.push_back(s);
  }
  return a;
}

// ---------------------------------------------------------------- port bit access
template <class T, std::enable_if_t<std::is_integral_v<T>, int> = 0>
inline uint64_t getBits(const T& s, unsigned lsb, unsigned width) {
  const uint64_t m = width >= 64 ? ~uint64_t(0) : ((uint64_t(1) << width) - 1);
  return (uint64_t(s) >> lsb) & m;
}
template <std::size_t N>
inline uint64_t getBits(const VlWide<N>& s, unsigned lsb, unsigned width) {
  uint64_t r = 0;
  for (unsigned i = 0; i < width; ++i) {
    const unsigned b = lsb + i;
    if (b / 32 >= N) throw std::out_of_range("getBits outside port");
    r |= uint64_t((s.m_storage[b / 32] >> (b % 32)) & 1u) << i;
  }
  return r;
}
template <class T, std::enable_if_t<std::is_integral_v<T>, int> = 0>
inline void setBits(T& s, unsigned lsb, unsigned width, uint64_t v) {
  const uint64_t m = (width >= 64 ? ~uint64_t(0) : ((uint64_t(1) << width) - 1)) << lsb;
  s = static_cast<T>((uint64_t(s) & ~m) | ((v << lsb) & m));
}
template <std::size_t N>
inline void setBits(VlWide<N>& s, unsigned lsb, unsigned width, uint64_t v) {
  for (unsigned i = 0; i < width; ++i) {
    const unsigned b = lsb + i;
    if (b / 32 >= N) throw std::out_of_range("setBits outside port");
    const uint32_t bit = uint32_t((v >> i) & 1u) << (b % 32);
    s.m_storage[b / 32] = (s.m_storage[b / 32] & ~(uint32_t(1) << (b % 32))) | bit;
  }
}
/// Sets a port of any width from a bit vector given as 32-bit words (word 0 = bits 31:0).
template <class T>
inline void setWords(T& s, const std::vector<uint32_t>& words, unsigned nbits) {
  for (unsigned b = 0; b < nbits; b += 32) {
    unsigned w = std::min(32u, nbits - b);
    setBits(s, b, w, b / 32 < words.size() ? words[b / 32] : 0u);
  }
}

// ---------------------------------------------------------------- beats
enum Kind : int { DATA = 0, STOP = 1, DONE = 2 };

/// One stream beat: {kind[1:0], last, stop[2:0], data[32*W-1:0]} MSB first.
struct Beat {
  int kind = DATA;
  bool last = false;
  int stop = 0;
  std::vector<uint32_t> data;  ///< W words (word 0 in the low bits)
  bool operator==(const Beat& o) const {
    return kind == o.kind && last == o.last && stop == o.stop && data == o.data;
  }
};

inline Beat dataBeat(std::vector<uint32_t> d, bool last = false, int stop = 0) {
  Beat b;
  b.kind = DATA;
  b.last = last;
  b.stop = stop;
  b.data = std::move(d);
  return b;
}
inline Beat stopBeat(int stop, int w) {
  Beat b;
  b.kind = STOP;
  b.stop = stop;
  b.data.assign(size_t(w), 0u);
  return b;
}
inline Beat doneBeat(int w) {
  Beat b;
  b.kind = DONE;
  b.data.assign(size_t(w), 0u);
  return b;
}

inline std::string show(const Beat& b) {
  std::string s = b.kind == DATA ? "D" : b.kind == STOP ? "S" : b.kind == DONE ? "E" : "?";
  s += "(last=" + std::to_string(int(b.last)) + ",stop=" + std::to_string(b.stop) + ",";
  char buf[16];
  for (size_t i = 0; i < b.data.size() && i < 4; ++i) {
    std::snprintf(buf, sizeof buf, "%08x ", b.data[i]);
    s += buf;
  }
  return s + ")";
}

template <class T>
inline void putBeat(T& port, const Beat& b, int w) {
  const unsigned dw = unsigned(32 * w);
  for (int i = 0; i < w; ++i) setBits(port, unsigned(32 * i), 32, i < int(b.data.size()) ? b.data[size_t(i)] : 0u);
  setBits(port, dw, 3, uint64_t(b.stop));
  setBits(port, dw + 3, 1, b.last ? 1u : 0u);
  setBits(port, dw + 4, 2, uint64_t(b.kind));
}
template <class T>
inline Beat getBeat(const T& port, int w) {
  const unsigned dw = unsigned(32 * w);
  Beat b;
  b.data.resize(size_t(w));
  for (int i = 0; i < w; ++i) b.data[size_t(i)] = uint32_t(getBits(port, unsigned(32 * i), 32));
  b.stop = int(getBits(port, dw, 3));
  b.last = getBits(port, dw + 3, 1) != 0;
  b.kind = int(getBits(port, dw + 4, 2));
  return b;
}

/// Every beat equal to the expected one (the first difference reported), then the count.
inline void requireBeats(const std::vector<Beat>& got, const std::vector<Beat>& want) {
  for (size_t i = 0; i < std::min(got.size(), want.size()); ++i) {
    INFO("beat " << i << " got " << show(got[i]) << " want " << show(want[i]));
    REQUIRE(got[i] == want[i]);
  }
  REQUIRE(got.size() == want.size());
}

// ---------------------------------------------------------------- configuration
/// Configuration vector of one unit kind, all contexts, packed with ConfigLayout.
class CfgVec {
 public:
  CfgVec(const stepgen::ConfigLayout& l, stepgen::UnitKind k)
      : kl_(&l.kindLayout(k)), bits_(size_t(l.contexts) * size_t(kl_->bits), false) {}
  void set(int ctx, const std::string& field, uint64_t v) {
    const stepgen::ConfigField& f = kl_->field(field);
    if (f.width < 64 && (v >> f.width) != 0)
      throw std::out_of_range("value does not fit field " + field);
    for (int i = 0; i < f.width; ++i)
      bits_[size_t(ctx) * size_t(kl_->bits) + size_t(f.lsb + i)] = ((v >> i) & 1u) != 0;
  }
  /// Identity stop map (entry s = s) for port p of context ctx.
  void identityMap(int ctx, int port) { set(ctx, "in" + std::to_string(port) + "_stopmap", identityStopMap()); }
  static uint64_t identityStopMap() {
    uint64_t m = 0;
    for (int s = 0; s < 8; ++s) m |= uint64_t(s) << (3 * s);
    return m;
  }
  template <class T>
  void apply(T& port) const {
    for (size_t i = 0; i < bits_.size(); ++i) setBits(port, unsigned(i), 1, bits_[i] ? 1u : 0u);
  }

 private:
  const stepgen::KindLayout* kl_;
  std::vector<bool> bits_;
};

// ---------------------------------------------------------------- clocked driver
/// True for a unit with an in0_next port (sg_cu: the next head of in0, for its block RAM).
template <class V, class = void>
struct HasIn0Next : std::false_type {};
template <class V>
struct HasIn0Next<V, std::void_t<decltype(std::declval<V&>().in0_next)>> : std::true_type {};

/// Drives a verilated unit (ports clk, rst_n, cfg, start, done, in0.., out_*) cycle by cycle.
/// Input queues present their head beat whenever inGate allows (default: always); the
/// output is accepted whenever outGate allows (default: always). Cycle c is the c-th call
/// of step(): inputs are set, the design is evaluated with clk low, handshakes
/// (valid && ready) are sampled, then the rising edge is applied. inCyc / outCyc record the
/// cycle of every accepted beat.
template <class V, int NIN>
class StreamSim {
 public:
  explicit StreamSim(int w) : w_(w), top(std::make_unique<V>(&vctx)) {
    top->clk = 0;
    top->rst_n = 0;
    top->start = 0;
    top->out_ready = 0;
    top->in0_valid = 0;
    if constexpr (NIN > 1) top->in1_valid = 0;
    for (int i = 0; i < 3; ++i) {
      top->clk = 0;
      top->eval();
      top->clk = 1;
      top->eval();
    }
    top->rst_n = 1;
    top->clk = 0;
    top->eval();
  }
  ~StreamSim() { top->final(); }

  template <class C>
  void config(const C& cfg) {
    cfg.apply(top->cfg);
  }
  /// One cycle with start = 1.
  void start() {
    top->start = 1;
    step();
    top->start = 0;
  }
  void step() {
    top->clk = 0;
    bool v[2] = {false, false};
    for (int p = 0; p < NIN; ++p) v[p] = !in[p].empty() && (!inGate || inGate(p, cyc));
    // A beat queued while in0 was empty was not announced on in0_next: like a FIFO's push,
    // it shows the cycle after (sg_cu reads its sigmoid table a cycle ahead).
    if constexpr (HasIn0Next<V>::value) v[0] = v[0] && announced_;
    top->in0_valid = v[0];
    if (v[0]) putBeat(top->in0_beat, in[0].front(), w_);
    if constexpr (NIN > 1) {
      top->in1_valid = v[1];
      if (v[1]) putBeat(top->in1_beat, in[1].front(), w_);
    }
    top->out_ready = !outGate || outGate(cyc);
    if (drive) drive();
    top->eval();
    bool f[2] = {v[0] && top->in0_ready, false};
    if constexpr (NIN > 1) f[1] = v[1] && top->in1_ready;
    if constexpr (HasIn0Next<V>::value) {
      // What an input FIFO's out_next shows: the beat at in0's head after this edge.
      const size_t h = f[0] ? 1 : 0;
      announced_ = in[0].size() > h;
      if (announced_) putBeat(top->in0_next, in[0][h], w_);
    }
    const bool fo = top->out_valid && top->out_ready;
    Beat ob;
    if (fo) ob = getBeat(top->out_beat, w_);
    if (top->out_valid && firstOutValid == ~uint64_t(0)) firstOutValid = cyc;
    if (sample) sample();
    top->clk = 1;
    top->eval();
    for (int p = 0; p < NIN; ++p)
      if (f[p]) {
        in[p].pop_front();
        inCyc[p].push_back(cyc);
      }
    if (fo) {
      out.push_back(ob);
      outCyc.push_back(cyc);
    }
    ++cyc;
  }
  /// Steps until done is high (checked after each edge); false after maxCycles.
  bool runUntilDone(uint64_t maxCycles) {
    for (uint64_t i = 0; i < maxCycles; ++i) {
      step();
      if (top->done) return true;
    }
    return false;
  }

  VerilatedContext vctx;
  std::deque<Beat> in[2];
  std::vector<uint64_t> inCyc[2];
  std::vector<Beat> out;
  std::vector<uint64_t> outCyc;
  std::function<bool(int, uint64_t)> inGate;
  std::function<bool(uint64_t)> outGate;
  std::function<void()> drive;   ///< sets extra inputs (before the pre-edge eval)
  std::function<void()> sample;  ///< reads extra handshakes (after the pre-edge eval)
  uint64_t cyc = 0;
  uint64_t firstOutValid = ~uint64_t(0);

 private:
  int w_;
  bool announced_ = false;  ///< in0's head was on in0_next at the last edge

 public:
  std::unique_ptr<V> top;
};

/// Splits a flat word vector into beats of w words; the last beat gets last = 1 and stop.
inline std::vector<Beat> tileBeats(const std::vector<uint32_t>& words, int w, int stop) {
  std::vector<Beat> r;
  for (size_t i = 0; i < words.size(); i += size_t(w)) {
    std::vector<uint32_t> d(words.begin() + long(i), words.begin() + long(i) + w);
    const bool last = i + size_t(w) >= words.size();
    r.push_back(dataBeat(d, last, last ? stop : 0));
  }
  return r;
}

}  // namespace rtlu
