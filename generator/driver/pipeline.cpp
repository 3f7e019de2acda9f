// The pipeline table (compileGraph) and the verification flow around it (verify).
#include "driver/pipeline.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <sys/resource.h>

#include <algorithm>

#include <chrono>
#include <set>
#include <filesystem>

#include "arch/unit_catalogue.hpp"
#include "common/npy.hpp"
#include "driver/decisions.hpp"
#include "driver/drawings.hpp"
#include "driver/rtl_run.hpp"
#include "driver/staging.hpp"
#include "support/files.hpp"
#include "onnx/onnx_error_bound.hpp"

namespace fs = std::filesystem;

namespace stepgen {

namespace {

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
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
  // From the image the mapping built, so `stepgen decode fabric.bin` against it checks the encoding.
  writeFile(d / "fabric.cfg", configText(c.loaded, c.layout, c.arch));
  if (!c.reloads.empty()) writeFile(d / "reloads.json", reloadsJsonText(c.reloads));
  writeDrawings(c, d);
  writeFile(d / "mapping.txt", mappingText(c));
}

// The first output word where `dir`/<tag>_out differs from the model ("" = bit-exact).
std::string firstMismatch(const fs::path& dir, const std::string& tag, const VerifyReport& r) {
  for (const auto& [name, m] : r.compared().outputs) {
    const std::vector<uint32_t> q = fromNpy(dir / (tag + "_out") / (name + ".npy")).data;
    for (size_t i = 0; i < m.data.size(); ++i)
      if (i >= q.size() || q[i] != m.data[i])
        return fmt::format("{}[{},{}]: model 0x{:08x} {} 0x{:08x}", name, int64_t(i) / m.cols, int64_t(i) % m.cols,
                           m.data[i], tag, i < q.size() ? q[i] : 0u);
  }
  return "";
}

// The fabric's merge decisions (`dir`/rtl_decisions.csv) against the model's own; when the RTL
// finished and they differ, the model runs again under them (model_replay/ holds its outputs).
// A decision log that does not fit the graph or the model's streams is a mismatch.
void replayDecisions(const CompileResult& c, const std::map<std::string, Matrix>& inputs, const fs::path& dir,
                     VerifyReport& r) {
  const fs::path log = dir / "rtl_decisions.csv";
  if (r.rtl.status == "crashed" || r.rtl.status == "error" || !fs::exists(log)) return;
  try {
    const MergeOrders rtl = readRtlMergeOrders(c, log);
    r.rtlDecisions = decisionCount(rtl);
    r.differingDecisions = differingDecisions(r.model.timing.mergeOrders, rtl);
    if (r.rtl.status != "ok" || r.differingDecisions == 0) return;
    r.replay = replayModel(c.graph, c.shapes, c.mapping, c.arch, c.programLayout, c.image, inputs, rtl);
    for (const auto& [name, m] : r.replay->outputs) toNpy(dir / "model_replay" / (name + ".npy"), m);
    r.replayCycleErrorPercent = cycleErrorPercent(int64_t(r.rtl.cycles), int64_t(r.replay->timing.cycles));
  } catch (const std::exception& e) {
    r.replayError = std::string("the fabric's merge decisions cannot be replayed: ") + e.what();
  }
}

// The outputs the RTL wrote into `dir`/rtl_out, compared bit for bit with the model's, and
// the cycle error (docs/architecture.md "compare").
void compareRtl(const fs::path& dir, VerifyReport& r) {
  if (r.rtl.status == "crashed") r.firstMismatch = r.rtl.message;
  if (r.rtl.status != "ok") return;
  r.firstMismatch = r.replayError.empty() ? firstMismatch(dir, "rtl", r) : r.replayError;
  r.outputsEqual = r.firstMismatch.empty();
  r.cycleErrorPercent = cycleErrorPercent(int64_t(r.rtl.cycles), int64_t(r.model.timing.cycles));
}

}  // namespace

