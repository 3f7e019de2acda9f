#pragma once
// ArchModel: the fabric an architecture YAML describes (schema: arch/README.md).
// Plain data; produced by loadArch, never mutated afterwards.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "support/diag.hpp"

namespace stepgen {

/// Smallest k with 2^k >= n (Verilog's $clog2; 0 for n <= 1).
inline int ceilLog2(int64_t n) {
  int k = 0;
  while ((int64_t(1) << k) < n) ++k;
  return k;
}

/// Kind of a grid site.
enum class UnitKind { Compute, Memory, AddressGen, Empty };

/// Multiplier format of a compute unit (docs/hardware.md section 2).
enum class NumberFormat { Fp32, Bf16Fp32 };

/// Compute unit (PCU) parameters shared by every CU of the fabric.
struct ComputeUnitParams {
  int lanes = 16;                  ///< MAC lanes (multiply-accumulates per cycle)
  int flopsPerCycle = 32;          ///< must equal 2 * lanes
  /// subset of matmul, silu, mul, add, accum, retile, matmul_t, rowscale, scan, expand, parallelize, sub, exp, recip,
  /// rowmax, rowsum, accum_max, scan_max, accum_rescale, scan_max_exclusive, partition, merge, select, rsqrt
  std::vector<std::string> functions;
  /// The dynamic-tile datapath (sg_cu DYN = 1: dyn_m, bt, rowscale, scan, expand,
  /// parallelize, partition, merge) is built only when one of its functions is listed: it halves the
  /// simulation speed of a fabric.
  bool dynamicTiles() const {
    for (const auto& f : functions)
      if (f == "matmul_t" || f == "rowscale" || f == "scan" || f == "scan_max" || f == "scan_max_exclusive" ||
          f == "expand" || f == "parallelize" || f == "partition" || f == "merge" || f == "select")
        return true;
    return false;
  }
  /// The arch lists exp, recip, rowmax, rowsum, accum_max, accum_rescale or rsqrt: the compute units
  /// carry the attention datapath (their tables, the row reductions, fp32 max, the rescaling
  /// accumulator; sg_cu ATTN = 1).
  bool hasAttn() const {
    for (const auto& f : functions)
      if (f == "exp" || f == "recip" || f == "rowmax" || f == "rowsum" || f == "accum_max" || f == "accum_rescale" ||
          f == "rsqrt")
        return true;
    return false;
  }
  /// The arch lists topk: the compute units carry the router's selection (W x W comparisons of
  /// a row of gate logits; sg_cu TOPK = 1).
  bool hasTopk() const { return has("topk"); }
  /// The arch lists silu: the compute units carry its sigmoid table (W/2 dual-port block RAM
  /// copies of 2,048 x 32 bits; sg_cu SILU = 1).
  bool hasSilu() const { return has("silu"); }
  /// The arch lists silu, mul, rowscale, exp or accum_rescale: the compute units carry the
  /// W-word unit's fp32 multipliers (sg_cu MUL = 1; without DSP blocks each is about 1,750
  /// iCE40 LUT4s, docs/results/fpga.md).
  bool hasWordMul() const {
    for (const char* f : {"silu", "mul", "rowscale", "exp", "accum_rescale"})
      if (has(f)) return true;
    return false;
  }
  /// The arch lists function `f`.
  bool has(const std::string& f) const { return std::find(functions.begin(), functions.end(), f) != functions.end(); }
  NumberFormat format = NumberFormat::Bf16Fp32;
  int64_t bufferBytes = 16384;     ///< local operand memory, bytes
  /// compute_unit.memory: `banked` (one bank per word of a beat, FPGA block RAM; matmul rows K
  /// must be whole beats, M-305), `banked_ragged` (banked, the a memory held twice: K may also
  /// be any even number above the words per beat) or `flat` (one array with as many ports as
  /// the unit uses: any K, simulation only). rtl_templates/sg_cu_mem.sv; sg_cu parameters
  /// BANKED and A_COPIES.
  bool banked = true;
  int aCopies = 1;                 ///< copies of the banked a memory: 2 for banked_ragged
  /// compute_unit.fp_adder: `near_far` (true, the default: every fp32 adder has a near and a
  /// far path side by side, 29 LUT levels on xc7, 860 LUTs) or `single_path` (false:
  /// one path in series, 44 levels, 594 LUTs; for parts where area is the limit, such as
  /// iCE40). The same results bit for bit, so the choice changes neither outputs nor cycles.
  /// sg_fp_pkg fp32_add / fp32_add_sp; sg_cu parameter NEAR_FAR; docs/results/fpga_lane.csv.
  bool nearFar = true;
  /// Whether a matmul with rows of K words (a's columns) fits the local memory's banks; `bt`:
  /// b transposed (its rows are K words too, and have no second copy for ragged rows).
  bool matmulRowsFit(int64_t K, int64_t wordsPerBeat, bool bt) const {
    if (!banked || K % wordsPerBeat == 0) return true;
    return aCopies == 2 && !bt && K > wordsPerBeat && K % 2 == 0;
  }
  /// Words of local memory a matmul of an [M, K] tile by a [K, N] one takes: a, b and the
  /// output, each double-buffered (sg_cu.sv header). The mapper's M-302 check and the ONNX
  /// importer's choice of tile rows both ask this.
  static int64_t matmulBufferWords(int64_t M, int64_t K, int64_t N) { return 2 * (M * K + K * N + M * N); }
};

/// Memory unit (PMU) parameters.
struct MemoryUnitParams {
  int64_t capacityBytes = 65536;   ///< bytes
  int banks = 4;
  int bytesPerCycle = 64;          ///< bytes/cycle, each of read and write side
  bool route = false;              ///< route mode (sg_route: Partition + EagerMerge), memory_unit.route
};

/// Off-chip memory: DRAM channels served to the address generators.
struct OffChipParams {
  int channels = 2;
  int bytesPerRequest = 64;        ///< bytes; fixed at 64 by the AG piece walk
  int latency = 40;                ///< cycles from accept to data
  int initiationInterval = 2;      ///< cycles between requests on one channel
  int startup = 100;               ///< cycles before the first request is served
  int outstanding = 16;            ///< beats in flight per AG
  int addressBits = 32;
};

/// Interconnect between units.
struct LinkParams {
  std::string topology = "neighborhood";  ///< "neighborhood" (reach-limited) or "crossbar"
  int reach = 3;                   ///< Manhattan distance a link spans (crossbar: unlimited)
  int widthBits = 512;             ///< data bits per beat (multiple of 512)
  int fifoDepth = 2;               ///< beats per input FIFO
};

/// One grid site.
struct UnitSite {
  UnitKind kind = UnitKind::Empty;
  int x = 0;  ///< column
  int y = 0;  ///< row
  SourceLoc loc;
};

/// The whole fabric. Units are listed row-major (y outer, x inner); UnitId indexes `units`.
struct ArchModel {
  std::string name;
  SourceLoc loc;        ///< the file (an unbounded arch: its `grid` value)
  int cols = 0, rows = 0;
  /// `grid: unbounded`: no grid of its own. fabricForGraph gives it one unit per operator on
  /// a crossbar with unlimited buffers (the paper simulator's setting); it has no RTL.
  bool unbounded = false;
  int contexts = 2;     ///< configuration contexts per unit, 1..256
  ComputeUnitParams cu;
  MemoryUnitParams mu;
  OffChipParams offchip;
  LinkParams link;
  std::vector<UnitSite> units;

