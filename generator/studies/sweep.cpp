#include "studies/sweep.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "builders/swiglu.hpp"
#include "driver/pipeline.hpp"
#include "jobs/point_jobs.hpp"

namespace fs = std::filesystem;

namespace stepgen {

long long swigluClosedFormBytes(long long B, long long D, long long F, long long tb, long long tf) {
  return 4 * B * D * (F / tf) + 3 * 4 * D * F * (B / tb) + 4 * B * D;
}

int runSweep(const SweepOptions& o) {
  const long long B = 64, D = 256, F = 512;
  std::vector<std::pair<int, int>> points;
  for (int tb : {16, 32, 64})
    for (int tf : {16, 32, 64, 128, 256}) points.push_back({tb, tf});
  if (o.maxPoints < int(points.size())) points.resize(size_t(std::max(0, o.maxPoints)));

  std::string header =
      "tile_b,tile_f,model_cycles,rtl_cycles,error_pct,offchip_model,offchip_rtl,offchip_closed_form,bytes_match,"
      "onchip_bytes,roofline_cycles,outputs_bit_exact,model_wall_s,rtl_wall_s,rtl_build_s";
  std::vector<std::string> rows;
  std::string table = fmt::format("| {:>6} | {:>6} | {:>9} | {:>9} | {:>7} | {:>10} | {:>10} | {:>10} | {:>9} | {:>6} | {:>7} | {:>7} |\n",
                                  "tile_b", "tile_f", "model cyc", "RTL cyc", "err %", "offchip M", "offchip RTL",
                                  "closed", "onchip B", "exact", "model s", "RTL s");
  table += "|" + std::string(table.size() - 3, '-') + "|\n";
  bool allOk = true;
  double sumAbs = 0, maxAbs = 0;
  int n = 0;
  fs::create_directories(o.outDir);
  for (auto [tb, tf] : points) {
    SwigluParams p{B, D, F, tb, tf};
    fs::path dir = fs::path(o.outDir) / fmt::format("tb{}_tf{}", tb, tf);
    fs::path graph = fs::path(o.outDir) / fmt::format("swiglu_tb{}_tf{}.yaml", tb, tf);
    std::ofstream(graph) << buildSwigluGraph(p);
    VerifyOptions vo;
    vo.archPath = o.archPath;
    vo.graphPath = graph.string();
    vo.outDir = dir.string();
    vo.skipRtl = o.modelOnly;
    vo.buildCache = (fs::path(o.outDir) / "fabric-cache").string();
    vo.watchdogCycles = 200000;
    VerifyReport r = studyVerify(vo);
    long long closed = swigluClosedFormBytes(B, D, F, tb, tf);
    long long mBytes = r.model.timing.offchipReadBytes + r.model.timing.offchipWriteBytes;
    long long rBytes = static_cast<long long>(r.rtl.readBytes + r.rtl.writeBytes);
    bool bytesOk = mBytes == closed && (o.modelOnly || rBytes == closed);
    bool ok = bytesOk && (o.modelOnly || (r.rtl.status == "ok" && r.outputsEqual));
    allOk = allOk && ok;
    if (!o.modelOnly && r.rtl.status == "ok") {
      sumAbs += std::fabs(r.cycleErrorPercent), maxAbs = std::max(maxAbs, std::fabs(r.cycleErrorPercent)), ++n;
    }
    rows.push_back(fmt::format("{},{},{},{},{:.2f},{},{},{},{},{},{:.0f},{},{:.3f},{:.2f},{:.1f}", tb, tf, r.model.timing.cycles,
                               r.rtl.cycles, r.cycleErrorPercent, mBytes, rBytes, closed, bytesOk ? "yes" : "NO",
                               r.model.onchipBytes, r.model.rooflineCycles,
                               o.modelOnly ? "n/a" : (r.outputsEqual ? "yes" : "NO"), r.model.wallSeconds, r.rtl.wallSeconds,
                               r.buildSeconds));
    std::string line = fmt::format("| {:>6} | {:>6} | {:>9} | {:>9} | {:>7.2f} | {:>10} | {:>10} | {:>10} | {:>9} | {:>6} | {:>7.3f} | {:>7.2f} |\n",
                                   tb, tf, r.model.timing.cycles, r.rtl.cycles, r.cycleErrorPercent, mBytes, rBytes, closed,
                                   r.model.onchipBytes, o.modelOnly ? "n/a" : (r.outputsEqual ? "yes" : "NO"),
                                   r.model.wallSeconds, r.rtl.wallSeconds);
    table += line;
    std::cout << line << std::flush;
  }
  std::string summary = n ? fmt::format("cycle error over {} RTL points: mean |err| {:.2f} %, max |err| {:.2f} %\n", n, sumAbs / n, maxAbs)
                          : std::string("no RTL points\n");
  std::cout << "\n" << table << summary;
  if (!o.csvPath.empty()) {
    fs::path csv(o.csvPath);
    if (csv.has_parent_path()) fs::create_directories(csv.parent_path());
    std::ofstream out(csv);
    out << header << "\n";
    for (const auto& r : rows) out << r << "\n";
    fs::path md = csv;
    md.replace_extension(".md");
    std::ofstream(md) << "# SwiGLU validation sweep (B=64, D=256, F=512) on " << o.archPath << "\n\n"
                      << "Written by `stepgen sweep`. Bytes: model, RTL (counted by the harness DRAM) and the closed form of "
                         "docs/step_semantics.md#swiglu-closed-form.\n\n"
                      << table << "\n" << summary;
  }
  return allOk ? 0 : 2;
}

}  // namespace stepgen
