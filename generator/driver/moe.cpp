// MoE examples, model-only runs and the dynamic tiling study (step.md section 5).
#include "driver/moe.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "arch/arch_model.hpp"
#include "common/npy.hpp"
#include "common/routing_trace.hpp"
#include "driver/pipeline.hpp"
#include "driver/staging.hpp"
#include "ir/graph.hpp"
#include "passes/shape_check.hpp"

namespace stepgen {

namespace fs = std::filesystem;

std::vector<MoeCase> moeCases() {
  return {{"mixtral", "routing_mixtral8x7b_b64.csv", 8, 2, 64, 224, 32},
          {"qwen3", "routing_qwen3_30b_a3b_b64.csv", 128, 8, 64, 24, 8}};
}

void writeMoeExample(const MoeParams& p, const std::string& tracePath, const std::string& dir, uint32_t seed) {
  RoutingTrace tr = readRoutingTrace(tracePath, int(p.experts));
  if (int64_t(tr.experts.size()) < p.batch)
    throw std::runtime_error(fmt::format("{}: {} tokens, the layer needs {}", tracePath, tr.experts.size(), p.batch));
  if (tr.topK != p.topK)
    throw std::runtime_error(fmt::format("{}: top-{} routing, the layer says k = {}", tracePath, tr.topK, p.topK));
  tr.experts.resize(size_t(p.batch));
  MoeParams q = p;
  q.trace = "routing.csv";
  StagingDir st(dir);
  {
    std::ofstream g(st.tmp / "graph.yaml");
    g << buildMoeGraph(q);
    std::ofstream csv(st.tmp / "routing.csv");
    csv << "token";
    for (int64_t j = 0; j < p.topK; ++j) csv << ",expert_" << j;
    csv << "\n";
    for (size_t t = 0; t < tr.experts.size(); ++t) {
      csv << t;
      for (int e : tr.experts[t]) csv << "," << e;
      csv << "\n";
    }
    if (!g || !csv) throw std::runtime_error("cannot write " + dir);
  }
  for (const auto& [name, m] : moeInputs(q, tr.experts, seed)) toNpy(st.tmp / "inputs" / (name + ".npy"), m);
  st.commit();
}

ModelResult runModelOnly(const std::string& archPath, const std::string& graphPath, const std::string& inputsDir,
                         uint32_t seed) {
  ArchModel a = loadArch(archPath);
  StepGraph g = loadGraph(graphPath);
  ShapeResult s = checkShapes(g);
  auto inputs = loadInputs(g, inputsDir, seed);
  ModelResult r;
  auto t0 = std::chrono::steady_clock::now();
  FunctionalResult f = runFunctional(g, s, a, inputs);
  addCostFigures(g, s, a, f.streams, nullptr, r);
  r.outputs = std::move(f.outputs);
  r.wallSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

int runTilingStudy(const TilingStudyOptions& o) {
  const std::vector<int64_t> tiles = {8, 16, 32, 64, 0};
  std::string csv = "case,experts,k,hidden,ffn,tile_f,token_tile,offchip_bytes,onchip_bytes,flops,outputs_equal_dynamic,model_seconds\n";
  std::string md =
      "| case | token tile | off-chip bytes | on-chip bytes (formula) | FLOPs (incl. padding) | on-chip static/dynamic | "
      "outputs = dynamic |\n|---|---|---|---|---|---|---|\n";
  bool allEqual = true;
  for (const MoeCase& c : moeCases()) {
    std::vector<ModelResult> runs;
    for (int64_t tb : tiles) {
      MoeParams p{64, c.hidden, c.ffn, c.experts, c.topK, tb, c.tileF, "routing.csv"};
      std::string dir = (fs::path(o.workDir) / fmt::format("{}_{}", c.name, tb ? fmt::format("tb{}", tb) : "dynamic")).string();
      writeMoeExample(p, (fs::path(o.dataDir) / c.traceFile).string(), dir, o.seed);
      runs.push_back(runModelOnly(o.archPath, dir + "/graph.yaml", dir + "/inputs", o.seed));
      std::cerr << fmt::format("{} tile {}: model {:.3f} s\n", c.name, tb ? std::to_string(tb) : "dynamic", runs.back().wallSeconds);
    }
    const ModelResult& dyn = runs.back();
    for (size_t i = 0; i < tiles.size(); ++i) {
      const ModelResult& r = runs[i];
      bool eq = r.outputs.at("y").data == dyn.outputs.at("y").data;
      allEqual = allEqual && eq;
      std::string tile = tiles[i] ? std::to_string(tiles[i]) : "dynamic";
      csv += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{:.4f}\n", c.name, c.experts, c.topK, c.hidden, c.ffn, c.tileF,
                         tile, r.offchipBytes, r.onchipBytes, r.flops, eq ? 1 : 0, r.wallSeconds);
      md += fmt::format("| {} | {} | {} | {} | {} | {:.2f} | {} |\n", c.name, tile, r.offchipBytes, r.onchipBytes, r.flops,
                        double(r.onchipBytes) / double(dyn.onchipBytes), eq ? "yes" : "NO");
    }
  }
  std::string dcsv = "case,token_tile,model_cycles,rtl_cycles,cycle_error_percent,outputs_bit_exact,offchip_bytes_model,offchip_bytes_rtl\n";
  if (!o.dispatchArch.empty()) {
    md += "\nDispatch half on the fabric (`" + o.dispatchArch + "`, route-mode memory unit):\n\n"
          "| case | token tile | model cycles | RTL cycles | error | outputs | off-chip bytes (model = RTL) |\n"
          "|---|---|---|---|---|---|---|\n";
    for (const MoeCase& c : moeCases())
      for (int64_t tb : tiles) {
        MoeParams p{64, c.hidden, c.ffn, c.experts, c.topK, tb, c.tileF, "routing.csv", true};
        std::string tile = tb ? std::to_string(tb) : "dynamic";
        std::string dir = (fs::path(o.workDir) / fmt::format("{}_{}_dispatch", c.name, tile)).string();
        writeMoeExample(p, (fs::path(o.dataDir) / c.traceFile).string(), dir, o.seed);
        VerifyOptions v;
        v.archPath = o.dispatchArch, v.graphPath = dir + "/graph.yaml", v.inputsDir = dir + "/inputs";
        v.outDir = dir + "/verify", v.buildCache = (fs::path(o.workDir) / "fabric-cache").string(), v.seed = o.seed;
        VerifyReport r = verify(v);
        const int64_t mb = r.model.timing.offchipReadBytes + r.model.timing.offchipWriteBytes;
        const int64_t rb = r.rtlReadBytes + r.rtlWriteBytes;
        const bool ok = r.rtlStatus == "ok" && r.outputsEqual && mb == rb;
        allEqual = allEqual && ok;
        dcsv += fmt::format("{},{},{},{},{:.2f},{},{},{}\n", c.name, tile, r.model.timing.cycles, r.rtlCycles,
                            r.cycleErrorPercent, r.outputsEqual ? 1 : 0, mb, rb);
        md += fmt::format("| {} | {} | {} | {} | {:+.2f} % | {} | {} |\n", c.name, tile, r.model.timing.cycles, r.rtlCycles,
                          r.cycleErrorPercent, r.outputsEqual ? "bit-exact" : "MISMATCH", mb == rb ? std::to_string(mb) : "DIFFER");
        std::cerr << fmt::format("{} tile {} dispatch: model {} RTL {} cycles ({})\n", c.name, tile, r.model.timing.cycles,
                                 r.rtlCycles, r.rtlStatus);
      }
  }
  std::cout << md;
  auto write = [](const std::string& path, const std::string& text) {
    if (path.empty()) return;
    std::ofstream f(path);
    f << text;
    if (!f) throw std::runtime_error("cannot write " + path);
  };
  write(o.csvPath, csv);
  if (!o.dispatchArch.empty()) write(o.dispatchCsv, dcsv);
  write(o.mdPath, md);
  return allEqual ? 0 : 2;
}

}  // namespace stepgen