  /// Words (32-bit) per beat.
  int wordsPerBeat() const { return link.widthBits / 32; }
  /// Register stages of a compute unit's rowmax / rowsum tree, one per level: sg_cu's
  /// RP = $clog2(W) (docs/hardware.md section 2).
  int rowTreeStages() const { return ceilLog2(wordsPerBeat()); }
  /// Whether a banked compute-unit memory can be built (rtl_templates/sg_cu_mem.sv): at
  /// most one lane per word of a beat, W a power of two, the buffer whole beats.
  bool cuBankable() const {
    const int64_t w = wordsPerBeat();
    return cu.lanes <= w && w >= 2 && (w & (w - 1)) == 0 && (cu.bufferBytes / 4) % w == 0;
  }
  /// Link bandwidth, bytes/cycle.
  int linkBytes() const { return link.widthBits / 8; }
  /// Off-chip bandwidth, bytes/cycle = channels * bytesPerRequest / II.
  double offchipBytesPerCycle() const {
    return double(offchip.channels) * offchip.bytesPerRequest / offchip.initiationInterval;
  }
};

/// Reads and checks an architecture YAML file.
/// Errors (DiagError, with file:line:col): A-1xx unknown/missing keys, wrong types,
/// impossible values (see support/diag_ids.md).
ArchModel loadArch(const std::string& path);

const char* unitKindName(UnitKind k);

}  // namespace stepgen
