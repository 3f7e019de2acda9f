#pragma once
// The stepgen pipeline, in order (docs/architecture.md). compileGraph lists the stages:
//   loadArch -> buildConfigLayout                    (arch)
//   loadGraph -> checkShapes                         (graph)
//   planSections -> mapGraph -> buildConfig -> encodeBitstream   (graph on arch)
//   emitFabric                                       (arch only)
// and verify() runs the check around it: runModel, then the RTL run (driver/rtl_run.hpp),
// then the comparison and verdict (driver/report.hpp).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "arch/config_layout.hpp"
#include "bitstream/config_image.hpp"
#include "map/buffering.hpp"
#include "bitstream/reload.hpp"
#include "driver/inputs.hpp"
#include "driver/report.hpp"
#include "emit/verilog_top.hpp"
#include "map/mapping.hpp"
#include "map/sections.hpp"

namespace stepgen {

/// Everything the compile stages produce for one (arch, graph) pair.
struct CompileResult {
  ArchModel arch;
  StepGraph graph;                  ///< as the fabric runs it: cut into sections when needed
  ShapeResult shapes;               ///< of `graph`
  SectionPlan sections;
  BufferPlan buffers;               ///< planBuffers on the user's graph (empty with buffering off)
  std::string buffersText;          ///< bufferPlanText of it (mapping.txt)
  Mapping mapping;
  ConfigLayout layout;              ///< the fabric's: arch.contexts contexts
  /// One context per section when the program has more sections than the fabric has
  /// contexts, otherwise `layout`. `image` is laid out by it; the model reads both.
  ConfigLayout programLayout;
  ConfigImage image;                ///< section s in context s
  /// What the fabric's contexts hold at start (sections 0 .. contexts-1, foldSections): the
  /// image `bitstream` encodes, kept so fabric.cfg is written from the mapping, not decoded.
  ConfigImage loaded;
  std::vector<uint32_t> bitstream;  ///< 32-bit words: sections 0 .. contexts-1 (foldSections)
  std::vector<SectionReload> reloads;  ///< later sections, written while the fabric runs
  std::vector<RtlFile> rtl;
  double mapSeconds = 0;            ///< map + bitstream + Verilog, wall seconds
  double sectionSeconds = 0;        ///< planSections (its trial mappings included), wall seconds
};

/// The compile stages that depend on the graph: load, shape check, (for an unbounded arch)
/// fabricForGraph, sections, mapping, configuration image, bitstream; `rtl` stays empty.
/// `minSections` > 1 cuts the graph into at least that many sections even where it fits;
/// `onChipCarry` false carries every stream that crosses a cut through DRAM (planSections).
/// `buffering` (default) sizes the buffers of reconvergent paths (planBuffers); false keeps the
/// link FIFOs alone, so a graph that needs more deadlocks (to study it).
/// Errors: DiagError from the stage that failed (later stages do not run).
CompileResult compileProgram(const std::string& archPath, const std::string& graphPath, int minSections = 1,
                             bool onChipCarry = true, bool buffering = true);

/// compileProgram, then emitFabric (the fabric's Verilog). Errors: as compileProgram, and
/// A-112 for an unbounded arch (it has no RTL).
CompileResult compileGraph(const std::string& archPath, const std::string& graphPath, int minSections = 1,
                           bool onChipCarry = true, bool buffering = true);

/// Writes rtl/, fabric.bin, fabric.cfg, mapping.txt, reloads.json (more sections than
/// contexts) and the drawings (graph.dot/.svg, fabric_s<k>.svg) into `dir` atomically: everything goes
/// to a sibling temporary folder first, which replaces `dir` only when complete.
/// Throws std::runtime_error when the folder cannot be written.
void writeCompileOutputs(const CompileResult& c, const std::string& dir);

/// Human-readable mapping: op -> unit/context, routes with distances. Deterministic.
std::string mappingText(const CompileResult& c);

/// Options of `stepgen verify`.
struct VerifyOptions {
  std::string archPath, graphPath, outDir, inputsDir;
  uint32_t seed = 1;
  int minSections = 1;              ///< --sections: cut into at least this many sections
  bool onChipCarry = true;          ///< --carry auto (true) or dram (false)
  bool buffering = true;            ///< false: --no-buffering (reconvergent paths keep the link FIFOs alone)
  bool trace = false;               ///< FST waveform of the RTL run
  bool skipRtl = false;             ///< model only
  bool axi = false;                 ///< also run the fabric through its AXI wrapper (docs/axi.md)
  /// Verilator --hierarchical (sg_cu verilated once per parameter set, docs/hardware.md) or
  /// flat; unset: hierarchicalByDefault(arch) decides.
  std::optional<bool> hierarchical;
  /// Cycles without progress before an RTL run is called a deadlock; at least twice the
  /// model's TimingResult::longestCompute (a matmul of a large tile computes longer than
  /// 20,000 cycles with every link still).
  int64_t watchdogCycles = 20000;
  std::string buildCache;           ///< folder for verilated fabrics keyed by RTL hash ("" = <out>/build)
  double maxCycleErrorPercent = 0;  ///< > 0: |RTL - model| / RTL above this fails the verdict
  /// A folder of reference outputs and tolerance.txt (driver/reference.hpp; import onnx --data
  /// writes one): the model's outputs outside that tolerance fail the verdict.
  std::string referenceDir;
};

/// compile + model + Verilator build/run + compare; writes report.txt / report.json in the
/// output folder. Errors: DiagError for bad input (nothing left in outDir).
VerifyReport verify(const VerifyOptions& o);

/// The Verilator build(s) verify(o) uses, made ahead of it: the fabric of o.archPath (its
/// Verilog depends on the arch alone) into o.buildCache, and its AXI build when o.axi; what a
/// study's build job runs (jobs/point_jobs.hpp). Returns the build seconds (0 when cached).
/// Errors: DiagError for a bad arch (A-112 for an unbounded one); std::runtime_error with the
/// build log's tail for a failed build.
double buildFabricFor(const VerifyOptions& o);

/// The timing-only model (docs/step_semantics.md#timing-only): compileProgram (an
/// unbounded arch is sized to the graph), then runModel without values. No tensor is read
/// or allocated but the meta rows of run loads (metaTensors: the run lengths are the
/// streams' shape), from `inputsDir`. `compiled`, when given, receives the compile result
/// (mapping, fabric size). Errors: DiagError for bad input, R-410 (at the run load) when the
/// graph has meta rows and `inputsDir` is empty, R-401 / R-402 for their files;
/// std::runtime_error from the model.
ModelResult runTimingOnly(const std::string& archPath, const std::string& graphPath, CompileResult* compiled = nullptr,
                          const std::string& inputsDir = "");

/// The report `stepgen model --timing-only` prints: fabric size, cycles (or the deadlock and
/// its stuck streams), off-chip bytes read and written, on-chip bytes, FLOPs, model and
/// compile seconds, and the process's peak resident memory (MB).
std::string timingOnlyText(const CompileResult& c, const ModelResult& r);

/// A model-only run: load, shape check, functional model, cost figures (no mapping, so no
/// cycle estimate). Inputs from `<inputsDir>/<tensor>.npy`, or seeded random when empty.
/// Errors: DiagError for bad input files (as verify), std::runtime_error from the model.
ModelResult runModelOnly(const std::string& archPath, const std::string& graphPath, const std::string& inputsDir,
                         uint32_t seed);

}  // namespace stepgen
