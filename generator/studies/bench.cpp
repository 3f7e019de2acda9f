#include "studies/bench.hpp"

#include <fmt/format.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "builders/swiglu.hpp"
#include "driver/moe_example.hpp"
#include "driver/pipeline.hpp"
#include "studies/tiling_full.hpp"
#include "support/files.hpp"

namespace fs = std::filesystem;

namespace stepgen {

namespace {

struct GenMeasure {
  double seconds = 0;
  long peakKiB = 0;
  bool ok = false;
};

// Runs `stepgen <args>` as a separate process so its time and peak resident memory are
// the command's alone (whole process: start-up, YAML, shape check, map, ...).
GenMeasure measureCommand(const std::vector<std::string>& args) {
  GenMeasure m;
  std::vector<char*> argv{const_cast<char*>("stepgen")};
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  auto t0 = std::chrono::steady_clock::now();
  pid_t pid = fork();
  if (pid == 0) {
    int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, 1);
    execv("/proc/self/exe", argv.data());
    _exit(127);
  }
  int status = 0;
  struct rusage ru {};
  wait4(pid, &status, 0, &ru);
  m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  m.peakKiB = ru.ru_maxrss;
  m.ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  return m;
}

// `stepgen compile` of one graph: the generator alone.
GenMeasure measureGenerator(const std::string& arch, const std::string& graph, const std::string& out) {
  return measureCommand({"compile", "--arch", arch, "--graph", graph, "-o", out});
}

std::string verdict(bool met) { return met ? "met" : "MISSED"; }

// Large graphs and real sizes (issue 12): a 511-operator SwiGLU stack compiled onto the
// 16x16 fabric, SwiGLU onto the 32x32 one, and the timing-only model of both MoE models at
// their true dimensions, batch 1024 (synthetic routing shaped like the real batch-64
// trace), dynamic tiling, on arch/unbounded.yaml. Each is its own process (time, peak RSS).
std::string largeTable(const BenchOptions& o, std::string& verdicts) {
  const fs::path dir = fs::path(o.outDir) / "large";
  fs::create_directories(dir);
  std::string t = fmt::format("| {:<58} | {:>8} | {:>9} | {:<30} |\n", "job", "s", "MiB", "result");
  t += "|" + std::string(t.size() - 3, '-') + "|\n";
  auto row = [&](const std::string& job, const GenMeasure& g, const std::string& result) {
    const std::string line = fmt::format("| {:<58} | {:>8.2f} | {:>9.1f} | {:<30} |\n", job, g.seconds, g.peakKiB / 1024.0, result);
    std::cout << line << std::flush;
    t += line;
  };
  const fs::path stack = dir / "mlp34.yaml";
  writeFile(stack, buildSwigluStack({16, 64, 128, 8, 32}, 34));
  const int64_t ops = int64_t(loadGraph(stack.string()).ops.size());
  GenMeasure g = measureCommand({"compile", "--arch", "tests/data/arch_grid16.yaml", "--graph", stack.string(), "-o",
                                 (dir / "mlp34").string()});
  const CompileResult c = compileProgram("tests/data/arch_grid16.yaml", stack.string());
  row(fmt::format("compile {}-op SwiGLU stack (34 layers) onto 16x16", ops), g,
      fmt::format("{} sections, {}", c.sections.sections, g.ok ? "ok" : "FAILED"));
  verdicts += fmt::format("- compile of a {}-operator graph onto a 16x16 fabric: {:.2f} s (target <= 2 s: {}), {:.1f} MiB "
                          "(target <= 1024: {})\n",
                          ops, g.seconds, verdict(g.ok && g.seconds <= 2), g.peakKiB / 1024.0, verdict(g.peakKiB <= 1024 * 1024));
  const fs::path one = dir / "swiglu.yaml";
  writeFile(one, buildSwigluGraph({16, 64, 128, 8, 32}));
  g = measureCommand({"compile", "--arch", "tests/data/arch_grid32.yaml", "--graph", one.string(), "-o", (dir / "g32").string()});
  row("compile SwiGLU onto 32x32 (1024 units)", g, g.ok ? "ok" : "FAILED");
  for (const FullMoeModel& m : fullMoeModels()) {
    const fs::path gdir = dir / (m.name + "_b1024");
    writeMoeExample({1024, m.hidden, m.ffn, m.experts, m.topK, 0, 64, "routing.csv"}, "examples/moe/data/" + m.traceFile,
                    gdir.string(), 1, /*inputs=*/false, /*synthetic=*/true);
    g = measureCommand({"model", "--timing-only", "--arch", "arch/unbounded.yaml", "--graph", (gdir / "graph.yaml").string()});
    const std::string job = fmt::format("timing-only {} (D {}, F {}, E {}, k {}) batch 1024", m.name, m.hidden, m.ffn,
                                        m.experts, m.topK);
    row(job, g, g.ok ? "ok" : "FAILED");
    verdicts += fmt::format("- {}: {:.2f} s (target <= 10 s: {}), {:.1f} MiB (target <= 2048: {})\n", job, g.seconds,
                            verdict(g.ok && g.seconds <= 10), g.peakKiB / 1024.0, verdict(g.peakKiB <= 2048 * 1024));
  }
  return t;
}

}  // namespace

