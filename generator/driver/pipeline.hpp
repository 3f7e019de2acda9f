#pragma once
// The stepgen pipeline, in order (architecture.md "Pipeline"):
//   loadArch -> buildConfigLayout            (arch)
//   loadGraph -> checkShapes                 (graph)
//   mapGraph -> buildConfig -> encodeBitstream
//   emitFabric                               (arch only)
// and the verification flow around it: model, Verilator build + run, compare.
#include <cstdint>
#include <map>
#include <filesystem>
#include <string>
#include <vector>

#include "arch/config_layout.hpp"
#include "bitstream/config_image.hpp"
#include "emit/verilog_top.hpp"
#include "map/mapping.hpp"
#include "model/model.hpp"

namespace stepgen {

/// Everything the compile stages produce for one (arch, graph) pair.
struct CompileResult {
  ArchModel arch;
  StepGraph graph;
  ShapeResult shapes;
  Mapping mapping;
  ConfigLayout layout;
  ConfigImage image;
  std::vector<uint32_t> bitstream;  ///< 32-bit words
  std::vector<RtlFile> rtl;
  double mapSeconds = 0;            ///< map + bitstream + Verilog, wall seconds
};

/// Runs every compile stage. Errors: DiagError from the stage that failed (later stages
/// do not run).
CompileResult compileGraph(const std::string& archPath, const std::string& graphPath);

/// Writes rtl/, fabric.bin, fabric.cfg, mapping.txt into `dir` atomically: everything goes
/// to a sibling temporary folder first, which replaces `dir` only when complete.
/// Throws std::runtime_error when the folder cannot be written.
void writeCompileOutputs(const CompileResult& c, const std::string& dir);

/// Human-readable mapping: op -> unit/context, routes with distances. Deterministic.
std::string mappingText(const CompileResult& c);

/// Input tensors: read `<dir>/<tensor>.npy` for every input tensor, or, when dir is empty,
/// seeded uniform random values (x in [-1, 1), weights scaled by 1/sqrt(rows)).
/// Throws DiagError R-401 naming a missing or malformed file.
std::map<std::string, Matrix> loadInputs(const StepGraph& g, const std::string& dir, uint32_t seed);

/// Writes a matrix as a 2-D float32 .npy (bit patterns kept), creating the parent folder.
/// Throws std::runtime_error when the file cannot be written.
void toNpy(const std::filesystem::path& p, const Matrix& m);

/// Options of `stepgen verify`.
struct VerifyOptions {
  std::string archPath, graphPath, outDir, inputsDir;
  uint32_t seed = 1;
  bool trace = false;               ///< FST waveform of the RTL run
  bool skipRtl = false;             ///< model only
  int64_t watchdogCycles = 20000;
  std::string buildCache;           ///< folder for verilated fabrics keyed by RTL hash ("" = <out>/build)
  double maxCycleErrorPercent = 0;  ///< > 0: |RTL - model| / RTL above this fails the verdict
};

/// What verify measured.
struct VerifyReport {
  ModelResult model;
  bool rtlRan = false;
  std::string rtlStatus;            ///< ok | deadlock | timeout | build-failed
  std::vector<std::string> rtlStuck;
  int64_t rtlCycles = 0, rtlReadBytes = 0, rtlWriteBytes = 0;
  int64_t rtlPeakMuBytes = 0;       ///< most bytes held at once by all memory units (route, combine, buffers)
  double rtlWallSeconds = 0, rtlCyclesPerSecond = 0, buildSeconds = 0;
  bool outputsEqual = false;
  std::string firstMismatch;        ///< "out[3,17]: model 0x3f800000 rtl 0x3f800001"
  double cycleErrorPercent = 0;     ///< (rtl - model) / rtl * 100
  double maxCycleErrorPercent = 0;  ///< the tolerance it was held to (0 = none)
  double compileSeconds = 0;
};

/// compile + model + Verilator build/run + compare; writes report.txt / report.json in the
/// output folder. Errors: DiagError for bad input (nothing left in outDir).
VerifyReport verify(const VerifyOptions& o);

/// The verdict: the model finished without deadlock and, unless the RTL was not run, the RTL
/// finished with outputs bit-exact, off-chip bytes equal to the model's and the cycle error
/// within maxCycleErrorPercent (when set).
bool passed(const VerifyReport& r);
bool bytesEqual(const VerifyReport& r);     ///< RTL off-chip read and write bytes == the model's
bool cyclesWithin(const VerifyReport& r);   ///< |cycle error| within the tolerance (always, if none)

/// The verdict block printed by the command.
std::string verdictText(const VerifyReport& r);

/// Builds (or reuses from the cache) the Verilator simulation of the fabric files; returns
/// the binary path. Throws std::runtime_error with the build log's tail on failure.
std::string buildFabric(const std::vector<RtlFile>& rtl, const std::string& archName, const std::string& cacheDir,
                        bool trace, double* seconds);

}  // namespace stepgen
