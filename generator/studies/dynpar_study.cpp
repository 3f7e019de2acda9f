// The dynamic-parallelization study: every point is writeGqaExample for one batch and one
// strategy, run through verify.
#include "studies/dynpar_study.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>

#include "arch/arch_model.hpp"
#include "builders/gqa_decode.hpp"
#include "driver/examples.hpp"
#include "driver/pipeline.hpp"
#include "studies/rtl_columns.hpp"
#include "support/csv.hpp"
#include "support/files.hpp"
#include "support/kv_lengths.hpp"
#include "jobs/point_jobs.hpp"

namespace stepgen {

namespace fs = std::filesystem;

namespace {

struct DynparPoint {
  std::string batch, strategy;
  int64_t size = 0, stdev = 0, tiles = 0, busiest = 0;
  double estimate = 0;  ///< the service-model estimate of the cycles
  bool rtl = false, modeled = true;
  VerifyReport v;
};

// KV tiles of the region with the most under an assignment of requests to regions.
int64_t busiestTiles(const GqaParams& p, const std::vector<std::vector<int64_t>>& regions) {
  int64_t most = 0;
  for (const auto& reqs : regions) {
    int64_t t = 0;
    for (int64_t b : reqs) t += gqaTiles(p, size_t(b));
    most = std::max(most, t);
  }
  return most;
}

// A region's cost per request, from the model of one region: startup + sum of marginal(n)
// over its requests (n = KV tiles), marginal(n) = alpha + beta * n.
struct ServiceModel {
  double startup = 0, alpha = 0, beta = 0;
  double marginal(int64_t n) const { return alpha + beta * double(n); }
};

// writeGqaExample into <work>/<name>/g, then verify it (model only unless `rtl`); in the
// paper's setting the timing-only model alone, at head dim 128.
VerifyReport runPoint(const DynparStudyOptions& o, const GqaParams& given, const std::string& name, bool rtl) {
  const fs::path dir = fs::path(o.workDir) / name;
  GqaParams p = given;
  if (o.paper) {
    p.headDim = 128;  // Qwen3-30B-A3B
    writeGqaExample(p, (dir / "g").string(), 1, /*fixedOnly=*/true);
    VerifyReport v;
    v.model = studyTimingOnly(p.strategy == GqaStrategy::Dynamic ? o.dynamicArchPath : o.archPath,
                              (dir / "g" / "graph.yaml").string(), (dir / "g" / "inputs").string());
    return v;
  }
  writeGqaExample(p, (dir / "g").string(), 1);
  VerifyOptions vo;
  vo.archPath = p.strategy == GqaStrategy::Dynamic ? o.dynamicArchPath : o.archPath;
  vo.graphPath = (dir / "g" / "graph.yaml").string();
  vo.inputsDir = (dir / "g" / "inputs").string();
  vo.outDir = (dir / "v").string();
  vo.skipRtl = !rtl;
  // Both GQA fabrics (74 and 85 compute units) are verilated hierarchically
  // (hierarchicalByDefault): flat, the dynamic one built in 15 to 50 minutes.
  vo.buildCache = (fs::path(o.workDir) / "build").string();
  return studyVerify(vo);
}

// Model cycles of one region serving requests of these KV lengths.
int64_t oneRegion(const DynparStudyOptions& o, const std::vector<int64_t>& lengths, const std::string& tag) {
  GqaParams p;
  p.kvLengths = lengths;
  p.regions = 1;
  return runPoint(o, p, "service_" + tag, false).model.timing.cycles;
}

// Marginal costs of a request of 1 and of 32 KV tiles (one region serving two equal
// requests minus one) and the startup of the first.
ServiceModel measureService(const DynparStudyOptions& o) {
  const int64_t T = GqaParams{}.kvTile, small = 1, big = 32;
  const double c1 = double(oneRegion(o, {small * T}, "1")), c11 = double(oneRegion(o, {small * T, small * T}, "1_1"));
  const double c2 = double(oneRegion(o, {big * T}, "32")), c22 = double(oneRegion(o, {big * T, big * T}, "32_32"));
  ServiceModel m;
  m.beta = ((c22 - c2) - (c11 - c1)) / double(big - small);
  m.alpha = (c11 - c1) - m.beta * double(small);
  m.startup = c1 - m.marginal(small);
  return m;
}

// Estimated cycles of an assignment: the busiest region's startup + marginal costs.
double estimate(const ServiceModel& m, const GqaParams& p, const std::vector<std::vector<int64_t>>& regions) {
  double most = 0;
  for (const auto& reqs : regions) {
    double t = reqs.empty() ? 0 : m.startup;
    for (int64_t b : reqs) t += m.marginal(gqaTiles(p, size_t(b)));
    most = std::max(most, t);
  }
  return most;
}

// Dynamic assignment in the estimate: requests in batch order, each to the region that
// frees first (ties: the lowest region), as a Partition by an EagerMerge of region-free
// signals would do with free dispatch.
std::vector<std::vector<int64_t>> listSchedule(const ServiceModel& m, const GqaParams& p) {
  std::vector<std::vector<int64_t>> r(size_t(p.regions));
  std::vector<double> freeAt(size_t(p.regions), m.startup);
  for (size_t b = 0; b < p.kvLengths.size(); ++b) {
    const size_t k = size_t(std::min_element(freeAt.begin(), freeAt.end()) - freeAt.begin());
    r[k].push_back(int64_t(b));
    freeAt[k] += m.marginal(gqaTiles(p, b));
  }
  return r;
}

// "dynamic" / "dynamic:<c>": the strategy and its credits per region.
std::pair<GqaStrategy, int64_t> parseStudyStrategy(const std::string& st) {
  if (st.rfind("dynamic:", 0) == 0) {
    const std::string c = st.substr(8);
    if (c.empty() || c.find_first_not_of("0123456789") != std::string::npos || c.size() > 4)
      throw std::runtime_error(fmt::format("strategy '{}': dynamic:<credits>, credits a number >= 1", st));
    return {GqaStrategy::Dynamic, std::stoll(c)};
  }
  return {parseGqaStrategy(st), 1};
}

// Per batch size and dynamic variant, the geometric mean over its batches of the best static
// strategy's value (cycles) over the variant's, and the number of batches. Rows: batch id,
// strategy, size, value.
struct Cycles {
  std::string batch, strategy;
  int64_t size = 0;
  double value = 0;
};
std::map<std::pair<int64_t, std::string>, std::pair<double, int>> speedups(const std::vector<Cycles>& rows) {
  auto isStatic = [](const std::string& s) { return s == "coarse" || s == "interleave"; };
  std::map<std::string, double> best;
  for (const Cycles& r : rows)
    if (isStatic(r.strategy)) best[r.batch] = best.count(r.batch) ? std::min(best[r.batch], r.value) : r.value;
  std::map<std::pair<int64_t, std::string>, std::pair<double, int>> acc;  // sum of logs, batches
  for (const Cycles& r : rows)
    if (!isStatic(r.strategy) && best.count(r.batch)) {
      auto& a = acc[{r.size, r.strategy}];
      a.first += std::log(best.at(r.batch) / r.value), ++a.second;
    }
  for (auto& [k, a] : acc) a.first = std::exp(a.first / a.second);
  return acc;
}

// This fabric's study CSV beside the paper setting's rows: the speed-ups of both.
std::string sideBySide(const std::string& path, const std::vector<Cycles>& paper) {
  std::vector<Cycles> fabric;
  for (const auto& [key, v] : readCsvColumns(path, {"batch_id", "strategy"}, {"batch_size", "model_cycles"}))
    if (const auto c = parseWholeNumber(v[1]); c) fabric.push_back({key[0], key[1], parseWholeNumber(v[0]).value_or(0), double(*c)});
  const auto a = speedups(fabric), b = speedups(paper);
  std::string md = fmt::format("\nBeside this fabric's study ({}: head dim 64 on arch/gqa.yaml and arch/gqa_dynamic.yaml, "
                               "64 B/cycle off-chip shared by the regions), best static / dynamic, geometric mean over the "
                               "batches (model cycles; the paper reports 1.5x):\n\n| batch size | dynamic variant | this "
                               "fabric | paper setting |\n|---|---|---|---|\n",
                               path);
  for (const auto& [k, x] : b)
    md += fmt::format("| {} | {} | {} | {:.3f}x |\n", k.first, k.second, a.count(k) ? fmt::format("{:.3f}x", a.at(k).first) : "-",
                      x.first);
  return md;
}

}  // namespace

int runDynparStudy(const DynparStudyOptions& o) {
  const auto earlier = readRtlColumns(o.rtlFrom, {"batch_id", "strategy"});
  const std::vector<KvBatch> all = readKvBatches(o.lengthsPath);
  std::vector<int> which = o.batches;
  if (which.empty())
    for (size_t i = 0; i < all.size(); ++i) which.push_back(int(i));
  const ServiceModel svc = measureService(o);
  // The dynamic rows run in Verilator too where their arch has a grid of its own.
  const bool dynRtl = !loadArch(o.dynamicArchPath).unbounded;
  std::cout << fmt::format("service model (one region, model cycles): startup {:.0f}, per request {:.1f} + {:.1f} per KV tile\n",
                           svc.startup, svc.alpha, svc.beta);
  std::vector<DynparPoint> points;
  bool ok = true;
  for (int bi : which) {
    if (bi < 0 || bi >= int(all.size())) throw std::runtime_error(fmt::format("batch {} is not in {}", bi, o.lengthsPath));
    const KvBatch& kb = all[size_t(bi)];
    GqaParams p;
    p.kvLengths = scaledKvLengths(kb.lengths, o.kvScale);
    p.regions = o.regions;
    const int64_t size = int64_t(kb.lengths.size()), tiles = gqaTotalTiles(p);
    const auto dynamic = listSchedule(svc, p);  // the dynamic strategy as the estimate sees it (no fabric run)
    for (const std::string& st : o.strategies) {
      std::tie(p.strategy, p.credits) = parseStudyStrategy(st);
      const bool dyn = p.strategy == GqaStrategy::Dynamic;
      // The dynamic assignment is the fabric's (not known here): the estimate's list schedule.
      const auto assignment = dyn ? dynamic : gqaAssignment(p);
      // Only a static row's RTL run can be reused: a dynamic row's verdict and replay
      // columns depend on how the model decides the dispatch, which a changed model may change.
      const auto it = dyn ? earlier.end() : earlier.find(std::vector<std::string>{kb.id, st});
      const bool rtlHere = (o.rtlStrategies.empty() ||
                            std::find(o.rtlStrategies.begin(), o.rtlStrategies.end(), st) != o.rtlStrategies.end()) &&
                           (o.rtlBatches.empty() || std::find(o.rtlBatches.begin(), o.rtlBatches.end(), bi) != o.rtlBatches.end());
      DynparPoint pt{kb.id, st, size, kb.stdevLabel, tiles, dyn ? -1 : busiestTiles(p, assignment), estimate(svc, p, assignment),
               (!dyn || dynRtl) && rtlHere && it == earlier.end() && size <= o.rtlMaxBatch, true, {}};
      std::string dir = fmt::format("b{}_{}", bi, st);
      std::replace(dir.begin(), dir.end(), ':', '_');
      pt.v = runPoint(o, p, dir, pt.rtl);
      if (it != earlier.end()) {  // an earlier run's RTL columns for this unchanged point
        pt.rtl = true;
        pt.v.rtl.cycles = uint64_t(it->second.cycles), pt.v.outputsEqual = it->second.bitExact;
        pt.v.cycleErrorPercent = cycleErrorPercent(it->second.cycles, int64_t(pt.v.model.timing.cycles));
      }
      ok = ok && passed(pt.v);
      std::cout << fmt::format("batch {} ({} requests, {} KV tiles) {}: busiest region {} tiles, model {} cycles{}\n", bi,
                               pt.size, pt.tiles, st, pt.busiest < 0 ? std::string("(run time)") : std::to_string(pt.busiest),
                               pt.v.model.timing.cycles,
                               pt.rtl ? fmt::format(", rtl {} ({:+.2f} %)", pt.v.rtl.cycles, pt.v.cycleErrorPercent) : "");
      points.push_back(std::move(pt));
    }
    DynparPoint dyn{kb.id, "dynamic_estimate", size, kb.stdevLabel, tiles, busiestTiles(p, dynamic), estimate(svc, p, dynamic),
              false, false, {}};
    std::cout << fmt::format("batch {} dynamic (list-scheduling estimate): busiest region {} tiles, {:.0f} cycles\n", bi,
                             dyn.busiest, dyn.estimate);
    points.push_back(std::move(dyn));
  }
  auto modelCol = [](const DynparPoint& p) { return p.modeled ? fmt::format("{}", p.v.model.timing.cycles) : std::string(); };
  auto estErr = [](const DynparPoint& p) {
    return p.modeled ? fmt::format("{:.2f}", 100.0 * (p.estimate - double(p.v.model.timing.cycles)) / double(p.v.model.timing.cycles))
                     : std::string();
  };
  std::string csv =
      "batch_id,batch_size,stdev_label,strategy,regions,kv_scale,kv_tiles,busiest_region_tiles,model_cycles,rtl_cycles,error_pct,"
      "outputs_bit_exact,estimate_cycles,estimate_error_pct,offchip_bytes,differing_decisions,replay_error_pct\n";
  for (const DynparPoint& p : points)
    csv += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{:.0f},{},{},{},{}\n", p.batch, p.size, p.stdev, p.strategy, o.regions,
                       o.kvScale, p.tiles, p.busiest < 0 ? std::string() : std::to_string(p.busiest), modelCol(p), p.rtl ? fmt::format("{}", p.v.rtl.cycles) : "",
                       p.rtl ? fmt::format("{:.2f}", p.v.cycleErrorPercent) : "",
                       p.rtl ? (p.v.outputsEqual ? "yes" : "no") : "", p.estimate, estErr(p),
                       p.modeled ? fmt::format("{}", p.v.model.offchipBytes) : "",
                       p.rtl && p.v.rtlDecisions ? fmt::format("{}", p.v.differingDecisions) : "",
                       p.v.replay ? fmt::format("{:.2f}", p.v.replayCycleErrorPercent) : "");
  std::cout << csv;
  if (!o.csvPath.empty()) writeFile(o.csvPath, csv);
  if (!o.mdPath.empty()) {
    // Per batch size and dynamic variant, best static / variant: model cycles (the
    // list-scheduling estimate for dynamic_estimate), and the estimate against the estimate's
    // own best static.
    std::vector<Cycles> model, estimate;
    for (const DynparPoint& p : points) {
      model.push_back({p.batch, p.strategy, p.size, p.modeled ? double(p.v.model.timing.cycles) : p.estimate});
      estimate.push_back({p.batch, p.strategy, p.size, p.estimate});
    }
    const auto byModel = speedups(model), byEstimate = speedups(estimate);
    std::string md = "| batch size | dynamic variant | batches | best static / dynamic (model cycles) | "
                     "best static / dynamic (both estimate) |\n|---|---|---|---|---|\n";
    for (const auto& [key, m] : byModel)
      md += fmt::format("| {} | {} | {} | {:.3f}x | {:.3f}x |\n", key.first, key.second, m.second, m.first,
                        byEstimate.at(key).first);
    if (o.kvScale != 1)
      md += fmt::format("\nEvery KV length divided by {} (--kv-scale {}, rounding up): a shorter run for RTL.\n", o.kvScale, o.kvScale);
    md += fmt::format("\nService model (one region of {}, model cycles): startup {:.0f}, per request {:.1f} + {:.1f} per KV "
                      "tile.\n\n", o.archPath, svc.startup, svc.alpha, svc.beta);
    md += "| batch | size | stdev | strategy | KV tiles | busiest region tiles | model cycles | RTL cycles | error | "
          "bit-exact | estimate | estimate vs model |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n";
    for (const DynparPoint& p : points)
      md += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.0f} | {} |\n", p.batch, p.size, p.stdev,
                        p.strategy, p.tiles, p.busiest < 0 ? std::string("-") : std::to_string(p.busiest), p.modeled ? modelCol(p) : "-",
                        p.rtl ? fmt::format("{}", p.v.rtl.cycles) : "-",
                        p.rtl ? fmt::format("{:+.2f} %", p.v.cycleErrorPercent) : "-",
                        p.rtl ? (p.v.outputsEqual ? "yes" : "no") : "-", p.estimate,
                        p.modeled ? estErr(p) + " %" : "-");
    if (o.paper && !o.compareWith.empty()) {
      std::vector<Cycles> mine;
      for (const DynparPoint& p : points)
        if (p.modeled) mine.push_back({p.batch, p.strategy, p.size, double(p.v.model.timing.cycles)});
      md += sideBySide(o.compareWith, mine);
    }
    writeFile(o.mdPath, md);
  }
  return ok ? 0 : 2;
}

}  // namespace stepgen
