// The time-multiplexing study: every point is the experts-on-regions graph of the Qwen3
// trace (writeMoeExample with regions = R) run through verify on a fabric of R region blocks.
#include "studies/regions_study.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <stdexcept>

#include "arch/arch_model.hpp"
#include "builders/moe_regions.hpp"
#include "driver/moe_example.hpp"
#include "driver/pipeline.hpp"
#include "studies/arch_variant.hpp"
#include "studies/rtl_columns.hpp"
#include "support/csv.hpp"
#include "studies/svg_plot.hpp"
#include "support/files.hpp"
#include "support/routing_trace.hpp"
#include "jobs/point_jobs.hpp"

namespace stepgen {

namespace fs = std::filesystem;

std::string regionsArch(const std::string& basePath, const std::string& dir, int regions) {
  const std::string in = renamedArchText(basePath, fmt::format("_regions{}", regions));
  const size_t units = in.find("\nunits:"), grid = in.find("grid:");
  const size_t gridEnd = grid == std::string::npos ? grid : in.find('}', grid);
  if (units == std::string::npos || gridEnd == std::string::npos || gridEnd > units)
    throw std::runtime_error("no grid and units in architecture file " + basePath);
  std::string text = in.substr(0, grid) + fmt::format("grid: {{cols: 5, rows: {}}}", 4 * regions) +
                     in.substr(gridEnd + 1, units + 1 - (gridEnd + 1));
  text += fmt::format("units:                         # {} region blocks of 8 ag, 4 mu, 8 cu (studies/regions_study.hpp)\n",
                      regions);
  for (int r = 0; r < regions; ++r) {
    text += "  - [ag, cu, mu, cu, ag]\n";
    text += "  - [ag, mu, cu, mu, ag]\n";
    text += "  - [ag, cu, cu, cu, ag]\n";
    text += "  - [ag, cu, mu, cu, ag]\n";
  }
  const fs::path p = fs::path(dir) / fmt::format("arch_regions{}.yaml", regions);
  writeFile(p, text);
  return p.string();
}

namespace {

struct RegionsPoint {
  std::string tiling;
  int regions = 0, active = 0;
  VerifyReport v;
  bool rtl = false;
  double utilization = 0;
};

// One (tiling, R) point's model cycles and utilization, of either setting.
struct Utilization {
  std::string tiling;
  int regions = 0;
  int64_t cycles = 0;
  double utilization = 0;
};

// The paper's figure of merit (docs/step_semantics.md, time-multiplexing): per tiling, the R
// with the highest utilization whose cycles are under `limit` percent above those of the
// largest R (one region per expert), as "R = 8: 2.64x the utilization of R = 128 at +0.80 %
// cycles".
std::string bestGain(const std::vector<Utilization>& rows, const std::string& tiling, double limit) {
  const Utilization* base = nullptr;
  for (const Utilization& r : rows)
    if (r.tiling == tiling && (!base || r.regions > base->regions)) base = &r;
  if (!base || base->cycles <= 0 || base->utilization <= 0) return "-";
  const Utilization* best = base;
  for (const Utilization& r : rows)
    if (r.tiling == tiling && 100.0 * (double(r.cycles) / double(base->cycles) - 1) < limit && r.utilization > best->utilization)
      best = &r;
  return fmt::format("R = {}: {:.2f}x the utilization of R = {} at {:+.2f} % cycles (limit {:.0f} %)", best->regions,
                     best->utilization / base->utilization, base->regions,
                     100.0 * (double(best->cycles) / double(base->cycles) - 1), limit);
}

std::string gainLines(const std::vector<Utilization>& rows, const std::string& what) {
  return fmt::format("- {}, static token tile 16: {}\n- {}, dynamic tiling: {}\n", what, bestGain(rows, "static", 1), what,
                     bestGain(rows, "dynamic", 5));
}

// This fabric's study CSV (`path`) beside the paper setting's points, per tiling and R.
std::string sideBySide(const std::string& path, const std::vector<Utilization>& paper) {
  const auto fabric = readCsvColumns(path, {"tiling", "regions"}, {"model_cycles", "utilization"});
  std::vector<Utilization> mine;
  std::string md = fmt::format("\nBeside this fabric's study ({}: scaled dims D 64, F 24 on arch/moe.yaml's units, 64 B/cycle "
                               "off-chip, R blocks of 20 units):\n\n| tiling | R | this fabric: model cycles | utilization | "
                               "paper setting: model cycles | utilization |\n|---|---|---|---|---|---|\n",
                               path);
  for (const Utilization& p : paper) {
    const auto it = fabric.find({p.tiling, std::to_string(p.regions)});
    if (it == fabric.end()) {
      md += fmt::format("| {} | {} | - | - | {} | {:.2f} % |\n", p.tiling, p.regions, p.cycles, 100 * p.utilization);
      continue;
    }
    const int64_t cycles = parseWholeNumber(it->second[0]).value_or(0);
    const double util = std::stod(it->second[1]);
    mine.push_back({p.tiling, p.regions, cycles, util});
    md += fmt::format("| {} | {} | {} | {:.2f} % | {} | {:.2f} % |\n", p.tiling, p.regions, cycles, 100 * util, p.cycles,
                      100 * p.utilization);
  }
  return md + "\n" + gainLines(mine, "this fabric") + gainLines(paper, "the paper's setting");
}

}  // namespace

int runRegionsStudy(const RegionsStudyOptions& o) {
  const auto earlier = readRtlColumns(o.rtlFrom, {"tiling", "regions"});
  fs::create_directories(o.workDir);
  const std::string trace = (fs::path(o.dataDir) / "routing_qwen3_30b_a3b_b64.csv").string();
  const RoutingTrace tr = readRoutingTrace(trace, 128);
  std::vector<std::vector<int>> experts(tr.experts.begin(), tr.experts.begin() + 64);
  const ArchModel base = loadArch(o.archPath);
  std::vector<RegionsPoint> points;
  bool ok = true;
  for (int64_t tb : {int64_t(16), int64_t(0)}) {
    for (int R : o.regions) {
      MoeParams p;
      p.experts = 128, p.topK = 8, p.tileB = tb, p.regions = R;
      if (o.paper) p.hidden = 2048, p.ffn = 768, p.tileF = 64;  // Qwen3-30B-A3B
      else p.hidden = 64, p.ffn = 24, p.tileF = 24;
      RegionsPoint pt{tb ? "static" : "dynamic", R, 0, {}, false, 0};
      for (const MoeRegion& g : moeRegions(p, R, experts)) pt.active += g.rows > 0;
      const fs::path dir = fs::path(o.workDir) / fmt::format("{}_r{}", pt.tiling, R);
      if (o.paper) {
        // Timing only: an unbounded arch sizes itself to each graph (no grid to replace).
        writeMoeExample(p, trace, (dir / "g").string(), 1, /*inputs=*/false);
        pt.v.model = studyTimingOnly(o.archPath, (dir / "g" / "graph.yaml").string());
        ok = ok && !pt.v.model.timing.deadlock;
      } else {
        writeMoeExample(p, trace, (dir / "g").string(), 1);
        VerifyOptions vo;
        vo.archPath = regionsArch(o.archPath, o.workDir, R);
        vo.graphPath = (dir / "g" / "graph.yaml").string();
        vo.inputsDir = (dir / "g" / "inputs").string();
        vo.outDir = (dir / "v").string();
        const auto it = earlier.find(std::vector<std::string>{pt.tiling, std::to_string(R)});
        pt.rtl = std::find(o.rtlRegions.begin(), o.rtlRegions.end(), R) != o.rtlRegions.end() && it == earlier.end();
        vo.skipRtl = !pt.rtl;
        vo.buildCache = (fs::path(o.workDir) / "build").string();
        vo.watchdogCycles = 200000;
        // Verilated hierarchically (docs/hardware.md section 6): flat, the R = 16 fabric (320
        // units) is 6.2 M lines of C++, over an hour to compile on 2 cores.
        vo.hierarchical = true;
        pt.v = studyVerify(vo);
        ok = ok && passed(pt.v);
        if (it != earlier.end()) {  // an earlier run's RTL columns for this point (the RTL has not changed)
          pt.rtl = true;
          pt.v.rtl.cycles = uint64_t(it->second.cycles), pt.v.outputsEqual = it->second.bitExact;
          pt.v.cycleErrorPercent = cycleErrorPercent(it->second.cycles, int64_t(pt.v.model.timing.cycles));
        }
      }
      const double flops = double(p.batch * p.topK * 6 * p.hidden * p.ffn);
      pt.utilization = flops / double(pt.v.model.timing.cycles) / (double(R) * kRegionComputeUnits * base.cu.flopsPerCycle);
      std::cout << fmt::format("{} R={}: {} active regions, model {} cycles{}, utilization {:.4f}\n", pt.tiling, R,
                               pt.active, pt.v.model.timing.cycles, pt.rtl ? fmt::format(", rtl {}", pt.v.rtl.cycles) : "",
                               pt.utilization);
      points.push_back(std::move(pt));
    }
  }
  std::vector<Utilization> mine;
  for (const RegionsPoint& p : points) mine.push_back({p.tiling, p.regions, int64_t(p.v.model.timing.cycles), p.utilization});
  std::string csv =
      "tiling,regions,experts_per_region,active_regions,model_cycles,rtl_cycles,error_pct,outputs_bit_exact,utilization,"
      "offchip_bytes,compute_units\n";
  for (const RegionsPoint& p : points)
    csv += fmt::format("{},{},{},{},{},{},{},{},{:.5f},{},{}\n", p.tiling, p.regions, 128 / p.regions, p.active,
                       p.v.model.timing.cycles, p.rtl ? fmt::format("{}", p.v.rtl.cycles) : "",
                       p.rtl ? fmt::format("{:.2f}", p.v.cycleErrorPercent) : "",
                       p.rtl ? (p.v.outputsEqual ? "yes" : "no") : "", p.utilization, p.v.model.offchipBytes,
                       p.regions * kRegionComputeUnits);
  std::cout << csv;
  if (!o.csvPath.empty()) writeFile(o.csvPath, csv);
  if (!o.mdPath.empty()) {
    std::string md =
        "| tiling | regions R | experts per region | active regions | model cycles | RTL cycles | error | bit-exact | "
        "utilization | off-chip bytes | compute units |\n|---|---|---|---|---|---|---|---|---|---|---|\n";
    for (const RegionsPoint& p : points)
      md += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {:.2f} % | {} | {} |\n", p.tiling, p.regions,
                        128 / p.regions, p.active, p.v.model.timing.cycles,
                        p.rtl ? fmt::format("{}", p.v.rtl.cycles) : "-",
                        p.rtl ? fmt::format("{:+.2f} %", p.v.cycleErrorPercent) : "-",
                        p.rtl ? (p.v.outputsEqual ? "yes" : "no") : "-", 100 * p.utilization, p.v.model.offchipBytes,
                        p.regions * kRegionComputeUnits);
    md += "\nThe paper's figure of merit (it reports 2.64x at < 1 % and 2.51x at < 5 %):\n\n" +
          gainLines(mine, o.paper ? "the paper's setting (timing-only model, true dimensions)" : "this fabric");
    if (o.paper && !o.compareWith.empty()) md += sideBySide(o.compareWith, mine);
    writeFile(o.mdPath, md);
  }
  if (!o.svgPath.empty()) {
    std::vector<double> xs;  // log2 R: the R halve from point to point
    for (int R : o.regions) xs.push_back(std::log2(double(R)));
    std::vector<PlotSeries> series;
    for (const char* t : {"static", "dynamic"}) {
      PlotSeries s{fmt::format("{} tiling", t), {}};
      for (const RegionsPoint& p : points)
        if (p.tiling == t) s.second.push_back(100 * p.utilization);
      series.push_back(std::move(s));
    }
    writeFile(o.svgPath, svgLinePlot("Qwen3 MoE experts on R regions: compute utilization (model)", "log2 of regions R",
                                     "utilization (%)", xs, series));
  }
  return ok ? 0 : 2;
}

}  // namespace stepgen
