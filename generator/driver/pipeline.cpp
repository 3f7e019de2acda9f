// The pipeline table and the verification flow (compile, model, Verilator, compare).
#include "driver/pipeline.hpp"
#include "driver/staging.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "common/fp.hpp"
#include "common/npy.hpp"

namespace fs = std::filesystem;

namespace stepgen {

namespace {

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::string rootDir() {
  const char* env = std::getenv("STEPGEN_ROOT");
  return env && *env ? env : STEPGEN_ROOT;
}

void writeFile(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + p.string());
}

std::string readText(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// FNV-1a: a stable key for the fabric build cache.
uint64_t fnv1a(const std::string& s, uint64_t h = 1469598103934665603ull) {
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

Matrix fromNpy(const NpyArray& a) {
  Matrix m;
  m.rows = int64_t(a.rows()), m.cols = int64_t(a.cols());
  m.data.resize(a.data.size());
  std::memcpy(m.data.data(), a.data.data(), a.data.size() * 4);
  return m;
}


void writeCompileFiles(const CompileResult& c, const fs::path& d) {
  std::string filelist;
  for (const auto& f : c.rtl) {
    writeFile(d / "rtl" / f.name, f.text);
    filelist += "rtl/" + f.name + "\n";
  }
  writeFile(d / "rtl" / "filelist.f", filelist);
  auto bytes = wordsToBytes(c.bitstream);
  writeFile(d / "fabric.bin", std::string(bytes.begin(), bytes.end()));
  writeFile(d / "fabric.cfg", configText(c.image, c.layout, c.arch));
  writeFile(d / "mapping.txt", mappingText(c));
}


int64_t dramBytes(const StepGraph& g) {
  int64_t end = 0;
  for (const Tensor& t : g.tensors)
    end = std::max(end, t.baseAddress + evalDim(t.shape.at(0), g.symbols) * evalDim(t.shape.at(1), g.symbols) * 4);
  return (end + 4095) / 4096 * 4096;
}

nlohmann::json tensorJson(const StepGraph& g, const Tensor& t, const std::string& npy) {
  return {{"name", t.name}, {"npy", npy}, {"base", t.baseAddress},
          {"rows", evalDim(t.shape.at(0), g.symbols)}, {"cols", evalDim(t.shape.at(1), g.symbols)}};
}

// Writes run.json, runs the verilated fabric, reads its result and compares outputs.
void runRtl(const CompileResult& c, const std::string& bin, const VerifyOptions& o, const fs::path& dir, VerifyReport& r) {
  nlohmann::json run;
  int nag = 0, nmu = 0;
  for (const auto& u : c.arch.units) nag += u.kind == UnitKind::AddressGen, nmu += u.kind == UnitKind::Memory;
  run["bitstream"] = "fabric.bin";
  run["n_ag"] = nag;
  run["n_mu"] = nmu;
  run["pieces_per_beat"] = c.arch.linkBytes() / 64;
  run["link_bits"] = c.arch.link.widthBits;
  run["addr_bits"] = c.arch.offchip.addressBits;
  run["dram"] = {{"channels", c.arch.offchip.channels}, {"latency", c.arch.offchip.latency},
                 {"ii", c.arch.offchip.initiationInterval}, {"startup", c.arch.offchip.startup}};
  run["dram_bytes"] = dramBytes(c.graph);
  run["inputs"] = nlohmann::json::array();
  run["outputs"] = nlohmann::json::array();
  for (const Tensor& t : c.graph.tensors) {
    if (t.isOutput) run["outputs"].push_back(tensorJson(c.graph, t, "rtl_out/" + t.name + ".npy"));
    else run["inputs"].push_back(tensorJson(c.graph, t, "inputs/" + t.name + ".npy"));
  }
  std::vector<std::string> ports = fabricPortNames(c.arch, c.layout);
  for (const Route& rt : c.mapping.routes) {
    std::string key = fmt::format("{}.in{}", unitInstanceName(c.arch, rt.dstUnit), rt.dstPort);
    for (auto& p : ports)
      if (p == key) p += fmt::format(" (stream {})", c.graph.stream(rt.stream).name);
  }
  run["ports"] = ports;
  run["max_cycles"] = 200000000;
  run["watchdog_cycles"] = o.watchdogCycles;
  run["trace"] = o.trace ? "wave.fst" : "";
  run["result"] = "rtl_result.json";
  fs::create_directories(dir / "rtl_out");
  writeFile(dir / "run.json", run.dump(2) + "\n");
  std::string cmd = fmt::format("'{}' '{}' > '{}' 2>&1", bin, (dir / "run.json").string(), (dir / "rtl_run.log").string());
  std::system(cmd.c_str());
  r.rtlRan = true;
  nlohmann::json res;
  try {
    res = nlohmann::json::parse(readText(dir / "rtl_result.json"));
  } catch (const std::exception&) {
    r.rtlStatus = "crashed";
    r.firstMismatch = readText(dir / "rtl_run.log");
    return;
  }
  r.rtlStatus = res.value("status", "unknown");
  r.rtlCycles = res.value("cycles", int64_t(0));
  r.rtlReadBytes = res.value("offchip_read_bytes", int64_t(0));
  r.rtlWriteBytes = res.value("offchip_write_bytes", int64_t(0));
  r.rtlPeakMuBytes = 4 * res.value("mu_peak_words", int64_t(0));
  r.rtlWallSeconds = res.value("wall_seconds", 0.0);
  r.rtlCyclesPerSecond = res.value("cycles_per_second", 0.0);
  if (res.contains("stuck"))
    for (const auto& s : res["stuck"]) r.rtlStuck.push_back(s.is_string() ? s.get<std::string>() : s.dump());
  if (r.rtlStatus != "ok") return;
  r.outputsEqual = true;
  for (const auto& [name, m] : r.model.outputs) {
    Matrix q = fromNpy(readNpy((dir / "rtl_out" / (name + ".npy")).string()));
    for (size_t i = 0; i < m.data.size() && r.outputsEqual; ++i)
      if (i >= q.data.size() || q.data[i] != m.data[i]) {
        r.outputsEqual = false;
        r.firstMismatch = fmt::format("{}[{},{}]: model 0x{:08x} rtl 0x{:08x}", name, int64_t(i) / m.cols, int64_t(i) % m.cols,
                                      m.data[i], i < q.data.size() ? q.data[i] : 0u);
      }
  }
  if (r.rtlCycles > 0) r.cycleErrorPercent = 100.0 * double(r.rtlCycles - r.model.timing.cycles) / double(r.rtlCycles);
}

void writeReportJson(const VerifyReport& r, const CompileResult& c, const fs::path& p) {
  nlohmann::json j;
  j["arch"] = c.arch.name;
  j["graph"] = c.graph.name;
  j["model"] = {{"cycles", r.model.timing.cycles},
                {"offchip_read_bytes", r.model.timing.offchipReadBytes},
                {"offchip_write_bytes", r.model.timing.offchipWriteBytes},
                {"offchip_bytes_cost_model", r.model.offchipBytes},
                {"onchip_bytes", r.model.onchipBytes},
                {"flops", r.model.flops},
                {"roofline_cycles", r.model.rooflineCycles},
                {"deadlock", r.model.timing.deadlock},
                {"stuck", r.model.timing.stuck},
                {"wall_seconds", r.model.wallSeconds}};
  j["rtl"] = {{"ran", r.rtlRan},         {"status", r.rtlStatus},        {"cycles", r.rtlCycles},
              {"offchip_read_bytes", r.rtlReadBytes}, {"offchip_write_bytes", r.rtlWriteBytes},
              {"wall_seconds", r.rtlWallSeconds}, {"cycles_per_second", r.rtlCyclesPerSecond},
              {"build_seconds", r.buildSeconds}, {"stuck", r.rtlStuck}, {"mu_peak_bytes", r.rtlPeakMuBytes}};
  j["outputs_equal"] = r.outputsEqual;
  j["first_mismatch"] = r.firstMismatch;
  j["cycle_error_percent"] = r.cycleErrorPercent;
  writeFile(p, j.dump(2) + "\n");
}

}  // namespace

void toNpy(const fs::path& p, const Matrix& m) {
  std::vector<float> f(m.data.size());
  std::memcpy(f.data(), m.data.data(), f.size() * 4);
  fs::create_directories(p.parent_path());
  writeNpy(p.string(), {size_t(m.rows), size_t(m.cols)}, f.data());
}

bool bytesEqual(const VerifyReport& r) {
  return r.rtlReadBytes == r.model.timing.offchipReadBytes && r.rtlWriteBytes == r.model.timing.offchipWriteBytes;
}

bool cyclesWithin(const VerifyReport& r) {
  return r.maxCycleErrorPercent <= 0 || std::fabs(r.cycleErrorPercent) <= r.maxCycleErrorPercent;
}

bool passed(const VerifyReport& r) {
  if (r.model.timing.deadlock) return false;
  if (!r.rtlRan && r.rtlStatus.empty()) return true;  // model only
  return r.rtlStatus == "ok" && r.outputsEqual && bytesEqual(r) && cyclesWithin(r);
}

std::string verdictText(const VerifyReport& r) {
  const auto& m = r.model;
  std::string s;
  s += fmt::format("model : {} cycles, off-chip {} B read + {} B written (cost model {} B), on-chip {} B, roofline {:.0f} cycles ({:.2f}x)\n",
                   m.timing.cycles, m.timing.offchipReadBytes, m.timing.offchipWriteBytes, m.offchipBytes, m.onchipBytes,
                   m.rooflineCycles, m.rooflineCycles > 0 ? double(m.timing.cycles) / m.rooflineCycles : 0.0);
  if (m.timing.deadlock) {
    s += "model : DEADLOCK; stuck streams:\n";
    for (const auto& x : m.timing.stuck) s += "  " + x + "\n";
  }
  if (!r.rtlRan && r.rtlStatus.empty()) return s + "rtl   : not run\n";
  if (r.rtlStatus != "ok") {
    s += fmt::format("rtl   : {}\n", r.rtlStatus);
    for (const auto& x : r.rtlStuck) s += "  stuck: " + x + "\n";
    if (!r.firstMismatch.empty()) s += r.firstMismatch + "\n";
    return s + "verdict: FAIL\n";
  }
  s += fmt::format("rtl   : {} cycles, off-chip {} B read + {} B written, memory units held at most {} B, {:.0f} cycles/s, "
                   "build {:.1f} s\n",
                   r.rtlCycles, r.rtlReadBytes, r.rtlWriteBytes, r.rtlPeakMuBytes, r.rtlCyclesPerSecond, r.buildSeconds);
  s += fmt::format("cycles: rtl {} vs model {}: {:+.2f} %{}\n", r.rtlCycles, m.timing.cycles, r.cycleErrorPercent,
                   cyclesWithin(r) ? "" : fmt::format(", above the tolerance of {} %", r.maxCycleErrorPercent));
  s += r.outputsEqual ? "outputs: bit-exact\n" : fmt::format("outputs: MISMATCH, first at {}\n", r.firstMismatch);
  s += fmt::format("off-chip bytes: rtl {} model {}: {}\n", r.rtlReadBytes + r.rtlWriteBytes,
                   m.timing.offchipReadBytes + m.timing.offchipWriteBytes, bytesEqual(r) ? "equal" : "DIFFER");
  s += fmt::format("verdict: {}\n", passed(r) ? "PASS" : "FAIL");
  return s;
}

CompileResult compileGraph(const std::string& archPath, const std::string& graphPath) {
  CompileResult c;
  c.arch = loadArch(archPath);
  c.layout = buildConfigLayout(c.arch);
  c.graph = loadGraph(graphPath);
  c.shapes = checkShapes(c.graph);
  auto t0 = std::chrono::steady_clock::now();
  c.mapping = mapGraph(c.graph, c.shapes, c.arch);
  c.image = buildConfig(c.graph, c.shapes, c.mapping, c.arch, c.layout);
  c.bitstream = encodeBitstream(c.image, c.layout);
  c.rtl = emitFabric(c.arch, c.layout, rootDir() + "/rtl_templates");
  c.mapSeconds = since(t0);
  return c;
}

std::string mappingText(const CompileResult& c) {
  std::string s = fmt::format("# mapping of graph '{}' on architecture '{}': {} units used\n", c.graph.name, c.arch.name,
                              c.mapping.unitsUsed);
  for (size_t i = 0; i < c.graph.ops.size(); ++i) {
    const auto& p = c.mapping.ops[i];
    const Op& o = c.graph.ops[i];
    s += p.unit >= 0 ? fmt::format("op {} ({}) -> {} ctx{}\n", o.name, opKindName(o.kind), unitInstanceName(c.arch, p.unit), p.ctx)
         : p.hostOp >= 0 ? fmt::format("op {} ({}) -> in the unit of '{}'\n", o.name, opKindName(o.kind), c.graph.ops[p.hostOp].name)
                         : fmt::format("op {} ({}) -> absorbed (links and stop maps)\n", o.name, opKindName(o.kind));
    if (p.auxUnit >= 0)
      s += fmt::format("op {} selector output -> {} ctx{} (route meta mode)\n", o.name, unitInstanceName(c.arch, p.auxUnit), p.ctx);
    for (size_t k = 0; k < p.extraUnits.size(); ++k)
      s += fmt::format("op {} output {} -> {} ctx{}\n", o.name, k + 1, unitInstanceName(c.arch, p.extraUnits[k]), p.ctx);
  }
  for (const Route& r : c.mapping.routes)
    s += fmt::format("route {} : {} -> {}.in{} ctx{} distance {} fifo {}\n", c.graph.stream(r.stream).name,
                     unitInstanceName(c.arch, r.srcUnit), unitInstanceName(c.arch, r.dstUnit), r.dstPort, r.ctx, r.distance,
                     r.fifoDepth);
  return s;
}

void writeCompileOutputs(const CompileResult& c, const std::string& dir) {
  StagingDir st(dir);
  writeCompileFiles(c, st.tmp);
  st.commit();
}

std::map<std::string, Matrix> loadInputs(const StepGraph& g, const std::string& dir, uint32_t seed) {
  std::map<std::string, Matrix> in;
  std::mt19937 rng(seed);
  for (const Tensor& t : g.tensors) {
    if (t.isOutput) continue;
    int64_t rows = evalDim(t.shape.at(0), g.symbols), cols = evalDim(t.shape.at(1), g.symbols);
    Matrix m;
    if (!dir.empty()) {
      fs::path p = fs::path(dir) / (t.name + ".npy");
      try {
        m = fromNpy(readNpy(p.string()));
      } catch (const std::exception& e) {
        throw DiagError("R-401", {p.string()}, fmt::format("cannot read input tensor '{}': {}", t.name, e.what()),
                        {{t.loc, "tensor declared here"}});
      }
      if (m.rows != rows || m.cols != cols)
        throw DiagError("R-402", {p.string()},
                        fmt::format("input tensor '{}' is {}x{}, the graph declares {}x{}", t.name, m.rows, m.cols, rows, cols),
                        {{t.loc, "tensor declared here"}});
    } else {
      std::uniform_real_distribution<float> u(-1.0f, 1.0f);
      float scale = t.name == "x" ? 1.0f : 1.0f / std::sqrt(float(rows));
      m.rows = rows, m.cols = cols;
      for (int64_t i = 0; i < rows * cols; ++i) m.data.push_back(floatToBits(u(rng) * scale));
    }
    in[t.name] = std::move(m);
  }
  return in;
}

std::string buildFabric(const std::vector<RtlFile>& rtl, const std::string& archName, const std::string& cacheDir,
                        bool trace, double* seconds) {
  auto t0 = std::chrono::steady_clock::now();
  uint64_t h = fnv1a(trace ? "trace" : "notrace");
  for (const auto& f : rtl) h = fnv1a(f.name + f.text, h);
  // The harness is part of the simulator: a changed harness must not reuse an old build.
  for (const char* f : {"sim/harness/harness_main.cpp", "sim/harness/vport.hpp", "sim/common/dram.cpp", "sim/common/dram.hpp",
                        "sim/common/npy.cpp", "sim/common/npy.hpp", "flows/verilator_build.sh"})
    h = fnv1a(readText(fs::path(rootDir()) / f), h);
  fs::path dir = fs::path(cacheDir) / fmt::format("{}-{:016x}", archName, h);
  fs::path bin = dir / "obj_dir" / "Vfabric";
  if (!fs::exists(bin)) {
    fs::remove_all(dir);
    std::string args;
    std::string top;
    for (const auto& f : rtl) {
      writeFile(dir / "rtl" / f.name, f.text);
      if (f.name == "sg_top.sv") top = (dir / "rtl" / f.name).string();
      else args += " '" + (dir / "rtl" / f.name).string() + "'";
    }
    std::string cmd = fmt::format("bash '{}/flows/verilator_build.sh' '{}' '{}'{}{} > '{}/build.out' 2>&1", rootDir(),
                                  dir.string(), top, trace ? " --trace" : "", args, dir.string());
    if (std::system(cmd.c_str()) != 0 || !fs::exists(bin)) {
      std::string log = readText(dir / "build.out");
      if (log.size() > 4000) log = log.substr(log.size() - 4000);
      throw std::runtime_error("Verilator build of the fabric failed:\n" + log);
    }
  }
  if (seconds) *seconds = since(t0);
  return bin.string();
}

VerifyReport verify(const VerifyOptions& o) {
  VerifyReport r;
  r.maxCycleErrorPercent = o.maxCycleErrorPercent;
  auto t0 = std::chrono::steady_clock::now();
  CompileResult c = compileGraph(o.archPath, o.graphPath);
  r.compileSeconds = since(t0);
  auto inputs = loadInputs(c.graph, o.inputsDir, o.seed);
  StagingDir st(o.outDir);
  writeCompileFiles(c, st.tmp);
  for (const auto& [name, m] : inputs) toNpy(st.tmp / "inputs" / (name + ".npy"), m);

  r.model = runModel(c.graph, c.shapes, c.mapping, c.arch, inputs);
  for (const auto& [name, m] : r.model.outputs) toNpy(st.tmp / "model" / (name + ".npy"), m);

  if (!o.skipRtl) {
    std::string cache = o.buildCache.empty() ? (st.tmp / "build").string() : o.buildCache;
    std::string bin;
    try {
      bin = buildFabric(c.rtl, c.arch.name, cache, o.trace, &r.buildSeconds);
    } catch (const std::exception& e) {
      r.rtlStatus = "build-failed";
      r.firstMismatch = e.what();
    }
    if (!bin.empty()) runRtl(c, bin, o, st.tmp, r);
  }
  writeFile(st.tmp / "report.txt", verdictText(r));
  writeReportJson(r, c, st.tmp / "report.json");
  st.commit();
  return r;
}

}  // namespace stepgen
