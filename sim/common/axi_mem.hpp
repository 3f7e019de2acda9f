// AXI4 slave memory for the AXI wrapper's harness: one slave port per AXI master of the
// fabric (512-bit data = one 64-byte DRAM piece per beat), timed by the DramModel of
// docs/hardware.md section 6 so that the AXI run and the flat-port run see the same DRAM.
//
//   * AR, AW and W are always ready (the model queues them).
//   * A read burst of n beats is one DramModel read request of its n consecutive pieces,
//     made in the cycle its AR is accepted; its beats are offered on R one per cycle (while
//     rready) from the cycle the whole request completes, in order (one ID).
//   * A write burst is one DramModel write request of its pieces, made in the cycle both its
//     AW and its last W beat have been accepted; its B response is offered from
//     max(that cycle + 1, DramModel::lastWriteDone()) (the latest completion so far, which
//     bounds this burst's).
// No Verilator types here: unit tests drive it directly.
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "common/dram.hpp"

namespace stepgen {

/// The beats a port offers in one cycle.
struct AxiOffer {
  bool rvalid = false;
  bool rlast = false;
  const uint8_t* rdata = nullptr;  ///< 64 bytes while rvalid
  bool bvalid = false;
};

/// AXI4 memory over a DramModel whose AG index is the AXI port index.
///
/// Per cycle c (non-decreasing, the DramModel's cycle numbering): offer(p, c) for every port,
/// then, after the design has been evaluated, the handshakes of the edge ending cycle c in
/// this order per port: ar(), aw(), w(), r(), b(); finally endCycle(c).
class AxiMemory {
public:
  /// One slave port per AG of `dram` (which it uses, not owns).
  explicit AxiMemory(DramModel& dram);

  /// What port `p` drives in cycle `c`.
  AxiOffer offer(int p, uint64_t c) const;
  /// AR accepted: a burst of len + 1 beats from byte address `addr` (64-aligned). Throws
  /// std::invalid_argument for an unaligned address or a burst across a 4 KiB boundary,
  /// std::out_of_range outside the image (from DramModel).
  void ar(int p, uint64_t addr, unsigned len, uint64_t c);
  /// AW accepted (as ar()); the write reaches the DRAM model with its last W beat.
  void aw(int p, uint64_t addr, unsigned len, uint64_t c);
  /// W beat accepted: 64 bytes at `data`. Throws std::invalid_argument if `last` disagrees
  /// with the burst length of its AW, std::logic_error for a W beat ahead of its AW (AXI
  /// allows it; this model's AW is always ready and is taken first within a cycle, so the
  /// wrapper never sends one).
  void w(int p, const uint8_t* data, bool last, uint64_t c);
  /// The R beat offered in cycle c was taken (rvalid && rready).
  void r(int p, uint64_t c);
  /// The B response offered in cycle c was taken.
  void b(int p, uint64_t c);
  /// True when no burst is waiting or in flight on any port.
  bool idle() const;

private:
  struct Port {
    unsigned rBeat = 0;                  // beats of the head read response taken
    std::deque<std::vector<uint64_t>> aw;  // piece addresses of accepted AWs without all their W beats
    std::vector<uint8_t> wdata;          // W beats of the head AW so far
    std::deque<uint64_t> bReady;         // B responses: cycle from which each is offered
    std::deque<unsigned> rBeats;         // beats of each outstanding read burst, in order
  };
  static std::vector<uint64_t> pieces(uint64_t addr, unsigned len);

  DramModel& dram_;
  std::vector<Port> ports_;
};

}  // namespace stepgen
