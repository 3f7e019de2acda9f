#pragma once
// The context study (`stepgen study sections`): a stack of N SwiGLU layers on a fabric with
// C contexts, run in sections, model and RTL (docs/results/sections.md).
#include <string>
#include <vector>

namespace stepgen {

/// Options of `stepgen study sections`.
struct SectionsStudyOptions {
  std::string archPath = "arch/default.yaml";  ///< the fabric; its `contexts` is varied
  std::string workDir = "out/sections_study";
  std::string csvPath, mdPath, svgPath;        ///< files to write ("" = print only)
  bool rtl = false;                            ///< also run every point in Verilator
  std::vector<int> layers{2, 4, 8};
  std::vector<int> contexts{1, 2, 4, 8};  // 1: every later section reloaded while nothing runs
  std::vector<std::string> carries{"auto", "dram"};  ///< --carry of each point (pipeline.hpp)
};

/// For every (layers N, contexts C, carry policy): the N-layer SwiGLU stack (B 16, D 64,
/// F 128, tb 8, tf 32) through `verify` on the arch with C contexts. Per point: sections,
/// bytes carried between sections (in memory units, through DRAM),
/// switch cycles (RTL: last beat of a section to the first of the next, mean), reload words
/// and the cycles they expose (RTL and model), the single-context baseline (stop, rewrite
/// the whole 1-context bitstream, start: (S - 1) * (words + 1) cycles), model and RTL cycles
/// and bit-exactness. Prints the table; writes CSV, markdown and an SVG plot (exposed reload
/// cycles against layers, per context count, and the baseline) when asked. Returns 0, or 2
/// if a point does not verify.
int runSectionsStudy(const SectionsStudyOptions& o);

}  // namespace stepgen