int runBench(const BenchOptions& o) {
  struct Case {
    std::string arch;
    SwigluParams p;
  };
  std::vector<Case> cases = {{"arch/default.yaml", {16, 64, 128, 8, 32}},
                             {"arch/step_validation.yaml", {64, 256, 512, 32, 64}},
                             {"tests/data/arch_grid8.yaml", {16, 64, 128, 8, 32}},
                             {"tests/data/arch_grid16.yaml", {16, 64, 128, 8, 32}}};
  if (o.quick) cases.resize(1);
  std::string table = fmt::format(
      "| {:<26} | {:<22} | {:>8} | {:>9} | {:>8} | {:>10} | {:>10} | {:>12} | {:>12} | {:>8} | {:>9} |\n", "arch", "SwiGLU B,D,F,tb,tf",
      "gen s", "gen MiB", "build s", "RTL cyc", "model cyc", "RTL cyc/s", "model cyc/s", "speedup", "x roofline");
  table += "|" + std::string(table.size() - 3, '-') + "|\n";
  std::string verdicts;
  for (const auto& c : cases) {
    fs::path dir = fs::path(o.outDir) / fs::path(c.arch).stem();
    fs::create_directories(dir);
    fs::path graph = dir / "swiglu.yaml";
    std::ofstream(graph) << buildSwigluGraph(c.p);
    GenMeasure g = measureGenerator(c.arch, graph.string(), (dir / "compile").string());
    if (!g.ok) std::cerr << "bench: the generator failed on " << c.arch << "\n";
    fs::path cache = dir / "fresh-cache";
    fs::remove_all(cache);  // a cold Verilator build: empty folder, ccache bypassed
    setenv("CCACHE_DISABLE", "1", 1);
    VerifyOptions vo;
    vo.archPath = c.arch;
    vo.graphPath = graph.string();
    vo.outDir = (dir / "verify").string();
    vo.buildCache = cache.string();
    vo.watchdogCycles = 200000;
    VerifyReport r = verify(vo);
    unsetenv("CCACHE_DISABLE");
    // The model takes about a millisecond: time it as the median of 5 runs on the same
    // inputs (the RTL run, seconds long, is timed once inside verify).
    CompileResult cr = compileGraph(c.arch, graph.string());
    auto inputs = loadInputs(cr.graph, "", vo.seed);
    std::vector<double> walls;
    for (int k = 0; k < 5; ++k) walls.push_back(runModel(cr.graph, cr.shapes, cr.mapping, cr.arch, cr.programLayout, cr.image, inputs).wallSeconds);
    std::sort(walls.begin(), walls.end());
    double modelCps = walls[2] > 0 ? double(r.model.timing.cycles) / walls[2] : 0;
    double speedup = r.rtl.cyclesPerSecond > 0 ? modelCps / r.rtl.cyclesPerSecond : 0;
    double roof = r.model.rooflineCycles > 0 ? double(r.rtl.cycles) / r.model.rooflineCycles : 0;
    std::string shape = fmt::format("{},{},{},{},{}", c.p.batch, c.p.hidden, c.p.ffn, c.p.tileB, c.p.tileF);
    std::string line = fmt::format(
        "| {:<26} | {:<22} | {:>8.3f} | {:>9.1f} | {:>8.1f} | {:>10} | {:>10} | {:>12.0f} | {:>12.0f} | {:>7.0f}x | {:>9.2f} |\n",
        c.arch, shape, g.seconds, g.peakKiB / 1024.0, r.buildSeconds, r.rtl.cycles, r.model.timing.cycles, r.rtl.cyclesPerSecond,
        modelCps, speedup, roof);
    table += line;
    std::cout << line << std::flush;
    verdicts += fmt::format("- {}: generator {:.3f} s (target <= 1 s: {}), {:.1f} MiB (target <= 1024: {}); model {:.0f}x faster "
                            "than RTL per simulated cycle (target >= 100x: {}){}; RTL {} / outputs {}\n",
                            c.arch, g.seconds, g.seconds <= 1 ? "met" : "MISSED", g.peakKiB / 1024.0,
                            g.peakKiB <= 1024 * 1024 ? "met" : "MISSED", speedup, speedup >= 100 ? "met" : "MISSED",
                            c.arch == "arch/default.yaml"
                                ? fmt::format("; RTL {:.0f} cycles/s (target >= 250000: {})", r.rtl.cyclesPerSecond,
                                              r.rtl.cyclesPerSecond >= 250000 ? "met" : "MISSED")
                                : std::string(),
                            r.rtl.status, r.outputsEqual ? "bit-exact" : "DIFFER");
  }
  std::string large;
  if (!o.quick) large = largeTable(o, verdicts);
  std::string text = "# stepgen bench\n\nWritten by `stepgen bench` (one run, this machine). gen = `stepgen compile` of the SwiGLU "
                     "graph as its own process (start-up, load, shape check, map, bitstream, Verilog), peak RSS from wait4; build = Verilator build of the fabric "
                     "from an empty build folder with ccache bypassed; model cyc/s = model cycles / median wall time of 5 model runs; speedup = model cycles/s over RTL cycles/s; x "
                     "roofline = RTL cycles / roofline bound.\n\n" +
                     table + "\n" +
                     (large.empty() ? std::string()
                                    : "Large graphs and real sizes: each job is one `stepgen` process (wall seconds, peak RSS). "
                                      "The MoE layers use a synthetic routing of 1024 tokens shaped like the real batch-64 "
                                      "trace (syntheticRoutingTrace, seed 1) and dynamic tiling, tile_F 64.\n\n" +
                                          large + "\n") +
                     verdicts;
  std::cout << "\n" << text;
  if (!o.reportPath.empty()) {
    fs::path p(o.reportPath);
    if (p.has_parent_path()) fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  return 0;
}

}  // namespace stepgen
