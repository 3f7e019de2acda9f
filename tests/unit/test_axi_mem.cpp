// Unit tests for stepgen::AxiMemory (sim/common/axi_mem.hpp), the AXI4 slave memory of the
// AXI wrapper's harness. Cycles worked out by hand from the DramModel rule
//   start = max(t, next_free[ch], startup); next_free[ch] = start + ii; done = start + latency
// (one channel here, so ch = 0 for every piece).
#include <catch2/catch.hpp>

#include "common/axi_mem.hpp"

#include <cstring>
#include <stdexcept>
#include <vector>

using stepgen::AxiMemory;
using stepgen::AxiOffer;
using stepgen::DramModel;
using stepgen::DramTiming;

namespace {
DramTiming oneChannel(uint64_t lat, uint64_t ii) {
  DramTiming t;
  t.channels = 1;
  t.latency = lat;
  t.ii = ii;
  return t;
}
}  // namespace

TEST_CASE("axi memory: a 2-beat read burst is one DRAM request; beats in order from its completion", "[axi]") {
  DramModel d(oneChannel(10, 2), 8192, 1);
  for (int i = 0; i < 128; ++i) d.mem()[i] = uint8_t(i);
  AxiMemory m(d);
  // AR at cycle 3 of pieces 0 and 64: p0 starts 3 (done 13), p1 starts 5 (done 15).
  m.ar(0, 0, 1, 3);
  for (uint64_t c = 3; c < 15; ++c) CHECK_FALSE(m.offer(0, c).rvalid);
  AxiOffer o = m.offer(0, 15);
  REQUIRE(o.rvalid);
  CHECK_FALSE(o.rlast);
  CHECK(o.rdata[0] == 0);
  CHECK(o.rdata[63] == 63);
  // rready low in cycle 15 (not taken), taken in 16 and 17.
  m.r(0, 16);
  o = m.offer(0, 17);
  REQUIRE(o.rvalid);
  CHECK(o.rlast);
  CHECK(o.rdata[0] == 64);
  CHECK_FALSE(m.idle());
  m.r(0, 17);
  CHECK(m.idle());
  CHECK(d.readBytes() == 128);
}

TEST_CASE("axi memory: a write lands when its AW and last W are in; B after the write completes", "[axi]") {
  DramModel d(oneChannel(10, 1), 8192, 2);
  AxiMemory m(d);
  std::vector<uint8_t> beat(64, 0xAB);
  m.aw(1, 4096, 1, 0);
  m.w(1, beat.data(), false, 0);
  CHECK(d.writeBytes() == 0);  // one of two beats
  beat.assign(64, 0xCD);
  m.w(1, beat.data(), true, 2);
  // Request at cycle 2: pieces start 2 and 3, done 12 and 13 -> B offered from 13.
  CHECK(d.writeBytes() == 128);
  CHECK(d.mem()[4096] == 0xAB);
  CHECK(d.mem()[4096 + 64] == 0xCD);
  CHECK_FALSE(m.offer(1, 12).bvalid);
  CHECK(m.offer(1, 13).bvalid);
  CHECK_FALSE(m.offer(0, 13).bvalid);  // the other port has none
  m.b(1, 13);
  CHECK(m.idle());
}

TEST_CASE("axi memory: protocol errors are reported", "[axi]") {
  DramModel d(oneChannel(4, 1), 16384, 1);
  AxiMemory m(d);
  std::vector<uint8_t> beat(64, 0);
  CHECK_THROWS_AS(m.w(0, beat.data(), true, 0), std::logic_error);        // W before its AW
  CHECK_THROWS_AS(m.ar(0, 32, 0, 0), std::invalid_argument);              // unaligned
  CHECK_THROWS_AS(m.ar(0, 4096 - 64, 1, 0), std::invalid_argument);       // crosses 4 KiB
  CHECK_THROWS_AS(m.aw(0, 8192 - 128, 2, 0), std::invalid_argument);      // crosses 8 KiB
  m.aw(0, 0, 1, 0);
  CHECK_THROWS_AS(m.w(0, beat.data(), true, 0), std::invalid_argument);   // WLAST on beat 1 of 2
  CHECK_THROWS_AS(m.r(0, 0), std::logic_error);                           // no read outstanding
  CHECK_THROWS_AS(m.b(0, 0), std::logic_error);                           // no write answered
}
