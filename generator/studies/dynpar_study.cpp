// The dynamic-parallelization study: every point is writeGqaExample for one batch and one
// strategy, run through verify.
#include "studies/dynpar_study.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>

#include "builders/gqa_decode.hpp"
#include "driver/attention_example.hpp"
#include "driver/pipeline.hpp"
#include "support/files.hpp"
#include "support/kv_lengths.hpp"

namespace stepgen {

namespace fs = std::filesystem;

namespace {

struct Point {
  std::string batch, strategy;
  int64_t size = 0, stdev = 0, tiles = 0, busiest = 0;
  bool rtl = false;
  VerifyReport v;
};

// KV tiles of the region with the most.
int64_t busiestRegion(const GqaParams& p) {
  int64_t most = 0;
  for (const auto& reqs : gqaAssignment(p)) {
    int64_t t = 0;
    for (int64_t b : reqs) t += gqaTiles(p, size_t(b));
    most = std::max(most, t);
  }
  return most;
}

}  // namespace

int runDynparStudy(const DynparStudyOptions& o) {
  const std::vector<KvBatch> all = readKvBatches(o.lengthsPath);
  std::vector<int> which = o.batches;
  if (which.empty())
    for (size_t i = 0; i < all.size(); ++i) which.push_back(int(i));
  std::vector<Point> points;
  bool ok = true;
  for (int bi : which) {
    if (bi < 0 || bi >= int(all.size())) throw std::runtime_error(fmt::format("batch {} is not in {}", bi, o.lengthsPath));
    const KvBatch& kb = all[size_t(bi)];
    for (const std::string& st : o.strategies) {
      GqaParams p;
      p.kvLengths = kb.lengths;
      for (int64_t& l : p.kvLengths) l = (l + o.kvScale - 1) / o.kvScale;
      p.regions = o.regions;
      p.strategy = parseGqaStrategy(st);
      Point pt{kb.id, st, int64_t(kb.lengths.size()), kb.stdevLabel, 0, busiestRegion(p), false, {}};
      for (size_t b = 0; b < p.kvLengths.size(); ++b) pt.tiles += gqaTiles(p, b);
      const fs::path dir = fs::path(o.workDir) / fmt::format("b{}_{}", bi, st);
      writeGqaExample(p, (dir / "g").string(), 1);
      VerifyOptions vo;
      vo.archPath = o.archPath;
      vo.graphPath = (dir / "g" / "graph.yaml").string();
      vo.inputsDir = (dir / "g" / "inputs").string();
      vo.outDir = (dir / "v").string();
      pt.rtl = pt.size <= o.rtlMaxBatch;
      vo.skipRtl = !pt.rtl;
      vo.buildCache = (fs::path(o.workDir) / "build").string();
      pt.v = verify(vo);
      ok = ok && passed(pt.v);
      std::cout << fmt::format("batch {} ({} requests, {} KV tiles) {}: busiest region {} tiles, model {} cycles{}\n", bi,
                               pt.size, pt.tiles, st, pt.busiest, pt.v.model.timing.cycles,
                               pt.rtl ? fmt::format(", rtl {} ({:+.2f} %)", pt.v.rtl.cycles, pt.v.cycleErrorPercent) : "");
      points.push_back(std::move(pt));
    }
  }
  std::string csv =
      "batch_id,batch_size,stdev_label,strategy,regions,kv_tiles,busiest_region_tiles,model_cycles,rtl_cycles,error_pct,"
      "outputs_bit_exact,offchip_bytes\n";
  for (const Point& p : points)
    csv += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{}\n", p.batch, p.size, p.stdev, p.strategy, o.regions, p.tiles,
                       p.busiest, p.v.model.timing.cycles, p.rtl ? fmt::format("{}", p.v.rtl.cycles) : "",
                       p.rtl ? fmt::format("{:.2f}", p.v.cycleErrorPercent) : "",
                       p.rtl ? (p.v.outputsEqual ? "yes" : "no") : "", p.v.model.offchipBytes);
  std::cout << csv;
  if (!o.csvPath.empty()) writeFile(o.csvPath, csv);
  if (!o.mdPath.empty()) {
    // Geometric mean over the batches of a size of cycles(strategy) / cycles(first strategy).
    std::map<std::pair<int64_t, std::string>, double> logSum;
    std::map<std::pair<int64_t, std::string>, int> n;
    std::map<std::string, int64_t> firstCycles;  // per batch: the first strategy's model cycles
    for (const Point& p : points) {
      if (!firstCycles.count(p.batch)) firstCycles[p.batch] = p.v.model.timing.cycles;
      logSum[{p.size, p.strategy}] += std::log(double(p.v.model.timing.cycles) / double(firstCycles[p.batch]));
      ++n[{p.size, p.strategy}];
    }
    std::string md = fmt::format("| batch size | strategy | batches | geometric mean of model cycles / {} |\n|---|---|---|---|\n",
                                 o.strategies.at(0));
    for (const auto& [k, s] : logSum)
      md += fmt::format("| {} | {} | {} | {:.3f} |\n", k.first, k.second, n[k], std::exp(s / n[k]));
    md += "\n| batch | size | stdev | strategy | KV tiles | busiest region tiles | model cycles | RTL cycles | error | "
          "bit-exact |\n|---|---|---|---|---|---|---|---|---|---|\n";
    for (const Point& p : points)
      md += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", p.batch, p.size, p.stdev, p.strategy,
                        p.tiles, p.busiest, p.v.model.timing.cycles, p.rtl ? fmt::format("{}", p.v.rtl.cycles) : "-",
                        p.rtl ? fmt::format("{:+.2f} %", p.v.cycleErrorPercent) : "-",
                        p.rtl ? (p.v.outputsEqual ? "yes" : "no") : "-");
    writeFile(o.mdPath, md);
  }
  return ok ? 0 : 2;
}

}  // namespace stepgen
