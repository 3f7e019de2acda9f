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

RunResult runRtl(const CompileResult& c, const std::string& bin, int64_t watchdogCycles, bool trace, const fs::path& dir) {
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
    if (t.isOutput) d.outputs.push_back(region(c.graph, t, "rtl_out/" + t.name + ".npy"));
    else if (!t.isScratch) d.inputs.push_back(region(c.graph, t, "inputs/" + t.name + ".npy"));
  }
  d.ports = cat.fabricPortNames();
  for (const Route& rt : c.mapping.routes) {
    const std::string key = cat.portName({rt.dstUnit}, rt.dstPort);
    for (auto& p : d.ports)
      if (p == key) p += fmt::format(" (stream {})", c.graph.stream(rt.stream).name);
  }
  d.maxCycles = 200000000;
  d.watchdog = uint64_t(watchdogCycles);
  d.trace = trace ? "wave.fst" : "";
  d.result = "rtl_result.json";
  d.reloads = c.reloads;
  fs::create_directories(dir / "rtl_out");
  writeRunDesc(dir / "run.json", d);
  const std::string cmd =
      fmt::format("'{}' '{}' > '{}' 2>&1", bin, (dir / "run.json").string(), (dir / "rtl_run.log").string());
  std::system(cmd.c_str());

  try {
    return readRunResult(dir / "rtl_result.json");
  } catch (const std::exception&) {
    RunResult r;
    r.status = "crashed";
    r.message = readText(dir / "rtl_run.log");
    return r;
  }
}

std::string buildFabric(const std::vector<RtlFile>& rtl, const std::string& archName, const std::string& cacheDir,
                        bool trace, double* seconds) {
  auto t0 = std::chrono::steady_clock::now();
  uint64_t h = fnv1a(trace ? "trace" : "notrace");
  for (const auto& f : rtl) h = fnv1a(f.name + f.text, h);
  // The harness is part of the simulator: a changed harness must not reuse an old build.
  for (const char* f : {"sim/harness/harness_main.cpp", "sim/harness/vport.hpp", "sim/common/dram.cpp", "sim/common/dram.hpp",
                        "sim/common/npy.cpp", "sim/common/npy.hpp", "sim/common/run_desc.cpp", "sim/common/run_desc.hpp",
                        "flows/verilator_build.sh"})
    h = fnv1a(readText(fs::path(stepgenRoot()) / f), h);
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
    std::string cmd = fmt::format("bash '{}/flows/verilator_build.sh' '{}' '{}'{}{} > '{}/build.out' 2>&1", stepgenRoot(),
                                  dir.string(), top, trace ? " --trace" : "", args, dir.string());
    if (std::system(cmd.c_str()) != 0 || !fs::exists(bin)) {
      std::string log = readText(dir / "build.out");
      if (log.size() > 4000) log = log.substr(log.size() - 4000);
      throw std::runtime_error("Verilator build of the fabric failed:\n" + log);
    }
  }
  if (seconds) *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return bin.string();
}

}  // namespace stepgen