CompileResult compileProgram(const std::string& archPath, const std::string& graphPath, int minSections,
                             bool onChipCarry, bool buffering) {
  CompileResult c;
  const ArchModel arch = loadArch(archPath);
  const StepGraph user = loadGraph(graphPath);
  const ShapeResult userShapes = checkShapes(user);
  auto t0 = std::chrono::steady_clock::now();
  c.arch = fabricForGraph(arch, user);
  c.layout = buildConfigLayout(c.arch);
  std::vector<std::pair<int, int>> after;  // planBuffers' section cuts: {holder, join}
  if (buffering) {
    c.buffers = planBuffers(user, userShapes, c.arch);
    if (!c.buffers.pairs.empty()) c.buffersText = bufferPlanText(user, c.buffers);
    for (const Reconvergence& r : c.buffers.pairs)
      if (r.choice == BufferChoice::SectionCut) after.push_back({r.holder.v, r.joinUnit.v});
  }
  const bool inserts = std::any_of(c.buffers.pairs.begin(), c.buffers.pairs.end(),
                                   [](const Reconvergence& r) { return r.choice == BufferChoice::MemoryUnit; });
  const StepGraph buffered = inserts ? insertBuffers(user, c.buffers) : StepGraph{};
  const ShapeResult bufferedShapes = inserts ? checkShapes(buffered) : ShapeResult{};
  SectionedGraph sg = planSections(inserts ? buffered : user, inserts ? bufferedShapes : userShapes, c.arch, minSections,
                                   onChipCarry, after);
  c.sectionSeconds = since(t0);
  c.graph = std::move(sg.graph);
  c.shapes = std::move(sg.shapes);
  c.sections = std::move(sg.plan);
  // An unbounded fabric: a unit for every operator of the section that takes the most, the
  // inserted buffers' too (planSections does not map on it: every cut fits).
  if (arch.unbounded) {
    c.arch = fabricForGraph(arch, c.graph, c.sections.sectionOf);
    c.layout = buildConfigLayout(c.arch);
  }
  c.mapping = mapGraph(c.graph, c.shapes, c.arch, c.sections.sectionOf);
  c.programLayout = c.layout;
  if (c.mapping.sections > c.arch.contexts) {
    ArchModel wide = c.arch;
    wide.contexts = c.mapping.sections;
    c.programLayout = buildConfigLayout(wide);
  }
  c.image = buildConfig(c.mapping, c.programLayout);
  FabricProgram prog = foldSections(c.image, c.programLayout, c.layout);
  c.bitstream = std::move(prog.bitstream);
  c.loaded = std::move(prog.image);
  c.reloads = std::move(prog.reloads);
  c.mapSeconds = since(t0);
  return c;
}

CompileResult compileGraph(const std::string& archPath, const std::string& graphPath, int minSections,
                           bool onChipCarry, bool buffering) {
  CompileResult c = compileProgram(archPath, graphPath, minSections, onChipCarry, buffering);
  if (c.arch.unbounded)
    throw DiagError("A-112", c.arch.loc,
                    fmt::format("architecture '{}' is unbounded (grid: unbounded): it has no RTL; its cycles come from "
                                "`stepgen model --timing-only`",
                                c.arch.name));
  auto t0 = std::chrono::steady_clock::now();
  c.rtl = emitFabric(c.arch, c.layout, stepgenRoot() + "/rtl_templates");
  c.mapSeconds += since(t0);
  return c;
}

std::string mappingText(const CompileResult& c) {
  const UnitCatalogue cat(c.arch);
  auto name = [&](int u) { return cat.instanceName({u}); };
  const int C = c.arch.contexts;  // section k runs from context k mod C (foldSections)
  std::string s = fmt::format("# mapping of graph '{}' on architecture '{}': {} units used\n", c.graph.name, c.arch.name,
                              c.mapping.unitsUsed);
  for (size_t i = 0; i < c.graph.ops.size(); ++i) {
    const auto& p = c.mapping.ops[i];
    const Op& o = c.graph.ops[i];
    s += p.unit >= 0 ? fmt::format("op {} ({}) -> {} ctx{}\n", o.name, opKindName(o.kind), name(p.unit), p.ctx % C)
         : p.hostOp >= 0 ? fmt::format("op {} ({}) -> in the unit of '{}'\n", o.name, opKindName(o.kind), c.graph.ops[p.hostOp].name)
                         : fmt::format("op {} ({}) -> absorbed (links and stop maps)\n", o.name, opKindName(o.kind));
    if (p.auxUnit >= 0)
      s += fmt::format("op {} selector output -> {} ctx{} (route meta mode)\n", o.name, name(p.auxUnit), p.ctx % C);
    for (size_t k = 0; k < p.extraUnits.size(); ++k)
      s += fmt::format("op {} output {} -> {} ctx{}\n", o.name, k + 1, name(p.extraUnits[k]), p.ctx % C);
  }
  if (c.sections.sections > 1) s += sectionsText(c.graph, c.sections, C);
  s += c.buffersText;
  for (const Route& r : c.mapping.routes)
    s += fmt::format("route {} : {} -> {}.in{} ctx{} distance {} fifo {}\n", c.graph.stream(r.stream).name,
                     name(r.srcUnit), name(r.dstUnit), r.dstPort, r.ctx % C, r.distance,
                     r.fifoDepth);
  s += fmt::format("wire length {} (sum of route distances)\n", c.mapping.wireLength());
  return s;
}

