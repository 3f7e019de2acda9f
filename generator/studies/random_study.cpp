// The random-graph study: every seed is one graph (buildRandomGraph) verified on the arch at
// each FIFO depth.
#include "studies/random_study.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>

#include "arch/arch_model.hpp"
#include "arch/unit_catalogue.hpp"
#include "builders/random_arch.hpp"
#include "builders/random_graph.hpp"
#include "driver/pipeline.hpp"
#include "driver/report.hpp"
#include "studies/arch_variant.hpp"
#include "support/diag.hpp"
#include "support/files.hpp"
#include "jobs/point_jobs.hpp"

namespace stepgen {

namespace fs = std::filesystem;

namespace {

struct RandomPoint {
  uint32_t seed = 0;
  int ops = 0, depth = 0, sections = 1;
  std::string arch;
  VerifyReport v;
  bool fifoInvariant = true;
  bool arrivalOrder = false;      ///< the graph has an EagerMerge: fifoInvariant is not asked
  bool invariantChecked = false;  ///< RTL outputs of at least two FIFO depths were compared
  bool ran() const { return !v.rtl.status.empty(); }  ///< the RTL ran
  bool bothFinished() const { return v.rtl.status == "ok" && !v.model.timing.deadlock; }
};

bool rtlFinished(const VerifyReport& v) { return v.rtl.status == "ok"; }

// The finding at one point ("" = none): verdicts that differ, outputs / bytes that do, or an
// RTL run that neither finished nor deadlocked (a build failure, a crash, a timeout), which
// agrees with nothing: a model deadlock is confirmed only by an RTL deadlock.
std::string finding(const RandomPoint& p) {
  const bool modelDone = !p.v.model.timing.deadlock;
  if (!p.ran()) return "";  // model only: nothing to compare the verdict with
  const std::string& st = p.v.rtl.status;
  if (st != "ok" && st != "deadlock")
    return fmt::format("RTL {} (the model {})", st, modelDone ? "finishes" : "deadlocks");
  if (modelDone != rtlFinished(p.v))
    return fmt::format("model {} but RTL {}", modelDone ? "finishes" : "deadlocks", st);
  if (!modelDone) return "";  // both stop: the verdicts agree
  if (!p.v.outputsEqual) return "outputs differ: " + p.v.firstMismatch;
  if (!bytesEqual(p.v)) return "off-chip bytes differ";
  return "";
}

// The bytes of every file of <dir>/rtl_out, by name.
std::string rtlOutputs(const fs::path& dir) {
  std::vector<fs::path> files;
  if (fs::is_directory(dir / "rtl_out"))
    for (const auto& e : fs::directory_iterator(dir / "rtl_out")) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  std::string all;
  for (const auto& f : files) all += f.filename().string() + "\n" + readText(f);
  return all;
}

// One fabric of the pool: its name, its FIFO-depth variants (files), what bounds a graph on
// it, and whether it has a second context for a section cut.
struct PoolArch {
  std::string name;
  std::vector<std::string> variants;
  RandomGraphLimits limits;
  bool twoContexts = false;
};

PoolArch poolArch(const std::string& path, const std::vector<int>& depths, const fs::path& dir) {
  const ArchModel a = loadArch(path);
  PoolArch p;
  p.name = a.name;
  const UnitCatalogue cat(a);
  p.limits.maxAg = int64_t(cat.unitsOfKind(UnitKind::AddressGen).size());
  p.limits.maxCu = int64_t(cat.unitsOfKind(UnitKind::Compute).size());
  p.twoContexts = a.contexts >= 2;
  p.limits.partition = a.cu.has("partition");
  p.limits.merge = a.cu.has("merge");
  p.limits.feedback = a.cu.has("select");
  p.limits.route = a.mu.route && !cat.unitsOfKind(UnitKind::Memory).empty();
  p.limits.combine = a.mu.route && cat.unitsOfKind(UnitKind::Memory).size() >= 3;  // route data, its selector twin, combine
  auto hasAll = [&](const auto& fns) { return std::all_of(std::begin(fns), std::end(fns), [&](const char* f) { return a.cu.has(f); }); };
  p.limits.dynamic = hasAll(kDynamicStepFunctions);
  p.limits.attention = hasAll(kAttentionStepFunctions);
  fs::create_directories(dir / a.name);
  // At the arch's own depth the file itself: the same RTL, so a build cache holding it is reused.
  for (int d : depths)
    p.variants.push_back(d == a.link.fifoDepth ? path : archVariant(path, (dir / a.name).string(), "fifo_depth", d));
  return p;
}

// One seed's graph on every FIFO-depth variant: its points and what failed ("" none).
struct SeedRun {
  std::vector<RandomPoint> points;
  std::vector<std::string> notes;
};

SeedRun runSeed(const RandomStudyOptions& o, const PoolArch& arch, int minSections, uint32_t seed, const RandomGraph& g,
                const fs::path& dir, bool print) {
  const std::vector<std::string>& archs = arch.variants;
  SeedRun s;
  writeFile(dir / "graph.yaml", g.yaml);
  for (const auto& [name, body] : g.files) writeFile(dir / name, body);
  std::string firstOut;
  bool haveOut = false, invariant = true;
  int finishedDepths = 0;
  for (size_t i = 0; i < archs.size(); ++i) {
    RandomPoint p{seed, g.ops, o.fifoDepths[i], minSections, arch.name, {}, true};
    VerifyOptions vo;
    vo.minSections = minSections;
    vo.archPath = archs[i];
    vo.graphPath = (dir / "graph.yaml").string();
    vo.outDir = (dir / fmt::format("fifo{}", p.depth)).string();
    vo.seed = seed;
    vo.skipRtl = o.skipRtl;
    vo.buildCache = (fs::path(o.workDir) / "build").string();
    try {
      p.v = studyVerify(vo);
      p.sections = p.v.sections;
    } catch (const DiagError& e) {
      s.notes.push_back(fmt::format("fifo {}: does not compile: {}", p.depth, e.diags.at(0).message));
      s.points.push_back(p);
      continue;
    }
    if (rtlFinished(p.v)) {
      ++finishedDepths;
      const std::string out = rtlOutputs(vo.outDir);
      if (haveOut && out != firstOut && !g.arrivalOrder) invariant = false;
      firstOut = out, haveOut = true;
    }
    if (const std::string f = finding(p); !f.empty()) s.notes.push_back(fmt::format("fifo {}: {}", p.depth, f));
    if (print)
      std::cout << fmt::format("seed {} ({} ops, {}, {} section{}) fifo {}: model {}{}\n", seed, g.ops, arch.name, p.sections,
                               p.sections > 1 ? "s" : "", p.depth,
                               p.v.model.timing.deadlock ? "deadlock" : fmt::format("{} cycles", p.v.model.timing.cycles),
                               !p.ran()           ? ""
                               : rtlFinished(p.v) ? fmt::format(", rtl {} cycles ({:+.2f} %)", p.v.rtl.cycles, p.v.cycleErrorPercent)
                                                  : fmt::format(", rtl {} at cycle {}", p.v.rtl.status, p.v.rtl.cycles));
    s.points.push_back(p);
  }
  for (RandomPoint& p : s.points)
    p.fifoInvariant = invariant, p.arrivalOrder = g.arrivalOrder, p.invariantChecked = finishedDepths >= 2;
  if (!invariant) s.notes.push_back("RTL outputs differ between FIFO depths");
  return s;
}

// How a seed runs on a fabric with two contexts or more, by (seed / pool size) mod 4: as drawn
// (0, 2), cut into two sections although it fits (1), or drawn for twice the fabric's address
// generators and compute units, so that it usually does not fit and planSections cuts it
// into as many sections as it needs (3). On one context: as drawn.
struct SeedPlan {
  RandomGraphLimits limits;
  int minSections = 1;
};
SeedPlan seedPlan(const PoolArch& arch, uint32_t seed, size_t poolSize) {
  SeedPlan p{arch.limits, 1};
  if (!arch.twoContexts) return p;
  const uint32_t k = uint32_t(seed / poolSize) % 4;
  if (k == 1) p.minSections = 2;
  if (k == 3) p.limits.maxAg *= 2, p.limits.maxCu *= 2;
  if (k == 1 || k == 3) p.limits.feedback = p.limits.route = p.limits.combine = false;  // a feedback cycle and a route cluster are mapped whole
  return p;
}

}  // namespace

int runRandomStudy(const RandomStudyOptions& o) {
  fs::create_directories(o.workDir);
  std::vector<PoolArch> pool{poolArch(o.archPath, o.fifoDepths, fs::path(o.workDir) / "arch")};
  for (int j = 0; j < o.randomArchs; ++j) {
    const uint32_t as = o.archSeed + uint32_t(j);
    const fs::path file = fs::path(o.workDir) / "arch" / fmt::format("random_a{}.yaml", as);
    writeFile(file, buildRandomArch(as));
    pool.push_back(poolArch(file.string(), o.fifoDepths, fs::path(o.workDir) / "arch"));
  }
  std::vector<RandomPoint> points;
  std::vector<std::string> failures;
  for (uint32_t seed = o.first; seed < o.first + uint32_t(o.seeds); ++seed) {
    const PoolArch& arch = pool[seed % pool.size()];
    const SeedPlan plan = seedPlan(arch, seed, pool.size());
    const fs::path dir = fs::path(o.workDir) / fmt::format("s{}", seed);
    SeedRun s = runSeed(o, arch, plan.minSections, seed, buildRandomGraph(seed, plan.limits), dir, true);
    points.insert(points.end(), s.points.begin(), s.points.end());
    if (s.notes.empty()) continue;
    std::string msg = fmt::format("seed {} FAILS: {}", seed, s.notes[0]);
    for (size_t i = 1; i < s.notes.size(); ++i) msg += "; " + s.notes[i];
    msg += fmt::format("\n  reproduce: stepgen study random --arch {} --random-archs {} --arch-seed {} --first {} --seeds 1",
                       o.archPath, o.randomArchs, o.archSeed, seed);
    if (o.reduce) {
      const fs::path red = fs::path(o.workDir) / fmt::format("reduced_s{}", seed);
      const ReducedGraph r = reduceRandomGraph(seed, plan.limits, [&](const RandomGraph& g) {
        return !runSeed(o, arch, plan.minSections, seed, g, red / "try", false).notes.empty();
      });
      fs::remove_all(red / "try");
      writeFile(red / "graph.yaml", r.graph.yaml);
      for (const auto& [name, body] : r.graph.files) writeFile(red / name, body);
      for (const std::string& a : arch.variants) fs::copy_file(a, red / fs::path(a).filename(), fs::copy_options::overwrite_existing);
      msg += fmt::format("\n  reduced ({} ops, {} tries): {}/graph.yaml with the arch files beside it", r.graph.ops, r.tries,
                         red.string());
    }
    std::cout << msg << "\n";
    failures.push_back(msg);
  }
  // The cycle error over the points where model and RTL both finished.
  std::vector<double> err;
  for (const RandomPoint& p : points)
    if (p.bothFinished()) err.push_back(p.v.cycleErrorPercent);
  double mean = 0, worst = 0;
  int beyond = 0, bothDeadlock = 0;
  for (const RandomPoint& p : points) bothDeadlock += p.ran() && p.v.model.timing.deadlock && p.v.rtl.status == "deadlock";
  // FIFO invariance per seed (its points share the verdict): checked, not checkable (fewer than
  // two depths finished in RTL), or not asked (arrival order).
  std::vector<uint32_t> checked, unchecked, arrival;
  for (const RandomPoint& p : points) {
    if (!p.ran()) continue;
    auto& v = p.arrivalOrder ? arrival : p.invariantChecked ? checked : unchecked;
    if (v.empty() || v.back() != p.seed) v.push_back(p.seed);
  }
  for (double e : err) mean += std::abs(e), worst = std::max(worst, std::abs(e)), beyond += std::abs(e) > o.maxCycleErrorPercent;
  if (!err.empty()) mean /= double(err.size());
  const std::string summary = fmt::format(
      "{} seeds x {} FIFO depths on {} fabrics: {} failing seeds; {} points, {} deadlocked in both model and RTL; cycle error "
      "over {} finished points: mean |error| {:.2f} %, max {:.2f} %, {} beyond {:.0f} %; FIFO invariance checked on {} "
      "seeds, n/a on {} (fewer than two depths finished in RTL) and {} (arrival order)\n",
      o.seeds, o.fifoDepths.size(), pool.size(), failures.size(), points.size(), bothDeadlock, err.size(), mean, worst, beyond,
      o.maxCycleErrorPercent, checked.size(), unchecked.size(), arrival.size());
  std::cout << summary;
  if (!o.csvPath.empty()) {
    std::string csv =
        "seed,ops,arch,sections,fifo_depth,model_cycles,rtl_cycles,error_pct,outputs_bit_exact,bytes_equal,model_deadlock,"
        "rtl_status,fifo_invariant\n";
    // Error, outputs and bytes are compared only where both finished.
    for (const RandomPoint& p : points) {
      const bool both = p.bothFinished();
      csv += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{}\n", p.seed, p.ops, p.arch, p.sections, p.depth,
                         p.v.model.timing.deadlock ? std::string() : std::to_string(p.v.model.timing.cycles),
                         p.ran() ? std::to_string(p.v.rtl.cycles) : "", both ? fmt::format("{:.2f}", p.v.cycleErrorPercent) : "",
                         both ? (p.v.outputsEqual ? "yes" : "no") : "", both ? (bytesEqual(p.v) ? "yes" : "no") : "",
                         p.v.model.timing.deadlock ? "yes" : "no", p.v.rtl.status,
                         p.arrivalOrder || !p.invariantChecked ? "n/a" : p.fifoInvariant ? "yes" : "no");
    }
    writeFile(o.csvPath, csv);
  }
  if (!o.mdPath.empty()) {
    std::string md = "# Random graphs: summary\n\n" + summary + "\n";
    if (!failures.empty()) {
      md += "\nFailing seeds:\n\n";
      for (const auto& f : failures) md += "- " + f + "\n";
    }
    writeFile(o.mdPath, md);
  }
  return failures.empty() ? 0 : 2;
}

}  // namespace stepgen
