#include "driver/rtl_run.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>

#include "arch/unit_catalogue.hpp"
#include "common/run_desc.hpp"
#include "passes/shape_check.hpp"
#include "support/files.hpp"

namespace fs = std::filesystem;

namespace stepgen {

namespace {

// FNV-1a: a stable key for the fabric build cache.
uint64_t fnv1a(const std::string& s, uint64_t h = 1469598103934665603ull) {
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

RunRegion region(const StepGraph& g, const Tensor& t, const std::string& npy) {
  return {t.name, npy, uint64_t(t.baseAddress), uint64_t(evalDim(t.shape.at(0), g.symbols)),
          uint64_t(evalDim(t.shape.at(1), g.symbols))};
}

}  // namespace

RunResult runRtl(const CompileResult& c, const std::string& bin, int64_t watchdogCycles, bool trace, const fs::path& dir,
                 const std::string& tag) {
  const UnitCatalogue cat(c.arch);
  RunDesc d;
  d.bitstream = "fabric.bin";
  d.nAg = int(cat.unitsOfKind(UnitKind::AddressGen).size());
  d.nMu = unsigned(cat.unitsOfKind(UnitKind::Memory).size());
  d.pieces = c.arch.linkBytes() / 64;
  d.linkBits = c.arch.link.widthBits;
  d.addrBits = c.arch.offchip.addressBits;
  d.timing = {c.arch.offchip.channels, uint64_t(c.arch.offchip.latency), uint64_t(c.arch.offchip.initiationInterval),
              uint64_t(c.arch.offchip.startup)};
  d.dramBytes = uint64_t(tensorsEndPage(c.graph));  // every tensor, scratch included
  for (const Tensor& t : c.graph.tensors) {
    // A state tensor is both: its input contents in DRAM before the run, read back after.
    if (t.isOutput) d.outputs.push_back(region(c.graph, t, tag + "_out/" + t.name + ".npy"));
    if (t.isInput()) d.inputs.push_back(region(c.graph, t, "inputs/" + t.name + ".npy"));
  }
  d.ports = cat.fabricPortNames();
  d.maxCycles = 200000000;
  d.watchdog = uint64_t(watchdogCycles);
  d.trace = trace ? "wave.fst" : "";
  d.result = tag + "_result.json";
  d.decisions = tag + "_decisions.csv";
  d.reloads = c.reloads;
  fs::create_directories(dir / (tag + "_out"));
  const fs::path desc = dir / (tag == "rtl" ? "run.json" : tag + "_run.json");
  writeRunDesc(desc, d);
  const std::string cmd = fmt::format("'{}' '{}' > '{}' 2>&1", bin, desc.string(), (dir / (tag + "_run.log")).string());
  std::system(cmd.c_str());

  try {
    RunResult r = readRunResult(dir / d.result);
    // A port carries another stream in each section: name the one of the section that stalled.
    const int section = r.sections.empty() ? 0 : int(r.sections.size()) - 1;
    for (StuckPort& p : r.stuck) {
      std::string stream;
      for (const Route& rt : c.mapping.routes)
        if (rt.ctx == section && cat.portName({rt.dstUnit}, rt.dstPort) == p.port) stream = c.graph.stream(rt.stream).name;
      p.port += stream.empty() ? fmt::format(" (no stream in section {})", section)
                               : c.mapping.sections > 1 ? fmt::format(" (stream {}, section {})", stream, section)
                                                        : fmt::format(" (stream {})", stream);
    }
    return r;
  } catch (const std::exception&) {
    RunResult r;
    r.status = "crashed";
    r.message = readText(dir / (tag + "_run.log"));
    return r;
  }
}

bool hierarchicalByDefault(const ArchModel& a) {
  return UnitCatalogue(a).unitsOfKind(UnitKind::Compute).size() >= 16;
}

std::string buildFabric(const std::vector<RtlFile>& rtl, const std::string& archName, const std::string& cacheDir,
                        bool trace, double* seconds, int axiMasters, bool hierarchical) {
  auto t0 = std::chrono::steady_clock::now();
  uint64_t h = fnv1a(trace ? "trace" : "notrace");
  if (hierarchical) h = fnv1a("hierarchical", h);
  if (axiMasters > 0) h = fnv1a(fmt::format("axi{}", axiMasters), h);
  // flows/verilator_build.sh builds the synthesis bodies when STEPGEN_SIM_BODY=0
  if (const char* b = std::getenv("STEPGEN_SIM_BODY"); b && std::string(b) == "0") h = fnv1a("synthesis bodies", h);
  for (const auto& f : rtl) h = fnv1a(f.name + f.text, h);
  // The harness is part of the simulator: a changed harness must not reuse an old build.
  for (const char* f : {"sim/harness/harness_main.cpp", "sim/harness/axi_main.cpp", "sim/harness/harness_io.hpp",
                        "sim/harness/vport.hpp", "sim/harness/decision_log.cpp", "sim/harness/decision_log.hpp", "sim/common/dram.cpp", "sim/common/dram.hpp", "sim/common/axi_mem.cpp",
                        "sim/common/axi_mem.hpp", "sim/common/npy.cpp", "sim/common/npy.hpp", "sim/common/run_desc.cpp",
                        "sim/common/run_desc.hpp", "flows/verilator_build.sh"})
    h = fnv1a(readText(fs::path(stepgenRoot()) / f), h);
  const fs::path dir = fs::path(cacheDir) / fmt::format("{}-{:016x}", archName, h);
  const fs::path bin = dir / "obj_dir" / "Vfabric";
  // One build per fabric however many processes ask at once (study jobs on a cluster's
  // shared cache, docs/cluster.md): the others wait on the lock and then find it built.
  FileLock lock;
  if (!fs::exists(bin)) lock = FileLock(fs::path(cacheDir) / fmt::format("{}-{:016x}.lock", archName, h));
  if (!fs::exists(bin)) {
    // Built in a folder of this process's own and published by one rename, so that two
    // processes sharing the cache never see or clobber a half-built fabric: the second to
    // finish finds the folder taken and keeps the first one's build.
    const fs::path work = privateFolderFor(dir);
    std::string args;
    std::string top;
    const std::string topFile = axiMasters > 0 ? "sg_axi_top.sv" : "sg_top.sv";
    for (const auto& f : rtl) {
      writeFile(work / "rtl" / f.name, f.text);
      if (f.name == topFile) top = (work / "rtl" / f.name).string();
      else args += " '" + (work / "rtl" / f.name).string() + "'";
    }
    if (axiMasters > 0) {  // the harness names the masters m00_axi_* .. (sim/harness/axi_main.cpp)
      std::string x;
      for (int m = 0; m < axiMasters; ++m) x += fmt::format(" X({:02d})", m);
      writeFile(work / "rtl" / "sg_axi_ports.h",
                fmt::format("// Generated by stepgen: the AXI masters of sg_axi_top.\n#define SG_AXI_MASTERS(X){}\n", x));
    }
    std::string cmd = fmt::format("bash '{}/flows/verilator_build.sh' '{}' '{}'{}{}{}{} > '{}/build.out' 2>&1",
                                  stepgenRoot(), work.string(), top, trace ? " --trace" : "", axiMasters > 0 ? " --axi" : "",
                                  hierarchical ? " --hier" : "", args, work.string());
    if (std::system(cmd.c_str()) != 0 || !fs::exists(work / "obj_dir" / "Vfabric")) {
      std::string log = readText(work / "build.out");
      if (log.size() > 4000) log = log.substr(log.size() - 4000);
      fs::remove_all(work);
      throw std::runtime_error("Verilator build of the fabric failed:\n" + log);
    }
    if (fs::exists(dir) && !fs::exists(bin)) fs::remove_all(dir);  // a failed build of an older stepgen
    if (!publishFolder(work, dir) && !fs::exists(bin))
      throw std::runtime_error("fabric build cache: cannot publish " + dir.string());
  }
  if (seconds) *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return bin.string();
}

}  // namespace stepgen
