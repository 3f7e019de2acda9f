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
#include "driver/pipeline.hpp"

namespace fs = std::filesystem;

namespace stepgen {

namespace {

struct GenMeasure {
  double seconds = 0;
  long peakKiB = 0;
  bool ok = false;
};

// Runs `stepgen compile` as a separate process so its time and peak resident memory are
// the generator's alone (whole process: start-up, YAML, shape check, map, bitstream, Verilog).
GenMeasure measureGenerator(const std::string& arch, const std::string& graph, const std::string& out) {
  GenMeasure m;
  auto t0 = std::chrono::steady_clock::now();
  pid_t pid = fork();
  if (pid == 0) {
    int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, 1);
    execl("/proc/self/exe", "stepgen", "compile", "--arch", arch.c_str(), "--graph", graph.c_str(), "-o", out.c_str(),
          static_cast<char*>(nullptr));
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

}  // namespace

int runBench(const BenchOptions& o) {
  struct Case {
    std::string arch;
    SwigluParams p;
  };
  std::vector<Case> cases = {{"arch/default.yaml", {16, 64, 128, 8, 32}}, {"arch/step_validation.yaml", {64, 256, 512, 32, 64}}};
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
  std::string text = "# stepgen bench\n\nWritten by `stepgen bench` (one run, this machine). gen = `stepgen compile` of the SwiGLU "
                     "graph as its own process (start-up, load, shape check, map, bitstream, Verilog), peak RSS from wait4; build = Verilator build of the fabric "
                     "from an empty build folder with ccache bypassed; model cyc/s = model cycles / median wall time of 5 model runs; speedup = model cycles/s over RTL cycles/s; x "
                     "roofline = RTL cycles / roofline bound.\n\n" +
                     table + "\n" + verdicts;
  std::cout << "\n" << text;
  if (!o.reportPath.empty()) {
    fs::path p(o.reportPath);
    if (p.has_parent_path()) fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  return 0;
}

}  // namespace stepgen
