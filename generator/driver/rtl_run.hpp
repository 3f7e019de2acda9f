#pragma once
// The RTL run of `stepgen verify`: the Verilator build of a fabric (cached by the text of its
// RTL and of the harness), the run description handed to the harness, and reading back what
// it measured and wrote.
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "driver/pipeline.hpp"

namespace stepgen {

/// Builds (or reuses from `cacheDir`) the Verilator simulation of the fabric files; returns
/// the binary path and sets `*seconds` to the wall time spent. A fabric depends on the
/// architecture only, so every graph on one arch reuses one build. Throws
/// std::runtime_error with the build log's tail on failure.
std::string buildFabric(const std::vector<RtlFile>& rtl, const std::string& archName, const std::string& cacheDir,
                        bool trace, double* seconds);

/// What one RTL run measured and wrote.
struct RtlRun {
  std::string status;               ///< ok | deadlock | timeout | error | crashed
  std::vector<std::string> stuck;   ///< "u_cu_x1_y0.in0 (stream h)" per stuck port
  int64_t cycles = 0, readBytes = 0, writeBytes = 0;  ///< cycles; off-chip bytes
  int64_t peakMuBytes = 0;          ///< most bytes held at once by all memory units
  double wallSeconds = 0, cyclesPerSecond = 0;
  std::string log;                  ///< the harness's output when it crashed or failed
  std::map<std::string, Matrix> outputs;  ///< output tensors (status ok only)
};

/// Writes `dir`/run.json (bitstream fabric.bin and inputs/<t>.npy must be in `dir`), runs the
/// verilated fabric `bin` on it and reads the result and outputs back. Never throws for a
/// failed run: the status says what happened.
RtlRun runRtl(const CompileResult& c, const std::string& bin, int64_t watchdogCycles, bool trace,
              const std::filesystem::path& dir);

}  // namespace stepgen
