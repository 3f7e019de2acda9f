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

/// Whether `verify` verilates a fabric hierarchically when the user does not say: from 16
/// compute units on. Measured on 2 cores without ccache (2026-12-04): arch/attention.yaml
/// (17 compute units) built in 21 s hierarchically against 37 s flat; tests/data/arch_grid8.yaml
/// (36) in 146 s against 305 s, then ran 4.2 k instead of 11.2 k cycles/s, so hierarchical is
/// faster end to end for runs below about a million cycles; arch/default.yaml (7) builds flat
/// in 28 s and runs 2 to 3 times faster so.
bool hierarchicalByDefault(const ArchModel& a);

/// Builds (or reuses from `cacheDir`) the Verilator simulation of the fabric files; returns
/// the binary path and sets `*seconds` to the wall time spent. A fabric depends on the
/// architecture only, so every graph on one arch reuses one build. `axiMasters` > 0 builds
/// the AXI wrapper sg_axi_top with that many masters (one per AG) and the AXI harness
/// instead of sg_top and the flat-port one (docs/axi.md). `hierarchical` verilates the
/// compute unit (sg_cu's hier_block comment) once per parameter set and the top around it
/// (Verilator --hierarchical): on the 121-unit gqa_dynamic fabric
/// the build is several times faster and the run slower (docs/hardware.md section 6).
/// Processes may share `cacheDir`: each builds in a folder of its own and publishes it by one
/// rename, so none sees a half-built fabric (tests/rtl/build_cache_shared.sh).
/// Throws std::runtime_error with the build log's tail on failure (nothing left in the cache).
std::string buildFabric(const std::vector<RtlFile>& rtl, const std::string& archName, const std::string& cacheDir,
                        bool trace, double* seconds, int axiMasters = 0, bool hierarchical = false);

/// Writes `dir`/run.json (bitstream fabric.bin and inputs/<t>.npy must be in `dir`), runs the
/// verilated fabric `bin` on it (outputs to `dir`/rtl_out/<t>.npy, result rtl_result.json,
/// log rtl_run.log) and reads its result back. With `tag` other than "rtl" (the AXI run:
/// "axi") the files are <tag>_run.json, <tag>_out/, <tag>_result.json and <tag>_run.log.
/// Stuck port names carry the stream they read, e.g. "u_cu_x1_y0.in0 (stream h)". Never
/// throws for a failed run: status "crashed" with the harness's output as message when no
/// result came back.
RunResult runRtl(const CompileResult& c, const std::string& bin, int64_t watchdogCycles, bool trace,
                 const std::filesystem::path& dir, const std::string& tag = "rtl");

}  // namespace stepgen
