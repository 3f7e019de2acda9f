// The stepgen command: argument parsing only; the work is in driver/pipeline.cpp.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <iostream>

#include "builders/swiglu.hpp"
#include "driver/bench.hpp"
#include "driver/pipeline.hpp"
#include "driver/sweep.hpp"
#include "version.hpp"

using namespace stepgen;

namespace {

int reportDiag(const DiagError& e) {
  for (const auto& d : e.diags) std::cerr << formatDiagnostic(d);
  return 1;
}

std::vector<uint8_t> readBytes(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw DiagError("R-403", {p}, "cannot read bitstream file");
  return {std::istreambuf_iterator<char>(in), {}};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"stepgen: STeP graphs -> spatial dataflow fabric (Verilog + bitstream), verified in Verilator"};
  app.set_version_flag("--version", std::string("stepgen ") + STEPGEN_VERSION);
  app.require_subcommand(1);

  VerifyOptions vo;
  auto* verifyCmd = app.add_subcommand("verify", "compile, run the model and the RTL (Verilator), compare outputs and cycles");
  verifyCmd->add_option("--arch", vo.archPath, "architecture YAML")->required()->check(CLI::ExistingFile);
  verifyCmd->add_option("--graph", vo.graphPath, "STeP graph YAML")->required()->check(CLI::ExistingFile);
  verifyCmd->add_option("-o,--out", vo.outDir, "output folder (replaced only when complete)")->required();
  verifyCmd->add_option("--inputs", vo.inputsDir, "folder with <tensor>.npy inputs (default: seeded random)");
  verifyCmd->add_option("--seed", vo.seed, "seed of the random inputs");
  verifyCmd->add_flag("--trace", vo.trace, "write an FST waveform of the RTL run (out/wave.fst)");
  verifyCmd->add_flag("--model-only", vo.skipRtl, "skip the Verilator run");
  verifyCmd->add_option("--watchdog", vo.watchdogCycles, "cycles without progress before the RTL run is declared deadlocked");
  verifyCmd->add_option("--build-cache", vo.buildCache, "folder that keeps verilated fabrics between runs");

  std::string cArch, cGraph, cOut;
  auto* compileCmd = app.add_subcommand("compile", "compile only: Verilog, bitstream (.bin/.cfg), mapping report");
  compileCmd->add_option("--arch", cArch, "architecture YAML")->required()->check(CLI::ExistingFile);
  compileCmd->add_option("--graph", cGraph, "STeP graph YAML")->required()->check(CLI::ExistingFile);
  compileCmd->add_option("-o,--out", cOut, "output folder")->required();

  SwigluParams sp;
  std::string gOut;
  auto* graphCmd = app.add_subcommand("graph", "write a layer's STeP graph YAML");
  graphCmd->require_subcommand(1);
  auto* swigluCmd = graphCmd->add_subcommand("swiglu", "SwiGLU FFN: out = (silu(x Wg) * (x Wu)) Wd");
  swigluCmd->add_option("--batch", sp.batch, "B");
  swigluCmd->add_option("--hidden", sp.hidden, "D");
  swigluCmd->add_option("--ffn", sp.ffn, "F");
  swigluCmd->add_option("--tile-b", sp.tileB, "batch tile");
  swigluCmd->add_option("--tile-f", sp.tileF, "FFN tile");
  swigluCmd->add_option("-o,--out", gOut, "output file (default: stdout)");

  std::string dArch, dBin;
  auto* decodeCmd = app.add_subcommand("decode", "decode a bitstream into its readable .cfg text");
  decodeCmd->add_option("--arch", dArch, "architecture YAML")->required()->check(CLI::ExistingFile);
  decodeCmd->add_option("bitstream", dBin, "fabric.bin")->required();

  SweepOptions so;
  auto* sweepCmd = app.add_subcommand("sweep", "the paper's SwiGLU validation sweep (15 tile points), model and RTL");
  sweepCmd->add_option("--arch", so.archPath, "architecture YAML")->check(CLI::ExistingFile);
  sweepCmd->add_option("-o,--out", so.outDir, "work folder");
  sweepCmd->add_option("--csv", so.csvPath, "CSV file to write");
  sweepCmd->add_flag("--model-only", so.modelOnly, "skip the RTL");
  sweepCmd->add_option("--points", so.maxPoints, "run only the first N points");

  BenchOptions bo;
  auto* benchCmd = app.add_subcommand("bench", "generator, model and RTL speed on the shipped fabrics");
  benchCmd->add_option("-o,--out", bo.outDir, "work folder");
  benchCmd->add_option("--report", bo.reportPath, "markdown file to write");

  CLI11_PARSE(app, argc, argv);
  try {
    if (*verifyCmd) {
      VerifyReport r = verify(vo);
      std::cout << verdictText(r) << "outputs in " << vo.outDir << "\n";
      bool ok = !r.model.timing.deadlock && (vo.skipRtl || (r.rtlStatus == "ok" && r.outputsEqual &&
                                                              r.rtlReadBytes == r.model.timing.offchipReadBytes &&
                                                              r.rtlWriteBytes == r.model.timing.offchipWriteBytes));
      return ok ? 0 : 2;
    }
    if (*compileCmd) {
      CompileResult c = compileGraph(cArch, cGraph);
      writeCompileOutputs(c, cOut);
      std::cout << fmt::format("compiled '{}' onto '{}': {} units, {} bitstream words, {:.3f} s -> {}\n", c.graph.name,
                               c.arch.name, c.mapping.unitsUsed, c.bitstream.size(), c.mapSeconds, cOut);
      return 0;
    }
    if (*swigluCmd) {
      std::string text = buildSwigluGraph(sp);
      if (gOut.empty()) {
        std::cout << text;
      } else {
        std::ofstream out(gOut);
        out << text;
        if (!out) throw DiagError("R-404", {gOut}, "cannot write the graph file");
      }
      return 0;
    }
    if (*decodeCmd) {
      ArchModel a = loadArch(dArch);
      ConfigLayout l = buildConfigLayout(a);
      std::vector<uint32_t> w;
      try {
        w = bytesToWords(readBytes(dBin));
        std::cout << configText(decodeBitstream(w, l), l, a);
      } catch (const std::runtime_error& e) {
        if (dynamic_cast<const DiagError*>(&e)) throw;
        throw DiagError("R-405", {dBin}, e.what());
      }
      return 0;
    }
    if (*sweepCmd) return runSweep(so);
    if (*benchCmd) return runBench(bo);
  } catch (const DiagError& e) {
    return reportDiag(e);
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