void writeCompileOutputs(const CompileResult& c, const std::string& dir) {
  StagingDir st(dir);
  writeCompileFiles(c, st.tmp);
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

double buildFabricFor(const VerifyOptions& o) {
  const ArchModel a = loadArch(o.archPath);
  if (a.unbounded)
    throw DiagError("A-112", a.loc, fmt::format("architecture '{}' is unbounded (grid: unbounded): it has no RTL", a.name));
  const std::vector<RtlFile> rtl = emitFabric(a, buildConfigLayout(a), stepgenRoot() + "/rtl_templates");
  const bool hierarchical = o.hierarchical.value_or(hierarchicalByDefault(a));
  double seconds = 0, axiSeconds = 0;
  buildFabric(rtl, a.name, o.buildCache, o.trace, &seconds, 0, hierarchical);
  if (o.axi)
    buildFabric(rtl, a.name, o.buildCache, false, &axiSeconds, int(UnitCatalogue(a).unitsOfKind(UnitKind::AddressGen).size()),
                hierarchical);
  return seconds + axiSeconds;
}

ModelResult runTimingOnly(const std::string& archPath, const std::string& graphPath, CompileResult* compiled,
                          const std::string& inputsDir) {
  CompileResult c = compileProgram(archPath, graphPath);
  checkStreamMemory(c.graph, c.shapes);
  // The meta rows of run loads are the streams' shape: the one input the model reads here.
  const std::map<std::string, OpId> meta = metaTensors(c.graph);
  std::set<std::string> names;
  for (const auto& [t, op] : meta) names.insert(t);
  if (!meta.empty() && inputsDir.empty()) {
    const auto& [t, op] = *meta.begin();
    throw DiagError("R-410", c.graph.op(op).loc,
                    fmt::format("run load '{}' reads its run lengths from the values of input tensor '{}' (meta rows), which "
                                "the timing-only model does not invent: give them with --inputs DIR ({}; the other "
                                "tensors are not read)",
                                c.graph.op(op).name, t, fmt::format("{}.npy", fmt::join(names, ".npy, "))));
  }
  const std::map<std::string, Matrix> in = meta.empty() ? std::map<std::string, Matrix>{} : loadInputsNamed(c.graph, inputsDir, names);
  ModelResult r = runModel(c.graph, c.shapes, c.mapping, c.arch, c.programLayout, c.image, in, false);
  if (compiled) *compiled = std::move(c);
  return r;
}

std::string timingOnlyText(const CompileResult& c, const ModelResult& r) {
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  std::string s = fmt::format("timing-only model of graph '{}' on '{}'{}: {} units used ({} in the fabric), {} section(s)\n",
                              c.graph.name, c.arch.name, c.arch.unbounded ? " (unbounded: one unit per operator)" : "",
                              c.mapping.unitsUsed,
                              std::count_if(c.arch.units.begin(), c.arch.units.end(),
                                            [](const UnitSite& u) { return u.kind != UnitKind::Empty; }),
                              c.sections.sections);
  if (r.timing.deadlock) {
    s += "DEADLOCK: no unit can make progress; stuck streams:\n";
    for (const std::string& x : r.timing.stuck) s += "  " + x + "\n";
  }
  s += fmt::format("cycles            {}{}\n", r.timing.cycles,
                   r.timing.dramLate ? fmt::format(" ({} early DRAM requests resolved after the model's window, served from its floor: "
                                                      "docs/step_semantics.md#timing-only)", r.timing.dramLate) : "");
  s += fmt::format("off-chip bytes    {} (read {}, written {})\n", r.timing.offchipReadBytes + r.timing.offchipWriteBytes,
                   r.timing.offchipReadBytes, r.timing.offchipWriteBytes);
  s += fmt::format("on-chip bytes     {} (cost-model formula)\n", r.onchipBytes);
  s += fmt::format("FLOPs             {}\n", r.flops);
  s += fmt::format("model seconds     {:.3f} (map and bitstream {:.3f})\n", r.wallSeconds, c.mapSeconds);
  s += fmt::format("peak memory       {:.1f} MB\n", double(ru.ru_maxrss) / 1024.0);
  return s;
}

VerifyReport verify(const VerifyOptions& o) {
  VerifyReport r;
  r.maxCycleErrorPercent = o.maxCycleErrorPercent;
  auto t0 = std::chrono::steady_clock::now();
  // Without the RTL run an unbounded arch (no Verilog) gives the model's cycles with values.
  CompileResult c = o.skipRtl ? compileProgram(o.archPath, o.graphPath, o.minSections, o.onChipCarry, o.buffering)
                              : compileGraph(o.archPath, o.graphPath, o.minSections, o.onChipCarry, o.buffering);
  r.compileSeconds = since(t0);
  r.sections = c.sections.sections;
  r.reloadedSections = int(c.reloads.size());
  r.carriedDramBytes = c.sections.carriedDramBytes();
  r.carriedOnchipBytes = c.sections.carriedOnchipBytes();
  r.bufferBytes = c.buffers.bufferBytes;
  auto inputs = loadInputs(c.graph, o.inputsDir, o.seed);
  StagingDir st(o.outDir);
  writeCompileFiles(c, st.tmp);
  for (const auto& [name, m] : inputs) toNpy(st.tmp / "inputs" / (name + ".npy"), m);

  r.model = runModel(c.graph, c.shapes, c.mapping, c.arch, c.programLayout, c.image, inputs);
  for (const auto& [name, m] : r.model.outputs) toNpy(st.tmp / "model" / (name + ".npy"), m);
  if (!o.referenceDir.empty()) {  // before the RTL build: a bad folder stops here
    const bool bf16 = c.arch.cu.format != NumberFormat::Fp32;
    r.reference = compareWithReference(r.model.outputs, o.referenceDir, bf16 ? "bf16_fp32" : "fp32", onFirstCall([&] {
      return referenceErrorBounds(loadGraph(o.graphPath), inputs, bf16);  // the graph as given, not as cut
    }));
  }

  if (!o.skipRtl) {
    const int64_t watchdog = std::max(o.watchdogCycles, 2 * r.model.timing.longestCompute);
    std::string cache = o.buildCache.empty() ? (st.tmp / "build").string() : o.buildCache;
    std::string bin;
    r.hierarchical = o.hierarchical.value_or(hierarchicalByDefault(c.arch));
    try {
      bin = buildFabric(c.rtl, c.arch.name, cache, o.trace, &r.buildSeconds, 0, r.hierarchical);
    } catch (const std::exception& e) {
      r.rtl.status = "build-failed";
      r.firstMismatch = e.what();
    }
    if (!bin.empty()) {
      r.rtl = runRtl(c, bin, watchdog, o.trace, st.tmp);
      replayDecisions(c, inputs, st.tmp, r);
      compareRtl(st.tmp, r);
    }
    if (o.axi) {
      r.axiRan = true;
      try {
        const int nag = int(UnitCatalogue(c.arch).unitsOfKind(UnitKind::AddressGen).size());
        const std::string axiBin = buildFabric(c.rtl, c.arch.name, cache, false, &r.axiBuildSeconds, nag, r.hierarchical);
        r.axi = runRtl(c, axiBin, watchdog, false, st.tmp, "axi");
        if (r.axi.status == "ok") r.axiMismatch = firstMismatch(st.tmp, "axi", r);
        else r.axiMismatch = r.axi.message;
      } catch (const std::exception& e) {
        r.axi.status = "build-failed";
        r.axiMismatch = e.what();
      }
    }
  }
  writeFile(st.tmp / "report.txt", verdictText(r));
  writeReportJson(r, c.arch.name, c.graph.name, st.tmp / "report.json");
  st.commit();
  return r;
}

}  // namespace stepgen
