#pragma once
// `stepgen synth`: FPGA resource counts of a generated fabric (docs/fpga.md). Yosys
// synthesizes each distinct unit module and parameter set once, out of context, and the
// top once with its units as black boxes (flows/fpga_synth_one.sh); the fabric's figures
// are the top's plus each unit's times its instance count.
#include <cstdint>
#include <string>
#include <vector>

namespace stepgen {

/// Options of `stepgen synth`.
struct SynthOptions {
  std::string archPath;
  std::string target = "xc7";  ///< xc7, xcup (synth_xilinx -family) or ice40 (synth_ice40 -dsp)
  std::string part;            ///< capacity to check against ("" = the target's default part)
  std::string outDir = "out/synth";
  int timeoutSeconds = 1800;   ///< per Yosys job
  int64_t memLimitKb = 16 * 1024 * 1024;  ///< virtual memory per Yosys job (KiB)
  /// Rows to synthesize ("ag", "cu", "mu", "top", "axi"); empty = all. The fabric row then sums
  /// only these and is "partial".
  std::vector<std::string> only;
  /// Unit parameter overrides "KIND.NAME=VALUE" (kind ag, cu or mu), to synthesize units at
  /// parameters the arch schema does not reach (out of context). The fabric row is then not
  /// summed (status "overridden").
  std::vector<std::string> sets;
  /// ice40 only: place and route every unit row that synthesized and fits the part with
  /// nextpnr-ice40, out of context (flows/ice40_pnr_one.sh), for its Fmax.
  bool pnr = false;
  /// Also synthesize the compute unit's parts out of context (cuPartRows), each a row of its
  /// own beside the unit's, not in the fabric sum: where the unit's LUTs and levels are.
  bool cuParts = false;
  /// A folder of finished Yosys jobs (may be shared by processes running at once): a job
  /// whose key (flows/fpga_synth_key.sh: Yosys's version, the job's arguments, the flow
  /// scripts and the preprocessed RTL) is there takes its result from it instead of running;
  /// a job that finishes ok is added. "" = no cache.
  std::string cacheDir;
  /// Yosys (and nextpnr) jobs run at once, each with the time and memory limits above.
  int jobs = 1;
};

/// Resources of one synthesized module (cell counts of the mapped netlist).
struct SynthCounts {
  int64_t luts = 0;      ///< LUT1..LUT6 / SB_LUT4
  int64_t ffs = 0;       ///< FD* / SB_DFF*
  int64_t carries = 0;   ///< CARRY4, CARRY8 / SB_CARRY
  int64_t dsps = 0;      ///< DSP48E1, DSP48E2 / SB_MAC16
  double brams = 0;      ///< 36 Kb block RAMs (a RAMB18 counts 0.5) / SB_RAM40_4K + SB_SPRAM256KA
  int64_t lutrams = 0;   ///< LUT-RAM and shift-register cells (RAM32M, RAM64M, RAM*X1*, SRL*)
  int64_t logicLevels = 0;  ///< combinational cells on the longest path between registers (Yosys ltp)
  /// LUTs on that path (a LUT-RAM read counts as one; its carry cells, wide-mux halves
  /// MUXF7/F8 and DSP blocks do not): pathLutLevels of the row's ltp report. The fabric
  /// row, like logicLevels, takes the largest of its rows.
  int64_t lutLevels = 0;
};

/// One row of the report: a unit kind, the top, or the whole fabric.
struct SynthRow {
  /// "ag", "cu", "mu", "top", "axi" (the AXI wrapper, not in the fabric sum), a compute unit's
  /// part "cu.mem", "cu.addr", "cu.mac", "cu.word" or "cu.rowred" (not in the sum), or "fabric"
  std::string unit;
  std::string module;   ///< sg_ag, sg_cu, sg_mu, sg_top, sg_axi_top ("" for the fabric)
  std::string params;   ///< "W=16 LANES=16 ..." as synthesized
  int count = 1;        ///< instances in the fabric
  SynthCounts c;        ///< per instance (the fabric row: totals)
  double seconds = 0;   ///< Yosys wall seconds (the fabric row: their sum)
  /// ok, timeout, failed, skipped, flat-memory (a compute unit with `memory: flat`, which no
  /// FPGA memory can hold: not synthesized); the fabric row: ok, partial, incomplete or
  /// overridden
  std::string status;
  /// Status ok taken from SynthOptions::cacheDir (an identical job's result; seconds are
  /// that job's Yosys seconds).
  bool cached = false;
  /// Place and route (--pnr): "" not asked, placed, too-big (the synthesized counts exceed
  /// the part), does-not-fit (nextpnr ran out of cells: the wrapper's registers count too),
  /// timeout or failed; then nextpnr's achieved Fmax (MHz, the slowest clock),
  /// logic cells and block RAMs used (does-not-fit: the logic cells nextpnr needed), and the
  /// wall seconds of the whole job.
  std::string pnrStatus;
  double fmaxMhz = 0;
  int64_t pnrLcs = 0, pnrRams = 0;
  double pnrSeconds = 0;
};

/// The LUTs on the longest path of a flows/fpga_synth_one.sh depth report (`ltp` output with
/// every path cell renamed ltp_<kind>_<n>): the steps "via ltp_lut_*" and "via ltp_lutram_*".
/// 0 for a report without such names.
int64_t pathLutLevels(const std::string& ltpText);

/// The rows of a compute unit's parts (rtl_templates/sg_cu.sv implementation note: sg_cu_mem,
/// sg_cu_addr, sg_cu_mac, sg_cu_word, sg_cu_rowred), each with the parameters sg_cu gives it
/// (derived from the unit row's `params`; sg_cu_mem's B_COPIES = 2 with DYN = 1, else 1;
/// sg_cu_addr's HOLD = 1 with BANKED = 0, else 0), its count the unit's, its status empty.
/// The unit's own control (configuration, handshakes, loaders, drain, output register) has
/// no row (out of context the parts are larger than inside the unit, so it is not the
/// unit's figures less the parts').
/// Errors: std::invalid_argument for a unit row without W, LANES, BUF_WORDS, DYN, A_COPIES,
/// BANKED, BF16, ATTN, SILU, MUL or NEAR_FAR.
std::vector<SynthRow> cuPartRows(const SynthRow& cu);

/// The fabric row of unit, top and wrapper rows: the top's counts plus count x each unit's
/// (the AXI wrapper and the compute unit's part rows "cu.*" are not part of the sum), the
/// largest logic_levels and lut_levels, the sum of the Yosys seconds of those rows. Status: overridden (units at --set parameters: only the seconds
/// are summed), incomplete (a row timed out or failed), partial (a row skipped or flat-memory),
/// else ok.
SynthRow fabricRow(const std::vector<SynthRow>& rows, bool overridden);

/// What `stepgen synth` measured.
struct SynthReport {
  std::string arch, target, part;
  int64_t partLuts = 0, partFfs = 0, partDsps = 0;
  double partBrams = 0;
  std::vector<SynthRow> rows;  ///< unit kinds in grid order of first appearance, then top, then fabric
  /// The fabric row (or, when partial or incomplete, what was counted) exceeds the part.
  bool overflows() const;
};

/// Emits the arch's fabric into `o.outDir`/rtl and synthesizes it. Errors: DiagError for a
/// bad arch file; std::invalid_argument for an unknown target, part, row name or override,
/// or --pnr with a target other than ice40;
/// a Yosys or nextpnr job that fails or times out is reported in its row (status, pnrStatus),
/// not thrown.
SynthReport runSynth(const SynthOptions& o);

/// The readable table (one line per row, then the part's utilization). Deterministic.
std::string synthTable(const SynthReport& r);
/// CSV: arch,target,unit,luts,ffs,carries,dsps,brams,lutrams,logic_levels,fmax_mhz,
/// synth_seconds,count,module,params,status,part,pnr_status,pnr_lcs,pnr_rams,pnr_seconds,
/// lut_levels (fmax_mhz and the pnr columns empty where no place and route ran; lut_levels
/// last so that the earlier columns keep their positions).
std::string synthCsv(const SynthReport& r, bool header);
/// synth.json: every row's counts, the part and whether the fabric fits.
std::string synthJson(const SynthReport& r);

}  // namespace stepgen
