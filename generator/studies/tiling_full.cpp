// The dynamic tiling figure at true dimensions: every point is a whole MoE layer written by
// writeMoeExample (no tensors) and run through the timing-only model.
#include "studies/tiling_full.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>

#include "driver/moe_example.hpp"
#include "driver/pipeline.hpp"
#include "jobs/point_jobs.hpp"
#include "support/files.hpp"
#include "support/routing_trace.hpp"

namespace stepgen {

namespace fs = std::filesystem;

std::vector<FullMoeModel> fullMoeModels() {
  return {{"mixtral", "routing_mixtral8x7b_b64.csv", 8, 2, 4096, 14336},
          {"qwen3", "routing_qwen3_30b_a3b_b64.csv", 128, 8, 2048, 768}};
}

namespace {

struct TilingRow {
  std::string model;
  int64_t batch, tile;  // tile 0 = dynamic
  ModelResult r;
  int64_t maxTokens, activeExperts;
};

std::string tileName(int64_t tb) { return tb ? std::to_string(tb) : "dynamic"; }

}  // namespace

int runTilingFullStudy(const TilingFullOptions& o) {
  fs::create_directories(o.workDir);
  std::vector<TilingRow> rows;
  bool ok = true;
  for (const FullMoeModel& m : fullMoeModels())
    for (int64_t batch : o.batches)
      for (int64_t tile : o.tiles) {
        const int64_t tb = tile * std::max<int64_t>(1, batch / 64);
        const MoeParams p{batch, m.hidden, m.ffn, m.experts, m.topK, tb, o.tileF, "routing.csv"};
        const fs::path dir = fs::path(o.workDir) / fmt::format("{}_b{}_{}", m.name, batch, tb ? fmt::format("tb{}", tb) : "dynamic");
        // The shipped trace's first tokens, or a synthetic routing of a larger batch (seeded).
        writeMoeExample(p, (fs::path(o.dataDir) / m.traceFile).string(), dir.string(), o.seed, /*inputs=*/false,
                        /*synthetic=*/true);
        const std::vector<int> perExpert = readRoutingTrace((dir / "routing.csv").string(), int(m.experts)).tokensPerExpert();
        TilingRow r{m.name, batch, tb, studyTimingOnly(o.archPath, (dir / "graph.yaml").string()),
              *std::max_element(perExpert.begin(), perExpert.end()),
              int64_t(std::count_if(perExpert.begin(), perExpert.end(), [](int n) { return n > 0; }))};
        ok = ok && !r.r.timing.deadlock;
        if (pointMode() == PointMode::Plan)
          std::cerr << fmt::format("{} batch {} tile {}: planned\n", m.name, batch, tileName(tb));
        else
          std::cerr << fmt::format("{} batch {} tile {}: {} cycles, {:.2f} s\n", m.name, batch, tileName(tb),
                                   r.r.timing.cycles, r.r.wallSeconds);
        rows.push_back(std::move(r));
      }

  std::string csv =
      "model,batch,tiling,model_cycles,offchip_bytes,onchip_bytes,flops,experts,k,hidden,ffn,tile_f,max_tokens_per_expert,"
      "active_experts,trace,dram_late_requests,model_seconds\n";
  std::string md =
      "| model | batch | token tile | cycles | off-chip bytes | on-chip bytes | FLOPs (incl. padding) | cycles / dynamic | "
      "off-chip / dynamic | on-chip / dynamic | model s |\n|---|---|---|---|---|---|---|---|---|---|---|\n";
  std::map<std::string, std::vector<double>> logOnchip;  // key "model/batch"
  const std::vector<FullMoeModel> models = fullMoeModels();
  for (const TilingRow& r : rows) {
    const FullMoeModel& m = *std::find_if(models.begin(), models.end(), [&](const FullMoeModel& x) { return x.name == r.model; });
    const TilingRow* dyn = nullptr;
    for (const TilingRow& d : rows)
      if (d.model == r.model && d.batch == r.batch && d.tile == 0) dyn = &d;
    const int64_t off = r.r.timing.offchipReadBytes + r.r.timing.offchipWriteBytes;
    csv += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{:.2f}\n", r.model, r.batch, tileName(r.tile),
                       r.r.timing.cycles, off, r.r.onchipBytes, r.r.flops, m.experts, m.topK, m.hidden, m.ffn, o.tileF,
                       r.maxTokens, r.activeExperts, r.batch <= 64 ? "real" : fmt::format("synthetic(seed {})", o.seed),
                       r.r.timing.dramLate, r.r.wallSeconds);
    auto ratio = [&](double a, double b) { return dyn && b > 0 ? fmt::format("{:.2f}", a / b) : std::string("-"); };
    const int64_t dynOff = dyn ? dyn->r.timing.offchipReadBytes + dyn->r.timing.offchipWriteBytes : 0;
    md += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.1f} |\n", r.model, r.batch, tileName(r.tile),
                      r.r.timing.cycles, off, r.r.onchipBytes, r.r.flops,
                      ratio(double(r.r.timing.cycles), dyn ? double(dyn->r.timing.cycles) : 0), ratio(double(off), double(dynOff)),
                      ratio(double(r.r.onchipBytes), dyn ? double(dyn->r.onchipBytes) : 0), r.r.wallSeconds);
    if (r.tile && dyn && dyn->r.onchipBytes > 0)
      logOnchip[fmt::format("{}/{}", r.model, r.batch)].push_back(std::log(double(r.r.onchipBytes) / double(dyn->r.onchipBytes)));
  }
  auto geo = [&](const std::string& modelOrAll, int64_t batchOrAll) {
    double sum = 0;
    size_t n = 0;
    for (const auto& [key, v] : logOnchip) {
      const auto slash = key.find('/');
      if (!modelOrAll.empty() && key.substr(0, slash) != modelOrAll) continue;
      if (batchOrAll && std::stoll(key.substr(slash + 1)) != batchOrAll) continue;
      for (double x : v) sum += x, ++n;
    }
    return n ? fmt::format("{:.2f}x", std::exp(sum / double(n))) : std::string("-");
  };
  md += fmt::format("\nOn-chip static/dynamic, geometric mean over the static tiles: all points {}", geo("", 0));
  for (int64_t b : o.batches) md += fmt::format("; batch {} {}", b, geo("", b));
  for (const FullMoeModel& m : fullMoeModels())
    for (int64_t b : o.batches) md += fmt::format("; {} batch {} {}", m.name, b, geo(m.name, b));
  md += ".\n";
  std::cout << md;
  if (!o.csvPath.empty()) writeFile(o.csvPath, csv);
  if (!o.mdPath.empty()) writeFile(o.mdPath, md);
  return ok ? 0 : 2;
}

}  // namespace stepgen
