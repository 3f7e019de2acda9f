#pragma once
// ConfigLayout: bit position of every configuration field of every unit and context
// (docs/architecture.md#principles: one home for each decision). Derived from the ArchModel only.
// The bitstream writer packs with it, emitConfigPackage gives the RTL the same offsets
// (sg_cfg_pkg.sv), and the decoder reads bitstreams back with it.
#include <cstdint>
#include <string>
#include <vector>

#include "arch/arch_model.hpp"

namespace stepgen {

/// One field of a unit kind's per-context configuration vector.
struct ConfigField {
  std::string name;  ///< lower_snake, e.g. "in0_src"; the RTL constant is <KIND>_<NAME>_LSB/_W
  int lsb = 0;       ///< bit offset inside one context's vector
  int width = 0;     ///< bits
};

/// Fields of one unit kind (the same for every context).
struct KindLayout {
  UnitKind kind = UnitKind::Empty;
  std::vector<ConfigField> fields;
  int bits = 0;       ///< bits per context
  int inPorts = 0;    ///< input stream ports of this kind
  const ConfigField& field(const std::string& name) const;  ///< throws std::out_of_range
};

/// Where one unit's configuration lives in the bitstream.
struct UnitConfigSlot {
  int unit = 0;         ///< index into ArchModel::units
  UnitKind kind = UnitKind::Empty;
  int wordBase = 0;     ///< first 32-bit word
  int words = 0;        ///< words = ceil(contexts * bits / 32)
};

/// The whole layout: per-kind fields and per-unit word ranges, in grid order.
struct ConfigLayout {
  int contexts = 2;
  int srcBits = 0;      ///< width of an input-port source select (0 = unconnected)
  int bufAddrBits = 0;  ///< CU local-memory word address width
  int muAddrBits = 0;   ///< MU word address width
  KindLayout ag, cu, mu;
  std::vector<UnitConfigSlot> slots;  ///< one per non-empty unit, grid order
  int unitWords = 0;    ///< words of all unit slots
  /// Two fabric-wide words follow the units (sg_sec_seq.sv): SECTIONS_LOADED at unitWords
  /// (sections whose contexts hold their configuration) and SECTIONS at unitWords + 1.
  int sectionsLoadedWord() const { return unitWords; }
  int sectionsWord() const { return unitWords + 1; }
  int totalWords = 0;   ///< unitWords + 2

  const KindLayout& kindLayout(UnitKind k) const;
  /// Slot of a unit, or nullptr for empty sites.
  const UnitConfigSlot* slot(int unit) const;
  /// Absolute bit of field f of context ctx of unit (bitstream bit index).
  int64_t bitOf(int unit, int ctx, const ConfigField& f) const;
};

/// Prefix of a unit kind's constants in sg_cfg_pkg (AG, CU, MU): <PREFIX>_BITS, <PREFIX>_<FIELD>_LSB.
const char* configKindPrefix(UnitKind k);

/// Builds the layout of an architecture. Pure function of `a`.
ConfigLayout buildConfigLayout(const ArchModel& a);

/// Text of the SystemVerilog package sg_cfg_pkg with <KIND>_<FIELD>_LSB / _W localparams
/// and <KIND>_BITS, for the templates. Deterministic.
std::string emitConfigPackage(const ConfigLayout& l);

/// CU operation codes (field cu.func); shared by mapper, model and RTL (via the package).
/// RowScale, Scan, Expand, Parallelize, ScanMax, ScanMaxExcl, Partition, Merge and Select exist only in units built with
/// the dynamic-tile datapath (sg_cu DYN = 1), Exp .. AccumMax, AccumRescale and Rsqrt only with the
/// attention datapath (ATTN = 1), TopK and TopKLogits only with the router's selection (TOPK = 1); the field is 5 bits wide.
enum class CuFunc : int {
  None = 0, Matmul = 1, Silu = 2, Mul = 3, Add = 4, Accum = 5, Retile = 6, RowScale = 7,
  Scan = 8, Expand = 9, Parallelize = 10, Sub = 11, Exp = 12, Recip = 13, RowMax = 14, RowSum = 15, AccumMax = 16,
  ScanMax = 17, AccumRescale = 18, ScanMaxExcl = 19, Partition = 20, Merge = 21, Select = 22, Rsqrt = 23, TopK = 24, TopKLogits = 25
};

}  // namespace stepgen
