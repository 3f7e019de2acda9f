// The dynamic tiling study: every point is a MoE layer written by writeMoeExample and run
// through verify (or the model alone).
#include "studies/tiling.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <regex>
#include <sstream>

#include "arch/arch_model.hpp"
#include "common/npy.hpp"
#include "support/routing_trace.hpp"
#include "driver/pipeline.hpp"
#include "driver/moe_example.hpp"
#include "ir/graph.hpp"
#include "passes/shape_check.hpp"
#include "studies/arch_variant.hpp"
#include "jobs/point_jobs.hpp"

namespace stepgen {

namespace fs = std::filesystem;

std::vector<MoeCase> moeCases() {
  return {{"mixtral", "routing_mixtral8x7b_b64.csv", 8, 2, 64, 224, 32},
          {"qwen3", "routing_qwen3_30b_a3b_b64.csv", 128, 8, 64, 24, 24}};
}

namespace {

// One point of the study: the functional model's figures, and with `rtl` the whole layer
// through `verify` on the study's fabric.
struct StudyPoint {
  ModelResult model;
  VerifyReport v;
  std::vector<VerifyReport> depths;  ///< the same point on the fabric with other link FIFO depths
};

// One point: with `rtl`, the whole layer through `verify` on the study's fabric and on the
// copies in depthArchs (its model figures are then verify's; else a model-only run).
StudyPoint runPoint(const TilingStudyOptions& o, const std::vector<std::string>& depthArchs, const MoeCase& c,
                    int64_t tb) {
  MoeParams p{64, c.hidden, c.ffn, c.experts, c.topK, tb, c.tileF, "routing.csv"};
  std::string dir = (fs::path(o.workDir) / fmt::format("{}_{}", c.name, tb ? fmt::format("tb{}", tb) : "dynamic")).string();
  writeMoeExample(p, (fs::path(o.dataDir) / c.traceFile).string(), dir, o.seed);
  StudyPoint r;
  if (o.rtl) {
    VerifyOptions v;
    v.archPath = o.archPath, v.graphPath = dir + "/graph.yaml", v.inputsDir = dir + "/inputs";
    // verify's folders beside the example's, not in it: `jobs merge` runs the study again,
    // whose writeMoeExample replaces the example's folder before the merge reads the model's
    // outputs from them (in it, every "outputs = dynamic" became NO).
    v.outDir = dir + "_verify", v.buildCache = (fs::path(o.workDir) / "fabric-cache").string(), v.seed = o.seed;
    r.v = studyVerify(v);
    r.model = r.v.model;
    for (const std::string& arch : depthArchs) {
      v.archPath = arch, v.outDir = dir + "_verify_" + fs::path(arch).stem().string();
      r.depths.push_back(studyVerify(v));
    }
  } else {
    r.model = studyModelOnly(o.archPath, dir + "/graph.yaml", dir + "/inputs", o.seed);
  }
  std::cerr << fmt::format("{} tile {}: model {} cycles, RTL {} cycles ({})\n", c.name, tb ? std::to_string(tb) : "dynamic",
                           r.v.model.timing.cycles, r.v.rtl.cycles, o.rtl ? r.v.rtl.status : "not run");
  return r;
}

}  // namespace

int runTilingStudy(const TilingStudyOptions& o) {
  const std::vector<int64_t> tiles = {8, 16, 32, 64, 0};
  std::string csv =
      "case,experts,k,hidden,ffn,tile_f,token_tile,model_cycles,rtl_cycles,cycle_error_percent,outputs_bit_exact_rtl,"
      "offchip_bytes_model,offchip_bytes_rtl,onchip_bytes_formula,onchip_peak_rtl,flops,outputs_equal_dynamic,"
      "rtl_cycles_fifo1,rtl_cycles_fifo8,outputs_bit_exact_all_fifo_depths\n";
  std::string md =
      "| case | token tile | model cycles | RTL cycles | error | RTL outputs | off-chip bytes (model; RTL) | on-chip bytes "
      "(formula) | on-chip peak in RTL MUs | on-chip static/dynamic (formula; RTL) | FLOPs (incl. padding) | outputs = "
      "dynamic | RTL cycles at FIFO depth 1; 8 | outputs at depths 1, 2, 8 |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  std::vector<std::string> depthArchs;  // link FIFO depths every point also runs with (the arch has its own)
  if (o.rtl)
    for (int d : {1, 8}) depthArchs.push_back(archVariant(o.archPath, o.workDir, "fifo_depth", d));
  bool allOk = true;
  // Logs of static/dynamic ratios (on-chip formula, RTL memory-unit peak) and |cycle errors|.
  std::map<std::string, std::vector<double>> logFormula, logRtl;
  std::vector<double> absErr;
  for (const MoeCase& c : moeCases()) {
    std::vector<StudyPoint> runs;
    for (int64_t tb : tiles) runs.push_back(runPoint(o, depthArchs, c, tb));
    const StudyPoint& dyn = runs.back();
    for (size_t i = 0; i < tiles.size(); ++i) {
      const ModelResult& r = runs[i].model;
      const VerifyReport& v = runs[i].v;
      // (A planned point, `--plan`, has no tensors yet.)
      const auto y = r.outputs.find("y"), yDyn = dyn.model.outputs.find("y");
      const bool eq = y != r.outputs.end() && yDyn != dyn.model.outputs.end() && y->second.data == yDyn->second.data;
      const int64_t mb = v.model.timing.offchipReadBytes + v.model.timing.offchipWriteBytes;
      const int64_t rb = int64_t(v.rtl.readBytes + v.rtl.writeBytes);
      bool depthsOk = true;  // every depth bit-exact with the model, so all equal to each other
      for (const VerifyReport& d : runs[i].depths) depthsOk = depthsOk && d.rtl.status == "ok" && d.outputsEqual;
      const bool rtlOk = !o.rtl || (passed(v) && depthsOk);
      auto depthCycles = [&](size_t k) { return k < runs[i].depths.size() ? runs[i].depths[k].rtl.cycles : int64_t(0); };
      allOk = allOk && eq && rtlOk;
      std::string tile = tiles[i] ? std::to_string(tiles[i]) : "dynamic";
      csv += fmt::format("{},{},{},{},{},{},{},{},{},{:.2f},{},{},{},{},{},{},{},{},{},{}\n", c.name, c.experts, c.topK, c.hidden,
                         c.ffn, c.tileF, tile, v.model.timing.cycles, v.rtl.cycles, v.cycleErrorPercent, v.outputsEqual ? 1 : 0,
                         mb, rb, r.onchipBytes, v.rtl.muPeakBytes(), r.flops, eq ? 1 : 0, depthCycles(0), depthCycles(1),
                         o.rtl && v.outputsEqual && depthsOk ? 1 : 0);
      if (tiles[i]) {
        logFormula[c.name].push_back(std::log(double(r.onchipBytes) / double(dyn.model.onchipBytes)));
        if (o.rtl) logRtl[c.name].push_back(std::log(double(v.rtl.muPeakBytes()) / double(dyn.v.rtl.muPeakBytes())));
      }
      if (o.rtl) absErr.push_back(std::fabs(v.cycleErrorPercent));
      auto ratio = [](int64_t a, int64_t b) { return b > 0 ? fmt::format("{:.2f}", double(a) / double(b)) : std::string("-"); };
      md += fmt::format("| {} | {} | {} | {} | {:+.2f} % | {} | {}; {} | {} | {} | {}; {} | {} | {} | {}; {} | {} |\n", c.name,
                        tile, v.model.timing.cycles, v.rtl.cycles, v.cycleErrorPercent,
                        !o.rtl ? "not run" : v.outputsEqual ? "bit-exact" : "MISMATCH", mb, rb, r.onchipBytes,
                        v.rtl.muPeakBytes(), ratio(r.onchipBytes, dyn.model.onchipBytes),
                        ratio(v.rtl.muPeakBytes(), dyn.v.rtl.muPeakBytes()), r.flops, eq ? "yes" : "NO", depthCycles(0),
                        depthCycles(1), !o.rtl ? "not run" : v.outputsEqual && depthsOk ? "bit-exact" : "MISMATCH");
    }
  }
  // Geometric means over the static points (the paper's 2.18x is such a mean, docs/step_semantics.md#dynamic-tiling).
  auto geo = [](const std::map<std::string, std::vector<double>>& logs, const std::string& only) {
    double sum = 0;
    size_t n = 0;
    for (const auto& [name, v] : logs)
      if (only.empty() || name == only)
        for (double x : v) sum += x, ++n;
    return n ? fmt::format("{:.2f}x", std::exp(sum / double(n))) : std::string("-");
  };
  auto perCase = [&](const std::map<std::string, std::vector<double>>& logs) {
    std::string s;
    for (const MoeCase& c : moeCases()) s += fmt::format("{}{} {}", s.empty() ? "" : ", ", c.name, geo(logs, c.name));
    return s;
  };
  md += fmt::format("\nOn-chip static/dynamic, geometric mean over the static points: formula {} ({})", geo(logFormula, ""),
                    perCase(logFormula));
  if (o.rtl) {
    double mean = 0, worst = 0;
    for (double e : absErr) mean += e / double(absErr.size()), worst = std::max(worst, e);
    md += fmt::format("; RTL memory-unit peak {} ({}).\nCycle error |RTL - model| / RTL: mean {:.2f} %, max {:.2f} %",
                      geo(logRtl, ""), perCase(logRtl), mean, worst);
  }
  md += ".\n";
  std::cout << md;
  auto write = [](const std::string& path, const std::string& text) {
    if (path.empty()) return;
    std::ofstream f(path);
    f << text;
    if (!f) throw std::runtime_error("cannot write " + path);
  };
  write(o.csvPath, csv);
  write(o.mdPath, md);
  return allOk ? 0 : 2;
}

}  // namespace stepgen
