#pragma once
// One job of `stepgen synth` (docs/fpga.md): a Yosys run of one module out of context
// (flows/fpga_synth_one.sh), kept in and taken from the synthesis cache
// (flows/fpga_synth_key.sh), or an iCE40 place and route (flows/ice40_pnr_one.sh).
#include <cstdint>
#include <filesystem>
#include <string>

#include "fpga/synth.hpp"

namespace stepgen {

/// An FPGA part's capacity: LUTs, FFs, 36 Kb block RAMs (iCE40: 4 Kb blocks), DSP blocks.
struct Part {
  const char* target;
  const char* name;
  int64_t luts, ffs;
  double brams;
  int64_t dsps;
};

/// Whether compute-unit row (or part row "cu.*") `row` was given parameter `name` = `value`
/// (its params are "NAME=VALUE ..."; whole words are compared).
bool cuParamIs(const SynthRow& row, const std::string& name, const std::string& value);

/// Synthesizes `row.module` at `row.params` from the fabric's `rtl` folder with the modules in
/// `blackboxes` (space-separated) as black boxes, within o's time and memory limits, or takes
/// the result of an identical job from o.cacheDir (row.cached; a finished job is added
/// there). Fills the row's counts, its Yosys seconds (a cached row: the seconds of the job
/// that made it) and status: ok, timeout or failed. Writes <o.outDir>/<row.unit>.stat.json,
/// .ltp.txt, .log and .key. Errors: std::filesystem::filesystem_error when the output or
/// cache folder cannot be written.
void runSynthJob(const std::filesystem::path& rtl, const std::string& blackboxes, const SynthOptions& o, SynthRow& row);

/// Places and routes synthesized unit row `row` on iCE40 part `part` with nextpnr, out of
/// context; fills its pnrStatus (placed, too-big, does-not-fit, timeout, failed), Fmax
/// (MHz), logic cells, block RAMs and seconds.
void runPnrJob(const std::filesystem::path& rtl, const SynthOptions& o, const Part& part, SynthRow& row);

}  // namespace stepgen
