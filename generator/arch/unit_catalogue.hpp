#pragma once
// UnitCatalogue: the fabric as every later stage sees it. The mapper, the bitstream writer,
// the Verilog emitter, the timing model and the harness ask it for unit names, template
// parameters, ports and which units can feed which, instead of reading grid coordinates
// and link rules out of the ArchModel themselves (the way nextpnr's placer and router see
// a device only through its Arch API). Derived from the ArchModel alone.
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "arch/arch_model.hpp"

namespace stepgen {

/// A unit of the fabric: its index into ArchModel::units (grid order, row-major).
struct UnitId {
  int v = -1;
  bool valid() const { return v >= 0; }
};
inline bool operator==(UnitId a, UnitId b) { return a.v == b.v; }
inline bool operator!=(UnitId a, UnitId b) { return a.v != b.v; }
inline bool operator<(UnitId a, UnitId b) { return a.v < b.v; }

/// One template parameter of a unit instance: name and value as the Verilog top writes it.
struct TemplateParam {
  std::string name;
  std::string value;
};

/// Cycles a memory unit spends per link beat on its read or write side: a beat is
/// link.width_bits / 8 bytes and a memory unit moves memory_unit.bytes_per_cycle
/// (docs/hardware.md section 2). The sg_mu CPB parameter and the timing model both read it.
int muCyclesPerBeat(const ArchModel& a);

class UnitCatalogue {
 public:
  /// Builds the catalogue of `a` (which must outlive it). Pure function of `a`.
  explicit UnitCatalogue(const ArchModel& a);

  const ArchModel& arch() const { return a_; }
  /// Grid sites, empty ones included; UnitId v ranges over 0..size()-1.
  int size() const { return int(a_.units.size()); }
  /// The non-empty units in grid order.
  const std::vector<UnitId>& units() const { return units_; }
  /// The units of one kind in grid order.
  std::vector<UnitId> unitsOfKind(UnitKind k) const;
  UnitKind kind(UnitId u) const { return a_.units.at(size_t(u.v)).kind; }
  /// Position of `u` among the units of its kind (grid order): its slice of the top's
  /// per-kind ports (dram_* for address generators, dbg_mu_held for memory units).
  int kindIndex(UnitId u) const;

  /// Instance name from the grid position, e.g. u_cu_x1_y2 (Verilog, bitstream text, reports).
  std::string instanceName(UnitId u) const;
  /// The template module of a unit kind: sg_ag, sg_cu or sg_mu.
  static const char* moduleName(UnitKind k);
  /// The template parameters of unit `u`'s instance, in the order the top writes them
  /// (W, P, AB are the top's own parameters, passed through by name).
  std::vector<TemplateParam> templateParams(UnitId u) const;
  /// The top's own parameters the unit instances pass through: W (32-bit words per beat),
  /// P (64-byte DRAM pieces per beat), AB (DRAM address bits), with their values.
  std::vector<TemplateParam> topParams() const;
  /// templateParams with the top's parameters replaced by their values: the parameter set
  /// a unit is synthesized with on its own (`stepgen synth`).
  std::vector<TemplateParam> resolvedParams(UnitId u) const;
  /// Input stream ports of a unit kind (2 for every kind today: see ConfigLayout::ports).
  static int inPorts(UnitKind k);
  /// Name of input port p of `u` as the harness and the deadlock report print it: u_cu_x1_y0.in0.
  std::string portName(UnitId u, int p) const;
  /// Every input port of the fabric in grid order, as portName gives them; the index of a
  /// port here is its bit in the top's dbg_port_* vectors.
  std::vector<std::string> fabricPortNames() const;

  /// Manhattan distance between two units (grid steps). Inline: the placer's annealing
  /// (map/mapper.cpp repairPlacement) asks it several times per move.
  int distance(UnitId u, UnitId v) const {
    return std::abs(xs_[size_t(u.v)] - xs_[size_t(v.v)]) + std::abs(ys_[size_t(u.v)] - ys_[size_t(v.v)]);
  }
  /// True if a link can carry a stream from `src` to `dst`: a crossbar reaches every unit,
  /// a neighbourhood interconnect those within link.reach.
  bool reaches(UnitId src, UnitId dst) const { return crossbar_ || distance(src, dst) <= reach_; }
  /// Units that can feed the input ports of `dst`, in grid order: the value i+1 of an
  /// in<p>_src configuration field selects candidates(dst)[i]; 0 means unconnected.
  const std::vector<UnitId>& candidates(UnitId dst) const;
  /// The in<p>_src value that selects `src` at `dst`, or 0 if `src` is not a candidate.
  int sourceSelect(UnitId dst, UnitId src) const;
  /// Bits of an in<p>_src field: enough for the longest candidate list plus "unconnected".
  int sourceSelectBits() const;

 private:
  const ArchModel& a_;
  bool crossbar_;  // link.topology, read once: reaches() runs in the placer's inner loop
  std::vector<int> xs_, ys_;  // grid position of every site, for distance()
  int reach_;                 // link.reach
  std::vector<UnitId> units_;
  // Built per destination on first use: an unbounded fabric of hundreds of units on a
  // crossbar makes all the lists O(units^2), and most catalogues never read them.
  mutable std::vector<std::vector<UnitId>> cands_;
  mutable std::vector<bool> candsBuilt_;
};

}  // namespace stepgen
