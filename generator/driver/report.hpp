#pragma once
// What `stepgen verify` measured, the verdict rule, and the report it prints and writes.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/run_desc.hpp"
#include "driver/reference.hpp"
#include "model/model.hpp"

namespace stepgen {

/// What verify measured.
struct VerifyReport {
  ModelResult model;
  /// What the harness measured (cycles, off-chip bytes, memory-unit peak, stuck ports).
  /// status "" = the RTL was not run; "build-failed" / "crashed" = no result came back.
  RunResult rtl;
  double buildSeconds = 0;
  bool hierarchical = false;  ///< the fabric was verilated hierarchically (VerifyOptions::hierarchical)
  bool outputsEqual = false;
  std::string firstMismatch;        ///< "out[3,17]: model 0x3f800000 rtl 0x3f800001"
  double cycleErrorPercent = 0;     ///< (rtl - model) / rtl * 100
  double maxCycleErrorPercent = 0;  ///< the tolerance it was held to (0 = none)
  double compileSeconds = 0;
  int sections = 1;                 ///< sections of the program (map/sections.hpp)
  int reloadedSections = 0;         ///< of them, written into a context while the fabric ran
  int64_t carriedDramBytes = 0;     ///< bytes carried between sections through DRAM scratch
  int64_t carriedOnchipBytes = 0;   ///< bytes carried between sections in memory units
  int64_t bufferBytes = 0;          ///< bytes of the reconvergent-path buffers (BufferPlan::bufferBytes)
  /// The run through the AXI wrapper (verify --axi; docs/axi.md): same bitstream and inputs,
  /// cycles from its CYCLES register. axiMismatch "" = outputs bit-exact with the model.
  bool axiRan = false;
  RunResult axi;
  std::string axiMismatch;
  double axiBuildSeconds = 0;
  /// The fabric's arbitration (driver/decisions.hpp): its merge decisions from the harness's
  /// decision log, and how many differ from the model's own. When any do and the RTL
  /// finished, `replay` is the model run again under the RTL's decisions (replayModel): the
  /// outputs and off-chip bytes are compared with it, and `replayCycleErrorPercent` is the
  /// cycle error against it. `model` and `cycleErrorPercent` stay the model's own prediction.
  /// A log that cannot be replayed (`replayError`) fails the comparison.
  int64_t rtlDecisions = 0, differingDecisions = 0;
  std::optional<ModelResult> replay;
  double replayCycleErrorPercent = 0;  ///< (rtl - replay) / rtl * 100
  std::string replayError;             ///< the decision log did not fit the graph or the model's streams
  /// The model the RTL's outputs and off-chip bytes are held to: `replay` if it ran, else `model`.
  const ModelResult& compared() const { return replay ? *replay : model; }
  /// verify --reference: the model's outputs against another framework's (PyTorch, ONNX).
  std::optional<ReferenceCheck> reference;
};

/// (rtl - model) / rtl in percent: the cycle error of every verify run and study (0 without
/// RTL cycles).
inline double cycleErrorPercent(int64_t rtl, int64_t model) {
  return rtl > 0 ? 100.0 * double(rtl - model) / double(rtl) : 0.0;
}

/// Per section boundary k -> k+1 of an RTL run: cycles from the last beat of section k to
/// the first beat of section k+1 (dbg_port_fire), one entry per boundary both sides of
/// which had beats.
std::vector<int64_t> switchCycles(const RunResult& r);

/// The verdict: the model finished without deadlock and, unless the RTL was not run, the RTL
/// finished with outputs bit-exact and off-chip bytes equal to the model's (under the RTL's
/// merge decisions when they differ: VerifyReport::compared), the model's own cycle error
/// within maxCycleErrorPercent (when set), with --axi axiPassed, and with --reference the
/// model's outputs within the reference's tolerance.
bool passed(const VerifyReport& r);
bool bytesEqual(const VerifyReport& r);     ///< RTL off-chip read and write bytes == the compared model's
bool cyclesWithin(const VerifyReport& r);   ///< |cycle error| within the tolerance (always, if none)
const char* verilatedName(const VerifyReport& r);  ///< "hierarchical" or "flat": how the fabric was verilated
/// The AXI run (when it ran) finished ok, bit-exact with the model, with the flat run's off-chip bytes.
bool axiPassed(const VerifyReport& r);

/// The verdict block printed by the command.
std::string verdictText(const VerifyReport& r);

/// report.json: the model's and the RTL's figures, outputs_equal, first_mismatch, the cycle error and the
/// sections (count, reloaded, carried bytes, model section starts, RTL switch cycles, reloads).
/// Throws std::runtime_error if it cannot be written.
void writeReportJson(const VerifyReport& r, const std::string& archName, const std::string& graphName,
                     const std::filesystem::path& p);

}  // namespace stepgen
