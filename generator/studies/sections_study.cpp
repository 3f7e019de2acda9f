// The context study: every point is a SwiGLU stack written by buildSwigluStack and run
// through verify on a copy of the arch with another context count.
#include "studies/sections_study.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <iostream>

#include "arch/config_layout.hpp"
#include "builders/swiglu.hpp"
#include "driver/pipeline.hpp"
#include "studies/arch_variant.hpp"
#include "studies/svg_plot.hpp"
#include "support/files.hpp"
#include "jobs/point_jobs.hpp"

namespace stepgen {

namespace fs = std::filesystem;

namespace {

struct SectionsRow {
  int layers = 0, contexts = 0;
  std::string carry;
  VerifyReport v;
  int64_t baselineReload = 0;
};

double meanSwitch(const RunResult& r) {
  const std::vector<int64_t> s = switchCycles(r);
  double sum = 0;
  for (int64_t x : s) sum += double(x);
  return s.empty() ? 0.0 : sum / double(s.size());
}

std::string csvLine(const SectionsRow& r, bool rtl) {
  const VerifyReport& v = r.v;
  const auto& t = v.model.timing;
  const std::string rtlCycles = rtl ? fmt::format("{}", v.rtl.cycles) : "";
  return fmt::format("mlp{},default_c{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", r.layers, r.contexts, r.layers,
                     r.contexts, r.carry, v.sections, v.carriedOnchipBytes, v.carriedDramBytes,
                     rtl ? fmt::format("{:.1f}", meanSwitch(v.rtl)) : "",
                     rtl ? fmt::format("{}", v.rtl.cfgWaitCycles) : "", t.reloadExposedCycles,
                     rtl ? fmt::format("{}", std::max<int64_t>(0, int64_t(v.rtl.reloadWrites) - int64_t(v.rtl.cfgWaitCycles)))
                         : "",
                     t.reloadWords, r.baselineReload, t.cycles - t.reloadExposedCycles + r.baselineReload, t.cycles,
                     rtlCycles, rtl ? fmt::format("{:.2f}", v.cycleErrorPercent) : "",
                     rtl ? (v.outputsEqual ? "yes" : "no") : "");
}

}  // namespace

int runSectionsStudy(const SectionsStudyOptions& o) {
  fs::create_directories(o.workDir);
  const SwigluParams p{16, 64, 128, 8, 32};
  std::vector<SectionsRow> rows;
  bool ok = true;
  for (int n : o.layers) {
    const fs::path graph = fs::path(o.workDir) / fmt::format("mlp{}.yaml", n);
    writeFile(graph, buildSwigluStack(p, n));
    for (int c : o.contexts)
      for (const std::string& carry : o.carries) {
        const std::string arch = archVariant(o.archPath, o.workDir, "contexts", c);
        VerifyOptions vo;
        vo.archPath = arch;
        vo.graphPath = graph.string();
        vo.outDir = (fs::path(o.workDir) / fmt::format("mlp{}_c{}_{}", n, c, carry)).string();
        vo.skipRtl = !o.rtl;
        vo.buildCache = (fs::path(o.workDir) / "build").string();
        vo.onChipCarry = carry == "auto";
        SectionsRow r{n, c, carry, studyVerify(vo), 0};
        ArchModel one = loadArch(arch);
        one.contexts = 1;
        r.baselineReload = int64_t(r.v.sections - 1) * (buildConfigLayout(one).totalWords + 1);
        ok = ok && passed(r.v);
        std::cout << fmt::format("mlp{} on {} contexts, carry {}: {} sections, model {} cycles{}\n", n, c, carry,
                                 r.v.sections, r.v.model.timing.cycles, o.rtl ? fmt::format(", rtl {}", r.v.rtl.cycles) : "");
        rows.push_back(std::move(r));
      }
  }
  std::string csv =
      "graph,arch,layers,contexts,carry,sections,carried_onchip_bytes,carried_dram_bytes,switch_cycles,reload_exposed_cycles,"
      "model_reload_exposed_cycles,reload_hidden_cycles,reload_words,baseline_reload_cycles,baseline_model_cycles,"
      "model_cycles,rtl_cycles,error_pct,outputs_bit_exact\n";
  for (const SectionsRow& r : rows) csv += csvLine(r, o.rtl);
  std::cout << csv;
  if (!o.csvPath.empty()) writeFile(o.csvPath, csv);
  if (!o.mdPath.empty()) {
    std::string md =
        "| layers | contexts | carry | sections | carried in memory units (B) | carried through DRAM (B) | switch (cycles) "
        "| reload words | exposed (RTL / model) | single-context baseline reload | model cycles | RTL cycles | error "
        "| bit-exact |\n"
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
    for (const SectionsRow& r : rows) {
      const VerifyReport& v = r.v;
      md += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} / {} | {} | {} | {} | {} | {} |\n", r.layers,
                        r.contexts, r.carry, v.sections, v.carriedOnchipBytes, v.carriedDramBytes,
                        o.rtl ? fmt::format("{:.1f}", meanSwitch(v.rtl)) : "-",
                        v.model.timing.reloadWords, o.rtl ? fmt::format("{}", v.rtl.cfgWaitCycles) : "-",
                        v.model.timing.reloadExposedCycles, r.baselineReload, v.model.timing.cycles,
                        o.rtl ? fmt::format("{}", v.rtl.cycles) : "-",
                        o.rtl ? fmt::format("{:+.2f} %", v.cycleErrorPercent) : "-",
                        o.rtl ? (v.outputsEqual ? "yes" : "no") : "-");
    }
    writeFile(o.mdPath, md);
  }
  if (!o.svgPath.empty()) {
    std::vector<double> xs(o.layers.begin(), o.layers.end());
    std::vector<PlotSeries> series;
    for (int c : o.contexts) {
      PlotSeries s{fmt::format("{} context{}", c, c == 1 ? "" : "s"), {}};
      for (int n : o.layers)
        for (const SectionsRow& r : rows)
          if (r.layers == n && r.contexts == c && r.carry == o.carries.front())
            s.second.push_back(double(o.rtl ? int64_t(r.v.rtl.cfgWaitCycles) : r.v.model.timing.reloadExposedCycles));
      series.push_back(std::move(s));
    }
    PlotSeries base{"stop, rewrite, start", {}};
    for (int n : o.layers)
      for (const SectionsRow& r : rows)
        if (r.layers == n && r.contexts == o.contexts.front() && r.carry == o.carries.front()) base.second.push_back(double(r.baselineReload));
    series.push_back(std::move(base));
    writeFile(o.svgPath, svgLinePlot(fmt::format("SwiGLU stack in sections: reload cycles not hidden ({})",
                                                 o.rtl ? "RTL" : "model"),
                                     "layers (= sections)", "exposed reload cycles", xs, series));
  }
  return ok ? 0 : 2;
}

}  // namespace stepgen
