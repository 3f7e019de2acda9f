#pragma once
// The random-graph study (`stepgen study random`, docs/random_graphs.md): seeded random
// STeP graphs (buildRandomGraph) through the model and the RTL at several link FIFO depths.
#include <cstdint>
#include <string>
#include <vector>

namespace stepgen {

/// Options of `stepgen study random`.
struct RandomStudyOptions {
  std::string archPath = "arch/default.yaml";  ///< the fabric; its unit counts bound each graph
  uint32_t first = 1;                          ///< first seed
  int seeds = 30;                              ///< seeds first .. first + seeds - 1
  std::vector<int> fifoDepths{1, 2, 8};        ///< link.fifo_depth of the arch variants each graph runs on
  int randomArchs = 4;                         ///< random fabrics (buildRandomArch) in the pool beside archPath
  uint32_t archSeed = 1;                       ///< their seeds: archSeed .. archSeed + randomArchs - 1
  bool skipRtl = false;                        ///< model only
  double maxCycleErrorPercent = 5;             ///< a point beyond this is reported (the model's target)
  bool reduce = false;                         ///< shrink each failing seed's graph (reduceRandomGraph)
  std::string workDir = "out/random_study";
  std::string csvPath, mdPath;                 ///< files to write ("" = print only)
};

/// The arch pool is archPath and `randomArchs` fabrics of buildRandomArch. For every seed:
/// an arch of the pool (seed mod pool size), buildRandomGraph within its address-generator
/// and compute-unit counts, then `verify` (seeded random inputs) on that arch with each FIFO
/// depth (archVariant). On an arch with two contexts or more, a quarter of the seeds are cut
/// into two sections although they fit, and another quarter are drawn for twice the arch's
/// units, so that they are larger than the fabric and run in as many sections as the
/// planner needs (the CSV's `sections` is the count each point ran with). A seed passes when, at every depth, the model finished exactly where the
/// RTL finished (same deadlock verdict), and where both finished the outputs are bit-exact
/// and the off-chip bytes equal; and the RTL outputs are byte-identical at every depth
/// that finished (fifo_invariant; "n/a" for a graph with an EagerMerge, whose outputs are
/// in arrival order, and where fewer than two depths finished in RTL: nothing compared;
/// the summary counts both apart). An RTL run that neither finished nor deadlocked (build
/// failure, crash, timeout) fails the seed whatever the model did. The cycle error (RTL - model) / RTL is measured per point
/// and summarized (mean, max, points beyond maxCycleErrorPercent). Prints one line per point
/// and, for a failing seed, the command that reproduces it; writes CSV and markdown when
/// asked. With `reduce`, a failing seed's graph is shrunk while it still fails and written
/// with the arch variants to <workDir>/reduced_s<seed>/. Returns 0, or 2 when a seed fails
/// (a graph that does not compile is a failure too: a generator bug).
int runRandomStudy(const RandomStudyOptions& o);

}  // namespace stepgen
