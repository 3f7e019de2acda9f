// loadArch: reads an architecture YAML (schema: arch/README.md) into an ArchModel.
// Every key is required except link.topology and memory_unit.route; every error is a
// located DiagError with an A-1xx id (support/diag_ids.md). Errors of independent sections
// are collected and reported together.
#include <fmt/format.h>


#include "arch/arch_model.hpp"
#include "support/yaml_doc.hpp"

namespace stepgen {

namespace {

const YamlDiagIds kArchIds{"A-101", "A-102", "A-103", "A-104", "A-105", "A-106"};

// matmul_t, rowscale, scan, scan_max, scan_max_exclusive, expand, parallelize, partition, merge and select come with
// the dynamic-tile datapath of issue 3 (sg_cu DYN = 1); exp, recip, rowmax, rowsum,
// accum_max, accum_rescale and rsqrt with the attention datapath (sg_cu ATTN = 1); sub uses the adder;
// topk with the router's selection (sg_cu TOPK = 1).
const std::vector<std::string> kFunctions = {
    "matmul", "silu",   "mul",    "add",    "accum",     "retile",   "matmul_t",      "rowscale",
    "scan",   "expand", "parallelize", "sub", "exp",     "recip",    "rowmax",        "rowsum",
    "accum_max", "scan_max", "accum_rescale", "scan_max_exclusive", "partition", "merge",
    "select", "rsqrt", "topk"};

bool isPow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

int64_t getMultiple(YamlMap& m, const std::string& key, int64_t mult, int64_t lo, int64_t hi) {
  YamlValue v = m.get(key);
  int64_t x = v.asInt(lo, hi);
  if (x % mult != 0) v.fail(kArchIds.outOfRange, fmt::format("must be a multiple of {}, got {}", mult, x));
  return x;
}

int64_t getPow2(YamlMap& m, const std::string& key, int64_t lo, int64_t hi) {
  YamlValue v = m.get(key);
  int64_t x = v.asInt(lo, hi);
  if (!isPow2(x))
    v.fail(kArchIds.outOfRange, fmt::format("must be a power of two between {} and {}, got {}", lo, hi, x));
  return x;
}

void readLink(YamlMap m, LinkParams& link) {
  if (auto t = m.find("topology")) link.topology = t->asEnum({"neighborhood", "crossbar"});
  link.reach = int(m.getInt("reach", 1, 1024));
  link.widthBits = int(getMultiple(m, "width_bits", 512, 512, 4096));
  link.fifoDepth = int(m.getInt("fifo_depth", 1, 64));
  m.finish("topology, reach, width_bits, fifo_depth");
}

// compute_unit; link is read first (the banked memory depends on the words per beat).
void readCompute(YamlMap m, ArchModel& a) {
  ComputeUnitParams& cu = a.cu;
  cu.lanes = int(getPow2(m, "lanes", 1, 4096));
  YamlValue fv = m.get("flops_per_cycle");
  cu.flopsPerCycle = int(fv.asInt(1, INT32_MAX));
  if (cu.flopsPerCycle != 2 * cu.lanes)
    fv.fail("A-107", fmt::format("flops_per_cycle ({}) must equal 2 * compute_unit.lanes ({}) = {}: "
                                 "each lane does one multiply-accumulate per cycle",
                                 cu.flopsPerCycle, cu.lanes, 2 * cu.lanes),
            {DiagNote{m.keyLoc("lanes"), fmt::format("compute_unit.lanes is {} here", cu.lanes)}});
  cu.functions.clear();
  std::vector<SourceLoc> seen;
  for (const YamlValue& f : m.getList("functions")) {
    std::string w = f.asEnum(kFunctions);
    for (size_t i = 0; i < cu.functions.size(); ++i)
      if (cu.functions[i] == w)
        f.fail("A-108", fmt::format("function '{}' is listed twice", w), {DiagNote{seen[i], "first listed here"}});
    cu.functions.push_back(w);
    seen.push_back(f.loc());
  }
  cu.format = m.getEnum("number_format", {"fp32", "bf16_fp32"}) == "fp32" ? NumberFormat::Fp32
                                                                           : NumberFormat::Bf16Fp32;
  cu.bufferBytes = getMultiple(m, "buffer_bytes", 4, 1024, int64_t(1) << 32);
  // memory (optional): banked where it can be built (ArchModel::cuBankable), else flat;
  // `banked` asked for where it cannot is A-113.
  cu.banked = a.cuBankable();
  if (auto v = m.find("memory")) {
    const std::string mem = v->asEnum({"banked", "banked_ragged", "flat"});
    cu.banked = mem != "flat";
    cu.aCopies = mem == "banked_ragged" ? 2 : 1;
    if (cu.banked && !a.cuBankable())
      v->fail("A-113", fmt::format("a banked compute-unit memory needs lanes ({}) <= words per beat ({}), the words per "
                                   "beat a power of two and buffer_bytes whole beats; use memory: flat",
                                   cu.lanes, a.wordsPerBeat()));
  }
  if (auto v = m.find("fp_adder")) cu.nearFar = v->asEnum({"near_far", "single_path"}) == "near_far";
  m.finish("lanes, flops_per_cycle, functions, number_format, buffer_bytes, memory, fp_adder");
}

void readMemory(YamlMap m, MemoryUnitParams& mu) {
  mu.capacityBytes = getMultiple(m, "capacity_bytes", 4, 1024, int64_t(1) << 32);
  mu.banks = int(getPow2(m, "banks", 1, 64));
  mu.bytesPerCycle = int(getMultiple(m, "bytes_per_cycle", 4, 4, 4096));
  // Optional: the memory units also have the route mode (sg_route inside sg_mu).
  if (auto r = m.find("route")) mu.route = r->asEnum({"true", "false"}) == "true";
  m.finish("capacity_bytes, banks, bytes_per_cycle, route");
}

void readOffchip(YamlMap m, OffChipParams& oc) {
  oc.channels = int(m.getInt("channels", 1, 64));
  oc.bytesPerRequest = int(m.getInt("bytes_per_request", 64, 64));
  oc.latency = int(m.getInt("latency", 1, 10000));
  oc.initiationInterval = int(m.getInt("initiation_interval", 1, 64));
  oc.startup = int(m.getInt("startup", 0, 100000));
  oc.outstanding = int(m.getInt("outstanding", 1, 1024));
  oc.addressBits = int(m.getInt("address_bits", 16, 48));
  m.finish("channels, bytes_per_request, latency, initiation_interval, startup, outstanding, address_bits");
}

void readUnits(const YamlValue& v, ArchModel& a) {
  std::vector<YamlValue> rows = v.asList();
  if (int(rows.size()) != a.rows) {
    // Point at the first extra row, or at the list when rows are missing.
    const YamlValue& at = int(rows.size()) > a.rows ? rows[a.rows] : v;
    at.fail("A-109", fmt::format("units has {} rows but grid.rows is {}", rows.size(), a.rows));
  }
  for (int y = 0; y < a.rows; ++y) {
    std::vector<YamlValue> cols = rows[y].asList();
    if (int(cols.size()) != a.cols) {
      const YamlValue& at = int(cols.size()) > a.cols ? cols[a.cols] : rows[y];
      at.fail("A-110", fmt::format("row {} has {} entries but grid.cols is {}", y, cols.size(), a.cols));
    }
    for (int x = 0; x < a.cols; ++x) {
      std::string w = cols[x].asEnum({"ag", "cu", "mu", "-"});
      UnitSite s;
      s.kind = w == "ag"   ? UnitKind::AddressGen
               : w == "cu" ? UnitKind::Compute
               : w == "mu" ? UnitKind::Memory
                           : UnitKind::Empty;
      s.x = x;
      s.y = y;
      s.loc = cols[x].loc();
      a.units.push_back(s);
    }
  }
}

}  // namespace

const char* unitKindName(UnitKind k) {
  switch (k) {
    case UnitKind::Compute: return "cu";
    case UnitKind::Memory: return "mu";
    case UnitKind::AddressGen: return "ag";
    case UnitKind::Empty: return "empty";
  }
  return "?";
}

ArchModel loadArch(const std::string& path) {
  YamlValue root = loadYamlFile(path, kArchIds);
  YamlMap top = root.asMap();
  ArchModel a;
  a.loc = SourceLoc{path, 0, 0};
  std::vector<Diagnostic> errs;
  bool gridOk = false;
  collectDiagnostics(errs, [&] { a.name = top.getString("name"); });
  collectDiagnostics(errs, [&] {
    YamlValue gv = top.get("grid");
    if (gv.isScalar()) {  // `grid: unbounded`: sized per graph (sizeUnbounded), no units list
      gv.asEnum({"unbounded"});
      a.unbounded = true;
      a.loc = gv.loc();  // what makes the fabric: errors about it point here
      return;
    }
    YamlMap g = gv.asMap();
    a.cols = int(g.getInt("cols", 1, 1024));
    a.rows = int(g.getInt("rows", 1, 1024));
    g.finish("cols, rows");
    gridOk = true;
  });
  collectDiagnostics(errs, [&] { a.contexts = int(top.getInt("contexts", 1, 256)); });
  collectDiagnostics(errs, [&] { readLink(top.getMap("link"), a.link); });
  collectDiagnostics(errs, [&] { readCompute(top.getMap("compute_unit"), a); });
  collectDiagnostics(errs, [&] { readMemory(top.getMap("memory_unit"), a.mu); });
  collectDiagnostics(errs, [&] { readOffchip(top.getMap("offchip"), a.offchip); });
  collectDiagnostics(errs, [&] {
    if (a.unbounded) {
      if (auto u = top.find("units"))
        u->fail("A-111", "an unbounded fabric (grid: unbounded) has no units list: it gets one unit per operator");
      a.link.topology = "crossbar";
      a.cu.banked = false;  // no RTL: nothing to bank, no row rule for the mapper
      return;
    }
    YamlValue u = top.get("units");
    if (gridOk) readUnits(u, a);
  });
  collectDiagnostics(errs, [&] {
    top.finish("name, grid, contexts, link, compute_unit, memory_unit, offchip, units");
  });
  if (!errs.empty()) throw DiagError(std::move(errs));
  return a;
}

}  // namespace stepgen
