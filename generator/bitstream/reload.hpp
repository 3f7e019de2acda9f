#pragma once
// Sections onto contexts: section k of a program runs from context k mod C of every unit
// (docs/hardware.md section 2, "Sections"). When a program has more sections than the
// fabric has contexts, the host writes section k into context k mod C while the fabric runs,
// once section k - C has finished, and then raises the SECTIONS_LOADED word.
#include <cstdint>
#include <vector>

#include "arch/config_layout.hpp"
#include "bitstream/config_image.hpp"
#include "common/run_desc.hpp"  // SectionReload: the harness reads the same type from run.json

namespace stepgen {

/// What the host loads: the bitstream before `start` and the reloads after it.
struct FabricProgram {
  ConfigImage image;               ///< sections 0 .. min(S, C) - 1 in their contexts
  std::vector<uint32_t> bitstream; ///< encodeBitstream(image)
  std::vector<SectionReload> reloads;  ///< sections C .. S - 1, in order
};

/// Folds a program image with one context per section (`wide`, laid out by `wideLayout`,
/// wide.sections = S) onto the fabric's layout `l` (C contexts). With S <= C the image is
/// the same, only with C contexts. Each reload writes only the words that change (a word
/// shared with a running context is written with that context's bits unchanged).
/// Throws std::logic_error if the layouts do not belong to the same arch.
FabricProgram foldSections(const ConfigImage& wide, const ConfigLayout& wideLayout, const ConfigLayout& l);

}  // namespace stepgen
