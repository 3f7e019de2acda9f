#pragma once
// The RTL run of `stepgen verify`: the Verilator build of a fabric (cached by the text of its
// RTL and of the harness), the run description handed to the harness, and reading back what
// it measured.
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "common/run_desc.hpp"
#include "driver/pipeline.hpp"

namespace stepgen {

/// Builds (or reuses from `cacheDir`) the Verilator simulation of the fabric files; returns
/// the binary path and sets `*seconds` to the wall time spent. A fabric depends on the
/// architecture only, so every graph on one arch reuses one build. Throws
/// std::runtime_error with the build log's tail on failure.
std::string buildFabric(const std::vector<RtlFile>& rtl, const std::string& archName, const std::string& cacheDir,
                        bool trace, double* seconds);

/// Writes `dir`/run.json (bitstream fabric.bin and inputs/<t>.npy must be in `dir`), runs the
/// verilated fabric `bin` on it (outputs to `dir`/rtl_out/<t>.npy) and reads its result back.
/// Stuck port names carry the stream they read, e.g. "u_cu_x1_y0.in0 (stream h)". Never
/// throws for a failed run: status "crashed" with the harness's output as message when no
/// result came back.
RunResult runRtl(const CompileResult& c, const std::string& bin, int64_t watchdogCycles, bool trace,
              const std::filesystem::path& dir);

}  // namespace stepgen
